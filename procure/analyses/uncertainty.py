"""What a plan under uncertainty is worth: EVPI, VSS and the mean-scenario plan beside it.

:func:`solve_uncertain` solves the scenario program (:mod:`procure.program.stochastic`) and
then, on the same objective (``(1 − W) E[V] + W CVaR_A[V]``):

* the wait-and-see value: in each scenario, the best plan knowing that scenario (a
  deterministic solve at its numbers, buying at the cheaper of today's and, with recourse,
  the later price); the plan's own objective of those values (their mean, or under a risk
  weight ``(1 − W) E + W CVaR_A`` of them) less the stochastic optimum is the EVPI, what a
  study that told the scenario in advance is worth;
* the mean-scenario plan: the deterministic plan at each uncertain number's mean; valued in
  the scenarios (with recourse, each scenario then adds its best later hours), its objective
  falls short of the stochastic optimum by the VSS.

Both are differences of certified values, each known within the tolerance; a negative
difference no larger than that reads as 0. The per-scenario solves run in chunks
(:mod:`procure.analyses.scale`), here or on Dask.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ..defaults import DEFAULT_TIME_LIMIT, DEFAULT_TOLERANCE
from ..program.certify import dual_certified_value
from ..program.problem import Problem
from ..program.scenarios import ScenarioProblem
from ..program.solve import solve_problem
from ..program.stochastic import ScenarioPlan, scenario_values, solve_scenarios
from .scale import chunks, run_chunks

#: Scenarios per chunk of the wait-and-see solves: a chunk is one task on a Dask worker.
SCENARIOS_PER_CHUNK = 10


def best_values(options: dict[str, Any], problems: list[Problem]) -> list[float]:
    """The certified value of the best plan of each deterministic problem [own-hour eq.]: by the
    dual alone where it certifies (:mod:`procure.program.certify`), else by the Pyomo program."""
    tolerance = float(options.get("tolerance", DEFAULT_TOLERANCE))
    values = []
    for p in problems:
        quick = dual_certified_value(p, tolerance)
        values.append(quick if quick is not None else solve_problem(p, **options).value)
    return values


def _within_tolerance(difference: float, scale: float, tolerance: float) -> float:
    """``difference``, or 0 where it is negative by no more than the certification tolerance."""
    return 0.0 if -2 * tolerance * max(abs(scale), 1e-12) <= difference < 0 else difference


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
) -> ScenarioPlan:
    """The plan under uncertainty, with EVPI, VSS and the mean-scenario plan.

    Parameters
    ----------
    problem : ScenarioProblem
        Scenarios, risk measure and recourse.
    tolerance, time_limit : float
        Of every solve (see :class:`procure.program.solve.Program`).
    information : bool, default True
        Compute EVPI and VSS (one solve per scenario more); False leaves them NaN.
    scheduler : str, optional
        A Dask scheduler's address for the per-scenario solves.
    workers : int, optional
        Worker processes of a local cluster when one pays (1: all in this process).
    progress : callable, optional
        ``progress(done, total)`` as chunks of scenarios finish.
    """
    options: dict[str, Any] = {"tolerance": tolerance, "time_limit": time_limit}
    plan = solve_scenarios(problem, **options)
    notes: list[str] = _silent_ranges(problem)
    if not information:
        return replace(plan, notes=plan.notes + notes)
    where: list[str] = []
    parts = chunks([problem.scenario(k) for k in range(problem.count)], SCENARIOS_PER_CHUNK)
    best = np.array(run_chunks(best_values, parts, args=(options,), scheduler=scheduler, workers=workers,
                               progress=progress, notes=notes, where=where))  # fmt: skip
    wait_and_see = problem.objective(best)
    mean_hours = solve_problem(problem.mean(), **options).sources["hours"].to_numpy(dtype=float)
    if problem.recourse_price_x is None:
        mean_values = scenario_values(problem, mean_hours)
        mean_objective = problem.objective(mean_values)
    else:
        fixed = solve_scenarios(problem, fixed_hours=mean_hours, **options)
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
