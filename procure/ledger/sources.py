"""``sources.csv``: one row per source that can be bought, read and validated a column at a time.

Each column is checked whole against its :class:`procure.spec.Range` with numpy masks, then the
rules between columns (a scale for a curve that needs one, a shape its curve allows, both ends
of a range around the value); the error reported is the first bad cell in file order, and
within a row the first in the order of :data:`SOURCE_COLUMNS` and then the rules'. Blank cells
take the documented defaults.

pandas reads the columns of numbers as numbers while it reads the file (as :func:`float` reads
their text, a blank as NaN); the message on a bad number reads that cell's column again as
text, so that it quotes the cell as it is written.

Every error names the file, the row (as the line of the file it starts on, a quoted cell with
line breaks counted), the field, the value and what is allowed, as one line. The file's text is
read as :mod:`procure.ledger.csvtext` reads it: a byte-order mark read through, a file separated
by ``;`` refused with a hint.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..curves import default_shape, needs_scale, shaped
from ..errors import LedgerError, quoted
from ..spec import Checked, Range, bad_message, check_cell, check_series, did_you_mean
from .csvcells import CSV_OPTIONS, read_csv_text, record_lines
from .csvtext import short
from .schema import (
    FORMAT_JOIN,
    FORMATS,
    NUMBER_COLUMNS,
    RANGE_SUFFIXES,
    REQUIRED_SOURCE_COLUMNS,
    SOURCE_COLUMNS,
    UNCERTAIN_COLUMNS,
    USER_COLUMN_PREFIX,
)

#: Kinds of numpy dtype a column of numbers is read as (int, unsigned, float; not bool).
NUMBER_KINDS = "iuf"
#: What :func:`pandas.api.types.infer_dtype` says of a column of text (blanks left out).
TEXT_KINDS = ("string", "empty")


def _where(path: Path, line: int | None = None, source: str | None = None) -> str:
    """``path: line N (source 'name')``, the prefix of a message on a row."""
    out = str(path)
    if line is not None:
        out += f": line {line}"
    if source:
        out += f" (source {quoted(source)})"
    return out


def check_source_value(name: str, value: Any, where: str = "") -> Any:
    """Validate one value of a ``sources.csv`` column; a blank takes the column's default.

    Parameters
    ----------
    name : str
        Column name (a key of :data:`SOURCE_COLUMNS`).
    value : Any
        The cell as text, or a number given another way (a command-line option).
    where : str, optional
        Where the value came from, put before the message.

    Raises
    ------
    LedgerError
        Naming the place, the column, the value and what is allowed.
    """
    return check_cell(SOURCE_COLUMNS[name], value, name, where, error=LedgerError)


def _check_header(path: Path, header: list[str]) -> None:
    for name in header:
        if name not in SOURCE_COLUMNS and not name.startswith(USER_COLUMN_PREFIX):
            raise LedgerError(
                f"{path}: column {short(name)!r} is unknown{did_you_mean(name, SOURCE_COLUMNS)}: columns of your own "
                f"start with {USER_COLUMN_PREFIX!r} (procure ignores them); see docs/ledger.md for the others"
            )
    missing = [c for c in REQUIRED_SOURCE_COLUMNS if c not in header]
    if missing:
        raise LedgerError(
            f"{path}: missing column(s) {', '.join(missing)}: required are {', '.join(REQUIRED_SOURCE_COLUMNS)}"
        )


def _is_text(column: pd.Series) -> bool:
    return pd.api.types.is_string_dtype(column.dtype) or column.dtype == object


def _checked_columns(raw: pd.DataFrame) -> dict[str, Checked]:
    """Every column of :data:`SOURCE_COLUMNS` checked whole; a column left out is blank."""
    out = {}
    for name, spec in SOURCE_COLUMNS.items():
        cells = raw[name] if name in raw.columns else pd.Series(np.full(len(raw), "", dtype=object))
        out[name] = check_series(spec, cells, nan_is_blank=True)
    return out


def _blank_rows(raw: pd.DataFrame, cols: dict[str, Checked]) -> np.ndarray:
    """True where every cell of the row is blank (a blank line) [bool per row]."""
    blank = cols["source"].blank.copy()
    for name in raw.columns:
        if name in cols:
            blank &= cols[name].blank
            continue
        rows = np.flatnonzero(blank)
        if len(rows):
            cells = raw[name].to_numpy(dtype=object)[rows]
            blank[rows] = [isinstance(c, str) and not c.strip() for c in cells]
    return blank


#: A rule between cells: where a row breaks it [bool per row], and its message on row i.
Rule = tuple[np.ndarray, Callable[[int, str], str]]


def _duplicates(names: np.ndarray, keep: np.ndarray, lines: Callable[[], list[int]]) -> Rule:
    rows = np.flatnonzero(keep)
    repeated = pd.Series(names[rows], dtype=object).duplicated().to_numpy()
    mask = np.zeros(len(names), dtype=bool)
    mask[rows[repeated]] = True

    def message(i: int, at: str) -> str:
        first = rows[np.flatnonzero(names[rows] == names[i])[0]]
        line = lines()[int(first)]
        return f"{at}: source = {quoted(names[i])} is a duplicate of line {line}: names must be unique"

    return mask, message


def _rules(cols: dict[str, Checked], keep: np.ndarray, lines: Callable[[], list[int]]) -> list[Rule]:
    """The rules between columns, in the order they are reported within a row; ``lines()``
    is the line each row starts on."""
    curve = cols["curve"].values
    k = cols["saturation_hours"].values
    shape = cols["curve_shape"].values
    shape_given = ~cols["curve_shape"].blank
    rules = [_duplicates(cols["source"].values, keep, lines)]
    scale = cols["saturation_hours"].spec

    def unscaled(i: int, at: str) -> str:
        needed = dataclasses.replace(scale, high=math.inf).describe()
        return f"{at}: saturation_hours is blank: required for curve {curve[i]!r}, {needed}"

    rules.append((keep & np.asarray(needs_scale(curve), dtype=bool) & np.isnan(k), unscaled))
    for entry in shaped():
        allowed = entry.shape_range
        if allowed is None:
            continue

        def misshaped(i: int, at: str, name: str = entry.name, allowed: Range = allowed) -> str:
            note = f" ({allowed.note})" if allowed.note else ""
            return f"{at}: curve_shape = {shape[i]:g} is invalid for curve {name!r}: must be {allowed.bounds()}{note}"

        rules.append((keep & (curve == entry.name) & shape_given & ~allowed.mask(shape), misshaped))
    for name in UNCERTAIN_COLUMNS:
        rules.extend(_range_rules(name, cols, keep))
    rules.extend(_format_rules(cols, keep))
    return rules


def _format_rules(cols: dict[str, Checked], keep: np.ndarray) -> list[Rule]:
    """No empty name in a ``formats`` cell (``+``, ``recorded++decoded``); each name one of
    :data:`FORMATS`; a source not stored as video kept as recorded only (nothing to re-encode
    or decode)."""
    cells = cols["formats"].values
    stored = cols["stored"].values

    def split(c: object) -> list[str]:
        return [f.strip() for f in c.split(FORMAT_JOIN)] if isinstance(c, str) and c.strip() else []

    def named(c: object) -> list[str]:
        return [f for f in split(c) if f]

    codes, distinct = pd.factorize(pd.Series(cells, dtype=object), use_na_sentinel=False)  # each cell read once

    def each(test: Callable[[object], bool]) -> np.ndarray:
        return np.array([test(c) for c in distinct], dtype=bool)[codes]

    empty = each(lambda c: any(not f for f in split(c)))
    unknown = ~empty & each(lambda c: any(f not in FORMATS for f in named(c)))
    other = each(lambda c: any(f != "recorded" for f in named(c)))
    joined = f"{', '.join(FORMATS)} or these formats joined by {FORMAT_JOIN!r} (blank: as recorded only)"

    def no_name(i: int, at: str) -> str:
        given = quoted(cells[i])
        return f"{at}: formats = {given} is invalid: an empty format beside a {FORMAT_JOIN!r}; allowed are {joined}"

    def bad_name(i: int, at: str) -> str:
        name = next(f for f in named(cells[i]) if f not in FORMATS)
        hint = f" (join formats with {FORMAT_JOIN!r})" if "," in name else did_you_mean(name, FORMATS)
        given, allowed = quoted(cells[i]), ", ".join(FORMATS)
        return f"{at}: formats = {given} is invalid: {quoted(name)} is no format; allowed are {allowed}{hint}"

    def not_video(i: int, at: str) -> str:
        return (f"{at}: formats = {quoted(cells[i])} is invalid: its frames are stored {stored[i]}, nothing to "
                "re-encode or decode: recorded only")  # fmt: skip

    rules: list[Rule] = [(keep & empty, no_name), (keep & unknown, bad_name)]
    return [*rules, (keep & ~empty & ~unknown & other & (stored != "video"), not_video)]


def _range_rules(name: str, cols: dict[str, Checked], keep: np.ndarray) -> list[Rule]:
    """Both ends of ``name``'s range or neither, and low ≤ the value ≤ high."""
    low, high = (cols[name + s].values for s in RANGE_SUFFIXES)
    value = cols[name].values
    one_end = np.isnan(low) != np.isnan(high)

    def half(i: int, at: str) -> str:
        given, blank = (f"{name}_low", f"{name}_high") if math.isnan(high[i]) else (f"{name}_high", f"{name}_low")
        return f"{at}: {blank} is blank but {given} is not: a range needs both ends"

    def disordered(i: int, at: str) -> str:
        return (
            f"{at}: {name}_low = {low[i]:g}, {name} = {value[i]:g}, {name}_high = {high[i]:g} are invalid: "
            f"must be {name}_low ≤ {name} ≤ {name}_high"
        )

    both = ~np.isnan(low) & ~np.isnan(high)
    with np.errstate(invalid="ignore"):
        inside = np.isnan(value) | ((low <= value) & (value <= high))
    return [(keep & one_end, half), (keep & both & ((low > high) | ~inside), disordered)]


