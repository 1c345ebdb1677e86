"""Errors raised by :mod:`procure`.

Every error the library raises on bad input is a :class:`ProcureError`. Its message is one
line that names the field, the bad value and what is allowed, so the command line can print
it as it is and exit non-zero.
"""

from __future__ import annotations


class ProcureError(ValueError):
    """Base of every error :mod:`procure` raises on bad input or an unsolvable request."""


class LedgerError(ProcureError):
    """A ledger file, row or field is missing or invalid."""


class InputError(ProcureError):
    """An argument passed to a formula, a simulation or a command is invalid."""


class SolveError(ProcureError):
    """The procurement program has no acceptable solution (infeasible, unbounded, out of time)."""


def invalid(field: str, value: object, allowed: str, where: str = "") -> InputError:
    """Build an :class:`InputError` that names the field, its value and what is allowed.

    Parameters
    ----------
    field : str
        Name of the argument or option, as the user wrote it.
    value : object
        The value given.
    allowed : str
        What would have been accepted.
    where : str, optional
        A prefix that locates the field (a file and row), if any.
    """
    prefix = f"{where}: " if where else ""
    if hasattr(value, "item") and callable(value.item):  # a numpy scalar: show it as Python would
        value = value.item()
    return InputError(f"{prefix}{field} = {value!r} is invalid: {allowed}")
