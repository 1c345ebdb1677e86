"""How the plan and the bill move with byte prices, or with another input.

:func:`sweep` re-solves one built :class:`procure.program.solve.program.Program` across log-spaced values
of an input, a chunk of :data:`POINTS_PER_CHUNK` points at a time: costs and the budget are
mutable parameters of the model, so the persistent solver keeps its basis and its cuts between
the points of a chunk. Chunks run here or on Dask (:mod:`procure.analyses.scale`). Model parameters change the capacity
coefficients too, so that input rebuilds the model at each point.

:func:`byte_price_range` finds, for the plan at the current prices, the interval of byte-price
multipliers over which the same sources stay bought (each at zero, in part, or to its cap)
and the same constraints bind.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ..defaults import MAX_STEPS, RANGING_LIMITS, SWEEP_TOLERANCE, VARY_PARAMETERS
from ..errors import invalid
from ..ledger import Cluster, Ledger
from ..program import Mode, Plan, Problem, from_ledger
from ..program.solve.program import Program
from .scale import Deadline, chunks, run_chunks

#: Inputs :func:`sweep` can vary (:data:`procure.defaults.VARY_PARAMETERS`), with their units.
PARAMETERS = dict(
    zip(
        VARY_PARAMETERS,
        ("multiplier on the byte price [1]", "$", "$/accelerator-hour", "$/core-hour", "model parameters [1]"),
        strict=True,
    )
)

#: Columns of :func:`sweep`'s table with their units.
SWEEP_COLUMNS = {
    "parameter": "name of the input varied",
    "x": "its value",
    "byte_price_x": "multiplier on the byte price [1]",
    "source": "name",
    "hours": "h bought",
    "purchase_usd": "$",
    "transport_usd": "$",
    "value": "own-hour equivalents, held and bought",
    "plan_value": "own-hour equivalents, the whole plan",
    "lambda": "value per $ of the next dollar",
    "idle_share": "idle accelerator $ / transport $ of the plan [1]",
    "transport_share": "transport $ / all-in $ of the plan [1]",
}

#: Points of a sweep solved by one built program (one task on a Dask worker): the program is
#: rebuilt at the first point of each chunk, wherever the chunk runs.
POINTS_PER_CHUNK = 25

#: Relative width to which :func:`byte_price_range` narrows each end [1].
RANGING_PRECISION = 1e-4


def _check_grid(lo: float, hi: float, steps: int) -> np.ndarray:
    """The values of a sweep: ``steps`` log-spaced from ``lo`` to ``hi``, each once (equal ends
    give one point)."""
    if not (isinstance(lo, int | float) and math.isfinite(lo) and lo > 0):
        raise invalid("lo", lo, "must be a number > 0")
    if not (isinstance(hi, int | float) and math.isfinite(hi) and hi >= lo):
        raise invalid("hi", hi, f"must be a number ≥ lo ({lo:g})")
    if not (isinstance(steps, int) and 2 <= steps <= MAX_STEPS):
        raise invalid("steps", steps, f"must be a whole number ≥ 2 and ≤ {MAX_STEPS:,}")
    return np.unique(np.geomspace(lo, hi, steps))


def _rows(plan: Plan, problem: Problem, parameter: str, x: float, byte_price_x: float) -> pd.DataFrame:
    s = plan.sources
    idle = float(problem.sources["idle_usd_per_hour"].to_numpy() @ s["hours"].to_numpy())
    return pd.DataFrame(
        {
            "parameter": parameter,
            "x": x,
            "byte_price_x": byte_price_x,
            "source": s["source"],
            "hours": s["hours"],
            "purchase_usd": s["purchase_usd"],
            "transport_usd": s["transport_usd"],
            "value": s["value"],
            "plan_value": plan.value,
            "lambda": plan.lambda_,
            "idle_share": idle / plan.transport_usd if plan.transport_usd > 0 else 0.0,
            "transport_share": plan.transport_usd / plan.spent_usd if plan.spent_usd > 0 else 0.0,
        }
    )


@dataclass
class _Sweeper:
    """Puts a program at a value of the input and says which problem it now solves."""

    ledger: Ledger
    cluster: Cluster
    budget: float
    parameter: str
    tolerance: float

    def __post_init__(self) -> None:
        self.base = from_ledger(self.ledger, budget=self.budget, cluster=self.cluster)
        self.program = Program(self.base, tolerance=self.tolerance)

    def at(self, x: float) -> tuple[Program, Problem, float]:
        p = self.parameter
        if p == "byte_price_x":
            problem = self.base.with_byte_price_x(x)
            self.program.reprice(problem)
            return self.program, problem, x
        if p == "budget":
            self.program.set_budget(x)
            return self.program, replace(self.base, budget=x), 1.0
        if p == "params":
            problem = from_ledger(self.ledger, budget=self.budget, cluster=self.cluster.replace(params=x))
            self.program = Program(problem, tolerance=self.tolerance)
            return self.program, problem, 1.0
        problem = from_ledger(self.ledger, budget=self.budget, cluster=self.cluster.replace(**{p: x}))
        self.program.reprice(problem)
        return self.program, problem, 1.0


def sweep(
    ledger: Ledger,
    parameter: str,
    lo: float,
    hi: float,
    steps: int,
    *,
    budget: float,
    cluster: Cluster | None = None,
    tolerance: float = SWEEP_TOLERANCE,
    progress: Callable[[int, int], None] | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
) -> pd.DataFrame:
    """Re-solve the plan at ``steps`` log-spaced values of ``parameter`` from ``lo`` to ``hi``.

    Parameters
    ----------
    ledger : Ledger
        Sources and cluster.
    parameter : str
        A key of :data:`PARAMETERS`.
    lo, hi : float
        The range, ``0 < lo ≤ hi``, in the parameter's unit.
    steps : int
        Points, ≥ 2.
    budget : float
        Dollars to spend at every point (the varied value when ``parameter`` is ``budget``).
    cluster : Cluster, optional
        Instead of the ledger's.
    progress : callable, optional
        Called as ``progress(done, steps)`` as points are solved.
    scheduler : str, optional
        Address of a running Dask scheduler for the chunks of :data:`POINTS_PER_CHUNK` points
        (see :func:`procure.analyses.scale.run_chunks`); the results are the same wherever
        they run.
    workers : int, optional
        Worker processes of a local Dask cluster for them (1: all in this process; at most
        the machine's cores).

    Returns
    -------
    pandas.DataFrame
        One row per (value, source), columns of :data:`SWEEP_COLUMNS`; its ``attrs["notes"]``
        lists what the run noted (``workers`` capped at the cores, Dask missing, a chunk lost
        and run again).
    """
    if parameter not in PARAMETERS:
        raise invalid("parameter", parameter, f"allowed are {', '.join(PARAMETERS)}")
    grid = _check_grid(lo, hi, steps)
    setting = (ledger, cluster or ledger.cluster, budget, parameter, tolerance)
    notes: list[str] = []
    frames = run_chunks(sweep_points, chunks([float(x) for x in grid], POINTS_PER_CHUNK), args=(setting,),
                        scheduler=scheduler, workers=workers, progress=_points(progress, len(grid)),
                        notes=notes)  # fmt: skip
    table = pd.concat(frames, ignore_index=True)
    table.attrs["notes"] = notes
    return table


def _points(progress: Callable[[int, int], None] | None, steps: int) -> Callable[[int, int], None] | None:
    """A chunk-progress callback that reports points."""
    if progress is None:
        return None
    return lambda done, total: progress(min(done * POINTS_PER_CHUNK, steps), steps)


def sweep_points(setting: tuple[Ledger, Cluster, float, str, float], xs: list[float]) -> list[pd.DataFrame]:
    """The plans of one chunk of a sweep: one program built at the first point and re-solved
    at the others (a chunk is one task of :func:`procure.analyses.scale.run_chunks`)."""
    ledger, cluster, budget, parameter, tolerance = setting
    sweeper = _Sweeper(ledger, cluster, budget, parameter, tolerance)
    frames = []
    for x in xs:
        program, problem, byte_x = sweeper.at(x)
        frames.append(_rows(program.solve(), problem, parameter, x, byte_x))
    return frames


def _signature(plan: Plan) -> tuple:
    """Which sources are at zero, in part or at their cap, and which constraints bind."""
    return tuple(plan.sources["position"]), tuple(plan.binding)


def byte_price_range(
    problem: Problem, *, tolerance: float = 1e-6, deadline: Deadline | None = None
) -> tuple[float, float]:
    """Byte-price multipliers around 1 over which the plan keeps its shape.

    The shape is which sources are at zero, bought in part or bought to their cap, and which
    constraints bind. Each end is found by doubling away from 1 until the shape changes, then
    bisecting (in log scale) to :data:`RANGING_PRECISION`, re-solving one built program.

    Parameters
    ----------
    problem : Problem
        The plan's problem (budget mode), at the byte price the multipliers are relative to.
    tolerance : float, default 1e-6
        Of each re-solve; tighter than the default so the shape is read off a precise plan.
    deadline : Deadline, optional
        When all the re-solves must have ended, the model's build counted; without, each
        re-solve has :class:`~procure.program.solve.program.Program`'s default time limit.

    Returns
    -------
    (float, float)
        The lowest and highest multiplier with the same shape; an end at
        :data:`RANGING_LIMITS` means the shape holds at least that far.

    Raises
    ------
    SolveError
        A re-solve fails; ``Reason.TIME_LIMIT`` once the deadline has passed.
    """
    if problem.mode is not Mode.BUDGET:
        raise invalid("budget", None, "ranging needs a plan in budget mode")
    base = problem
    if deadline is None:
        program = Program(base, tolerance=tolerance)
    else:
        program = Program(base, tolerance=tolerance, time_limit=deadline.time_limit())

    def shape_at(m: float) -> tuple:
        program.reprice(base.with_byte_price_x(m))
        if deadline is not None:
            program.time_limit = deadline.time_limit()
        return _signature(program.solve())

    here = shape_at(1.0)
    ends = []
    for limit in (RANGING_LIMITS[0], RANGING_LIMITS[1]):
        inside, step = 1.0, 2.0 if limit > 1 else 0.5
        outside = None
        m = inside
        while (m * step <= limit) if limit > 1 else (m * step >= limit):
            m *= step
            if shape_at(m) == here:
                inside = m
            else:
                outside = m
                break
        if outside is None:
            ends.append(limit if shape_at(limit) == here else inside)
            continue
        while abs(math.log(outside / inside)) > RANGING_PRECISION:
            mid = math.sqrt(inside * outside)
            if shape_at(mid) == here:
                inside = mid
            else:
                outside = mid
        ends.append(inside)
    return ends[0], ends[1]
