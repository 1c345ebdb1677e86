"""Solving the program: refine until certified, re-solve after a change, read the duals.

How (measured on 2 cores; ``benchmarks/solve_scaling.py``):

* The model (:mod:`procure.program.model`) bounds every curve from above, so the solver's
  bound is an upper bound on the true optimum, and the plan's true value a lower bound.
* Each round that does not certify makes progress it can prove: it adds tangent cuts that cut
  off the current point by more than the solver's tolerance (never a cut twice), or it doubles
  the breakpoints of the S-shaped curves where the gap lies, whichever holds more of the gap.
* The model goes to HiGHS as one sparse matrix (:mod:`procure.program.highs`, through Pyomo's
  ``LinearStandardFormCompiler``): the cuts of each round are appended as one batch of rows,
  and a new budget or new costs change the matrix in place, so HiGHS keeps its basis. A
  rebuilt model keeps the cuts found so far.
* Target mode (the least money that reaches a value) brackets the money between a budget whose
  certified upper bound falls short of the target and one whose plan truly reaches it, and
  narrows the bracket with budget-mode solves of one model (Newton steps on λ, safeguarded by
  bisection) until the two agree within the tolerance.
* Duals: the budget row's dual is λ; each capacity row's is its shadow price. With integer
  variables, they are read from the LP with the integers fixed at the plan.
* HiGHS writes to the process's standard output in places Pyomo does not capture; every call
  into the solver runs with both streams captured (shown with ``PROCURE_TRACEBACK=1``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.contrib.solver.common.factory import SolverFactory
from pyomo.contrib.solver.common.results import TerminationCondition

from ..defaults import DEFAULT_TIME_LIMIT, DEFAULT_TOLERANCE
from ..errors import SolveError, invalid
from .highs import HighsModel, Solution, handed_over, quiet_solver
from .model import DEFAULT_HILL_POINTS, BuiltModel, add_cuts, build, refined_breakpoints, source_arrays
from .plan import VALUE_ABS_TOLERANCE, Plan, read_plan
from .problem import CAPACITIES, Mode, Problem, check_budget

#: Most refinement rounds of one solve; a safety net: every round makes progress.
MAX_ROUNDS = 200
#: A source gets a new cut when the LP credits it with more than this share of the plan's
#: value above its curve [1] ...
CUT_THRESHOLD = 1e-9
#: ... and more than this, ten times HiGHS's primal feasibility tolerance (1e-7), so that the
#: new cut cuts the current point off by more than the solver can blur [own-hour equivalents].
CUT_MIN_EXCESS = VALUE_ABS_TOLERANCE
#: HiGHS's relative MIP gap, as a share of the certification tolerance [1].
MIP_GAP_SHARE = 0.1
#: Smallest relative gap the refinement is asked for (target mode tightens towards it) [1].
TOLERANCE_FLOOR = 1e-9
#: A dual smaller than this in magnitude is read as 0 [value per unit].
DUAL_ZERO = 1e-12
#: Relative difference from the target below which a plan's value counts as reaching it, and a
#: bound as not falling short of it: float noise, a hundredth of HiGHS's feasibility tolerance
#: [1]. It matters only for a target equal to the most value the sources allow.
REACH_NOISE = 1e-9
#: Most budget-mode solves target mode makes while bracketing and narrowing the money.
MAX_TARGET_STEPS = 200


@dataclass
class _Refined:
    """A budget-mode solve refined until certified."""

    budget: float
    x: np.ndarray
    value: float
    upper: float
    gap: float
    rounds: int
    results: Any
    lam: float = math.nan
    w: np.ndarray | None = None  # hours each curve's value was read at


class Program:
    """A built model and its persistent solver, re-solvable after a change of costs or budget.

    Parameters
    ----------
    problem : Problem
        What to allocate (budget or target mode).
    tolerance : float, default 1e-4
        Relative gap to stop at: between the upper bound and the plan's true value (budget
        mode), or between the least money and the plan's money (target mode).
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
        if not (isinstance(hill_points, int) and hill_points >= 2):
            raise invalid("hill_points", hill_points, "must be a whole number ≥ 2")
        self.problem = problem
        self.tolerance = float(tolerance)
        self.time_limit = float(time_limit)
        self.build_seconds = 0.0
        self._first_hill_points = hill_points
        self._built: BuiltModel | None = None
        self._highs: HighsModel | None = None
        if problem.mode is Mode.BUDGET:
            self._build(problem)

    # ------------------------------------------------------------------ the built model

    def _build(self, problem: Problem, *, hill_breakpoints: dict[int, np.ndarray] | None = None) -> None:
        """Build the budget-mode model of ``problem`` and hand it to a new HiGHS object, keeping
        the cuts and breakpoints of the model it replaces."""
        old = self._built
        t0 = time.perf_counter()
        if hill_breakpoints is None and old is not None:
            hill_breakpoints = old.hill_breakpoints
        self._built = self._make(problem, hill_breakpoints, old.cuts() if old is not None else [])
        self._highs = handed_over(self._built)
        self._params_stale = np.zeros(problem.n, dtype=bool)
        self.build_seconds += time.perf_counter() - t0

    def _make(
        self, problem: Problem, hill_breakpoints: dict[int, np.ndarray] | None, cuts: list[tuple[int, float]]
    ) -> BuiltModel:
        """The built model of ``problem`` (budget mode), with the cuts and breakpoints kept."""
        return build(problem, hill_points=self._first_hill_points, hill_breakpoints=hill_breakpoints, cuts=cuts,
                     cuts_in_model=False)  # fmt: skip

    @property
    def built(self) -> BuiltModel:
        """The built model (in target mode, at the budget of the last solve)."""
        if self._built is None:
            raise invalid("model", None, "a target-mode program builds its model when it solves")
        return self._built

    @property
    def model(self) -> pyo.ConcreteModel:
        """The Pyomo model as built (its cuts are rows of :attr:`highs`, points of :attr:`built`),
        its cost parameters brought up to date with the costs last set."""
        built = self.built
        params = built.model.cost
        for i in np.flatnonzero(self._params_stale).tolist():
            params[i].set_value(float(built.arrays.cost[i]))
        self._params_stale[:] = False
        return built.model

    @property
    def highs(self) -> HighsModel:
        """The model as handed to HiGHS."""
        if self._highs is None:
            raise invalid("model", None, "a target-mode program builds its model when it solves")
        return self._highs

    def _budget_problem(self, budget: float) -> Problem:
        return replace(self.problem, budget=budget, target=None)

    def _rebuild(self, *, hill_breakpoints: dict[int, np.ndarray] | None = None) -> None:
        """Rebuild at the built budget, keeping cuts, breakpoints and the budget now set."""
        b = self.built
        now = self.highs.budget
        self._build(self._budget_problem(b.budget), hill_breakpoints=hill_breakpoints)
        self._set_model_budget(now)

    def _set_model_budget(self, budget: float) -> None:
        self.built.model.budget = budget
        self.highs.set_budget(budget)

    def _at_budget(self, budget: float) -> None:
        """Put the built model at ``budget``, rebuilding only where a bound would loosen."""
        b = self._built
        if b is None or (np.any(b.arrays.budget_bounded) and budget > b.budget):
            self._build(self._budget_problem(budget))
        else:
            self._set_model_budget(budget)

    # ------------------------------------------------------------------ changes between solves

    def set_costs(self, cost: np.ndarray) -> None:
        """New all-in prices per hour [$/h], in source order; the cuts stay valid.

        Changes the budget row's coefficients in HiGHS's model (HiGHS keeps its basis); rebuilds
        only where a source's bound came from the budget and would loosen.
        """
        cost = np.asarray(cost, dtype=float)
        if cost.shape != (self.problem.n,) or not np.all(np.isfinite(cost) & (cost >= 0)):
            raise invalid("cost", cost, f"must be {self.problem.n} numbers ≥ 0 [$/h], one per source")
        self.problem = self.problem.with_cost(cost)
        b = self._built
        if b is None:
            return
        a = b.arrays
        if np.any(a.budget_bounded & (cost < a.cost)):
            self._rebuild()
            return
        # HiGHS takes the changed coefficients now; the Pyomo parameters, which the solve does not
        # read, when the model is next read (Program.model).
        self._params_stale |= cost != a.cost
        self.highs.set_costs(cost)
        a.cost = cost

    def set_budget(self, budget: float) -> None:
        """A new budget [$] for the built model (budget mode)."""
        if self.problem.mode is not Mode.BUDGET:
            raise invalid("budget", budget, "this program is in target mode")
        budget = check_budget(budget)
        self.problem = replace(self.problem, budget=budget)
        self._at_budget(budget)

    # ------------------------------------------------------------------ one solver call

    def _solve_once(self, deadline: float, *, rel_gap: float) -> Solution:
        left = deadline - time.perf_counter()
        if left <= 0:
            raise SolveError(f"out of time: the time limit of {self.time_limit:g} s was reached while refining")
        sol = self.highs.solve(left, rel_gap)
        if sol.status == "optimal":
            return sol
        if sol.status == "time":
            raise SolveError(f"out of time: HiGHS reached the time limit of {self.time_limit:g} s")
        if sol.status == "infeasible":
            raise SolveError(self._diagnose())
        raise SolveError("unbounded: the value has no ceiling (a free, unlimited source?)")

    # ------------------------------------------------------------------ budget mode

    def _refine(self, deadline: float, tolerance: float) -> _Refined:
        """Solve at the model's budget and refine until the bounds agree within ``tolerance``.

        Every round either certifies, adds cuts that cut off the current point by more than
        :data:`CUT_MIN_EXCESS`, splits the segments of the hill curves' piecewise forms around
        the plan point where the gap lies, or tightens the MIP gap when that is where it lies.
        """
        rel_gap = tolerance * MIP_GAP_SHARE
        for rounds in range(1, MAX_ROUNDS + 1):
            built = self.built
            a = built.arrays
            res = self._solve_once(deadline, rel_gap=rel_gap)
            x = np.clip(res.x, 0.0, built.plan_upper)
            w = np.clip(res.w, 0.0, a.upper)
            _e, v = a.value_of(w)
            true_value = built.true_objective(v)
            bound = res.bound
            upper = max(float(bound), true_value)
            gap = (upper - true_value) / max(abs(upper), 1e-12)
            if gap <= tolerance or upper - true_value <= VALUE_ABS_TOLERANCE:
                return _Refined(self.highs.budget, x, true_value, upper, gap, rounds, res, w=w)
            if not self._progress(built, w, res.z, v, upper, float(bound) - res.objective):
                if rel_gap > TOLERANCE_FLOOR:
                    rel_gap = max(rel_gap / 10, TOLERANCE_FLOOR)
                    continue
                raise SolveError(
                    f"not certified: the gap {gap:.2e} does not close below the tolerance {tolerance:.0e} "
                    "(solver precision): raise --tolerance"
                )
        raise SolveError(
            f"not certified: after {MAX_ROUNDS} rounds the gap is {gap:.2e}, above the tolerance "
            f"{tolerance:.0e}: raise --tolerance"
        )

    def _progress(
        self, built: BuiltModel, x: np.ndarray, z: np.ndarray, v: np.ndarray, upper: float, mip_gap: float
    ) -> bool:
        """Make the round's progress where the gap lies; False if neither cuts nor breakpoints help.

        ``x`` is the hours each curve's value is read at, ``z`` the value the model credits
        each curve, ``v`` its true value, ``mip_gap`` the solver's bound less its objective.
        """
        a = built.arrays
        excess = z - v
        over = excess > max(CUT_THRESHOLD * max(1.0, abs(upper)), CUT_MIN_EXCESS)
        cut_part = float(np.sum(np.maximum(excess[a.concave], 0.0)))
        hill_part = float(np.sum(np.maximum(excess[~a.concave], 0.0)))
        mip_part = max(0.0, mip_gap)
        if mip_part > cut_part + hill_part:
            return False  # the gap is the branch and bound's: tighten it
        candidates = np.flatnonzero(over & a.concave)
        if len(candidates) and (cut_part >= hill_part or not np.any(over & ~a.concave)):
            rows = add_cuts(built, candidates, a.rate[candidates] * (a.held[candidates] + x[candidates]))
            if len(rows[0]):
                self.highs.add_cuts(*rows)
                return True
        coarse = [i for i in np.flatnonzero(over & ~a.concave).tolist() if i in built.hill_breakpoints]
        if coarse:
            points = dict(built.hill_breakpoints)
            for i in coarse:
                points[i] = refined_breakpoints(points[i], float(x[i]))
            self._rebuild(hill_breakpoints=points)
            return True
        return False

    def _check_minimum_orders(self) -> None:
        p = self.problem
        budget = float(p.budget or 0.0)
        room = self.built.room
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

    def solve(self) -> Plan:
        """Solve, refine until certified, and read the duals.

        Raises
        ------
        SolveError
            Infeasible (with its cause), unbounded, out of time, or not certified.
        """
        t0 = time.perf_counter()
        deadline = t0 + self.time_limit
        if self.problem.mode is Mode.TARGET:
            return self._solve_target(t0, deadline)
        return self._solve_budget(t0, deadline)[0]

    def _solve_budget(self, t0: float, deadline: float) -> tuple[Plan, _Refined]:
        """The certified plan at the model's budget, and the refined solve it was read from."""
        self._check_minimum_orders()
        r = self._refine(deadline, self.tolerance)
        lam, shadow = self._duals(r.results)
        return self._read(r, lam, shadow, rounds=r.rounds, gap=r.gap, money_lower_bound=math.nan, t0=t0), r

    def _read(
        self, r: _Refined, lam: float, shadow: dict[str, float], *, rounds: int, gap: float,
        money_lower_bound: float, t0: float,
    ) -> Plan:  # fmt: skip
        return read_plan(
            self.problem,
            x=r.x,
            room=self.built.room,
            value=r.value,
            value_upper_bound=r.upper,
            gap=gap,
            tolerance=self.tolerance,
            lambda_=lam,
            shadow_prices=shadow,
            rounds=rounds,
            cuts=self.built.cut_count,
            build_seconds=self.build_seconds,
            solve_seconds=time.perf_counter() - t0,
            money_lower_bound=money_lower_bound,
        )

    # ------------------------------------------------------------------ target mode

    def _most_money(self) -> float:
        """Money that buys everything availability and capacities allow [$]; inf if unlimited."""
        p = self.problem
        room = source_arrays(self._budget_problem(0.0)).room
        finite = np.isfinite(room)
        if np.any(~finite & (p.cost > 0)):
            return math.inf
        return float(np.sum(np.where(finite, p.cost * room, 0.0)) + np.sum(p.column("fixed_fee_usd")))

    def _evaluate(self, budget: float, deadline: float, target: float) -> tuple[_Refined, str]:
        """A certified budget-mode solve at ``budget``, decided against the target: ``"reaches"``
        (the plan's true value is at least the target) or ``"short"`` (the upper bound is below it)."""
        self._at_budget(budget)
        tolerance = self.tolerance
        while True:
            r = self._refine(deadline, tolerance)
            r.lam = self._budget_dual(r)
            noise = REACH_NOISE * max(1.0, abs(target))
            if r.value >= target - noise:
                return r, "reaches"
            if r.upper < target - noise or tolerance <= TOLERANCE_FLOOR:
                return r, "short"
            # Undecided: the value gap spans the target. A value gap g leaves the money
            # undecided over about g / λ; ask for half the money tolerance's worth of value.
            needed = 0.5 * self.tolerance * r.lam * budget / target if r.lam > 0 else 0.0
            tolerance = max(TOLERANCE_FLOOR, min(0.5 * tolerance, needed) if needed > 0 else 0.1 * tolerance)

    def _solve_target(self, t0: float, deadline: float) -> Plan:
        p = self.problem
        target = float(p.target or 0.0)
        steps = 0
        most = self._most_money()
        lo = 0.0
        r, verdict = self._evaluate(0.0, deadline, target)
        hi, hi_r = (0.0, r) if verdict == "reaches" else (math.inf, None)
        lo_r = r if verdict == "short" else None
        if verdict == "short":
            with np.errstate(divide="ignore", invalid="ignore"):
                best_rate = np.max(np.where(p.cost > 0, p.rate / p.cost, 0.0), initial=0.0)
            guess = target / best_rate if best_rate > 0 else 1.0
            budget = min(max(guess, 1e-9), most)
        # Bracket: grow the budget until its plan reaches the target.
        while hi_r is None:
            steps += 1
            r, verdict = self._evaluate(budget, deadline, target)
            if verdict == "reaches":
                hi, hi_r = budget, r
                break
            lo, lo_r = budget, r
            if budget >= most or steps >= MAX_TARGET_STEPS:
                raise SolveError(
                    f"infeasible: target = {target:,.4g} is out of reach: the most value the sources' "
                    f"availability, the capacities and the mix bounds allow is {r.upper:,.4g}"
                )
            newton = budget + (target - r.value) / r.lam if r.lam > 0 else math.inf
            budget = min(most, max(2 * budget, newton * (1 + self.tolerance)) if math.isfinite(newton) else 2 * budget)
        # Narrow: aim a hair above the estimated root (Newton on λ from below for a linear
        # program, the secant through the bracket's ends with integers), so that one step lands
        # on each side of it; bisect when two steps in a row land on the same side.
        same_side, last = 0, ""
        while lo_r is not None:  # None: the hours held reach the target, no money needed
            top = min(hi, p.spend(hi_r.x))
            hair = 0.5 * self.tolerance * max(top, 1e-12)
            if top - lo <= 2 * hair or steps >= MAX_TARGET_STEPS:
                break
            steps += 1
            if lo_r.lam > 0 and not self.built.has_integers:
                estimate = lo + (target - lo_r.value) / lo_r.lam
            elif hi_r.value > lo_r.value:
                estimate = lo + (target - lo_r.value) * (top - lo) / (hi_r.value - lo_r.value)
            else:
                estimate = 0.5 * (lo + top)
            budget = min(max(estimate + hair, lo + hair), top - hair)
            if same_side >= 2:
                budget, same_side = 0.5 * (lo + top), 0
            r, verdict = self._evaluate(budget, deadline, target)
            same_side = same_side + 1 if verdict == last else 1
            last = verdict
            if verdict == "reaches":
                hi, hi_r = budget, r
            else:
                lo, lo_r = budget, r
        final, _ = self._evaluate(hi, deadline, target)
        lam, shadow = self._duals(final.results)
        spent = p.spend(final.x)
        gap = max(0.0, spent - lo) / max(spent, 1e-12)
        return self._read(final, lam, shadow, rounds=steps + 1, gap=gap, money_lower_bound=lo, t0=t0)

    def _budget_dual(self, r: _Refined) -> float:
        """λ of a refined budget-mode solve just made [value per $] (0 if the budget does not bind)."""
        if self.built.has_integers:
            return r.value / r.budget if r.budget > 0 else 0.0  # an average rate: a safe Newton step
        return self.highs.duals(r.results)[0]

    # ------------------------------------------------------------------ duals and diagnosis

    def _duals(self, res: Solution) -> tuple[float, dict[str, float]]:
        """λ and the shadow prices, from the LP (with integers fixed at the plan if any)."""
        lam, capacity, mix = self.highs.duals(res)
        shadow = dict.fromkeys(CAPACITIES, 0.0)
        names = [str(r) for r in self.built.model.R] + [f"max_share:{k}" for k in self.problem.max_share]
        for name, d in zip(names, capacity + mix, strict=True):
            shadow[name] = d if d > DUAL_ZERO else 0.0
        return float(lam), shadow

    def _diagnose(self) -> str:
        """Why no plan exists: which constraints conflict, and by how much."""
        p = self.problem
        built = self._built
        if built is None or not p.max_share:
            return "infeasible: no plan meets the budget and the capacities"
        m = built.model.clone()
        m.budget_row.deactivate()
        m.objective.deactivate()
        fee = p.column("fixed_fee_usd")
        m.least = pyo.Objective(
            expr=sum(float(built.arrays.cost[i]) * m.x[i] for i in m.S) + sum(float(fee[i]) * m.buy[i] for i in m.B)
        )
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
        for r in m.R:
            m.capacity[r].deactivate()
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


def solve_problem(problem: Problem, **options: Any) -> Plan:
    """Build and solve a problem: the plan, certified within ``tolerance`` (see :class:`Program`)."""
    return Program(problem, **options).solve()
