"""Choosing the infrastructure with the data: the request's options and what each cores count gives.

:func:`infra_request` says whether a request chooses any infrastructure (formats beyond
recorded, several cores counts, capacity to rent) and builds its purchase options
(:func:`procure.program.infrastructure.infrastructure`); :func:`solve_infrastructure` solves the
program over them and, with several counts, the best plan at each count alone, so that the plan
says what each other count would have given.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from ..errors import InputError
from ..ledger import Ledger
from ..ledger.schema import CLUSTER_FIELDS
from ..program import Plan, Problem
from ..program.infrastructure import RENT_KEYS, Infrastructure, infrastructure
from ..spec import check

__all__ = ["infra_request", "parse_cores", "solve_infrastructure"]


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
            if end != round(end) or end < 1:
                raise InputError(f"{option} = {text!r} is invalid: {item!r} must be whole numbers ≥ 1")
            check(spec, end, option)
        if dash and ends[1] < ends[0]:
            raise InputError(f"{option} = {text!r} is invalid: the range {item!r} runs backwards")
        counts += [float(c) for c in range(int(ends[0]), int(ends[-1]) + 1)]
    return sorted(set(counts))


def infra_request(
    problem: Problem,
    ledger: Ledger,
    *,
    formats: Sequence[str] | None = None,
    cores_choices: Sequence[float] | None = None,
    rent: Mapping[str, float] | None = None,
    byte_price_x: float | None = None,
) -> Infrastructure | None:
    """The purchase options of a request, or None where it chooses nothing (every source as
    recorded, the cluster's cores, nothing to rent): then the program is today's.

    Raises
    ------
    InputError
        An unknown capacity to rent, a bad limit, a bad format or cores list.
    """
    cluster = ledger.cluster
    for name, limit in (rent or {}).items():
        if name not in RENT_KEYS:
            raise InputError(f"rent {name!r} is unknown: capacities that may be rented are {', '.join(RENT_KEYS)}")
        key = RENT_KEYS[name][0]
        cluster = cluster.replace(**{key: check(CLUSTER_FIELDS["capacity"][key], limit, f"rent {name}")})
    listed = "formats" in ledger.sources and (ledger.sources["formats"].astype(str).str.strip() != "").any()
    renting = any(getattr(cluster, key) > 0 for key, _price in RENT_KEYS.values())
    several = cores_choices is not None and len(set(cores_choices)) > 1
    if not (formats or listed or renting or several or cores_choices is not None):
        return None
    return infrastructure(problem, ledger.sources, cluster, formats=formats, cores=cores_choices,
                          byte_price_x=1.0 if byte_price_x is None else byte_price_x)  # fmt: skip


def solve_infrastructure(inf: Infrastructure, solve: Callable[[Infrastructure], Plan]) -> Plan:
    """The plan over ``inf``'s options; with several cores counts, ``infrastructure["cores_values"]``
    gives the best value at each count alone (by count, the chosen one's the plan's)."""
    plan = solve(inf)
    if len(inf.cores) > 1 and plan.infrastructure is not None:
        values: dict[str, float] = {}
        for count in inf.cores.tolist():
            if count == plan.infrastructure["cores_per_accelerator"]:
                values[f"{count:g}"] = plan.value
                continue
            keep = inf.choice == list(inf.cores).index(count)
            alone = replace(
                inf,
                source=inf.source[keep], format=inf.format[keep], choice=inf.choice[keep] * 0, cost=inf.cost[keep],
                bill=inf.bill[keep], reformat_usd=inf.reformat_usd[keep], pixels_per_token=inf.pixels_per_token[keep],
                usage={k: v[keep] for k, v in inf.usage.items()},
                held_usage={k: v[[list(inf.cores).index(count)]] for k, v in inf.held_usage.items()},
                capacity={k: v[[list(inf.cores).index(count)]] for k, v in inf.capacity.items()},
                cores=inf.cores[[list(inf.cores).index(count)]],
            )  # fmt: skip
            values[f"{count:g}"] = solve(alone).value
        plan = replace(plan, infrastructure={**plan.infrastructure, "cores_values": values})
    return plan
