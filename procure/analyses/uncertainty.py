"""What a plan under uncertainty is worth: EVPI, VSS and the mean-scenario plan beside it.

:func:`solve_uncertain` solves the scenario program (:mod:`procure.program.solve.stochastic`) and
then, on the same objective (``(1 − W) E[V] + W CVaR_A[V]``):

* the wait-and-see value: in each scenario, the best plan knowing that scenario (a
  deterministic solve at its numbers, buying at the cheaper of today's and, with recourse,
  the later price); the plan's own objective of those values (their mean, or under a risk
  weight ``(1 − W) E + W CVaR_A`` of them) less the stochastic optimum is the EVPI, what a
  study that told the scenario in advance is worth;
* the mean-scenario plan: the plan made for each uncertain number's mean (with recourse, by
  the same recourse: a source it would rather buy later, at ``M`` times the mean later price,
  is not bought now; see :meth:`~procure.program.numbers.scenarios.ScenarioProblem.mean_scenario`);
  valued in the scenarios (with recourse, each scenario then adds its best later hours), its
  objective falls short of the stochastic optimum by the VSS.

Both are differences of certified values, each known within the tolerance; a negative
difference no larger than that reads as 0. The per-scenario solves run in chunks
(:mod:`procure.analyses.scale`), here or on Dask.

One :class:`~procure.analyses.scale.Deadline` bounds every solve of :func:`solve_uncertain`:
the plan's, each chunk's (a chunk that starts late gets the time that is left) and the
mean-scenario plan's, each model's build counted. Out of time, one
:class:`~procure.errors.SolveError` (``Reason.TIME_LIMIT``) says what was finished.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ..defaults import DEFAULT_TIME_LIMIT, DEFAULT_TOLERANCE
from ..errors import Reason, SolveError
from ..program.numbers.problem import Problem
from ..program.numbers.scenarios import ScenarioProblem
from ..program.readout.plan import LEAST_VALUE_SCALE, Plan
from ..program.rows import plan_within
from ..program.solve.certify import dual_certified
from ..program.solve.program import Program, solve_problem
from ..program.solve.stochastic import ScenarioPlan, scenario_plan, scenario_values
from ..program.solve.wait_and_see import qualifies, wait_and_see_values
from .scale import Deadline, chunks, run_chunks

#: Scenarios per chunk of the wait-and-see solves where each is solved on its own (a program
#: with integer terms, or a curve the dual cannot invert): a chunk is one task on a Dask worker.
SCENARIOS_PER_CHUNK = 10
#: (scenario, source) pairs per chunk where the scenarios' duals are minimised together
#: (:mod:`procure.program.solve.wait_and_see`): 4,000 scenarios of 5 sources, 20 of 1,000 sources;
#: the scenarios they do not certify are then solved on their own, in chunks of
#: :data:`SCENARIOS_PER_CHUNK`.
SCENARIO_CELLS_PER_CHUNK = 20_000


def wait_and_see_chunk(options: dict[str, Any], part: ScenarioProblem) -> list[float]:
    """The best value of each scenario of ``part`` known in advance, certified by the scenarios'
    duals minimised together (:func:`procure.program.solve.wait_and_see.wait_and_see_values`) [own-hour
    eq.]; NaN for a scenario they do not certify (it is then solved on its own, :func:`best_values`).

    ``options`` as :func:`best_values`'s (``tolerance``; ``deadline`` checked before the chunk).
    """
    deadline = options.get("deadline")
    if deadline is not None:
        deadline.time_limit()  # out of time: raise before the chunk
    found = wait_and_see_values(part, float(options.get("tolerance", DEFAULT_TOLERANCE)))
    return [math.nan if v is None else v for v in found]


def best_values(options: dict[str, Any], problems: list[Problem]) -> list[float]:
    """The certified value of the best plan of each deterministic problem [own-hour eq.]: by the
    dual alone where it certifies (:mod:`procure.program.solve.certify`), else by the Pyomo program.

    ``options`` are :class:`~procure.program.solve.program.Program`'s (``tolerance``, ``time_limit`` of
    each solve), or ``tolerance`` and ``deadline``, a :class:`~procure.analyses.scale.Deadline`
    that every solve of the chunk ends by (a chunk that starts late gets what is left).
    """
    tolerance = float(options.get("tolerance", DEFAULT_TOLERANCE))
    deadline = options.get("deadline")
    values = []
    start = None  # each scenario's dual starts where the one before ended: they are alike
    for p in problems:
        if deadline is not None:
            deadline.time_limit()  # out of time: raise before the next problem
        quick = dual_certified(p, tolerance, start)
        if quick is not None:
            values.append(quick[0])
            start = quick[1]
        elif deadline is None:
            values.append(solve_problem(p, **options).value)
        else:
            values.append(solve_by(p, deadline, tolerance=tolerance)[1].value)
    return values


def solve_by(
    problem: Problem | ScenarioProblem, deadline: Deadline, *, tolerance: float, fixed_hours: np.ndarray | None = None
) -> tuple[Program, Plan]:
    """Build and solve a program within what is left of ``deadline``, its build counted.

    Parameters
    ----------
    problem : Problem or ScenarioProblem
        What to solve (see :class:`~procure.program.solve.program.Program`).
    deadline : Deadline
        When the solve must have ended.
    tolerance : float
        Relative gap of the certificate [1].
    fixed_hours : numpy.ndarray, optional
        Hours bought now, fixed (to value a given plan with recourse) [h].

    Returns
    -------
    (Program, Plan)
        The solved program and its plan.

    Raises
    ------
    SolveError
        ``Reason.TIME_LIMIT`` when the deadline passes before or during the solve; what the
        solve raises.
    """
    program = Program(problem, tolerance=tolerance, time_limit=deadline.time_limit(), fixed_hours=fixed_hours)
    program.time_limit = deadline.time_limit()  # what the build left
    return program, program.solve()


@contextmanager
def out_of_time(deadline: Deadline, finished: Callable[[], str]) -> Iterator[None]:
    """Turn a solve's time-out into the deadline's one line, saying ``finished()``."""
    try:
        yield
    except SolveError as exc:
        if exc.reason is not Reason.TIME_LIMIT:
            raise
        raise deadline.expired(finished()) from exc


def _within_tolerance(difference: float, scale: float, tolerance: float) -> float:
    """``difference``, or 0 where it is negative by no more than the certification tolerance."""
    return 0.0 if -2 * tolerance * max(abs(scale), LEAST_VALUE_SCALE) <= difference < 0 else difference


def _silent_ranges(problem: ScenarioProblem) -> list[str]:
    """A note when the scenarios' prices differ but nothing is bought later: they change nothing."""
    later = problem.later_cost
    if problem.recourse_price_x is None and np.ptp(later, axis=0).max(initial=0.0) > 0:
        return [
            "the scenarios' prices (price_usd_per_hour) change nothing without --recourse-price-x: they are "
            "the prices of hours bought later, and no hour is bought later"
        ]
    return []


