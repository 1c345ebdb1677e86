"""A request checked and built, and its solve: :class:`SolveRequest` (what
:func:`procure.analyses.solving.prepare` returns) solves it into a :class:`Solution`, the plan
(or the plan under scenarios with EVPI and VSS) and, asked for, the byte-price range over which
it keeps its shape, all within the request's one time limit (see
:mod:`procure.analyses.solving`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..defaults import DEFAULT_TIME_LIMIT, DEFAULT_TOLERANCE
from ..output import jsonable
from ..program import Plan, Problem
from ..program.numbers.infrastructure import Infrastructure
from ..program.numbers.periods import PeriodProblem
from ..program.numbers.problem import Mode
from ..program.numbers.scenarios import ScenarioProblem
from ..program.solve.stochastic import ScenarioPlan
from .scale import Deadline

__all__ = ["ARGUMENT_NAMES", "Solution", "SolveRequest"]

#: How messages name the arguments of :func:`~procure.analyses.solving.prepare`: as Python arguments. The command line
#: passes its own option names instead (``names``).
ARGUMENT_NAMES = {
    "budget": "budget",
    "budget_or_target": "budget=B or target=V",
    "ranging": "ranging",
    "risk_alpha": "risk_alpha",
    "risk_weight": "risk_weight",
    "recourse_price_x": "recourse_price_x",
    "scheduler": "scheduler",
    "workers": "workers",
    "time_limit": "time_limit",
    "evpi": "evpi=False",
    "scenarios": "scenarios=PATH",
    "samples": "samples=N",
    "periods": "periods=PATH",
    "carry": "carry=False",
    "formats": "formats",
    "cores_choices": "cores_choices",
    "rent": "rent",
}


@dataclass(frozen=True)
class Solution:
    """A solved request.

    Attributes
    ----------
    result : Plan or ScenarioPlan
        The plan; a :class:`ScenarioPlan` when the request had scenarios.
    problem : Problem
        The deterministic problem it was made from (byte-price multiplier applied).
    byte_price_range : (float, float) or None
        With ``ranging``: the byte-price multipliers over which the plan keeps its shape [1].
    """

    result: Plan | ScenarioPlan
    problem: Problem
    byte_price_range: tuple[float, float] | None = None

    @property
    def plan(self) -> Plan:
        """What to buy now (the result's plan under scenarios)."""
        return self.result.plan if isinstance(self.result, ScenarioPlan) else self.result

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``procure solve --json``: the result's keys, and with ranging
        ``byte_price_range`` and whether each end is the search's limit."""
        record = self.result.to_dict()
        if self.byte_price_range is not None:
            from .sensitivity import RANGING_LIMITS

            lo, hi = self.byte_price_range
            record["byte_price_range"] = [lo, hi]
            record["byte_price_range_at_search_limit"] = [lo <= RANGING_LIMITS[0], hi >= RANGING_LIMITS[1]]
        return jsonable(record)


@dataclass(frozen=True)
class SolveRequest:
    """A request checked and built, ready to solve (see :func:`~procure.analyses.solving.prepare`).

    Attributes
    ----------
    problem : Problem
        The deterministic problem (byte-price multiplier applied).
    scenarios : ScenarioProblem or None
        The scenario program, when the request has scenarios.
    tolerance : float
        Of every solve: relative gap [1].
    time_limit : float
        Wall time of all the solves of :meth:`solve` together, from its start [s] (see the
        module's docstring for what it leaves out).
    evpi : bool
        Under scenarios, compute EVPI and VSS (one solve per scenario more).
    scheduler : str or None
        A Dask scheduler's address for the per-scenario solves, in full
        (``tcp://host:port`` or ``tls://host:port``), checked to answer.
    workers : int or None
        Worker processes of a local Dask cluster (1: none; at most the machine's cores).
    ranging : bool
        Also find the byte-price multipliers over which the plan keeps its shape.
    time_limit_name, evpi_name : str
        How messages name the time limit and skipping EVPI (:data:`ARGUMENT_NAMES`, or the
        command's options).
    periods : PeriodProblem or None
        The program over periods, when the request has periods (:mod:`procure.program.numbers.periods`).
    options : Infrastructure or None
        The purchase options, when the request chooses infrastructure (:mod:`procure.analyses.infra`).
    """

    problem: Problem
    scenarios: ScenarioProblem | None
    tolerance: float = DEFAULT_TOLERANCE
    time_limit: float = DEFAULT_TIME_LIMIT
    evpi: bool = True
    scheduler: str | None = None
    workers: int | None = None
    ranging: bool = False
    time_limit_name: str = ARGUMENT_NAMES["time_limit"]
    evpi_name: str = ARGUMENT_NAMES["evpi"]
    periods: PeriodProblem | None = None
    options: Infrastructure | None = None

    @property
    def task(self) -> str | None:
        """What a progress bar of the solve says; None when the solve has no steps to count."""
        if self.scenarios is None:
            return None
        return f"solving {self.scenarios.count} scenarios one by one (EVPI)"

    def solve(self, progress: Callable[[int, int], None] | None = None) -> Solution:
        """Solve the request.

        Parameters
        ----------
        progress : callable, optional
            ``progress(done, total)`` as chunks of the per-scenario solves finish.

        Raises
        ------
        SolveError
            No certified plan (its ``reason`` says why); ``Reason.TIME_LIMIT`` when the time
            limit ran out, saying what was finished.
        """
        deadline = Deadline.after(self.time_limit, self.time_limit_name, self.evpi_name)
        from .uncertainty import out_of_time

        if self.scenarios is not None:
            from .uncertainty import solve_uncertain

            result = solve_uncertain(self.scenarios, tolerance=self.tolerance, information=self.evpi,
                                     scheduler=self.scheduler, workers=self.workers, progress=progress,
                                     deadline=deadline)  # fmt: skip
            return Solution(result, self.problem)
        from ..program.solve import program  # the solver, looked up when the solve runs

        with out_of_time(deadline, lambda: "before the plan was certified"):
            if self.options is not None:
                from .infra import CountSolve, solve_infrastructure

                def over(inf: Infrastructure, cuts: Sequence[tuple[int, float]]) -> CountSolve:
                    solver = program.Program(inf, tolerance=self.tolerance, time_limit=deadline.time_limit(),
                                             cuts=cuts)  # fmt: skip
                    solver.time_limit = deadline.time_limit()  # the build counts against the limit
                    if solver.problem.mode is Mode.TARGET:
                        done = solver.solve()
                        return CountSolve(done.spent_usd, done.money_lower_bound, done.rounds, done.build_seconds,
                                          solver.built.cuts(), lambda: done)  # fmt: skip
                    t0 = time.perf_counter()
                    r = solver.refined()
                    return CountSolve(r.value, r.upper, r.rounds, solver.build_seconds, solver.built.cuts(),
                                      lambda: solver.plan_of(r, t0))  # fmt: skip

                plan = solve_infrastructure(self.options, over)
            else:
                asked: Problem | PeriodProblem = self.problem if self.periods is None else self.periods
                plan = program.solve_problem(asked, tolerance=self.tolerance, time_limit=deadline.time_limit(),
                                             time_left=deadline.time_limit)  # fmt: skip
        span = None
        if self.ranging:
            from .sensitivity import byte_price_range

            with out_of_time(deadline, lambda: "after the plan, before its byte-price range was found"):
                span = byte_price_range(self.problem, deadline=deadline)
        return Solution(plan, self.problem, span)
