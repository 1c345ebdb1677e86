"""Why a program has no plan: which constraints conflict, and by how much, in the user's terms.

Called when HiGHS finds the budget-mode model infeasible. The cases: the mix bounds need more
money than the budget (found by solving the same model for its least cost, without the budget
row); the mix bounds cannot be met within the capacities; or they cannot be met with the hours
held and available at all.
"""

from __future__ import annotations

import math

import numpy as np
import pyomo.environ as pyo
from pyomo.contrib.solver.common.factory import SolverFactory
from pyomo.contrib.solver.common.results import TerminationCondition

from ...arrays import DIVISION_FLOOR
from ..model.build import BuiltModel
from ..model.solver_process import quiet_solver

#: Relative gap to which the least money meeting the mix bounds is found when it has integer
#: terms (its lower bound is reported with it) [1].
MIP_GAP = 1e-9


def least_money(built: BuiltModel, *, capacities: bool = True) -> tuple[float, float] | None:
    """The least money whose purchases meet the mix bounds and the capacities (where
    ``capacities``) with the hours held [$], and a certified lower bound on it (the branch and
    bound's, equal for an LP); None when no purchase meets them. HiGHS finds it on a copy of the
    model without its budget row (and without its capacity rows where not ``capacities``),
    minimising the money spent."""
    p = built.formulation.base
    m = built.model.clone()
    m.budget_row.deactivate()
    m.objective.deactivate()
    fee = p.column("fixed_fee_usd")
    m.least = pyo.Objective(expr=sum(m.cost[i] * m.x[i] for i in m.S) + sum(float(fee[i]) * m.buy[i] for i in m.B))
    if not capacities:
        m.capacity.deactivate()
    opt = SolverFactory("highs")
    opt.config.solver_options["mip_rel_gap"] = MIP_GAP
    with quiet_solver():
        res = opt.solve(m, load_solutions=False, raise_exception_on_nonoptimal_result=False)
    if res.termination_condition != TerminationCondition.convergenceCriteriaSatisfied:
        return None
    least = float(res.incumbent_objective)
    bound = res.objective_bound
    lower = float(bound) if bound is not None and math.isfinite(float(bound)) else least
    return least, min(lower, least)


def diagnose(built: BuiltModel, *, money: bool = False) -> str:
    """One line saying why ``built`` has no feasible plan; ``money`` speaks of the money a
    target needs rather than of a budget."""
    sp = built.formulation
    p = sp.base
    kind = type(sp).__name__
    if kind == "PeriodProblem":
        return (
            "infeasible: no schedule meets the money of every period (each run pays the bill of every bought hour "
            "it trains on), the capacities and the mix bounds at every run: raise --budget or the periods' money, "
            "relax --max-share, or use carry-over"
        )
    if kind == "Infrastructure":
        return (
            "infeasible: no plan meets the budget, the capacities and the mix bounds in any format or cores count: "
            "raise --budget or relax --max-share"
        )
    if not sp.certain:
        return (
            "infeasible: no plan meets the budget, the capacities and the mix bounds in every scenario: raise "
            "--budget or relax --max-share"
        )
    if not p.max_share:
        return (
            "infeasible: no plan meets the capacities"
            if money
            else "infeasible: no plan meets the budget and the capacities"
        )
    found = None if money else least_money(built)  # a target has no budget to fall short of
    if found is not None:
        least = found[0]
        budget = float(built.model.budget.value)
        return (
            f"infeasible: the mix bounds need at least ${least:,.2f} of purchases with the hours held, "
            f"the budget is ${budget:,.2f} (short by ${least - budget:,.2f}): raise --budget or relax --max-share"
        )
    if least_money(built, capacities=False) is not None:
        return (
            "infeasible: the mix bounds cannot be met within the capacities (accelerator-hours, core-hours, "
            "storage) with the hours held: relax --max-share or raise the capacities"
        )
    held_e = p.rate * p.held
    most_e = held_e + p.rate * np.where(np.isfinite(built.room), built.room, 0.0)
    parts = []
    for key, share in p.max_share.items():
        members = p.members(key)
        least_share = held_e[members].sum() / max(held_e[members].sum() + most_e[~members].sum(), DIVISION_FLOOR)
        if least_share > share:
            parts.append(
                f"{key} is at least {100 * least_share:.1f} % of the effective hours (bound {100 * share:g} %)"
            )
    detail = "; ".join(parts) if parts else "the mix bounds contradict each other"
    return f"infeasible: the mix bounds cannot be met with the hours held and available: {detail}"
