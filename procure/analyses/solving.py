"""From a ledger and a question to a plan: the rules that :func:`procure.solve` and
``procure solve`` share.

:func:`prepare` checks a request and builds its program's numbers: the ledger, its scenarios
(a file, a loaded :class:`~procure.ledger.scenarios.Scenarios`, a sample of the ledger's
ranges, or the ledger folder's own ``scenarios.csv``), the problem for the budget or the
target with the held hours, mix bounds and byte-price multiplier, and with scenarios the risk
measure and the recourse. :meth:`SolveRequest.solve` solves it: a certified :class:`Plan`
without scenarios (and, asked for, the byte-price multipliers over which it keeps its shape),
a :class:`ScenarioPlan` with EVPI and VSS with them. :func:`solve` does both.

A Dask scheduler is checked in :func:`prepare`, before any solve: its address's form, then
that a scheduler answers there (:func:`procure.analyses.scheduler.check_scheduler`).

The time limit bounds every solve of :meth:`SolveRequest.solve` together, from its start: the
plan, EVPI's per-scenario solves, VSS's mean-scenario plan, and with ``ranging`` the byte-price
range; out of time, one :class:`~procure.errors.SolveError` (``Reason.TIME_LIMIT``) says what
was finished. The solves end within the limit and :data:`~procure.defaults.TIME_LIMIT_MARGIN`:
a model's build counts against the limit but, once started, finishes, and without scenarios the
plan's model is built before its solve's limit starts. Loading the ledger and building its
problem (:func:`prepare`) are outside the limit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..defaults import DEFAULT_RISK_ALPHA, DEFAULT_RISK_WEIGHT, DEFAULT_TIME_LIMIT, DEFAULT_TOLERANCE
from ..errors import InputError, LedgerError
from ..ledger import Ledger, load_ledger
from ..ledger.periods import Periods, ledger_periods, read_periods
from ..ledger.scenarios import Scenarios, ledger_scenarios
from ..output import jsonable
from ..program import Plan, Problem, from_ledger
from ..program.infrastructure import Infrastructure
from ..program.periods import PeriodProblem, period_problem, with_scenarios
from ..program.scenarios import ScenarioProblem, scenario_problem
from ..program.stochastic import ScenarioPlan
from .scale import Deadline, check_workers
from .scheduler import check_scheduler, scheduler_address

__all__ = ["ARGUMENT_NAMES", "ScenarioPlan", "Solution", "SolveRequest", "prepare", "solve"]

#: How messages name the arguments of :func:`prepare`: as Python arguments. The command line
#: passes its own option names instead (``names``).
ARGUMENT_NAMES = {
    "budget": "budget",
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

#: Arguments that only a solve under scenarios reads, in the order a message names them.
SCENARIO_ARGUMENTS = ("risk_alpha", "risk_weight", "recourse_price_x", "scheduler", "workers")


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
    """A request checked and built, ready to solve (see :func:`prepare`).

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
        The program over periods, when the request has periods (:mod:`procure.program.periods`).
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
        from ..program import solve as program  # the solver, looked up when the solve runs

        with out_of_time(deadline, lambda: "before the plan was certified"):
            if self.options is not None:
                from .infra import solve_infrastructure

                def over(inf: Infrastructure) -> Plan:
                    return program.solve_problem(inf, tolerance=self.tolerance, time_limit=deadline.time_limit(),
                                                 time_left=deadline.time_limit)  # fmt: skip

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


def _scenarios(ledger: Ledger, scenarios: Path | str | Scenarios | None, samples: int | None,
               seed: int) -> Scenarios | None:  # fmt: skip
    if isinstance(scenarios, Scenarios):
        if samples is not None:
            raise LedgerError("scenarios: give scenarios or samples, not both")
        return scenarios
    return ledger_scenarios(ledger, scenarios, samples=samples, seed=seed)


def _periods(ledger: Ledger, periods: Path | str | Periods | None) -> Periods | None:
    if isinstance(periods, Periods):
        return periods
    path = ledger_periods(ledger.path, periods)
    return None if path is None else read_periods(path, ledger.sources)


def _period_money(found: Periods, budget: float | None, target: float | None, name: Mapping[str, str]) -> float | None:
    """The budget of a plan over periods: the one given, or the money the periods bring."""
    if budget is not None or target is not None:
        return budget
    total = float(found.money.sum())
    if total <= 0:
        raise InputError(
            f"{found.origin}: money_usd is 0 in every period: give the money each period brings, or {name['budget']}"
        )
    return total


