"""How a table's cells are written, the same in the terminal and the app: user text with its
control characters and bidirectional overrides shown as escapes (:func:`visible`), numbers with
thousands separators (:func:`number`), shares as percentages (:func:`percent`), dollars with
cents (:func:`money`), and a formatted table's headings, cells and total row (:class:`Rows`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


#: Characters of user text shown as an escape (``\\x1b``, ``\\u202e``): the C0 and C1 control
#: characters and DEL, which a terminal would act on (clear the screen, set its title), and the
#: bidirectional overrides, which would reorder the text around them.
_HIDDEN = {*range(0x00, 0x20), *range(0x7F, 0xA0), 0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F),
           *range(0x2066, 0x206A)}  # fmt: skip
_ESCAPES = {c: (f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}") for c in _HIDDEN}


def visible(text: object) -> str:
    """User text (a source name, a kind, a file name) as a table shows it: every control
    character and bidirectional override as its escape (``ESC`` as ``\\x1b``), the rest as
    given. JSON and files keep the text exact; only what is shown is escaped."""
    return str(text).translate(_ESCAPES)


def number(value: float, digits: int = 1) -> str:
    """A number with thousands separators; ∞ for infinity, — for NaN."""
    if value != value:
        return "—"
    if value == math.inf:
        return "∞"
    return f"{value:,.{digits}f}"


def percent(value: float) -> str:
    """A share as a percentage with one decimal; — for NaN."""
    return "—" if value != value else f"{100 * value:.1f} %"


def money(value: float) -> str:
    """Dollars with cents."""
    return f"${value:,.2f}"


@dataclass(frozen=True)
class Rows:
    """A table's headings and cells, formatted.

    Attributes
    ----------
    headings : tuple of str
        One per column.
    cells : sequence of tuple of str
        The rows shown, one string per column.
    total : tuple of str, optional
        A last row of totals (of every row, shown or not).
    left_out : int
        Rows (for :func:`procure.interfaces.tables.sweep_rows`, source columns) not shown.
    """

    headings: tuple[str, ...]
    cells: Sequence[tuple[str, ...]] = field(default_factory=list)
    total: tuple[str, ...] | None = None
    left_out: int = 0

    def frame(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """The table as a DataFrame of strings, the total row last; only the ``columns``
        (headings) given, in that order, if any."""
        import pandas as pd

        rows = [*self.cells, *([self.total] if self.total is not None else [])]
        frame = pd.DataFrame(rows, columns=list(self.headings))
        return frame if columns is None else frame[list(columns)]