def _numbers_or_text(column: pd.Series) -> bool:
    """True when pandas read the column as numbers, or as text and nothing else."""
    if column.dtype.kind in NUMBER_KINDS:
        return True
    if column.dtype == object:
        return pd.api.types.infer_dtype(column, skipna=True) in TEXT_KINDS
    return pd.api.types.is_string_dtype(column.dtype)


def _as_written(path: Path, raw: pd.DataFrame) -> pd.DataFrame:
    """``raw`` with every column that is neither numbers nor all text (pandas read true/false or
    a huge integer in it) read again as the text written."""
    odd = [i for i, name in enumerate(raw.columns) if not _numbers_or_text(raw[name])]
    if not odd:
        return raw
    text = pd.read_csv(path, usecols=odd, dtype=str, **CSV_OPTIONS)
    out = raw.copy()
    for j, i in enumerate(odd):
        out[raw.columns[i]] = text.iloc[:, j].to_numpy(dtype=object)
    return out


def _written(path: Path, position: int, row: int) -> str:
    """The text of one cell of a CSV file as written (stripped): row ``row`` of column ``position``."""
    column = pd.read_csv(path, usecols=[position], dtype=str, **CSV_OPTIONS)
    return str(column.iloc[row, 0]).strip()


def _first_error(path: Path, raw: pd.DataFrame, cols: dict[str, Checked], keep: np.ndarray) -> str | None:
    """The message on the first bad cell or broken rule in file order, None if all is well."""
    names = cols["source"].shown
    checks: list[Rule] = []
    for column, checked in cols.items():

        def bad_cell(i: int, at: str, checked: Checked = checked, column: str = column) -> str:
            if column in raw.columns and not checked.blank[i] and not _is_text(raw[column]):
                # pandas read the column as numbers: quote the cell as it is written.
                written = _written(path, list(raw.columns).index(column), i)
                return bad_message(checked.spec, column, written, at)
            return checked.message(i, column, at)

        checks.append((checked.bad & keep, bad_cell))
    found: list[list[int]] = []

    def lines() -> list[int]:
        if not found:
            found.append(record_lines(path, len(keep)))
        return found[0]

    checks.extend(_rules(cols, keep, lines))
    firsts = [int(np.argmax(mask)) if mask.any() else len(keep) for mask, _ in checks]
    row = min(firsts, default=len(keep))
    if row == len(keep):
        return None
    _mask, message = checks[firsts.index(row)]
    name = str(names[row]).strip()
    return message(row, _where(path, lines()[row], name))