def prepare(
    ledger: Ledger | Path | str | None = None,
    *,
    budget: float | None = None,
    target: float | None = None,
    periods: Path | str | Periods | None = None,
    carry: bool = True,
    formats: Sequence[str] | None = None,
    cores_choices: Sequence[float] | None = None,
    rent: Mapping[str, float] | None = None,
    held: Mapping[str, float] | None = None,
    max_share: Mapping[str, float] | None = None,
    scenarios: Path | str | Scenarios | None = None,
    samples: int | None = None,
    seed: int = 0,
    risk_weight: float | None = None,
    risk_alpha: float | None = None,
    recourse_price_x: float | None = None,
    byte_price_x: float | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
    time_limit: float = DEFAULT_TIME_LIMIT,
    evpi: bool = True,
    scheduler: str | None = None,
    workers: int | None = None,
    ranging: bool = False,
    names: Mapping[str, str] | None = None,
) -> SolveRequest:
    """Check a request and build its program's numbers; see :func:`solve` for the arguments.

    Parameters
    ----------
    time_limit : float, default :data:`~procure.defaults.DEFAULT_TIME_LIMIT`
        Wall time of all the solves of :meth:`SolveRequest.solve` together [s], > 0; loading
        the ledger and building its problem (here) are outside it.
    scheduler : str, optional
        A Dask scheduler's address (``tcp://host:port``, ``tls://host:port`` or
        ``host:port``): checked here, within
        :data:`~procure.analyses.scheduler.SCHEDULER_TIMEOUT`, to answer as one.
    workers : int, optional
        Worker processes of a local Dask cluster, ≥ 1; more than the machine's cores run as
        many as it has, with a note in the plan's notes.
    ranging : bool, default False
        Also find the byte-price multipliers over which the plan keeps its shape (budget
        mode, no scenarios).
    periods : path, Periods or None
        The periods of a plan over time (``periods.csv``, with ``period_sources.csv`` beside
        it); None: the ledger folder's ``periods.csv`` if it has one. Without a budget or target,
        the budget is the money the periods bring.
    carry : bool, default True
        Over periods, unspent money carries over to the next period; False: each period's
        money is spent in it or lost.
    formats : sequence of str, optional
        Formats every source may be kept in (``recorded``, ``model_side``, ``decoded``); default:
        each source's ``formats`` column (blank: as recorded).
    cores_choices : sequence of float, optional
        Cores-per-accelerator counts the program chooses one of for the cluster.
    rent : mapping of str to float, optional
        Most capacity the plan may rent, by capacity (``accelerator_hours``, ``core_hours``,
        ``storage_gb``), over the cluster's ``rent_*`` keys.
    names : mapping of str to str, optional
        How messages name the arguments, over :data:`ARGUMENT_NAMES`.

    Raises
    ------
    InputError
        ``ranging`` without a budget or with scenarios; an argument of scenario solves
        (``risk_alpha``, ``risk_weight``, ``recourse_price_x``, ``scheduler``, ``workers``,
        ``evpi=False``) without scenarios; a bad number (see :func:`procure.program.from_ledger`
        and :func:`procure.program.scenarios.scenario_problem`); a bad ``time_limit`` or
        ``workers``; a malformed ``scheduler`` or one where no Dask scheduler answers.
    LedgerError
        A ledger or scenarios file that cannot be read.
    """
    name = {**ARGUMENT_NAMES, **(names or {})}
    if ranging and budget is None:
        raise InputError(f"{name['ranging']} needs {name['budget']}")
    if not (isinstance(time_limit, int | float) and not isinstance(time_limit, bool) and time_limit > 0):
        raise InputError(f"{name['time_limit']} = {time_limit!r} is invalid: must be a number > 0 [s]")
    check_workers(workers, name["workers"])
    if scheduler is not None:
        scheduler_address(scheduler, name["scheduler"])  # its form, before anything is read
    if not isinstance(carry, bool):
        raise InputError(f"{name['carry']}: carry = {carry!r} is invalid: must be True or False")
    if periods is not None and not isinstance(periods, str | Path | Periods):
        raise InputError(f"{name['periods']}: periods = {periods!r} is invalid: must be a path or Periods")
    loaded = ledger if isinstance(ledger, Ledger) else load_ledger(ledger)
    over = _periods(loaded, periods)
    if over is None and not carry:
        raise InputError(f"{name['carry']} needs periods: {name['periods']} or periods.csv")
    found = _scenarios(loaded, scenarios, samples, seed)
    if over is not None:
        if found is not None and (scheduler is not None or workers is not None):
            raise InputError(f"{name['scheduler']} and {name['workers']} are for EVPI's solves one per scenario; a "
                             "plan over periods under scenarios is one program (no EVPI)")  # fmt: skip
        if ranging:
            raise InputError(f"{name['ranging']} is for a plan at one time, not over periods")
        budget = _period_money(over, budget, target, name)
    if found is None:
        values = {"risk_alpha": risk_alpha, "risk_weight": risk_weight, "recourse_price_x": recourse_price_x,
                  "scheduler": scheduler, "workers": workers}  # fmt: skip
        given = [key for key in SCENARIO_ARGUMENTS if values[key] is not None] + ([] if evpi else ["evpi"])
        if given:
            raise InputError(
                f"{name[given[0]]} needs scenarios: {name['scenarios']}, {name['samples']}, or scenarios.csv"
            )
    elif ranging:
        raise InputError(f"{name['ranging']} is for a plan without scenarios")
    elif scheduler is not None:
        scheduler = check_scheduler(scheduler, name["scheduler"])
    problem = from_ledger(loaded, budget=budget, target=target, held=held or None, max_share=max_share or None)
    if byte_price_x is not None:
        problem = problem.with_byte_price_x(byte_price_x)
    uncertain = None
    planned = None if over is None else period_problem(problem, over, carry=carry)
    from .infra import infra_request

    options = infra_request(problem, loaded, formats=formats, cores_choices=cores_choices, rent=rent,
                            byte_price_x=byte_price_x)  # fmt: skip
    if options is not None and (over is not None or found is not None or ranging):
        raise InputError(
            f"{name['formats']}, {name['cores_choices']} and {name['rent']} (or a ledger's formats and rent keys) are "
            "for a plan at one time without scenarios"
        )
    if found is not None and planned is not None:
        # Over periods, the scenarios are the plan's own axis: one expected-value program.
        for key, asked in (("risk_alpha", risk_alpha), ("risk_weight", risk_weight),
                           ("recourse_price_x", recourse_price_x)):  # fmt: skip
            if asked is not None and not (key == "risk_weight" and asked == 0):
                raise InputError(
                    f"{name[key]} is for a plan at one time: a plan over periods under scenarios maximises the "
                    "expected value and buys later in its own periods"
                )
        sp = scenario_problem(problem, found, risk_alpha=DEFAULT_RISK_ALPHA if risk_alpha is None else risk_alpha,
                              risk_weight=DEFAULT_RISK_WEIGHT if risk_weight is None else risk_weight,
                              recourse_price_x=recourse_price_x)  # fmt: skip
        planned = with_scenarios(planned, sp)
        found = None
    if found is not None:
        uncertain = scenario_problem(
            problem,
            found,
            risk_alpha=DEFAULT_RISK_ALPHA if risk_alpha is None else risk_alpha,
            risk_weight=DEFAULT_RISK_WEIGHT if risk_weight is None else risk_weight,
            recourse_price_x=recourse_price_x,
        )
    return SolveRequest(problem, uncertain, tolerance=tolerance, time_limit=time_limit, evpi=evpi,
                        scheduler=scheduler, workers=workers, ranging=ranging, time_limit_name=name["time_limit"],
                        evpi_name=name["evpi"], periods=planned, options=options)  # fmt: skip


