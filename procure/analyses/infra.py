"""Choosing the infrastructure with the data: the request's options and what each cores count gives.

:func:`infra_request` says whether a request chooses any infrastructure (formats beyond
recorded, several cores counts, capacity to rent) and builds its purchase options
(:func:`procure.program.numbers.infrastructure.infrastructure`); :func:`solve_infrastructure` solves the
program over them and, with several counts, the best plan at each count alone, so that the plan
says what each other count would have given.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from ..errors import InputError, Reason, SolveError
from ..ledger import Ledger
from ..ledger.schema import CLUSTER_FIELDS
from ..program import Plan, Problem
from ..program.numbers.infrastructure import RENT_KEYS, Infrastructure, infrastructure
from ..program.numbers.problem import Mode
from ..program.readout.plan import relative_gap, status_of
from ..program.solve.target import money_gap
from ..spec import check

#: Most cores counts one request chooses among: each is priced through the pipeline and, after
#: the solve, solved alone for what it would have given.
MOST_CORES_CHOICES = 64

__all__ = ["CountSolve", "at_count", "chooses", "infra_request", "parse_cores", "solve_infrastructure"]


def parse_cores(text: str, option: str = "cores_choices") -> list[float]:
    """Cores counts from ``8,16,24,32`` or a range ``8-32`` (every whole count in it).

    Raises
    ------
    InputError
        Empty, or an item that is not a whole number ≥ 1 within the cluster's range of
        ``cores_per_accelerator``.
    """
    spec = CLUSTER_FIELDS["decode"]["cores_per_accelerator"]
    items = [t.strip() for t in str(text).split(",") if t.strip()]
    if not items:
        raise InputError(f"{option} = {text!r} is empty: give counts (8,16,24,32) or a range (8-32)")
    counts: list[float] = []
    for item in items:
        lo, dash, hi = item.partition("-")
        try:
            ends = [float(lo)] + ([float(hi)] if dash else [])
        except ValueError:
            raise InputError(f"{option} = {text!r} is invalid: {item!r} is not a count or a range A-B") from None
        for end in ends:
            if not math.isfinite(end) or end != round(end) or end < 1:
                raise InputError(f"{option} = {text!r} is invalid: {item!r} must be whole numbers ≥ 1")
            check(spec, end, option)
        if dash and ends[1] < ends[0]:
            raise InputError(f"{option} = {text!r} is invalid: the range {item!r} runs backwards")
        if ends[-1] - ends[0] >= MOST_CORES_CHOICES:
            raise InputError(f"{option} = {text!r}: more than {MOST_CORES_CHOICES} counts; give fewer")
        counts += [float(c) for c in range(int(ends[0]), int(ends[-1]) + 1)]
    found = sorted(set(counts))
    if len(found) > MOST_CORES_CHOICES:
        raise InputError(f"{option} = {text!r}: {len(found)} counts, more than {MOST_CORES_CHOICES}; give fewer")
    return found


def infra_request(
    problem: Problem,
    ledger: Ledger,
    *,
    formats: Sequence[str] | None = None,
    cores_choices: Sequence[float] | None = None,
    rent: Mapping[str, float] | None = None,
    byte_price_x: float | None = None,
) -> Infrastructure | None:
    """The purchase options of a request, or None where nothing asks for a choice (no formats,
    no cores choices, no ``formats`` cell, nothing to rent): then the program is today's. A
    request offering only what is there already is the same program over its options, solved
    by refinement: the same value within the tolerance.

    Raises
    ------
    InputError
        An unknown capacity to rent, a bad limit, a bad format or cores list.
    """
    if isinstance(formats, str) or (formats is not None and not all(isinstance(f, str) for f in formats)):
        raise InputError(f"formats = {formats!r} is invalid: a list of recorded, model_side, decoded")
    if cores_choices is not None:
        if isinstance(cores_choices, str | int | float) or not all(isinstance(c, int | float) for c in cores_choices):
            raise InputError(f"cores_choices = {cores_choices!r} is invalid: a list of whole numbers ≥ 1")
        cores_choices = parse_cores(",".join(f"{float(c):g}" for c in cores_choices)) if cores_choices else []
    cluster = ledger.cluster
    for name, limit in (rent or {}).items():
        if name not in RENT_KEYS:
            raise InputError(f"rent {name!r} is unknown: capacities that may be rented are {', '.join(RENT_KEYS)}")
        key = RENT_KEYS[name][0]
        cluster = cluster.replace(**{key: check(CLUSTER_FIELDS["capacity"][key], limit, f"rent {name}")})
    if not (formats or cores_choices is not None or chooses(Ledger(ledger.sources, cluster, ledger.path))):
        return None
    return infrastructure(problem, ledger.sources, cluster, formats=formats, cores=cores_choices,
                          byte_price_x=1.0 if byte_price_x is None else byte_price_x)  # fmt: skip


def chooses(ledger: Ledger) -> bool:
    """True where the ledger itself asks the program to choose infrastructure: a source's
    ``formats`` cell, or capacity that may be rented (``[capacity] rent_*``)."""
    listed = "formats" in ledger.sources and bool((ledger.sources["formats"].astype(str).str.strip() != "").any())
    return listed or any(getattr(ledger.cluster, key) > 0 for key, _price in RENT_KEYS.values())


@dataclass
class CountSolve:
    """A program of purchase options solved, its plan read only when asked for.

    Attributes
    ----------
    figure : float
        Its certified value [own-hour equivalents] (budget mode) or money [$] (target mode).
    bound : float
        Its upper bound on the value (budget mode) or lower bound on the money (target mode).
    rounds : int
        Solve rounds it took.
    build_seconds : float
        Time its model took to build [s].
    cuts : list of (int, float)
        The tangent points of its model (:meth:`procure.program.model.build.BuiltModel.cuts`).
    plan : callable
        Its plan: λ, shadow prices and the hours' read-out (made when called).
    """

    figure: float
    bound: float
    rounds: int
    build_seconds: float
    cuts: list[tuple[int, float]]
    plan: Callable[[], Plan]


#: What solves a program of purchase options: ``solve(inf, cuts)``, ``cuts`` the tangent points
#: to start from.
InfraSolve = Callable[[Infrastructure, Sequence[tuple[int, float]]], CountSolve]


def at_count(inf: Infrastructure, count: float) -> Infrastructure:
    """``inf``'s options at one of its cores counts alone: that count's options, held use and
    capacities."""
    c = list(inf.cores).index(count)
    keep = inf.choice == c
    return replace(
        inf,
        source=inf.source[keep], format=inf.format[keep], choice=inf.choice[keep] * 0, cost=inf.cost[keep],
        bill=inf.bill[keep], reformat_usd=inf.reformat_usd[keep], pixels_per_token=inf.pixels_per_token[keep],
        usage={k: v[keep] for k, v in inf.usage.items()},
        held_usage={k: v[[c]] for k, v in inf.held_usage.items()},
        capacity={k: v[[c]] for k, v in inf.capacity.items()},
        cores=inf.cores[[c]],
    )  # fmt: skip


def solve_infrastructure(inf: Infrastructure, solve: InfraSolve) -> Plan:
    """The plan over ``inf``'s options; with several cores counts, ``infrastructure["cores_values"]``
    gives the best value at each count alone (by count, the chosen one's the plan's), or in
    target mode ``infrastructure["cores_money"]`` the least money at each.

    With several counts, each count's program is solved alone, and the plan is the best of
    them: the best plan over a choice of counts is the best plan at some count, and what each
    count gives is asked for anyway. Solving the one program with the count as binaries, and
    then each other count for its figure, took 3.7 times as long on the default ledger with 25
    counts and three formats, and that one program alone 2.0 times
    (``benchmarks/cores_choice.py``). Only the chosen count's plan is read out (λ, shadow prices,
    rows): the others give their certified value or money. Each count's program starts from the
    tangent cuts of those solved before it: the value curves are the same, so their cuts hold,
    and each count certifies in the rounds its own choice of formats needs rather than placing
    the cuts again.

    The plan's certificate is the choice's: its upper bound (budget mode) is the largest of
    the counts' bounds, its money's lower bound (target mode) the least of theirs, so its gap
    is no larger than the tolerance each count was certified to. A count at which no plan meets
    the rows (or reaches the target) has no figure (None) and takes no part; where none has a
    plan, the first count's reason is raised.
    """
    if len(inf.cores) == 1:
        return solve(inf, ()).plan()
    t0 = time.perf_counter()
    solves: dict[float, CountSolve] = {}
    none: dict[float, SolveError] = {}  # counts at which no plan meets the rows (or the target)
    cuts: list[tuple[int, float]] = []
    for count in inf.cores.tolist():
        try:
            solves[count] = solve(at_count(inf, count), cuts)
        except SolveError as exc:
            if exc.reason is not Reason.INFEASIBLE:
                raise
            none[count] = exc
            continue
        cuts = solves[count].cuts
    if not solves:
        raise next(iter(none.values()))
    target = inf.base.mode is Mode.TARGET
    figure: dict[float, float | None] = {c: s.figure for c, s in solves.items()}
    best = min(solves, key=lambda c: solves[c].figure) if target else max(solves, key=lambda c: solves[c].figure)
    plan = solves[best].plan()
    figure[best] = plan.spent_usd if target else plan.value
    figure |= dict.fromkeys(none)
    others = [s.bound for c, s in solves.items() if c != best]
    if target:
        low = min([plan.money_lower_bound, *others])
        gap = money_gap(plan.spent_usd, low)
        plan = replace(plan, money_lower_bound=low, gap=gap)
    else:
        high = max([plan.value_upper_bound, *others])
        gap = relative_gap(high, plan.value)
        plan = replace(plan, value_upper_bound=high, gap=gap)
    assert plan.infrastructure is not None
    key = "cores_money" if target else "cores_values"
    return replace(
        plan,
        status=status_of(gap, plan.tolerance),
        rounds=sum(s.rounds for s in solves.values()),
        build_seconds=sum(s.build_seconds for s in solves.values()),
        solve_seconds=time.perf_counter() - t0,
        infrastructure={**plan.infrastructure, key: {f"{c:g}": figure[c] for c in inf.cores.tolist()}},
    )
