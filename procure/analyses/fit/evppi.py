"""What to measure next: the expected value of perfect partial information (EVPPI) of each
fitted number, from the posterior draws.

With the posterior's draws ω as equally likely scenarios, the plan x* maximises E[V(x)] (the
plan's own objective, as ``procure solve --scenarios`` solves it) and EVPI = E[max_x V_ω(x)] −
E[V(x*)] is what knowing every number before buying is worth. Knowing one number θ_j only:

    EVPPI_j = E_θj[ max_x E[V(x) | θ_j] ] − E[V(x*)],

the nested form: for each value of θ_j, the best plan against the conditional expectation
given it, then the mean over θ_j. The draws are sorted by θ_j and cut into ``groups`` groups
of (nearly) equal count; each group stands for one value of θ_j and its draws for the
conditional distribution of the rest, and one scenario program per group gives the inner
maximum. Each group's best plan is worth at least x* there and at most the mean of its draws'
own optima, so 0 ≤ EVPPI_j ≤ EVPI whatever the groups (a difference within twice the
tolerance reads as 0 below and as EVPI above); at most as many groups as draws, each group
standing for the draws in it. A group of one draw is solved at that draw's numbers, so with a
group per draw EVPPI_j is EVPI (:meth:`procure.program.numbers.scenarios.ScenarioProblem.settled`). Finer groups
resolve θ_j better but average fewer draws each, which biases the inner maximum up (the
known bias of nested Monte Carlo); ``docs/fit.md`` says how to choose them.

EVPPI is in own-hour equivalents; divided by the plan's λ (value per budget dollar), in
dollars: what a pilot study that settled that one number is worth at most. The groups' solves
run in chunks (:mod:`procure.analyses.scale`), here or on Dask, as EVPI's do.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from ...defaults import DEFAULT_TIME_LIMIT, DEFAULT_TOLERANCE
from ...output import jsonable
from ...program.numbers.scenarios import ScenarioProblem
from ...program.readout.plan import LEAST_VALUE_SCALE
from ...program.solve.stochastic import ScenarioPlan
from ..scale import Deadline, chunks, run_chunks
from ..uncertainty import solve_by, solve_uncertain

#: Groups per chunk of the groups' solves: a chunk is one task on a Dask worker.
GROUPS_PER_CHUNK = 5


def group_values(options: dict[str, Any], problems: list[ScenarioProblem]) -> list[float]:
    """The certified optimum of each scenario problem [own-hour equivalents]: by its dual alone,
    started where the previous group's ended, where that certifies it
    (:func:`procure.program.solve.certify.expected_certified_value`), else by its Pyomo program;
    ``options`` has ``tolerance`` and ``deadline`` (a module-level function, for Dask's
    workers)."""
    from ...program.solve.certify import expected_certified_value

    deadline: Deadline = options["deadline"]
    tolerance = float(options["tolerance"])
    values = []
    mu = None  # the last group's multipliers: the next group, like it, starts from them
    for p in problems:
        if deadline.left() <= 0:
            raise deadline.expired("before every group of EVPPI was solved")
        by_dual, mu = expected_certified_value(p, tolerance, mu)
        values.append(by_dual if by_dual is not None else solve_by(p, deadline, tolerance=tolerance)[1].value)
    return values


def subset(problem: ScenarioProblem, rows: np.ndarray) -> ScenarioProblem:
    """The scenario problem of the scenarios ``rows`` only, their probabilities rescaled to sum to 1."""
    p = problem.probability[rows]
    p = p / p.sum()
    return replace(problem, names=tuple(problem.names[i] for i in rows.tolist()), probability=p,
                   rate=problem.rate[rows], saturation_hours=problem.saturation_hours[rows],
                   later_cost=problem.later_cost[rows], mean_rate=p @ problem.rate[rows])  # fmt: skip


def groups_of(values: np.ndarray, groups: int) -> list[np.ndarray]:
    """The draws' indices sorted by ``values`` and cut into ``groups`` groups of nearly equal count."""
    order = np.argsort(values, kind="stable")
    return [g for g in np.array_split(order, groups) if len(g)]


