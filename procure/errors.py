"""Errors raised by :mod:`procure`.

Every error the library raises on bad input is a :class:`ProcureError`. Its message is one
line that names the field, the bad value and what is allowed, so the command line can print
it as it is and exit non-zero.
"""

from __future__ import annotations

import math
from enum import StrEnum

#: Characters of a value a message on the command line shows at most [characters], ≥ 1: a
#: longer one (a cell of 20,000 digits, a forged option) is cut there and its length said after
#: it, so that every message stays one line; long enough for the paths people give whole.
SHOWN_CHARS = 200


class ProcureError(ValueError):
    """Base of every error :mod:`procure` raises on bad input or an unsolvable request."""


class LedgerError(ProcureError):
    """A ledger file, row or field is missing or invalid."""


class InputError(ProcureError):
    """An argument passed to a formula, a simulation or a command is invalid."""


class EditConflict(LedgerError):
    """A ledger edit refused because someone else changed a cell it changes since the editor
    read it (:func:`procure.ledger.edit.update_cells`): reload and edit again."""


class Reason(StrEnum):
    """Why the program gave no plan: the ``reason`` of a :class:`SolveError`."""

    #: No plan meets the budget (or money), the capacities and the mix bounds.
    INFEASIBLE = "infeasible"
    #: The value has no ceiling (a free, unlimited source).
    UNBOUNDED = "unbounded"
    #: The time limit was reached before the plan was certified.
    TIME_LIMIT = "time_limit"
    #: The bounds did not close within the tolerance (solver precision or the round limit).
    NOT_CERTIFIED = "not_certified"
    #: The work was lost on a Dask cluster (its workers died, twice).
    LOST = "lost"
    #: The request itself cannot be modelled (no sources, an unlimited source with integer terms).
    INVALID = "invalid"


class SolveError(ProcureError):
    """The procurement program has no acceptable solution.

    Parameters
    ----------
    message : str
        One line saying why, in the user's terms.
    reason : Reason, default ``Reason.INFEASIBLE``
        The kind of failure, for a program to tell "out of time" from "infeasible" without
        reading the message.
    """

    def __init__(self, message: str, reason: Reason = Reason.INFEASIBLE) -> None:
        super().__init__(message)
        self.reason = Reason(reason)

    def __reduce__(self) -> tuple[object, ...]:
        """Pickle with the reason (errors cross process boundaries on Dask)."""
        return (type(self), (str(self), self.reason))


def cut(text: str) -> str:
    """Text cut at :data:`SHOWN_CHARS` characters with ``…`` and its length after it; short
    text as it is."""
    return text if len(text) <= SHOWN_CHARS else f"{text[:SHOWN_CHARS]}… ({len(text):,} characters)"


def quoted(value: object) -> str:
    """A value as a message quotes it: its ``repr``; text longer than :data:`SHOWN_CHARS`
    characters cut there (``'123…' (20,000 characters)``), as is any other long ``repr``; a
    whole number too long for text by its number of digits."""
    if isinstance(value, str):
        if len(value) <= SHOWN_CHARS:
            return repr(value)
        return f"{value[:SHOWN_CHARS] + '…'!r} ({len(value):,} characters)"
    try:
        text = repr(value)
    except ValueError:  # a whole number beyond Python's digit limit for text
        return f"a whole number of about {math.log10(abs(value)):,.0f} digits"  # type: ignore[arg-type]
    return cut(text)


def system_message(exc: OSError) -> str:
    """An error of the system as one line in the user's terms: ``FILE: what went wrong``
    (``plan.json: not written: No space left on device``), without Python's ``[Errno N]``;
    the file as :mod:`procure.files` names it, the user's and never a temporary one."""
    what = exc.strerror or str(exc)
    return f"{exc.filename}: {what}" if exc.filename is not None else what


def invalid(field: str, value: object, allowed: str, where: str = "") -> InputError:
    """Build an :class:`InputError` that names the field, its value and what is allowed.

    Parameters
    ----------
    field : str
        Name of the argument or option, as the user wrote it.
    value : object
        The value given, shown by :func:`quoted` (cut when long).
    allowed : str
        What would have been accepted.
    where : str, optional
        A prefix that locates the field (a file and row), if any.
    """
    prefix = f"{where}: " if where else ""
    if hasattr(value, "item") and callable(value.item):  # a numpy scalar: show it as Python would
        value = value.item()
    return InputError(f"{prefix}{field} = {quoted(value)} is invalid: {allowed}")
