"""What one field accepts, as a :class:`Range`: its unit, default, bounds (each end open or
closed), whether it takes whole numbers only, its text choices and what a blank means; described
for the documentation and the messages (:meth:`Range.describe`), tested on one number
(:meth:`Range.contains`) or a numpy array (:meth:`Range.mask`); with how a cell's text is read
as a number and the one-line messages on a blank or a bad value (:func:`blank_message`,
:func:`bad_message`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import invalid

#: Kinds of value a :class:`Range` describes.
KINDS = ("number", "text", "choice", "bool")
#: What a required text field accepts.
NON_EMPTY_TEXT = "non-empty text"


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


def as_float(text: object) -> float:
    """``float(text)``, NaN where it is not a number."""
    try:
        return float(text)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return math.nan
