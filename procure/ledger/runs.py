"""``runs.csv``: the team's training runs, one row each, read and validated a column at a time.

Columns: ``run`` (a unique name), ``hours_<source>`` for each source of the ledger in the run's
mix (blank or left out: 0 hours), and the run's metric: ``successes`` and ``trials`` (an
evaluation of whole trials), or ``score`` with an optional ``score_sd`` (its standard error).
Columns of the team's own start with ``x_`` and are ignored. As in ``sources.csv``, the error
reported is the first bad cell in file order, one line naming the file, the line, the field,
the value and what is allowed; an unknown source in an ``hours_`` column is named with the
closest source of the ledger.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import LedgerError
from ..spec import Range, check_series, did_you_mean
from .csvcells import read_csv_text, record_lines
from .csvtext import short
from .schema import MOST_HOURS, USER_COLUMN_PREFIX

#: File name of a ledger folder's runs.
RUNS_FILE = "runs.csv"
#: Prefix of the columns that give a run's hours of a source.
HOURS_PREFIX = "hours_"
#: Most trials one run's evaluation may have [trials].
MOST_TRIALS = 1e9
#: Largest magnitude of a score [the score's unit].
MOST_SCORE = 1e12

#: The columns of ``runs.csv`` other than ``hours_<source>``: unit, default and range.
RUN_COLUMNS: dict[str, Range] = {
    r.name: r
    for r in (
        Range("run", "text", kind="text", doc="unique name of the run"),
        Range("successes", "trials", math.nan, low=0.0, high=MOST_TRIALS, integer=True,
              doc="trials the run's policy succeeded in"),
        Range("trials", "trials", math.nan, low=1.0, high=MOST_TRIALS, integer=True,
              doc="trials it was evaluated on (a run without trials tells nothing)"),
        Range("score", "the score's unit", math.nan, low=-MOST_SCORE, high=MOST_SCORE,
              doc="the run's score or loss, instead of successes"),
        Range("score_sd", "the score's unit", math.nan, low=0.0, low_open=True, high=MOST_SCORE,
              blank="fitted", doc="standard error of the score"),
    )
}  # fmt: skip
#: What a column ``hours_<source>`` accepts.
HOURS_RANGE = Range("hours", "h", 0.0, low=0.0, high=MOST_HOURS, blank="0", doc="hours of the source in the run")


@dataclass(frozen=True)
class Runs:
    """The training runs of a ``runs.csv``, validated against a ledger's sources.

    Attributes
    ----------
    path : Path
        The file.
    names : tuple of str
        The runs' names, in file order.
    lines : tuple of int
        The line each run starts on.
    sources : tuple of str
        The ledger's sources, in ledger order (the columns of ``hours``).
    hours : numpy.ndarray
        Hours of each source in each run (runs × sources; 0 where not given) [h].
    successes, trials : numpy.ndarray or None
        Per run, with a success metric [trials]; None with a score.
    score, score_sd : numpy.ndarray or None
        Per run, with a score metric [the score's unit]; ``score_sd`` NaN where blank.
    """

    path: Path
    names: tuple[str, ...]
    lines: tuple[int, ...]
    sources: tuple[str, ...]
    hours: np.ndarray
    successes: np.ndarray | None = None
    trials: np.ndarray | None = None
    score: np.ndarray | None = None
    score_sd: np.ndarray | None = None

    @property
    def count(self) -> int:
        """Number of runs."""
        return len(self.names)

    @property
    def metric(self) -> str:
        """``success`` (successes out of trials) or ``score``."""
        return "success" if self.trials is not None else "score"

    def observed(self) -> np.ndarray:
        """Each run's metric: its success rate [1] or its score [the score's unit]."""
        if self.trials is not None and self.successes is not None:
            return self.successes / self.trials
        assert self.score is not None
        return self.score

    def used(self) -> np.ndarray:
        """Sources some run has hours of [bool per source]."""
        return np.asarray((self.hours > 0).any(axis=0), dtype=bool)


def _header_error(path: Path, name: str, sources: tuple[str, ...]) -> str | None:
    """The message on a header cell ``runs.csv`` does not take, None if it takes it."""
    if name in RUN_COLUMNS or name.startswith(USER_COLUMN_PREFIX):
        return None
    if name.startswith(HOURS_PREFIX):
        source = name[len(HOURS_PREFIX) :]
        if source in sources:
            return None
        return (
            f"{path}: line 1: column {short(name)!r} names source {short(source)!r}, which is not in the ledger"
            f"{did_you_mean(source, sources)}: allowed are hours_ and one of {', '.join(sources)}"
        )
    known = [*RUN_COLUMNS, *(HOURS_PREFIX + s for s in sources)]
    return (
        f"{path}: line 1: column {short(name)!r} is unknown{did_you_mean(name, known)}: allowed are "
        f"{', '.join(RUN_COLUMNS)}, hours_<source> for a source of the ledger, and columns of your own starting "
        f"with {USER_COLUMN_PREFIX!r}"
    )


def _metric_columns(path: Path, header: list[str]) -> str:
    """``success`` or ``score``: the metric the header gives, or an error saying what is missing."""
    given = {c for c in ("successes", "trials", "score") if c in header}
    if {"successes", "trials"} <= given and "score" in given:
        raise LedgerError(f"{path}: line 1: columns successes, trials and score are given: give successes and "
                          "trials, or score (with score_sd), not both")  # fmt: skip
    if given in ({"successes", "trials"}, {"score"}):
        if "score_sd" in header and "score" not in given:
            raise LedgerError(f"{path}: line 1: column score_sd is given without score: it is the score's error")
        return "success" if "trials" in given else "score"
    if given & {"successes", "trials"}:
        missing = ({"successes", "trials"} - given).pop()
        raise LedgerError(f"{path}: line 1: missing column {missing}: successes and trials go together")
    raise LedgerError(f"{path}: line 1: no metric: give columns successes and trials, or score (and score_sd)")


def read_runs(path: Path | str, sources: pd.DataFrame) -> Runs:
    """Read and validate ``runs.csv`` against a ledger's sources.

    Parameters
    ----------
    path : path-like
        The CSV file.
    sources : pandas.DataFrame
        The ledger's sources (:func:`procure.ledger.read_sources`).

    Raises
    ------
    LedgerError
        A missing file, an unknown column or source, a missing metric, no runs, a duplicate
        run, a bad cell (negative hours, successes that are not whole, no trials), successes
        above trials: one line each, naming the file, the line, the field and the value.
    """
    path = Path(path)
    names = tuple(str(s) for s in sources["source"])
    raw = read_csv_text(path, f"runs are a CSV file ({', '.join(RUN_COLUMNS)}, hours_<source>)")
    header = list(raw.columns)
    for name in header:
        problem = _header_error(path, name, names)
        if problem:
            raise LedgerError(problem)
    if "run" not in header:
        raise LedgerError(f"{path}: line 1: missing column run: every run needs a name")
    metric = _metric_columns(path, header)
    lines = record_lines(path, len(raw))
    hours_columns = [c for c in header if c.startswith(HOURS_PREFIX)]
    required = ("successes", "trials") if metric == "success" else ("score",)
    specs = {c: dataclasses.replace(RUN_COLUMNS[c], default=None) if c in required else RUN_COLUMNS[c]
             for c in header if c in RUN_COLUMNS}  # fmt: skip
    specs.update({c: dataclasses.replace(HOURS_RANGE, name=c) for c in hours_columns})
    checked = {c: check_series(spec, raw[c]) for c, spec in specs.items()}
    blank = np.ones(len(raw), dtype=bool)
    for c in header:
        text = raw[c].to_numpy(dtype=object)
        blank &= np.array([not isinstance(t, str) or not t.strip() for t in text], dtype=bool)
    keep = ~blank  # rows with some cell given
    run = checked["run"].values
    for i in np.flatnonzero(keep).tolist():
        where = f"{path}: line {lines[i]} (run {str(run[i]).strip()!r})" if str(run[i]).strip() else (
            f"{path}: line {lines[i]}")  # fmt: skip
        for c in header:
            if c in checked and checked[c].bad[i]:
                raise LedgerError(checked[c].message(i, c, where))
        if metric == "success" and checked["successes"].values[i] > checked["trials"].values[i]:
            s, n = checked["successes"].values[i], checked["trials"].values[i]
            raise LedgerError(f"{where}: successes = {s:g} is invalid: must be ≤ trials ({n:g})")
        earlier = [j for j in np.flatnonzero(keep[:i]).tolist() if run[j] == run[i]]
        if earlier:
            raise LedgerError(f"{where}: run = {run[i]!r} is a duplicate of line {lines[earlier[0]]}: names must be "
                              "unique")  # fmt: skip
    rows = np.flatnonzero(keep)
    if not len(rows):
        raise LedgerError(f"{path}: no runs: the file needs at least one row below its header")
    hours = np.zeros((len(rows), len(names)))
    for c in hours_columns:
        hours[:, names.index(c[len(HOURS_PREFIX) :])] = checked[c].values[rows]
    out = Runs(path, tuple(str(r) for r in run[rows]), tuple(lines[i] for i in rows.tolist()), names, hours)
    if metric == "success":
        return dataclasses.replace(out, successes=checked["successes"].values[rows].astype(float),
                                   trials=checked["trials"].values[rows].astype(float))  # fmt: skip
    sd = checked["score_sd"].values[rows].astype(float) if "score_sd" in checked else np.full(len(rows), math.nan)
    return dataclasses.replace(out, score=checked["score"].values[rows].astype(float), score_sd=sd)