@dataclass(frozen=True)
class Information:
    """The plan under the posterior and what knowing each number would add to it.

    Attributes
    ----------
    plan : ScenarioPlan
        The plan of most expected value over the draws, with its EVPI.
    table : pandas.DataFrame
        One row per fitted number, the most valuable first: ``source``, ``parameter``,
        ``evppi`` [own-hour equivalents], ``evppi_usd`` [$], ``rank``.
    groups : int
        Groups of draws per number.
    """

    plan: ScenarioPlan
    table: pd.DataFrame
    groups: int

    @property
    def lambda_(self) -> float:
        """The plan's value of the next dollar [own-hour equivalents per $]."""
        return float(self.plan.plan.lambda_)

    def usd(self, value: float) -> float:
        """``value`` in budget dollars at λ [$]."""
        return value / self.lambda_ if self.lambda_ > 0 else math.nan

    def to_dict(self) -> dict[str, Any]:
        """The ``next`` object of ``procure fit --next --json``."""
        return jsonable({
            "expected_value": self.plan.expected_value, "evpi": self.plan.evpi, "evpi_usd": self.usd(self.plan.evpi),
            "wait_and_see": self.plan.wait_and_see, "lambda": self.lambda_, "groups": self.groups,
            "draws": len(self.plan.scenario_values), "parameters": self.table.to_dict("records"),
        })  # fmt: skip