def solve_uncertain(
    problem: ScenarioProblem,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    time_limit: float = DEFAULT_TIME_LIMIT,
    information: bool = True,
    scheduler: str | None = None,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    deadline: Deadline | None = None,
) -> ScenarioPlan:
    """The plan under uncertainty, with EVPI, VSS and the mean-scenario plan.

    Parameters
    ----------
    problem : ScenarioProblem
        Scenarios, risk measure and recourse.
    tolerance : float
        Relative gap of every solve [1] (see :class:`procure.program.solve.program.Program`).
    time_limit : float
        Wall time of all the solves together, builds counted [s], > 0.
    information : bool, default True
        Compute EVPI and VSS (one solve per scenario more); False leaves them NaN.
    scheduler : str, optional
        A Dask scheduler's address for the per-scenario solves.
    workers : int, optional
        Worker processes of a local cluster when one pays (1: all in this process; at most
        the machine's cores, with a note when capped).
    progress : callable, optional
        ``progress(done, total)`` as chunks of scenarios finish.
    deadline : Deadline, optional
        Instead of ``time_limit``: when all the solves must have ended.

    Raises
    ------
    SolveError
        No certified plan; ``Reason.TIME_LIMIT`` when the time ran out, saying what was finished.
    """
    deadline = deadline or Deadline.after(time_limit)
    with out_of_time(deadline, lambda: "before the plan was certified"):
        program, solved = solve_by(problem, deadline, tolerance=tolerance)
        plan = scenario_plan(program, solved)
    notes: list[str] = _silent_ranges(problem)
    if not information:
        return replace(plan, notes=plan.notes + notes)
    where: list[str] = []
    together = qualifies(problem)  # the scenarios' duals minimised together, chunks of many
    size = max(1, SCENARIO_CELLS_PER_CHUNK // problem.n) if together else SCENARIOS_PER_CHUNK
    done = [0, 0]  # scenarios certified before this run of chunks, chunks of it finished

    def tick(finished: int, total: int) -> None:
        done[1] = finished
        if progress is not None:
            progress(finished, total)

    def evpi_part() -> str:
        solved = min(done[0] + done[1] * size, problem.count)
        return (f"after the plan, with {solved:,} of the {problem.count:,} per-scenario solves of EVPI done (skip "
                f"EVPI and VSS with {deadline.skip})")  # fmt: skip

    options: dict[str, Any] = {"tolerance": tolerance, "deadline": deadline}

    def run(func: Callable[[dict[str, Any], Any], list[float]], parts: list[Any]) -> list[float]:
        return run_chunks(func, parts, args=(options,), scheduler=scheduler, workers=workers, progress=tick,
                          notes=notes, where=where, deadline=deadline)  # fmt: skip

    with out_of_time(deadline, evpi_part):
        best = np.full(problem.count, math.nan)
        if together:
            best = np.array(run(wait_and_see_chunk, [problem.subset(ks) for ks in chunks(range(problem.count), size)]))
        rest = np.flatnonzero(np.isnan(best))
        if len(rest):  # each scenario the duals together did not certify, on its own
            size, done[:] = SCENARIOS_PER_CHUNK, [problem.count - len(rest), 0]
            best[rest] = run(best_values, chunks([problem.scenario(int(k)) for k in rest], SCENARIOS_PER_CHUNK))
    wait_and_see = problem.objective(best)
    vss_part = (f"after the plan and EVPI's {problem.count:,} per-scenario solves, before the mean-scenario plan of "
                f"VSS was certified (skip EVPI and VSS with {deadline.skip})")  # fmt: skip
    with out_of_time(deadline, lambda: vss_part):
        mean, now = problem.mean_scenario()
        made = solve_by(mean, deadline, tolerance=tolerance)[1]
        # made within the mean problem's rows, by its solver's tolerance: pulled inside this one's
        mean_hours = plan_within(problem.base, np.where(now, made.sources["hours"].to_numpy(dtype=float), 0.0),
                                 problem.rate)  # fmt: skip
        if problem.recourse_price_x is None:
            mean_values = scenario_values(problem, mean_hours)
            mean_objective = problem.objective(mean_values)
        else:
            fixed_program, fixed_plan = solve_by(problem, deadline, tolerance=tolerance, fixed_hours=mean_hours)
            fixed = scenario_plan(fixed_program, fixed_plan)
            mean_values = fixed.scenario_values["value"].to_numpy(dtype=float)
            mean_objective = fixed.value
    rp = plan.value
    mean_table = pd.DataFrame(
        {"scenario": list(problem.names), "probability": problem.probability, "value": mean_values}
    )
    return replace(
        plan,
        evpi=_within_tolerance(wait_and_see - rp, rp, tolerance),
        vss=_within_tolerance(rp - mean_objective, rp, tolerance),
        wait_and_see=wait_and_see,
        mean_plan_objective=mean_objective,
        mean_plan_values=mean_table,
        mean_plan_hours=mean_hours,
        notes=plan.notes + notes,
        ran_on="; ".join(where),
    )
