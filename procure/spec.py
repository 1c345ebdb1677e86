"""What a field accepts: one :class:`Range` per column, key or option, checked one value at a time
or a whole column at once.

A :class:`Range` holds a field's unit, default, bounds (each end open or closed), whether it
takes whole numbers only, its text choices and what a blank means. The same entry describes the
field in the documentation (:meth:`Range.describe`), checks one value (:func:`check` for a
number given as a number, :func:`check_cell` for a ledger cell or an option given as text) and
checks a whole column of a table (:func:`check_series`, with numpy masks). Every message is one
line naming the place, the field, the value and what is allowed.

The :class:`Range` itself, with its messages, is :mod:`procure.spec_range`, and the check of a
whole column is :mod:`procure.spec_columns`; here are the checks of one value and the "did you
mean" of an unknown name. Every name of the three is offered here.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

import numpy as np

from .errors import InputError, ProcureError
from .spec_columns import Checked as Checked
from .spec_columns import check_series as check_series
from .spec_range import KINDS as KINDS
from .spec_range import NON_EMPTY_TEXT as NON_EMPTY_TEXT
from .spec_range import Range, as_float, bad_message, blank_message

#: Least similarity of a known name to an unknown one for a "did you mean" [1].
CLOSE_NAME = 0.6


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
    number = as_float(text)
    if not spec.contains(number):
        raise error(bad_message(spec, name, text, where))
    return number


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` naming the closest known name, or "" if none is close."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=CLOSE_NAME)
    return f" (did you mean {close[0]!r}?)" if close else ""