def _frame(raw: pd.DataFrame, path: Path) -> pd.DataFrame:
    """The validated sources of a read file (see :func:`read_sources`)."""
    cols = _checked_columns(raw)
    keep = ~_blank_rows(raw, cols)
    problem = _first_error(path, raw, cols, keep)
    if problem is not None:
        raise LedgerError(problem)
    if not keep.any():
        raise LedgerError(f"{path}: no sources: the ledger needs at least one row")
    values = {name: checked.values[keep] for name, checked in cols.items()}
    shape = values["curve_shape"]
    values["curve_shape"] = np.where(np.isnan(shape), default_shape(values["curve"]), shape)
    for extra in raw.columns:
        if extra not in SOURCE_COLUMNS:
            values[extra] = raw[extra].to_numpy(dtype=object)[keep]
    return pd.DataFrame(values)


def read_sources(path: Path | str) -> pd.DataFrame:
    """Read and validate ``sources.csv``.

    Parameters
    ----------
    path : path-like
        The CSV file.

    Returns
    -------
    pandas.DataFrame
        One row per source, every column of :data:`SOURCE_COLUMNS` present with defaults filled
        (``available_hours`` and ``shelf_life_months`` are ``inf`` when blank, ``curve_shape``
        the curve's default), indexed 0..n-1; columns of the user's own (prefix ``x_``) are
        kept as text.

    Raises
    ------
    LedgerError
        A missing file or column, a column given twice or unknown, an empty ledger, a
        duplicate source, a bad value.
    """
    path = Path(path)
    what = "a ledger folder needs sources.csv"
    raw = read_csv_text(path, what, NUMBER_COLUMNS)
    _check_header(path, list(raw.columns))
    return _frame(_as_written(path, raw), path)
