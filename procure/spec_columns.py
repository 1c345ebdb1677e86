"""A whole column of a table checked against a :class:`Range` at once, with numpy masks
(:func:`check_series`): numbers checked as given, text cells stripped and read with
:func:`float`, blanks taking the default; the result (:class:`Checked`) holds the values, the
blanks and the bad cells, and words the message on the first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .spec_range import Range, as_float, bad_message, blank_message


@dataclass(frozen=True)
class Checked:
    """A column checked against a :class:`Range`: its values and where it is wrong.

    Attributes
    ----------
    spec : Range
        What was allowed.
    values : numpy.ndarray
        The values, blanks filled with the default: floats for a number field, the stripped
        text (object) otherwise [the field's unit].
    blank : numpy.ndarray
        True where the cell was blank [bool per row].
    bad : numpy.ndarray
        True where the cell is not allowed: out of range, not a number, not a choice, or blank
        when required [bool per row].
    shown : numpy.ndarray
        What a message shows of each cell: its text (stripped in the message), or the number
        as given.
    """

    spec: Range
    values: np.ndarray
    blank: np.ndarray
    bad: np.ndarray
    shown: np.ndarray

    def first(self) -> int:
        """Row of the first bad cell, -1 if none."""
        return int(np.argmax(self.bad)) if self.bad.any() else -1

    def message(self, row: int, field: str | None = None, where: str = "") -> str:
        """The message on the bad cell of ``row``: blank but required, or not allowed."""
        name = field or self.spec.name
        if self.blank[row]:
            return blank_message(self.spec, name, where)
        shown = self.shown[row]
        return bad_message(self.spec, name, shown.strip() if isinstance(shown, str) else shown, where)


def _with_blanks(text: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``text`` with the cells of ``rows`` that hold no text (a missing value) made blank."""
    absent = [i for i in rows.tolist() if not isinstance(text[i], str)]
    if not absent:
        return text
    text = text.copy()
    text[absent] = ""
    return text


def _parse_numbers(text: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Numbers of text cells as :func:`float` reads them, NaN where not; where a cell is blank;
    and the cells, a missing value made blank."""
    numbers = np.full(len(text), math.nan)
    blank = text == ""
    given = np.flatnonzero(~blank)
    try:
        numbers[given] = text[given].astype(float)  # float() of each cell, in C
    except (TypeError, ValueError, OverflowError):
        numbers[given] = [as_float(t) for t in text[given]]
    odd = given[np.isnan(numbers[given])]  # not numbers, "nan", whitespace or missing values
    text = _with_blanks(text, odd)
    for i in odd.tolist():
        stripped = str(text[i]).strip()
        blank[i] = not stripped
        numbers[i] = as_float(stripped) if stripped else math.nan
    return numbers, blank, text


#: ``str.strip`` of each element of an object array, in one numpy call.
_strip = np.frompyfunc(str.strip, 1, 1)


def _stripped(text: np.ndarray, done: np.ndarray | None = None) -> np.ndarray:
    """The cells stripped, a missing value made blank; ``done`` marks cells known to need
    nothing done (a choice as it is written)."""
    out = text.copy()
    rows = np.flatnonzero(~done) if done is not None else np.arange(len(text))
    if not len(rows):
        return out
    rest = text[rows]
    try:
        out[rows] = _strip(rest)
    except TypeError:  # a cell that is not text: a missing value
        out[rows] = _strip(_with_blanks(rest, np.arange(len(rows))))
    return out


def check_series(spec: Range, cells: pd.Series, *, nan_is_blank: bool = False) -> Checked:
    """Check a whole column against ``spec`` with numpy masks; blanks take the default.

    Parameters
    ----------
    spec : Range
        What is allowed (a ``number``, ``text`` or ``choice`` field).
    cells : pandas.Series
        The column: numbers, each checked as given; or text cells, stripped (``""`` or a
        missing value is a blank; a number field reads each cell with :func:`float`).
    nan_is_blank : bool, default False
        In a column of numbers, NaN is a blank (as :func:`pandas.read_csv` reads a blank
        cell), not a bad value.

    Returns
    -------
    Checked
        The values, blanks and bad cells; :meth:`Checked.first` is the first bad row.
    """
    if spec.kind == "bool":
        raise ValueError(f"{spec.name}: a column of true/false is not checked by check_series")
    if spec.kind == "number" and pd.api.types.is_numeric_dtype(cells.dtype):  # numbers (or true/false)
        numbers = cells.to_numpy(dtype=float)
        blank = np.isnan(numbers) if nan_is_blank else np.zeros(len(numbers), dtype=bool)
        bad = np.where(blank, spec.required, ~spec.mask(numbers))
        if blank.any() and not spec.required:
            numbers = np.where(blank, spec.default, numbers)
        return Checked(spec, numbers, blank, bad, cells.to_numpy())
    text = cells.to_numpy(dtype=object)
    if spec.kind == "number":
        numbers, blank, text = _parse_numbers(text)
        bad = np.where(blank, spec.required, ~spec.mask(numbers))
        if not spec.required:
            numbers[blank] = spec.default
        return Checked(spec, numbers, blank, bad, text)
    if spec.kind == "choice":
        written = pd.Series(text, dtype=object).isin(spec.choices).to_numpy()
        stripped = _stripped(text, written)
        allowed = written.copy()
        rest = np.flatnonzero(~written)
        allowed[rest] = pd.Series(stripped[rest], dtype=object).isin(spec.choices).to_numpy()
        blank = stripped == ""
        bad = np.where(blank, spec.required, ~allowed)
    else:
        stripped = _stripped(text)
        blank = stripped == ""
        bad = blank & spec.required
    values = stripped.copy()
    if not spec.required:
        values[blank] = spec.default
    return Checked(spec, values, blank, bad, stripped)
