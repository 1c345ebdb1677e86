"""What a problem may be asked again and repriced by: the checks of its question and of the
numbers a repricing may change (no solver here).

:meth:`procure.program.numbers.problem.Problem.asking` checks a new question as
:func:`procure.program.numbers.problem.from_ledger` checks the first one; a repricing
(:meth:`procure.program.solve.program.Program.reprice`) may change only :data:`PRICE_COLUMNS`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Protocol

import numpy as np
import pandas as pd

from ...errors import invalid
from ...ledger import matches
from ...ledger.schema import OPTION_FIELDS
from ...spec import check, did_you_mean


class Priced(Protocol):
    """What :func:`other_numbers` reads of a problem (:class:`procure.program.numbers.problem.Problem`)."""

    @property
    def sources(self) -> pd.DataFrame: ...

    @property
    def capacity(self) -> dict[str, float]: ...

    @property
    def _numbers(self) -> object: ...


#: The columns a repriced problem may change (:meth:`procure.program.solve.program.Program.reprice`):
#: the purchase price and the transport bill with its terms and share.
PRICE_COLUMNS = ("price_usd_per_hour", "transport_usd_per_hour", "bytes_usd_per_hour", "idle_usd_per_hour",
                 "cores_usd_per_hour", "transport_share")  # fmt: skip

#: What :meth:`procure.program.numbers.problem.Problem.asking` may replace.
QUESTION = ("budget", "target", "max_share", "capacity")


def other_numbers(old: Priced, new: Priced) -> str:
    """What ``new`` changes of ``old`` besides prices and bills (:data:`PRICE_COLUMNS`): the
    names of the changed columns, or "capacities"; empty where nothing else changed."""
    if new._numbers is old._numbers:  # one made from the other by asking, repricing or both
        return ""
    a = old.sources.drop(columns=list(PRICE_COLUMNS), errors="ignore")
    b = new.sources.drop(columns=list(PRICE_COLUMNS), errors="ignore")
    if list(a.columns) != list(b.columns):
        return "columns"
    changed = [c for c in a.columns if not a[c].reset_index(drop=True).equals(b[c].reset_index(drop=True))]
    if changed:
        return "numbers in " + ", ".join(changed)
    return "" if old.capacity == new.capacity else "capacities"


def checked_shares(sources: pd.DataFrame, max_share: Mapping[str, float]) -> dict[str, float]:
    """Mix bounds by source name or kind, each naming some source and in ``OPTION_FIELDS["max_share"]``'s range."""
    shares = dict(max_share)
    for key, share in shares.items():
        if not matches(sources, key).any():
            near = did_you_mean(str(key), [*sources["source"].astype(str), *sources["kind"].astype(str)])
            raise invalid(
                "max_share", key, f"names no source or kind{near}: sources are {', '.join(sources['source'])}"
            )
        shares[key] = check(OPTION_FIELDS["max_share"], share, f"max_share {key}")
    return shares


def checked_question(
    sources: pd.DataFrame, question: Mapping[str, object], capacities: Collection[str]
) -> dict[str, object]:
    """A question for :meth:`procure.program.numbers.problem.Problem.asking`, each part checked as
    :func:`procure.program.numbers.problem.from_ledger` checks it: a budget and a target in their
    options' ranges (or None), mix bounds naming sources, and limits of the ``capacities`` by
    name, each a number ≥ 0 (inf = unlimited)."""
    out: dict[str, object] = {}
    for key, given in question.items():
        if key not in QUESTION:
            raise invalid("question", key, f"must be one of {', '.join(QUESTION)}")
        if key in ("budget", "target") and given is not None:
            given = check(OPTION_FIELDS[key], given)
        elif key == "max_share":
            given = checked_shares(sources, given)  # type: ignore[arg-type]
        elif key == "capacity":
            given = checked_capacity(given, capacities)
        out[key] = given
    return out


def checked_capacity(capacity: object, capacities: Collection[str]) -> dict[str, float]:
    """Limits by capacity name (one of ``capacities``), each a number ≥ 0 [its unit] or inf."""
    if not isinstance(capacity, Mapping):
        raise invalid("capacity", capacity, f"must map {', '.join(capacities)} to limits")
    out = {}
    for name, limit in capacity.items():
        if name not in capacities:
            raise invalid("capacity", name, f"must be one of {', '.join(capacities)}")
        ok = isinstance(limit, int | float | np.floating | np.integer) and not isinstance(limit, bool)
        if not ok or not float(limit) >= 0:
            raise invalid(f"capacity {name}", limit, "must be a number ≥ 0 (inf = unlimited)")
        out[str(name)] = float(limit)
    return out
