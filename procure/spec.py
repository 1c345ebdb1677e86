"""What a field accepts: one :class:`Range` per column, key or option, checked one value at a time
or a whole column at once.

A :class:`Range` holds a field's unit, default, bounds (each end open or closed), whether it
takes whole numbers only, its text choices and what a blank means. The same entry describes the
field in the documentation (:meth:`Range.describe`), checks one value (:func:`check` for a
number given as a number, :func:`check_cell` for a ledger cell or an option given as text) and
checks a whole column of a table (:func:`check_series`, with numpy masks). Every message is one
line naming the place, the field, the value and what is allowed.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .errors import InputError, ProcureError, invalid

#: Kinds of value a :class:`Range` describes.
KINDS = ("number", "text", "choice", "bool")
#: What a required text field accepts.
NON_EMPTY_TEXT = "non-empty text"
#: Least similarity of a known name to an unknown one for a "did you mean" [1].
CLOSE_NAME = 0.6


@dataclass(frozen=True)
class Range:
    """What one field accepts: a number between bounds, text, one of some choices, or true/false.

    Attributes
    ----------
    name : str
        The field's name (a column, a key, an option).
    unit : str
        Its unit, as the documentation prints it ("" for none).
    default : Any
        The value a blank takes; None: the field is required.
    kind : str
        ``number``, ``text``, ``choice`` or ``bool``.
    low, high : float
        Bounds of a number [the field's unit]; ``-inf`` / ``inf`` for none.
    low_open, high_open : bool
        True where the bound itself is not allowed (``> low``, ``< high``).
    integer : bool
        Whole numbers only.
    choices : tuple of str
        What a ``choice`` field accepts.
    blank : str
        What a blank means, for the documentation ("" when it is the default itself).
    doc : str
        What the field is, for the documentation.
    note : str
        Why the bounds are what they are, put after them in a message ("concave").
    least : float
        Smallest value other than 0 that is allowed [the field's unit]; 0 for no such floor.
        A tiny positive value (a denormal such as 5e-324) divides into ``inf`` and multiplies
        into 0, so a field whose low end is 0 takes a floor that keeps every product and
        quotient of it finite: ``0 or a number ≥ least`` when 0 is allowed, ``a number ≥
        least`` when it is not.
    """

    name: str = ""
    unit: str = ""
    default: Any = None
    kind: str = "number"
    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False
    integer: bool = False
    choices: tuple[str, ...] = ()
    blank: str = ""
    doc: str = ""
    note: str = ""
    least: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind = {self.kind!r} is invalid: allowed are {', '.join(KINDS)}")
        if self.least < 0 or (self.least > 0 and self.low < 0):
            raise ValueError(f"{self.name}: least = {self.least!r} is invalid: a floor needs low ≥ 0 and least ≥ 0")

    @property
    def zero_or_least(self) -> bool:
        """True when 0 is allowed and the other values start at :attr:`least` (``0 or ≥ least``)."""
        return self.least > 0 and self.low == 0 and not self.low_open

    @property
    def required(self) -> bool:
        """True when a blank is not allowed."""
        return self.default is None

    def bounds(self) -> str:
        """The bounds of a number, ``> 0 and ≤ 1``; "" for a number without bounds; ``0 or ≥
        1e-06 and ≤ 1`` for a floor above 0 (:attr:`least`)."""
        parts = []
        if self.least > max(self.low, 0):
            parts.append(f"{'0 or ' if self.zero_or_least else ''}≥ {self._shown(self.least)}")
        elif math.isfinite(self.low):
            parts.append(f"{'>' if self.low_open else '≥'} {self._shown(self.low)}")
        if math.isfinite(self.high):
            parts.append(f"{'<' if self.high_open else '≤'} {self._shown(self.high)}")
        return " and ".join(parts)

    def _shown(self, bound: float) -> str:
        """A bound as messages show it: ``:g``, or every digit of a whole number's large bound."""
        return str(int(bound)) if self.integer and isinstance(bound, int) else f"{bound:g}"

    def describe(self) -> str:
        """What is allowed, as the messages and the documentation say it."""
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        if self.kind == "text":
            return NON_EMPTY_TEXT if self.required else "text"
        if self.kind == "bool":
            return "true or false"
        number = "a whole number" if self.integer else "a number"
        bounds = self.bounds()
        if self.zero_or_least:
            return f"0 or {number} {bounds.removeprefix('0 or ')}"
        return f"{number} {bounds}" if bounds else number

    def allowed(self) -> str:
        """What is allowed (the same as :meth:`describe`)."""
        return self.describe()

    def rule(self) -> str:
        """The end of a message on a bad value: ``must be a number ≥ 0``, ``allowed are one of …``."""
        if self.kind == "choice":
            return f"allowed are {self.describe()}"
        return f"must be {self.describe()}"

    def contains(self, number: float) -> bool:
        """True when ``number`` is finite and inside the bounds (and whole, if it must be),
        compared exactly (an integer is not rounded to a float first)."""
        try:
            if not math.isfinite(number):
                return False
        except OverflowError:  # an integer beyond floating point
            return False
        above = number > self.low if self.low_open else number >= self.low
        below = number < self.high if self.high_open else number <= self.high
        floor = number == 0 or number >= self.least
        return bool(above and below and floor and (not self.integer or number == math.floor(number)))

    def mask(self, numbers: np.ndarray) -> np.ndarray:
        """True where ``numbers`` are finite and inside the bounds (and whole, if they must be)."""
        x = np.asarray(numbers, dtype=float)
        with np.errstate(invalid="ignore"):
            ok = np.isfinite(x)
            ok &= (x > self.low) if self.low_open else (x >= self.low)
            ok &= (x < self.high) if self.high_open else (x <= self.high)
            if self.least > 0:
                ok &= (x == 0) | (x >= self.least)
            if self.integer:
                ok &= np.floor(x) == x
        return ok


def _prefix(where: str) -> str:
    return f"{where}: " if where else ""


def blank_message(spec: Range, field: str, where: str = "") -> str:
    """``where: field is blank: it is required, <what is allowed>``."""
    return f"{_prefix(where)}{field} is blank: it is required, {spec.describe()}"


def bad_message(spec: Range, field: str, value: object, where: str = "") -> str:
    """``where: field = 'value' is invalid: must be <what is allowed>``."""
    return str(invalid(field, value, spec.rule(), where))


def check(
    spec: Range, value: object, field: str | None = None, where: str = "", *, error: type[ProcureError] = InputError
) -> float:
    """A number given as a number (an option, a TOML value), checked against ``spec``.

    Parameters
    ----------
    spec : Range
        What is allowed.
    value : object
        The value given: an int or a float (not a bool, not text).
    field : str, optional
        The name the user gave it by, for the message (default: ``spec.name``).
    where : str, optional
        A prefix that locates it (a file).
    error : type, default InputError
        The error to raise.

    Returns
    -------
    float
        The value.

    Raises
    ------
    ProcureError
        Of type ``error``, naming the field, the value and what is allowed, as
        :func:`procure.errors.invalid` words it.
    """
    number = value.item() if isinstance(value, np.generic) else value
    if not (isinstance(number, int | float) and not isinstance(number, bool) and spec.contains(number)):
        raise error(bad_message(spec, field or spec.name, value, where))
    return float(number)


def _as_float(text: object) -> float:
    """``float(text)``, NaN where it is not a number."""
    try:
        return float(text)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return math.nan


def check_cell(
    spec: Range, value: object, field: str | None = None, where: str = "", *, error: type[ProcureError] = InputError
) -> Any:
    """One cell of a table, or an option given as text or a number; a blank takes the default.

    Text is stripped; a blank (``""`` or None) takes ``spec.default``. A number field reads its
    value with :func:`float`, so ``"1e3"`` and ``1000`` are the same; a ``text`` or ``choice``
    field keeps the stripped text.

    Parameters
    ----------
    spec : Range
        What is allowed.
    value : object
        The cell as text, or a value given another way.
    field : str, optional
        The name for the message (default: ``spec.name``).
    where : str, optional
        Where the value came from, put before the message.
    error : type, default InputError
        The error to raise.

    Raises
    ------
    ProcureError
        Of type ``error``: a required field left blank, a choice not allowed, a number that is
        not one or is out of range.
    """
    name = field or spec.name
    text = value.strip() if isinstance(value, str) else value
    if text == "" or text is None:
        if spec.required:
            raise error(blank_message(spec, name, where))
        return spec.default
    if spec.kind in ("text", "choice"):
        text = str(text)
        if spec.kind == "choice" and text not in spec.choices:
            raise error(bad_message(spec, name, text, where))
        return text
    number = _as_float(text)
    if not spec.contains(number):
        raise error(bad_message(spec, name, text, where))
    return number


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
        numbers[given] = [_as_float(t) for t in text[given]]
    odd = given[np.isnan(numbers[given])]  # not numbers, "nan", whitespace or missing values
    text = _with_blanks(text, odd)
    for i in odd.tolist():
        stripped = str(text[i]).strip()
        blank[i] = not stripped
        numbers[i] = _as_float(stripped) if stripped else math.nan
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


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` naming the closest known name, or "" if none is close."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=CLOSE_NAME)
    return f" (did you mean {close[0]!r}?)" if close else ""
