"""Periods: money that arrives over time, a training run at the end of each period, and the
prices and availability of each source by period.

Two files, in the ledger folder or named by ``--periods FILE`` (then ``period_sources.csv``
is read from beside it, if there):

* ``periods.csv``, one row per period, in time order: ``period`` (a unique name), ``months``
  (its length), ``money_usd`` (money arriving at its start), and optionally ``weight`` (the
  weight of its run's value; blank for every period = ``months / Σ months``), ``start_month``
  (months from the plan's start, checked against the lengths: the periods must follow each
  other), and its own capacities ``accelerator_hours``, ``core_hours``, ``storage_gb`` (blank =
  the cluster's);
* ``period_sources.csv``, optional, one row per (period, source) that differs from the ledger:
  ``period``, ``source``, ``price_usd_per_hour`` (replaces the ledger's price in that period),
  ``available_hours`` (most hours bought in that period; the ledger's ``available_hours``
  bounds the hours bought over all periods together).

Every error names the file, the line, the field, the value and what is allowed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import LedgerError
from ..spec import Range, check_cell, did_you_mean
from .csvcells import read_csv_text, record_lines, unknown_source
from .schema import LEAST, MOST_HOURS, MOST_USD, USER_COLUMN_PREFIX

#: File name of a ledger's periods.
PERIODS_FILE = "periods.csv"
#: File name of a ledger's prices and availability by period and source.
PERIOD_SOURCES_FILE = "period_sources.csv"
#: Most periods a plan may have.
MAX_PERIODS = 240
#: Longest period [months] (100 years, the cluster's horizon limit).
MOST_MONTHS = 1_200.0
#: How far a ``start_month`` may differ from the sum of the lengths before it [months].
START_TOLERANCE = 1e-9
#: Largest capacity of a period (the cluster's limit of the same field) [its unit].
MOST_CAPACITY = 1e15

#: The columns of ``periods.csv``.
PERIOD_FIELDS: dict[str, Range] = {
    r.name: r
    for r in (
        Range("period", "", None, kind="text", doc="unique name of the period"),
        Range(
            "months", "months", None, low=0.0, low_open=True, high=MOST_MONTHS, least=LEAST, doc="length of the period"
        ),
        Range("money_usd", "$", 0.0, low=0.0, high=MOST_USD, least=LEAST, doc="money arriving at its start"),
        Range(
            "weight",
            "1",
            math.nan,
            low=0.0,
            high=1e6,
            least=LEAST,
            blank="months / Σ months",
            doc="weight of the value of its run",
        ),
        Range(
            "start_month",
            "months",
            math.nan,
            low=0.0,
            high=MAX_PERIODS * MOST_MONTHS,
            blank="after the one before",
            doc="months from the plan's start (checked)",
        ),
        Range(
            "accelerator_hours",
            "accelerator-h",
            math.nan,
            low=0.0,
            high=MOST_CAPACITY,
            least=LEAST,
            blank="the cluster's",
            doc="accelerator-hours of its run",
        ),
        Range(
            "core_hours",
            "core-h",
            math.nan,
            low=0.0,
            high=MOST_CAPACITY,
            least=LEAST,
            blank="the cluster's",
            doc="decode core-hours of its run",
        ),
        Range(
            "storage_gb",
            "GB",
            math.nan,
            low=0.0,
            high=MOST_CAPACITY,
            least=LEAST,
            blank="the cluster's",
            doc="storage at its run",
        ),
    )
}
#: The columns of ``period_sources.csv``.
PERIOD_SOURCE_FIELDS: dict[str, Range] = {
    r.name: r
    for r in (
        Range("period", "", None, kind="text", doc="a period of periods.csv"),
        Range("source", "", None, kind="text", doc="a source of sources.csv"),
        Range(
            "price_usd_per_hour",
            "$/h",
            math.nan,
            low=0.0,
            high=MOST_USD,
            least=LEAST,
            blank="the ledger's",
            doc="purchase price in that period",
        ),
        Range(
            "available_hours",
            "h",
            math.inf,
            low=0.0,
            high=MOST_HOURS,
            least=LEAST,
            blank="no bound by period",
            doc="most hours bought in that period",
        ),
    )
}
#: The capacities a period may set, as named by the program.
PERIOD_CAPACITIES = ("accelerator_hours", "core_hours", "storage_gb")


@dataclass(frozen=True)
class Periods:
    """The periods of a plan, validated against a ledger's sources.

    Attributes
    ----------
    names : tuple of str
        Period names, in time order.
    months : numpy.ndarray
        Length of each period [months].
    money : numpy.ndarray
        Money arriving at the start of each period [$].
    weight : numpy.ndarray or None
        Weight of each run's value [1], used as given; None: ``months / Σ months``.
    capacity : dict of str to numpy.ndarray
        Per capacity of :data:`PERIOD_CAPACITIES` given for some period, its limit in each
        period (nan = the cluster's) [its unit].
    price : numpy.ndarray
        Purchase price of each source in each period (periods × sources; nan = the ledger's) [$/h].
    available : numpy.ndarray
        Most hours of each source bought in each period (periods × sources; inf = no bound) [h].
    origin : str
        The file read.
    """

    names: tuple[str, ...]
    months: np.ndarray
    money: np.ndarray
    weight: np.ndarray | None
    capacity: dict[str, np.ndarray]
    price: np.ndarray
    available: np.ndarray
    origin: str

    @property
    def count(self) -> int:
        """Number of periods."""
        return len(self.names)

    @property
    def starts(self) -> np.ndarray:
        """Start of each period, in months from the plan's start [months]."""
        return np.concatenate([[0.0], np.cumsum(self.months)[:-1]])

    @property
    def value_weight(self) -> np.ndarray:
        """The weight of each run's value [1]: as given, or ``months / Σ months``."""
        return self.weight if self.weight is not None else self.months / self.months.sum()


def _check_columns(path: Path, raw: pd.DataFrame, fields: dict[str, Range], required: tuple[str, ...]) -> None:
    for name in raw.columns:
        if name not in fields and not name.startswith(USER_COLUMN_PREFIX):
            raise LedgerError(
                f"{path}: column {name!r} is unknown{did_you_mean(name, fields)}: allowed are {', '.join(fields)}, "
                f"and columns of your own that start with {USER_COLUMN_PREFIX!r} (ignored)"
            )
    for name in required:
        if name not in raw.columns:
            raise LedgerError(f"{path}: missing column {name!r}: the file needs {', '.join(required)}")


def _rows(path: Path, fields: dict[str, Range], required: tuple[str, ...], what: str) -> list[tuple[int, dict]]:
    raw = read_csv_text(path, what)
    _check_columns(path, raw, fields, required)
    lines = record_lines(path, len(raw))
    out = []
    for i, rec in enumerate(raw.to_dict("records")):
        if all(str(v).strip() == "" for v in rec.values()):
            continue
        where = f"{path}: line {lines[i]}"
        cells = {name: check_cell(fields[name], rec.get(name, ""), name, where, error=LedgerError) for name in fields}
        cells = {k: (v + 0.0 if isinstance(v, float) else v) for k, v in cells.items()}  # -0 reads as 0
        out.append((lines[i], cells))
    return out


def read_periods(path: Path | str, sources: pd.DataFrame) -> Periods:
    """Read and validate ``periods.csv`` (and ``period_sources.csv`` beside it, if there).

    Parameters
    ----------
    path : Path or str
        The periods file.
    sources : pandas.DataFrame
        The ledger's sources (their ``source`` names).

    Raises
    ------
    LedgerError
        A missing file or column, an unknown column, period or source (with "did you mean"), a
        period named twice, a length of 0 months, negative money, periods that do not follow each
        other (``start_month``), a weight on some periods only or every weight 0, more than
        :data:`MAX_PERIODS` periods.
    """
    path = Path(path)
    what = f"periods are a CSV file ({', '.join(PERIOD_FIELDS)})"
    rows = _rows(path, PERIOD_FIELDS, ("period", "months"), what)
    if not rows:
        raise LedgerError(f"{path}: no periods: the file needs at least one row")
    if len(rows) > MAX_PERIODS:
        raise LedgerError(f"{path}: {len(rows)} periods: at most {MAX_PERIODS} are allowed")
    names: list[str] = []
    seen: dict[str, int] = {}
    start = 0.0
    for line, cells in rows:
        name = cells["period"]
        if name in seen:
            raise LedgerError(f"{path}: line {line}: period = {name!r} is named twice (first on line {seen[name]})")
        seen[name] = line
        names.append(name)
        given = cells["start_month"]
        if not math.isnan(given) and abs(given - start) > START_TOLERANCE * max(1.0, start):
            raise LedgerError(
                f"{path}: line {line}: start_month = {given:g} is out of order: period {name!r} starts at month "
                f"{start:g}, where the one before ends (periods in time order, each after the one before)"
            )
        start += cells["months"]
    weights = [cells["weight"] for _line, cells in rows]
    given_weight = [not math.isnan(w) for w in weights]
    if any(given_weight) and not all(given_weight):
        line = rows[given_weight.index(False)][0]
        raise LedgerError(
            f"{path}: line {line}: weight is blank: give every period a weight, or none (months / Σ months)"
        )
    if all(given_weight) and sum(weights) <= 0:
        raise LedgerError(f"{path}: every weight is 0: at least one run must count (weights ≥ 0, not all 0)")
    caps: dict[str, np.ndarray] = {}
    for name in PERIOD_CAPACITIES:
        column = np.array([float(c[name]) for _l, c in rows])
        if np.isfinite(column).any():
            caps[name] = column
    n = len(sources)
    price = np.full((len(names), n), math.nan)
    available = np.full((len(names), n), math.inf)
    beside = path.parent / PERIOD_SOURCES_FILE
    if beside.exists() or beside.is_symlink():
        _read_period_sources(beside, names, list(sources["source"].astype(str)), price, available)
    return Periods(
        names=tuple(names),
        months=np.array([c["months"] for _l, c in rows], dtype=float),
        money=np.array([c["money_usd"] for _l, c in rows], dtype=float),
        weight=np.array(weights, dtype=float) if all(given_weight) else None,
        capacity=caps,
        price=price,
        available=available,
        origin=str(path),
    )


def _read_period_sources(
    path: Path, periods: list[str], sources: list[str], price: np.ndarray, available: np.ndarray
) -> None:
    """Fill ``price`` and ``available`` (periods × sources) from ``period_sources.csv``."""
    what = f"prices by period are a CSV file ({', '.join(PERIOD_SOURCE_FIELDS)})"
    period_of = {name: t for t, name in enumerate(periods)}
    source_of = {name: i for i, name in enumerate(sources)}
    seen: dict[tuple[str, str], int] = {}
    for line, cells in _rows(path, PERIOD_SOURCE_FIELDS, ("period", "source"), what):
        where = f"{path}: line {line}"
        period, source = cells["period"], cells["source"]
        if period not in period_of:
            raise LedgerError(
                f"{where}: period = {period!r} is not a period of periods.csv{did_you_mean(period, period_of)}: "
                f"periods are {', '.join(periods)}"
            )
        if source not in source_of:
            raise unknown_source(where, source, sources)
        if (period, source) in seen:
            raise LedgerError(
                f"{where}: period {period!r} gives source {source!r} again (first on line {seen[period, source]})"
            )
        seen[period, source] = line
        t, i = period_of[period], source_of[source]
        price[t, i] = cells["price_usd_per_hour"]
        available[t, i] = cells["available_hours"]


def ledger_periods(folder: Path | str | None, given: Path | str | None) -> Path | None:
    """The periods file of a plan: ``given``, or the ledger folder's ``periods.csv`` if there."""
    if given is not None:
        return Path(given)
    if folder is None:
        return None
    found = Path(folder) / PERIODS_FILE
    return found if (found.exists() or found.is_symlink()) else None