def solve(
    ledger: Ledger | Path | str | None = None,
    *,
    budget: float | None = None,
    target: float | None = None,
    periods: Path | str | Periods | None = None,
    carry: bool = True,
    formats: Sequence[str] | None = None,
    cores_choices: Sequence[float] | None = None,
    rent: Mapping[str, float] | None = None,
    held: Mapping[str, float] | None = None,
    max_share: Mapping[str, float] | None = None,
    scenarios: Path | str | Scenarios | None = None,
    samples: int | None = None,
    seed: int = 0,
    risk_weight: float | None = None,
    risk_alpha: float | None = None,
    recourse_price_x: float | None = None,
    byte_price_x: float | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
    time_limit: float = DEFAULT_TIME_LIMIT,
    evpi: bool = True,
    scheduler: str | None = None,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Plan | ScenarioPlan:
    """What to buy next: the certified plan for a ledger and a budget (or a target), under
    scenarios when there are any. :func:`procure.solve` documents the arguments."""
    request = prepare(ledger, budget=budget, target=target, periods=periods, carry=carry, formats=formats,
                      cores_choices=cores_choices, rent=rent, held=held,
                      max_share=max_share, scenarios=scenarios, samples=samples, seed=seed,
                      risk_weight=risk_weight, risk_alpha=risk_alpha,
                      recourse_price_x=recourse_price_x, byte_price_x=byte_price_x, tolerance=tolerance,
                      time_limit=time_limit, evpi=evpi, scheduler=scheduler, workers=workers)  # fmt: skip
    return request.solve(progress).result