def evppi(
    problem: ScenarioProblem,
    parameters: pd.DataFrame,
    draws: np.ndarray,
    *,
    groups: int,
    tolerance: float = DEFAULT_TOLERANCE,
    time_limit: float = DEFAULT_TIME_LIMIT,
    scheduler: str | None = None,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Information:
    """EVPPI of each number over the scenarios of ``problem`` (see the module).

    Parameters
    ----------
    problem : ScenarioProblem
        The draws as scenarios (risk weight 0: the plan's objective is the expected value).
    parameters : pandas.DataFrame
        ``source`` and ``parameter`` of each number, one row per column of ``draws``.
    draws : numpy.ndarray
        The value of each number in each scenario (scenarios × numbers) [its unit].
    groups : int
        Groups of draws per number (≥ 2).
    tolerance, time_limit, scheduler, workers
        As :func:`procure.analyses.uncertainty.solve_uncertain` takes them.
    progress : callable, optional
        ``progress(done, total)`` after each chunk of groups solved [groups].

    Raises
    ------
    SolveError
        A plan that cannot be certified, or the time limit passed.
    """
    deadline = Deadline.after(time_limit)
    plan = solve_uncertain(problem, tolerance=tolerance, scheduler=scheduler, workers=workers, deadline=deadline)
    parts = [subset(problem, g) for j in range(draws.shape[1]) for g in groups_of(draws[:, j], groups)]
    options = {"tolerance": tolerance, "deadline": deadline}
    batches = chunks(parts, GROUPS_PER_CHUNK)
    sizes = np.cumsum([len(c) for c in batches])

    def tick(done: int, _total: int) -> None:
        if progress is not None:
            progress(int(sizes[done - 1]), len(parts))

    best = np.array(run_chunks(group_values, batches, args=(options,), scheduler=scheduler, workers=workers,
                               deadline=deadline, progress=tick))  # fmt: skip
    rows = []
    at = 0
    for j in range(draws.shape[1]):
        cut = groups_of(draws[:, j], groups)
        weights = np.array([problem.probability[g].sum() for g in cut])
        value = float(weights @ best[at : at + len(cut)]) - plan.value
        at += len(cut)
        noise = 2 * tolerance * max(abs(plan.value), LEAST_VALUE_SCALE)
        if -noise <= value < 0:
            value = 0.0
        if plan.evpi < value <= plan.evpi + noise:  # the groups' optima within their tolerance
            value = plan.evpi
        rows.append({"source": parameters["source"].iloc[j], "parameter": parameters["parameter"].iloc[j],
                     "evppi": value})  # fmt: skip
    table = pd.DataFrame(rows)
    info = Information(plan, table, groups)
    table["evppi_usd"] = [info.usd(v) for v in table["evppi"]]
    table = table.sort_values("evppi", ascending=False, kind="stable").reset_index(drop=True)
    table["rank"] = np.arange(1, len(table) + 1)
    return replace(info, table=table)


def ledger_plan_value(problem: ScenarioProblem, tolerance: float = DEFAULT_TOLERANCE) -> tuple[float, np.ndarray]:
    """The expected value over the scenarios of the plan made with the ledger's own numbers
    (no scenarios), and its hours [own-hour equivalents, h]."""
    from ...program.solve.program import solve_problem
    from ...program.solve.stochastic import scenario_values

    hours = solve_problem(problem.base, tolerance=tolerance).sources["hours"].to_numpy(dtype=float)
    return float(problem.probability @ scenario_values(problem, hours)), hours


def draws_and_groups(settings: Any, draws: int | None, groups: int | None) -> tuple[int, int]:
    """The draws and groups EVPPI takes, each checked against its setting's range and the groups
    at most the draws (a group of no draw stands for no value of its number).

    Parameters
    ----------
    settings : mapping
        The fit's settings, whose ``draws`` and ``groups`` are the defaults.
    draws, groups : int, optional
        Given values [draws, groups].

    Raises
    ------
    InputError
        Either out of its range, or more groups than draws.
    """
    from ...errors import invalid
    from .settings import check_setting

    n = int(check_setting("draws", draws if draws is not None else int(settings["draws"])))
    g = int(check_setting("groups", groups if groups is not None else int(settings["groups"])))
    if g > n:
        raise invalid("groups", g, f"must be at most the draws ({n:,}): each group stands for the draws in it")
    return n, g


def measure_next(
    fitted: Any,
    *,
    budget: float,
    draws: int | None = None,
    groups: int | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
    time_limit: float = DEFAULT_TIME_LIMIT,
    scheduler: str | None = None,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[Information, float]:
    """EVPPI of each number a fit freed, at ``budget``, from ``draws`` posterior draws, and
    the expected value under the posterior of the plan made with the ledger's guesses.

    Parameters
    ----------
    fitted : Fit
        The fit (:func:`procure.analyses.fit.fitting.fit`).
    budget : float
        Dollars to spend, all in [$].
    draws, groups : int, optional
        Default the fit's ``draws`` and ``groups`` settings.

    Raises
    ------
    InputError
        A bad budget, draws or groups; a fit that freed no ledger number.
    SolveError
        No certified plan, or out of time.
    """
    from ...errors import InputError
    from ..solving import prepare

    n, g = draws_and_groups(fitted.settings, draws, groups)
    if not fitted.model.free:
        raise InputError("next: the fit freed no ledger number: there is nothing to measure")
    request = prepare(fitted.ledger, budget=budget, scenarios=fitted.scenarios(n), tolerance=tolerance,
                      time_limit=time_limit)  # fmt: skip
    assert request.scenarios is not None
    rho, sigma, k = fitted.model.columns(fitted.draws(n))
    by_column = {"exchange_rate": rho, "survival": sigma, "saturation_hours": k}
    values = np.column_stack([by_column[f.column][:, f.index] for f in fitted.model.free])
    names = pd.DataFrame({"source": [f.source for f in fitted.model.free],
                          "parameter": [f.column for f in fitted.model.free]})  # fmt: skip
    info = evppi(request.scenarios, names, values, groups=g, tolerance=tolerance, time_limit=time_limit,
                 scheduler=scheduler, workers=workers, progress=progress)  # fmt: skip
    return info, ledger_plan_value(request.scenarios, tolerance)[0]
