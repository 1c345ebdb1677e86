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
from pathlib import Path

from ..defaults import DEFAULT_RISK_ALPHA, DEFAULT_RISK_WEIGHT, DEFAULT_TIME_LIMIT, DEFAULT_TOLERANCE
from ..errors import InputError, LedgerError
from ..ledger import Ledger, load_ledger
from ..ledger.periods import Periods, ledger_periods, read_periods
from ..ledger.scenarios import Scenarios, ledger_scenarios
from ..ledger.schema import OPTION_FIELDS
from ..program import Plan, from_ledger
from ..program.numbers.periods import period_problem, with_scenarios
from ..program.numbers.scenarios import scenario_problem
from ..program.solve.stochastic import ScenarioPlan
from ..spec import check
from .request import ARGUMENT_NAMES, Solution, SolveRequest
from .scale import check_workers
from .scheduler import check_scheduler, scheduler_address

__all__ = ["ARGUMENT_NAMES", "ScenarioPlan", "Solution", "SolveRequest", "prepare", "solve"]

#: Arguments that only a solve under scenarios reads, in the order a message names them.
SCENARIO_ARGUMENTS = ("risk_alpha", "risk_weight", "recourse_price_x", "scheduler", "workers")


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
        and :func:`procure.program.numbers.scenarios.scenario_problem`); a bad ``time_limit`` or
        ``workers``; a malformed ``scheduler`` or one where no Dask scheduler answers.
    LedgerError
        A ledger or scenarios file that cannot be read.
    """
    name = {**ARGUMENT_NAMES, **(names or {})}
    if ranging and budget is None:
        raise InputError(f"{name['ranging']} needs {name['budget']}")
    check(OPTION_FIELDS["time_limit"], time_limit, name["time_limit"])
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
    if (budget is None) == (target is None):
        raise InputError(f"budget and target: give exactly one ({name['budget_or_target']})")
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
