"""Solving the program: refine until certified, re-solve after a change, read the duals.

How (measured on 2 cores; ``benchmarks/solve_scaling.py``):

* Tangent cuts are placed adaptively: a few per source to start (:mod:`procure.program.model`),
  then one at each source's plan point while the LP's upper bound and the plan's true value
  differ by more than the tolerance (Kelley's cutting planes, one-dimensional per source).
* The model goes to HiGHS through Pyomo's persistent HiGHS interface
  (``pyomo.contrib.solver``): the cuts of each round are added to the solver's model, not
  rebuilt, and a changed mutable parameter (costs, budget) keeps the basis.
* S-shaped hill curves are solved globally by HiGHS's branch and bound on their piecewise
  form; the upper bound adds the interpolation's largest shortfall, and the breakpoints
  double until the gap is within tolerance.
* Duals: the budget row's dual is λ; each capacity row's is its shadow price. With integer
  variables, they are read from the LP with the integers fixed at the plan.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.contrib.solver.common.factory import SolverFactory
from pyomo.contrib.solver.common.results import TerminationCondition

from ..errors import SolveError, invalid
from .model import DEFAULT_HILL_POINTS, BuiltModel, add_cuts, build, hill_error
from .plan import DEFAULT_TIME_LIMIT, DEFAULT_TOLERANCE, VALUE_ABS_TOLERANCE, Plan, read_plan
from .problem import CAPACITIES, Mode, Problem, check_budget

#: Most refinement rounds before giving up.
MAX_ROUNDS = 100
#: A source gets a new cut when the LP credits it with more than this share of the plan's
#: value above its curve [1].
CUT_THRESHOLD = 1e-9
#: HiGHS's relative MIP gap, as a share of the certification tolerance [1].
MIP_GAP_SHARE = 0.1
#: A dual smaller than this in magnitude is read as 0 [value per unit].
DUAL_ZERO = 1e-12


def _persistent_highs() -> Any:
    """Pyomo's persistent HiGHS, told what changes between solves instead of rescanning.

    Between solves only mutable parameters change (costs, budget) and cuts are added, which
    :meth:`Program.solve` hands over itself; rescanning 10,000 sources' rows for changes took
    about a tenth of a second a round.
    """
    opt = SolverFactory("highs")
    au = opt.config.auto_updates
    au.check_for_new_or_removed_constraints = False
    au.check_for_new_or_removed_vars = False
    au.check_for_new_or_removed_params = False
    au.check_for_new_objective = False
    au.update_constraints = False
    au.update_vars = False
    au.update_named_expressions = False
    au.update_objective = False
    au.update_parameters = True
    return opt


class Program:
    """A built model and its persistent solver, re-solvable after a change of costs or budget.

    Parameters
    ----------
    problem : Problem
        What to allocate.
    tolerance : float, default 1e-4
        Relative gap between the upper bound and the plan's true value to stop at.
    time_limit : float, default 120
        Wall-time limit for all the solves of one :meth:`solve` [s].
    hill_points : int, default 17
        Breakpoints of the first piecewise form of an S-shaped hill curve.
    """

    def __init__(
        self,
        problem: Problem,
        *,
        tolerance: float = DEFAULT_TOLERANCE,
        time_limit: float = DEFAULT_TIME_LIMIT,
        hill_points: int = DEFAULT_HILL_POINTS,
    ) -> None:
        if not (isinstance(tolerance, int | float) and 0 < tolerance < 1):
            raise invalid("tolerance", tolerance, "must be a number > 0 and < 1")
        if not (isinstance(time_limit, int | float) and time_limit > 0):
            raise invalid("time_limit", time_limit, "must be a number > 0 [s]")
        self.problem = problem
        self.tolerance = float(tolerance)
        self.time_limit = float(time_limit)
        self._build(hill_points)

    def _build(self, hill_points: int) -> None:
        """Build the model of ``self.problem`` and a fresh persistent solver for it."""
        t0 = time.perf_counter()
        self.built: BuiltModel = build(self.problem, hill_points=hill_points)
        self.build_seconds = time.perf_counter() - t0
        self.solver = _persistent_highs()

    @property
    def model(self) -> pyo.ConcreteModel:
        """The Pyomo model as built and refined so far."""
        return self.built.model

    # ------------------------------------------------------------------ changes between solves

    def set_costs(self, cost: np.ndarray) -> None:
        """New all-in prices per hour [$/h], in source order; the cuts stay valid.

        Changes mutable parameters of the built model (the persistent solver keeps its
        basis); rebuilds only where a source's bound came from the budget and would loosen.
        """
        cost = np.asarray(cost, dtype=float)
        if cost.shape != (self.problem.n,) or not np.all(np.isfinite(cost) & (cost >= 0)):
            raise invalid("cost", cost, f"must be {self.problem.n} numbers ≥ 0 [$/h], one per source")
        a = self.built.arrays
        self.problem = self.problem.with_cost(cost)
        if np.any(a.budget_bounded & (cost < a.cost)):
            self._build(self.built.hill_points)
            return
        for data, c in zip(self.model.cost.values(), cost.tolist(), strict=True):
            data.set_value(c)
        a.cost = cost

    def set_budget(self, budget: float) -> None:
        """A new budget [$] for the built model (budget mode)."""
        if self.problem.mode is not Mode.BUDGET:
            raise invalid("budget", budget, "this program is in target mode")
        budget = check_budget(budget)
        old = float(self.problem.budget or 0.0)
        self.problem = replace(self.problem, budget=budget)
        if np.any(self.built.arrays.budget_bounded) and budget > old:
            self._build(self.built.hill_points)
            return
        self.model.budget = budget

    # ------------------------------------------------------------------ solving

    def _solve_once(self, model: pyo.ConcreteModel, deadline: float, solver: Any = None) -> Any:
        left = deadline - time.perf_counter()
        if left <= 0:
            raise SolveError(f"out of time: the time limit of {self.time_limit:g} s was reached while refining")
        opt = solver or self.solver
        res = opt.solve(
            model,
            load_solutions=False,
            raise_exception_on_nonoptimal_result=False,
            time_limit=left,
            rel_gap=self.tolerance * MIP_GAP_SHARE,
        )
        tc = res.termination_condition
        if tc == TerminationCondition.convergenceCriteriaSatisfied:
            return res
        if tc == TerminationCondition.maxTimeLimit:
            raise SolveError(f"out of time: HiGHS reached the time limit of {self.time_limit:g} s")
        if tc in (TerminationCondition.provenInfeasible, TerminationCondition.infeasibleOrUnbounded):
            raise SolveError(self._infeasible_message())
        if tc == TerminationCondition.unbounded:
            raise SolveError("unbounded: the value has no ceiling (a free, unlimited source?)")
        raise SolveError(f"HiGHS stopped without a solution: {tc.name}")

    def _infeasible_message(self) -> str:
        p = self.problem
        if p.mode is Mode.TARGET:
            return (
                f"infeasible: target = {p.target:,.4g} is out of reach: the sources' availability, the "
                "capacities and the mix bounds cap the value below it (solve with a large --budget to see the most)"
            )
        if p.max_share:
            return "infeasible: the mix bounds cannot be met with the hours held: relax --max-share"
        return "infeasible: no plan meets the budget and the capacities"

    def solve(self) -> Plan:
        """Solve, refine until certified, and read the duals.

        Raises
        ------
        SolveError
            Infeasible, unbounded, out of time, or not certified within ``MAX_ROUNDS``.
        """
        p = self.problem
        budget_mode = p.mode is Mode.BUDGET
        t0 = time.perf_counter()
        deadline = t0 + self.time_limit
        if budget_mode:
            self._check_minimum_orders()
        rounds = 0
        while True:
            rounds += 1
            built = self.built
            a, m = built.arrays, built.model
            res = self._solve_once(m, deadline)
            xs, zs = list(m.x.values()), list(m.z.values())
            if built.has_integers:
                res.solution_loader.load_vars()  # the duals fix the integers at their values
            found = res.solution_loader.get_vars(xs + zs)
            x = np.clip(np.array([found[v] or 0.0 for v in xs]), 0.0, a.upper)
            z = np.array([found[v] or 0.0 for v in zs])
            e, v = a.value_of(x)
            true_value = float(v.sum())
            hill_err = hill_error(built) if built.hill_breakpoints else 0.0
            if budget_mode:
                bound = res.objective_bound if res.objective_bound is not None else res.incumbent_objective
                upper = float(bound) + hill_err
                gap = max(0.0, upper - true_value) / max(abs(upper), 1e-12)
                done = gap <= self.tolerance or upper - true_value <= VALUE_ABS_TOLERANCE
            else:
                target = float(p.target or 0.0)
                upper = float(z.sum())
                gap = max(0.0, (target - true_value) / target)
                done = true_value >= target * (1 - self.tolerance) or target - true_value <= VALUE_ABS_TOLERANCE
            if done:
                break
            if rounds >= MAX_ROUNDS:
                raise SolveError(
                    f"not certified: after {rounds} rounds the gap is {gap:.2e}, above the tolerance "
                    f"{self.tolerance:.0e}: raise --tolerance"
                )
            over = np.flatnonzero(((z - v) > CUT_THRESHOLD * max(1.0, abs(upper))) & a.concave)
            new = add_cuts(built, over, e[over])
            if new:
                self.solver.add_constraints(new)
            elif built.hill_breakpoints:
                self._build(2 * built.hill_points - 1)
            else:
                raise SolveError(f"not certified: the gap {gap:.2e} does not close; raise --tolerance")
        lam, shadow = self._duals(res)
        return read_plan(
            p,
            x=x,
            room=self.built.arrays.room,
            value=true_value,
            value_upper_bound=upper,
            gap=gap,
            tolerance=self.tolerance,
            lambda_=lam,
            shadow_prices=shadow,
            rounds=rounds,
            cuts=len(self.model.cuts),
            build_seconds=self.build_seconds,
            solve_seconds=time.perf_counter() - t0,
        )

    def _check_minimum_orders(self) -> None:
        p = self.problem
        budget = float(p.budget or 0.0)
        room = self.built.arrays.room
        least = np.where(room > 0, p.least_order_usd, np.inf)
        if budget > 0 and (room > 0).any() and np.all(least > budget):
            i = int(np.argmin(least))
            s = p.sources
            hours = max(s["min_order_hours"].iloc[i], s["lot_hours"].iloc[i])
            raise SolveError(
                f"budget = {budget:,.2f} buys nothing: it is below every source's minimum order (the least is "
                f"{s['source'].iloc[i]!r}: {hours:g} h × ${p.cost[i]:,.2f} + fee "
                f"${s['fixed_fee_usd'].iloc[i]:,.2f} = ${least[i]:,.2f})"
            )

    def _duals(self, res: Any) -> tuple[float, dict[str, float]]:
        """λ and the shadow prices, from the LP (with integers fixed at the plan if any)."""
        built = self.built
        m = built.model
        budget_mode = built.mode is Mode.BUDGET
        rows = [built.question_row] + [m.capacity[r] for r in m.R] + [m.mix[g] for g in m.G]
        if built.has_integers:
            fixed = m.clone()
            for var in (fixed.buy, fixed.lots):
                for idx in var:
                    var[idx].fix(round(var[idx].value or 0))
            for i in fixed.H:
                for var in fixed.hill[i].component_data_objects(pyo.Var, descend_into=True):
                    if var.is_integer() or var.is_binary():
                        var.fix(round(var.value or 0))
            pyo.TransformationFactory("core.relax_integer_vars").apply_to(fixed)
            res = self._solve_once(fixed, time.perf_counter() + self.time_limit, solver=SolverFactory("highs"))
            rows = [fixed.find_component(r) for r in rows]
        duals = res.solution_loader.get_duals(rows)
        sign = 1.0 if budget_mode else -1.0  # a ≥ row in a minimisation
        lam = abs(duals[rows[0]]) if rows[0] in duals else 0.0
        if not budget_mode:
            lam = 1.0 / lam if lam > 0 else math.inf  # $ per value → value per $
        shadow = dict.fromkeys(CAPACITIES, 0.0)
        names = [str(r) for r in m.R] + [f"max_share:{k}" for k in self.problem.max_share]
        for name, row in zip(names, rows[1:], strict=True):
            d = sign * duals.get(row, 0.0)
            shadow[name] = abs(d) if abs(d) > DUAL_ZERO else 0.0
        if not budget_mode and math.isfinite(lam):
            shadow = {k: v * lam for k, v in shadow.items()}  # $ per unit → value per unit
        return float(lam), shadow


def solve_problem(problem: Problem, **options: Any) -> Plan:
    """Build and solve a problem: the plan, certified within ``tolerance`` (see :class:`Program`)."""
    return Program(problem, **options).solve()
