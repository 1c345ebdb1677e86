"""Scenarios: other values of a ledger's uncertain columns, read from a file or sampled.

A ledger's exchange rates, survivals, saturation scales and prices are estimates. A scenario
gives each source a value of each of :data:`UNCERTAIN_COLUMNS`; a source or column a scenario
does not list keeps the ledger's value. Two ways to give them:

* ``scenarios.csv`` (in the ledger folder, or any file): columns ``scenario``, ``source``, any
  of the uncertain columns, and optionally ``probability`` (per scenario, the same on each of
  its rows; default equal; they must sum to 1);
* sampled: range columns ``NAME_low`` / ``NAME_high`` in ``sources.csv`` and a number of
  samples and a seed. Each ranged value is drawn independently from the triangular
  distribution on [low, high] whose peak is the ledger's value (mean ``(low + value + high) / 3``);
  every sample has the same probability. The same seed draws the same scenarios.

Every error names the file, the line, the field, the value and what is allowed.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..curves import needs_scale
from ..errors import LedgerError
from ..spec import check, did_you_mean
from .csvcells import read_csv_text, record_lines, unknown_source
from .load import Ledger
from .schema import OPTION_FIELDS, RANGE_SUFFIXES, UNCERTAIN_COLUMNS
from .sources import check_source_value

#: File name of a ledger's scenarios.
SCENARIO_FILE = "scenarios.csv"
#: Most scenarios a file or ``--samples`` may give.
MAX_SCENARIOS = 100_000
#: How far the probabilities may sum from 1 [1].
PROBABILITY_SUM_TOLERANCE = 1e-6
SCENARIO_COLUMNS = ("scenario", "source", "probability", *UNCERTAIN_COLUMNS)


@dataclass(frozen=True)
class Scenarios:
    """The uncertain columns of a ledger's sources, one value per scenario and source.

    Attributes
    ----------
    names : tuple of str
        Scenario names, in order.
    probability : numpy.ndarray
        Probability of each scenario [1], summing to 1.
    values : dict of str to numpy.ndarray
        For each of :data:`UNCERTAIN_COLUMNS`, an array (scenarios × sources) of the value of
        each source in each scenario [the column's unit].
    origin : str
        Where they came from: a file, or the samples and seed.
    """

    names: tuple[str, ...]
    probability: np.ndarray
    values: dict[str, np.ndarray]
    origin: str

    @property
    def count(self) -> int:
        """Number of scenarios."""
        return len(self.names)

    def mean(self) -> dict[str, np.ndarray]:
        """Probability-weighted mean of each uncertain column, per source (the mean scenario)."""
        return {name: self.probability @ v for name, v in self.values.items()}

    def sources(self, sources: pd.DataFrame, k: int | None = None) -> pd.DataFrame:
        """``sources`` with the values of scenario ``k`` (None: the mean scenario)."""
        out = sources.copy()
        chosen = self.mean() if k is None else {name: v[k] for name, v in self.values.items()}
        for name, v in chosen.items():
            out[name] = v
        return out


def _ledger_values(sources: pd.DataFrame) -> dict[str, np.ndarray]:
    return {name: sources[name].to_numpy(dtype=float) for name in UNCERTAIN_COLUMNS}


def read_scenarios(path: Path | str, sources: pd.DataFrame) -> Scenarios:
    """Read and validate a scenarios file against a ledger's sources.

    Raises
    ------
    LedgerError
        A missing file or column, an unknown column or source, a scenario and source given
        twice, a bad value, probabilities that differ within a scenario, are missing for some
        scenarios, or do not sum to 1.
    """
    path = Path(path)
    raw = read_csv_text(path, f"scenarios are a CSV file ({', '.join(SCENARIO_COLUMNS)})")
    for name in raw.columns:
        if name not in SCENARIO_COLUMNS:
            raise LedgerError(
                f"{path}: column {name!r} is unknown{did_you_mean(name, SCENARIO_COLUMNS)}: allowed are "
                f"{', '.join(SCENARIO_COLUMNS)}"
            )
    for required in ("scenario", "source"):
        if required not in raw.columns:
            raise LedgerError(f"{path}: missing column {required!r}: a scenarios file needs scenario and source")
    index = {name: i for i, name in enumerate(sources["source"])}
    ledger = _ledger_values(sources)
    names: list[str] = []
    changes: dict[str, list[tuple[int, str, float]]] = {}
    probability: dict[str, tuple[float, int]] = {}
    seen: dict[tuple[str, str], int] = {}
    lines = record_lines(path, len(raw))
    for i, rec in enumerate(raw.to_dict("records")):
        line = lines[i]
        if all(str(v).strip() == "" for v in rec.values()):
            continue
        where = f"{path}: line {line}"
        scenario = str(rec["scenario"]).strip()
        source = str(rec["source"]).strip()
        if not scenario:
            raise LedgerError(f"{where}: scenario is blank: it is required, non-empty text")
        if source not in index:
            raise unknown_source(where, source, index)
        if (scenario, source) in seen:
            raise LedgerError(
                f"{where}: scenario {scenario!r} gives source {source!r} again (first on line {seen[scenario, source]})"
            )
        seen[scenario, source] = line
        if scenario not in changes:
            names.append(scenario)
            changes[scenario] = []
            if len(names) > MAX_SCENARIOS:
                raise LedgerError(f"{path}: more than {MAX_SCENARIOS:,} scenarios")
        for name in UNCERTAIN_COLUMNS:
            cell = str(rec.get(name, "")).strip()
            if cell:
                changes[scenario].append((index[source], name, check_source_value(name, cell, f"{where}")))
        cell = str(rec.get("probability", "")).strip()
        if cell:
            try:
                p = float(cell)
            except ValueError:
                p = math.nan
            if not (math.isfinite(p) and 0 <= p <= 1):
                raise LedgerError(f"{where}: probability = {cell!r} is invalid: must be a number ≥ 0 and ≤ 1")
            if scenario in probability and probability[scenario][0] != p:
                first, at = probability[scenario]
                raise LedgerError(
                    f"{where}: probability = {p:g} of scenario {scenario!r} differs from {first:g} on line {at}: "
                    "a scenario has one probability"
                )
            probability.setdefault(scenario, (p, line))
    if not names:
        raise LedgerError(f"{path}: no scenarios: the file needs at least one row")
    if probability:
        missing = [s for s in names if s not in probability]
        if missing:
            raise LedgerError(
                f"{path}: probability is blank for scenario {missing[0]!r}: give every scenario one, or none "
                "(equal probabilities)"
            )
        prob = np.array([probability[s][0] for s in names])
        if abs(prob.sum() - 1) > PROBABILITY_SUM_TOLERANCE:
            raise LedgerError(f"{path}: probabilities sum to {prob.sum():.6g}: they must sum to 1")
        prob = prob / prob.sum()
    else:
        prob = np.full(len(names), 1.0 / len(names))
    values = {name: np.tile(v, (len(names), 1)) for name, v in ledger.items()}
    for k, scenario in enumerate(names):
        for i, name, number in changes[scenario]:
            values[name][k, i] = number
    _check_curves(values, sources, str(path))
    return Scenarios(tuple(names), prob, values, f"file {path}")


def _check_curves(values: dict[str, np.ndarray], sources: pd.DataFrame, where: str) -> None:
    """A scenario may not leave a curve that needs a scale without one."""
    k = values["saturation_hours"]
    needs = np.asarray(needs_scale(sources["curve"].to_numpy(dtype=object)), dtype=bool)
    bad = np.isnan(k) & needs[None, :]
    if bad.any():
        _k, i = np.argwhere(bad)[0]
        raise LedgerError(
            f"{where}: saturation_hours of {sources['source'].iloc[i]!r} is blank: required for its curve"
        )


def ranged_columns(sources: pd.DataFrame) -> list[str]:
    """The uncertain columns that have a range for some source."""
    return [name for name in UNCERTAIN_COLUMNS if sources[name + RANGE_SUFFIXES[0]].notna().any()]


def range_table(sources: pd.DataFrame) -> pd.DataFrame:
    """Each range the ledger gives, a row each in the ledger's order of sources and of
    :data:`~procure.ledger.schema.UNCERTAIN_COLUMNS`: ``source``, ``number`` (the column),
    ``low``, ``value`` (the ledger's cell, the triangle's peak) and ``high`` [the column's unit].
    ``procure fit --write`` writes a fitted number's 90 % interval here."""
    rows = []
    for name in ranged_columns(sources):
        low = sources[name + RANGE_SUFFIXES[0]].to_numpy(dtype=float)
        high = sources[name + RANGE_SUFFIXES[1]].to_numpy(dtype=float)
        value = sources[name].to_numpy(dtype=float)
        for i in np.flatnonzero(~np.isnan(low)).tolist():
            rows.append({"source": str(sources["source"].iloc[i]), "number": name, "low": float(low[i]),
                         "value": float(value[i]), "high": float(high[i])})  # fmt: skip
    order = {str(n): k for k, n in enumerate(sources["source"])}
    table = pd.DataFrame(rows, columns=["source", "number", "low", "value", "high"])
    return table.sort_values("source", key=lambda c: c.map(order), kind="stable").reset_index(drop=True)


def sample_scenarios(sources: pd.DataFrame, samples: int, seed: int = 0) -> Scenarios:
    """Draw ``samples`` equally likely scenarios from the ranges of ``sources`` (see the module).

    Raises
    ------
    LedgerError
        ``samples`` not a whole number between 1 and :data:`MAX_SCENARIOS`, or no ranges.
    """
    if isinstance(samples, bool) or not isinstance(samples, int) or not 1 <= samples <= MAX_SCENARIOS:
        raise LedgerError(f"samples = {samples!r} is invalid: must be a whole number ≥ 1 and ≤ {MAX_SCENARIOS:,}")
    check(OPTION_FIELDS["seed"], seed, error=LedgerError)
    ranged = ranged_columns(sources)
    if not ranged:
        names = ", ".join(f"{c}_low/{c}_high" for c in UNCERTAIN_COLUMNS)
        raise LedgerError(f"samples = {samples}: sources.csv has no ranges to draw from: give some of {names}")
    rng = np.random.default_rng(seed)
    values = {name: np.tile(v, (samples, 1)) for name, v in _ledger_values(sources).items()}
    for name in ranged:
        low = sources[name + RANGE_SUFFIXES[0]].to_numpy(dtype=float)
        high = sources[name + RANGE_SUFFIXES[1]].to_numpy(dtype=float)
        peak = sources[name].to_numpy(dtype=float)
        for i in np.flatnonzero(~np.isnan(low)).tolist():
            if high[i] > low[i]:
                values[name][:, i] = rng.triangular(low[i], peak[i], high[i], size=samples)
    width = len(str(samples))
    labels = tuple(f"s{k + 1:0{width}d}" for k in range(samples))
    return Scenarios(labels, np.full(samples, 1.0 / samples), values, f"{samples} samples, seed {seed}")


def ledger_scenarios(
    ledger: Ledger, path: Path | str | None = None, *, samples: int | None = None, seed: int = 0
) -> Scenarios | None:
    """A ledger's scenarios: from ``path``, else sampled if ``samples`` is given, else the
    ledger folder's ``scenarios.csv`` if it has one; None without any.

    Raises
    ------
    LedgerError
        Both a file and samples; a ``scenarios.csv`` in the ledger folder that is not a
        regular file (a folder, a FIFO, a link to nothing); what :func:`read_scenarios` and
        :func:`sample_scenarios` refuse.
    """
    if path is not None and samples is not None:
        raise LedgerError("scenarios: give a scenarios file or --samples, not both")
    if path is not None:
        return read_scenarios(path, ledger.sources)
    if samples is not None:
        return sample_scenarios(ledger.sources, samples, seed)
    own = ledger.path / SCENARIO_FILE
    if not os.path.lexists(own):
        return None
    return read_scenarios(own, ledger.sources)
