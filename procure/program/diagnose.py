"""Why a program has no plan: which constraints conflict, and by how much, in the user's terms.

Called when HiGHS finds the budget-mode model infeasible. The cases: the mix bounds need more
money than the budget (found by solving the same model for its least cost, without the budget
row); the mix bounds cannot be met within the capacities; or they cannot be met with the hours
held and available at all.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.contrib.solver.common.factory import SolverFactory
from pyomo.contrib.solver.common.results import TerminationCondition

from .highs import quiet_solver
from .model import BuiltModel


def diagnose(built: BuiltModel) -> str:
    """One line saying why ``built`` has no feasible plan."""
    sp = built.formulation
    p = sp.base
    if not sp.certain:
        return (
            "infeasible: no plan meets the budget, the capacities and the mix bounds in every scenario: raise "
            "--budget or relax --max-share"
        )
    if not p.max_share:
        return "infeasible: no plan meets the budget and the capacities"
    m = built.model.clone()
    m.budget_row.deactivate()
    m.objective.deactivate()
    fee = p.column("fixed_fee_usd")
    m.least = pyo.Objective(expr=sum(m.cost[i] * m.x[i] for i in m.S) + sum(float(fee[i]) * m.buy[i] for i in m.B))
    opt = SolverFactory("highs")
    with quiet_solver():
        res = opt.solve(m, load_solutions=False, raise_exception_on_nonoptimal_result=False)
    if res.termination_condition == TerminationCondition.convergenceCriteriaSatisfied:
        least = float(res.incumbent_objective)
        budget = float(m.budget.value)
        return (
            f"infeasible: the mix bounds need at least ${least:,.2f} of purchases with the hours held, "
            f"the budget is ${budget:,.2f} (short by ${least - budget:,.2f}): raise --budget or relax --max-share"
        )
    m.capacity.deactivate()
    with quiet_solver():
        res = opt.solve(m, load_solutions=False, raise_exception_on_nonoptimal_result=False)
    if res.termination_condition == TerminationCondition.convergenceCriteriaSatisfied:
        return (
            "infeasible: the mix bounds cannot be met within the capacities (accelerator-hours, core-hours, "
            "storage) with the hours held: relax --max-share or raise the capacities"
        )
    held_e = p.rate * p.held
    most_e = held_e + p.rate * np.where(np.isfinite(built.room), built.room, 0.0)
    parts = []
    for key, share in p.max_share.items():
        members = p.members(key)
        least_share = held_e[members].sum() / max(held_e[members].sum() + most_e[~members].sum(), 1e-300)
        if least_share > share:
            parts.append(
                f"{key} is at least {100 * least_share:.1f} % of the effective hours (bound {100 * share:g} %)"
            )
    detail = "; ".join(parts) if parts else "the mix bounds contradict each other"
    return f"infeasible: the mix bounds cannot be met with the hours held and available: {detail}"
