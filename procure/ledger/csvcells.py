"""A ledger CSV file read by pandas as a table of text cells, each row with its file line.

Every ledger file of rows (``sources.csv``, a scenarios file, a periods file, a runs file) is
read here: its column names as written and each once, a blank line kept as a row so that row i
is record i + 1 of the file, and pandas' own errors turned into one line naming the file and
the line at fault (a quote never closed, a cell too many). The text itself is read as
:mod:`procure.ledger.csvtext` reads it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import LedgerError
from ..spec import did_you_mean
from .csvtext import ends_quoted, read_header, read_text, short

#: Line of the file of the first row below the header.
FIRST_ROW_LINE = 2
#: Options of :func:`pandas.read_csv` for every ledger file: cells as written, blank lines kept,
#: a byte-order mark read through.
CSV_OPTIONS: dict[str, Any] = {
    "keep_default_na": False,
    "skipinitialspace": True,
    "skip_blank_lines": False,
    "encoding": "utf-8-sig",
}


def record_lines(path: Path, rows: int) -> list[int]:
    """The line of the file each of ``rows`` rows below the header starts on (a quoted cell
    may hold line breaks); one line a row if the file no longer reads so."""
    try:
        lines = read_text(path, "").lines()
    except (LedgerError, OSError):
        lines = []
    if len(lines) != rows:
        lines = list(range(FIRST_ROW_LINE, FIRST_ROW_LINE + rows))
    return lines


def read_csv_text(path: Path, what: str, numbers: Collection[str] = ()) -> pd.DataFrame:
    """A ledger CSV file as text cells, its column names as written (stripped) and each once.

    Blank lines are kept, so that row i is record i + 1 of the file (:func:`record_lines`
    gives the line each starts on).

    Parameters
    ----------
    path : Path
        The file.
    what : str
        What the file is for, for the message when it is missing.
    numbers : collection of str, optional
        Columns that hold numbers: each is read as floats (a blank as NaN) where every cell
        of it is a number or blank (pandas reads them as :func:`float` does), else as text
        (a blank as NaN); the other columns are then text of dtype object.

    Raises
    ------
    LedgerError
        No such file (``what`` says what the file is for), not a regular file, not UTF-8,
        separated by ``;``, not CSV, a column given twice.
    """
    header = read_header(path, what)
    try:
        options: dict[str, Any] = {"dtype": str}
        if numbers:
            labels = pd.read_csv(path, nrows=0, **CSV_OPTIONS).columns
            names = header
            if len(labels) == len(names):
                pairs = list(zip(labels, names, strict=True))
                options = {
                    "dtype": {label: object for label, name in pairs if name not in numbers},
                    "na_values": {label: [""] for label, name in pairs if name in numbers},
                }
        raw = pd.read_csv(path, **options, **CSV_OPTIONS)
    except pd.errors.ParserError as exc:
        _unreadable(path, len(header))
        raise LedgerError(f"{path}: cannot be read as CSV: {str(exc).splitlines()[0]}") from None
    except (pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise LedgerError(f"{path}: cannot be read as CSV: {str(exc).splitlines()[0]}") from None
    if not isinstance(raw.index, pd.RangeIndex):  # every row had cells to spare: pandas made them an index
        _too_many_cells(path, len(header))
    seen: dict[str, int] = {}
    for i, name in enumerate(header):
        if name in seen:
            raise LedgerError(f"{path}: column {short(name)!r} is given twice (columns {seen[name] + 1} and {i + 1})")
        seen[name] = i
    if len(header) != len(raw.columns):
        raise LedgerError(f"{path}: cannot be read as CSV: {len(header)} column names, {len(raw.columns)} columns")
    raw.columns = header
    return raw


def unknown_source(where: str, source: str, names: Iterable[str]) -> LedgerError:
    """The error for a row naming a source the ledger does not have (with "did you mean")."""
    known = list(names)
    return LedgerError(
        f"{where}: source = {source!r} is not a source of the ledger{did_you_mean(source, known)}: "
        f"sources are {', '.join(known)}"
    )


def _unreadable(path: Path, columns: int) -> None:
    """Raise for the first record pandas cannot read, where it is one: a quote opened and never
    closed, or more cells than the header has columns."""
    for record in read_text(path, "").records()[1:]:
        if ends_quoted(record.body):
            raise LedgerError(
                f"{path}: line {record.line}: a quote opens a cell that is never closed: a cell that holds a "
                'comma, a quote or a line break is written in quotes, its own quotes doubled ("")'
            )
        cells = record.cells()
        if len(cells) > columns:
            _too_many_cells(path, columns)


def _too_many_cells(path: Path, columns: int) -> None:
    """Raise for the first record with more cells than the header has columns."""
    for record in read_text(path, "").records()[1:]:
        cells = record.cells()
        if len(cells) > columns:
            raise LedgerError(
                f"{path}: line {record.line} has {len(cells)} cells, the header has {columns}: a cell too many "
                "(a comma in a cell that is not quoted, or a comma at the end of the line?)"
            )
    raise LedgerError(f"{path}: cannot be read as CSV: its rows have more cells than its header")
