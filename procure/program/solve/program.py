"""Solving the program: build it, refine until certified, re-solve after a change, read the duals.

How (measured on 2 cores; ``benchmarks/solve_scaling.py``):

* The model's optimum is an upper bound, the plan's true value a lower bound (:mod:`procure.program.model.forms`).
* Each round that does not certify makes progress it can prove (:mod:`procure.program.solve.refine`).
* HiGHS keeps its basis over new cuts, budgets and costs (:mod:`procure.program.model.highs`).
* Target mode brackets the money with budget-mode solves (:mod:`procure.program.solve.target`).
* λ and the shadow prices are row duals, with integers those of the LP with them fixed at the plan
  (:meth:`procure.program.model.highs.HighsModel.row_duals`).
* The state has one owner each, which :class:`Program` sets (``docs/program.md``, "One formulation over explicit axes").
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import highspy
import numpy as np
import pyomo.environ as pyo
from pyomo.common.gc_manager import PauseGC

from ...defaults import DEFAULT_TIME_LIMIT, DEFAULT_TOLERANCE
from ...errors import Reason, SolveError, invalid
from ...ledger.schema import OPTION_FIELDS
from ...spec import check
from ..model.build import BuiltModel, Formulation, build
from ..model.forms import DEFAULT_HILL_POINTS
from ..model.highs import SIMPLEX, HighsModel, SolverResult
from ..numbers.bounds import check_lots
from ..numbers.infrastructure import Infrastructure
from ..numbers.periods import PeriodProblem, single_period
from ..numbers.problem import Mode, Problem, check_budget
from ..numbers.scenarios import ScenarioProblem, one_scenario
from ..readout.plan import Plan
from ..readout.solved import exact_solve, plan_of
from .changes import reprice
from .diagnose import diagnose
from .hill_range import narrowing
from .refine import refine
from .state import Refined, Solved
from .target import solve_target

#: Time Python's collector takes over the objects of a model built while it was paused, once
#: it runs again, as a share of the time the build took [1], ≥ 0. A build gets the time left
#: over 1 + this share, so that the build and that collection end by the deadline. Measured
#: 0.18 (the model kept) to 0.33 (a build cut short, its objects dropped) on 200 periods × 50
#: scenarios, 13 million objects (``benchmarks/time_limit.py``).
BUILD_COLLECT_SHARE = 0.35


class Program:
    """A built model and its persistent solver, re-solvable after a change of costs or budget.

    Parameters
    ----------
    problem : Problem, ScenarioProblem or PeriodProblem
        What to allocate: a problem (budget or target mode; one scenario), a scenario problem
        (budget mode) or a problem over periods (:mod:`procure.program.numbers.periods`; budget or
        target mode).
    tolerance : float, default 1e-4
        Relative gap to stop at: between the upper bound and the plan's true value (budget
        mode), or between the least money and the plan's money (target mode).
    time_limit : float, default 120
        Wall-time limit for all the solves of one :meth:`solve` [s].
    hill_points : int, default 17
        Breakpoints of the first piecewise form of an S-shaped hill curve.
    fixed_hours : numpy.ndarray, optional
        Hours bought now of each source, fixed: the program then only chooses what each
        scenario adds later (to value a given plan with recourse).
    dual_guide : bool, default True
        Place the cuts at the optimum the dual gives, where the program qualifies, so that one
        solve certifies (:mod:`procure.program.dual`); False refines from spread first cuts
        (the same plan within the tolerance; for comparison).
    cuts : sequence of (int, float), optional
        Tangent points to start from, as (curve, effective hours) (:meth:`BuiltModel.cuts
        <procure.program.model.build.BuiltModel.cuts>` of another program over the same
        sources): a tangent of a concave curve lies above it everywhere, so the cuts of a
        program over the same curves hold here too, and save the rounds that would place them.
    """

    def __init__(
        self,
        problem: Problem | Formulation,
        *,
        tolerance: float = DEFAULT_TOLERANCE,
        time_limit: float = DEFAULT_TIME_LIMIT,
        hill_points: int = DEFAULT_HILL_POINTS,
        fixed_hours: np.ndarray | None = None,
        dual_guide: bool = True,
        cuts: Sequence[tuple[int, float]] = (),
    ) -> None:
        if not (isinstance(tolerance, int | float) and 0 < tolerance < 1):
            raise invalid("tolerance", tolerance, "must be a number > 0 and < 1")
        time_limit = check(OPTION_FIELDS["time_limit"], time_limit)
        if not (isinstance(hill_points, int) and hill_points >= 2):
            raise invalid("hill_points", hill_points, "must be a whole number ≥ 2")
        #: A one-period problem, solved as today's program (:func:`procure.program.numbers.periods.single_period`)
        #: and read out over its period.
        self.single: PeriodProblem | None = None
        if isinstance(problem, PeriodProblem) and problem.count == 1 and problem.scenario_quality is None:
            self.single, problem = problem, single_period(problem)
        if isinstance(problem, ScenarioProblem) and problem.certain:
            problem = problem.settled()  # the deterministic paths read the base's numbers
        self.formulation: Formulation = (
            problem if isinstance(problem, ScenarioProblem | PeriodProblem | Infrastructure) else one_scenario(problem)
        )
        self.tolerance = float(tolerance)
        self.time_limit = float(time_limit)
        self.build_seconds = 0.0
        #: When the build and solves under way must end (:func:`time.perf_counter`) [s]: from
        #: now until :meth:`solve` starts, then from its start.
        self.deadline = time.perf_counter() + self.time_limit
        #: How long the last build of the model took [s]: what a rebuild is expected to take.
        self.last_build_seconds = 0.0
        self.fixed_hours = None if fixed_hours is None else np.asarray(fixed_hours, dtype=float)
        self.dual_guide = bool(dual_guide)
        self.first_hill_points = hill_points
        #: Tangent points the first build starts from (curve, effective hours).
        self._first_cuts = list(cuts)
        self._built: BuiltModel | None = None
        self._highs: HighsModel | None = None
        #: Per source, the bound on its hours proven at the budget the model holds (S-shaped
        #: sources, :mod:`procure.program.solve.hill_range`); None: the sources' own bounds.
        self.narrowed: np.ndarray | None = None
        #: The value the narrowed bounds were proven against: no plan beyond them is worth more
        #: [own-hour equivalents] (−inf: none narrowed).
        self.narrowed_value = -math.inf
        #: The best true value of a plan found at the budget the model holds, which a rebuild
        #: narrows the bounds against [own-hour equivalents].
        self.incumbent = -math.inf
        #: False once a plan sat on a narrowed bound: the model then keeps the sources' own.
        self.narrowing = True
        #: What the last :meth:`solve` ended with (None before the first).
        self.last: Solved | None = None
        if self.problem.mode is Mode.BUDGET:
            self._build(self.formulation)

    @property
    def problem(self) -> Problem:
        """Today's numbers: the sources, their prices and bills, capacities and the question."""
        return self.formulation.base

    # ------------------------------------------------------------------ the built model

    def _build(self, formulation: Formulation, *, hill_breakpoints: dict[int, np.ndarray] | None = None,
               budget: float | None = None) -> None:  # fmt: skip
        """Build the budget-mode model of ``formulation`` and hand it to a new HiGHS object,
        keeping the cuts of the model it replaces, from the S-shaped curves' ``hill_breakpoints``
        where given; ``budget``, the budget it will be put at where not ``formulation``'s [$]."""
        old = self._built
        t0 = time.perf_counter()
        # the build ends early enough for Python's collector to go over its objects once the
        # collector is on again, and still end by the deadline
        built_by = t0 + (self.deadline - t0) / (1.0 + BUILD_COLLECT_SHARE)
        narrowed, hill_breakpoints = narrowing(self, formulation, hill_breakpoints, budget)
        with PauseGC():  # a model is hundreds of thousands of objects that live on: nothing to collect
            try:
                self._built = build(formulation, hill_points=self.first_hill_points,
                                    hill_breakpoints=hill_breakpoints,
                                    cuts=old.cuts() if old is not None else self._first_cuts,
                                    fixed_hours=self.fixed_hours, dual_guide=self.dual_guide,
                                    deadline=built_by, narrowed=narrowed)  # fmt: skip
                self._highs = HighsModel(self._built, self.deadline)
            except SolveError as exc:
                if exc.reason is not Reason.TIME_LIMIT:
                    raise
                where = str(exc).split(" while ", 1)[-1]  # what the build was doing
                raise SolveError(f"out of time: the time limit of {self.time_limit:g} s was reached while {where}",
                                 Reason.TIME_LIMIT) from None  # fmt: skip
        self.last_build_seconds = time.perf_counter() - t0
        self.build_seconds += self.last_build_seconds

    @property
    def built_if_any(self) -> BuiltModel | None:
        """The built model, or None before a target-mode program's first solve."""
        return self._built

    @property
    def built(self) -> BuiltModel:
        """The built model (in target mode, at the budget of the last solve)."""
        if self._built is None:
            raise invalid("model", None, "a target-mode program builds its model when it solves")
        return self._built

    @property
    def model(self) -> pyo.ConcreteModel:
        """The Pyomo model: the program that is solved, cuts and piecewise forms included (any
        Pyomo solver gives the plan's upper bound from it; ``model.write("plan.lp")`` writes it)."""
        return self.built.model

    @property
    def highs(self) -> HighsModel:
        """The model as handed to HiGHS."""
        if self._highs is None:
            raise invalid("model", None, "a target-mode program builds its model when it solves")
        return self._highs

    @property
    def budget(self) -> float:
        """The budget the model holds [$] (its ``budget`` parameter)."""
        return float(self.built.model.budget.value)

    def _with_budget(self, budget: float) -> Formulation:
        return replace(self.formulation, base=self.problem.asking(budget=budget, target=None))

    def rebuild(self, *, hill_breakpoints: dict[int, np.ndarray] | None = None, deadline: float = math.inf) -> None:
        """Rebuild at the bounds' budget, keeping cuts, breakpoints and the budget now set.

        Raises
        ------
        SolveError
            ``Reason.TIME_LIMIT`` where a build as long as the last, with the collection of its
            objects (:data:`BUILD_COLLECT_SHARE`), would end past ``deadline``
            (:func:`time.perf_counter`) [s]: a build once started runs to its end.
        """
        if time.perf_counter() + self.last_build_seconds * (1.0 + BUILD_COLLECT_SHARE) > deadline:
            raise SolveError(
                f"out of time: the time limit of {self.time_limit:g} s would pass while the model is rebuilt with "
                f"finer breakpoints (its last build took {self.last_build_seconds:.1f} s)",
                Reason.TIME_LIMIT,
            )
        now, old = self.budget, self.built
        points = old.hill_breakpoints if hill_breakpoints is None else hill_breakpoints
        self._build(self._with_budget(old.bounds_budget), hill_breakpoints=points, budget=now)
        self._put_budget(now)

    def _put_budget(self, budget: float) -> None:
        self.built.model.budget.set_value(float(budget))
        self.highs.sync_budget()

    def at_budget(self, budget: float) -> None:
        """Put the built model at ``budget``, rebuilding only where a bound would loosen, was
        proven at another budget (:attr:`narrowed`), or breakpoints were placed over what
        another budget buys (:attr:`procure.program.model.build.BuiltModel.hill_budget_ranges`)."""
        b = self._built
        bounded = b is not None and (b.budget_dependent or b.budget_bounds)
        moved = b is not None and budget != self.budget
        if moved:  # the best plan known and a plan's place on a narrowed bound were this budget's
            self.incumbent, self.narrowing = -math.inf, True
        again = b is not None and moved and (self.narrowed is not None or b.hill_budget_ranges.any())
        if b is None or (bounded and budget > b.bounds_budget) or again:
            self._build(self._with_budget(budget), hill_breakpoints=None if b is None else b.own_breakpoints())
        else:
            check_lots(self.problem, b.sources, budget)
            self._put_budget(budget)

    # ------------------------------------------------------------------ changes between solves

    def set_budget(self, budget: float) -> None:
        """A new budget [$] for the next :meth:`solve` (budget mode)."""
        budget = check_budget(budget)
        if self.problem.mode is not Mode.BUDGET:
            raise invalid("budget", budget, "the program is in target mode: its money is what it finds")
        self.formulation = replace(self.formulation, base=self.problem.asking(budget=budget))
        self.at_budget(budget)

    def reprice(self, problem: Problem) -> None:
        """The same sources at new prices or bills (a new byte price, say) [$/h]; the cuts stay valid.

        Sets the model's cost parameters (with recourse, the later costs too, which move with
        the transport bill) and sends the changed coefficients to HiGHS, which keeps its basis.
        Rebuilds instead where a bound the model was built with may no longer hold: a source's
        bound from the budget that a lower cost would loosen, bounds narrowed at the old prices
        (:attr:`narrowed`), or, with recourse, any curve's bound from the budget. Before a
        target-mode program's first solve, only its numbers change.

        Raises
        ------
        InputError
            ``problem`` has other sources than the program's, other numbers than their prices
            and bills (:data:`procure.program.numbers.question.PRICE_COLUMNS`), or a cost that is not ≥ 0; or the
            program is over periods (one period included: its prices and bills are the periods
            file's, which its read-out keeps).
        """
        reprice(self, problem)

    def set_costs(self, cost: np.ndarray) -> None:
        """New all-in prices per hour [$/h], in source order, the purchase price taking the
        change (the bill's terms stay the pipeline's); see :meth:`reprice`."""
        cost = np.asarray(cost, dtype=float)
        if cost.shape != (self.problem.n,) or not np.all(np.isfinite(cost) & (cost >= 0)):
            raise invalid("cost", cost, f"must be {self.problem.n} numbers ≥ 0 [$/h], one per source")
        self.reprice(self.problem.with_cost(cost))

    # ------------------------------------------------------------------ one solver call

    def solve_once(
        self, deadline: float, *, rel_gap: float, cold: str = SIMPLEX, start: highspy.HighsSolution | None = None
    ) -> SolverResult:
        """One HiGHS solve of the model as it stands (``cold``: the method with no basis;
        ``start``: a point to start from instead, see :meth:`procure.program.model.highs.HighsModel.solve`);
        a :class:`SolveError` unless optimal."""
        left = deadline - time.perf_counter()
        if left <= 0:
            raise SolveError(
                f"out of time: the time limit of {self.time_limit:g} s was reached while refining", Reason.TIME_LIMIT
            )
        sol = self.highs.solve(left, rel_gap, cold=cold, start=start)
        if sol.status == "optimal":
            return sol
        if sol.status == "time":
            raise SolveError(f"out of time: HiGHS reached the time limit of {self.time_limit:g} s", Reason.TIME_LIMIT)
        if sol.status == "infeasible":
            raise SolveError(diagnose(self.built), Reason.INFEASIBLE)
        raise SolveError("unbounded: the value has no ceiling (a free, unlimited source?)", Reason.UNBOUNDED)

    # ------------------------------------------------------------------ solving

    def solve(self) -> Plan:
        """Solve, refine until certified, and read the plan and the duals.

        Raises
        ------
        SolveError
            Infeasible (with its cause), unbounded, out of time, or not certified; its
            ``reason`` says which.
        """
        t0 = time.perf_counter()
        deadline = self.deadline = t0 + self.time_limit
        if self.problem.mode is Mode.TARGET:
            with PauseGC():  # the cuts added are objects that live on with the model
                return solve_target(self, t0, deadline)
        return self.plan_of(self.refined(), t0)

    def refined(self) -> Refined:
        """Budget mode: the model refined until certified (its value and bound), the plan not
        yet read; :meth:`plan_of` reads it. The time limit counts from here."""
        self.deadline = time.perf_counter() + self.time_limit
        with PauseGC():  # the cuts added are objects that live on with the model
            return refine(self, self.deadline, self.tolerance)

    def plan_of(self, r: Refined, t0: float) -> Plan:
        """The plan of :meth:`refined`'s ``r``: its hours made exact, its λ and shadow prices
        (:func:`procure.program.readout.solved.exact_solve`), read (:meth:`read`); ``t0`` is when
        its solve began (:func:`time.perf_counter`) [s]."""
        with PauseGC():
            r, lam, shadow = exact_solve(self, r, self.deadline)
            return self.read(r, lam, shadow, rounds=r.rounds, gap=r.gap, money_lower_bound=math.nan, t0=t0)

    def read(
        self, r: Refined, lam: float, shadow: dict[str, float], *, rounds: int, gap: float,
        money_lower_bound: float, t0: float,
    ) -> Plan:  # fmt: skip
        """The plan of a refined solve (and record it as :attr:`last`; see
        :func:`procure.program.readout.solved.plan_of`)."""
        self.last = Solved(hours=r.x, curve_hours=r.w, refined=r)
        return plan_of(self, r, lam, shadow, rounds=rounds, gap=gap, money_lower_bound=money_lower_bound,
                       t0=t0, single=self.single, build_seconds=self.build_seconds)  # fmt: skip


def solve_problem(
    problem: Problem | Formulation, *, time_left: Callable[[], float] | None = None, **options: Any
) -> Plan:
    """Build and solve a problem: the plan, certified within ``tolerance`` (see :class:`Program`).

    ``time_left``, when given, is asked once the model is built for the seconds the solve may
    take [s] (so that the build counts against a command's time limit); it raises
    :class:`SolveError` (``Reason.TIME_LIMIT``) when none are left.
    """
    program = Program(problem, **options)
    if time_left is not None:
        program.time_limit = float(time_left())
    return program.solve()
