"""Pieces the app's pages share: layout (Shiny's ``ui``, loaded with the app), the checks of
what a browser sends, and the ledger as it is now.

A browser can send any value for any input (``Shiny.setInputValue``), so every value is
checked here before it is used: a number must be a finite number in its range, a choice one
of the page's own.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Hashable, Iterable, Mapping, Sequence
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..tables import Rows, visible

if TYPE_CHECKING:
    from ...ledger import Ledger


#: Characters of a refused value a message shows at most, with the value's length after them
#: when it is longer [characters], ≥ 1. A forged value may be megabytes long.
SHOWN_CHARS = 80


def sent(value: Any) -> str:
    """A value a browser sent, as a message shows it: its ``repr``, control characters
    escaped, cut at :data:`SHOWN_CHARS` with its length said."""
    text = visible(repr(value))
    return text if len(text) <= SHOWN_CHARS else f"{text[:SHOWN_CHARS]}… ({len(text):,} characters)"


class Refused(Exception):
    """A value the app does not take: the message names the input and what it takes;
    ``field``, where known, is the id of the page's input that holds it (to mark it)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


#: How the page marks an input whose value it does not take [CSS declarations].
REFUSED_MARK = "outline: 2px solid #b00020; outline-offset: 1px; background: #fff4f4;"


def refused_mark(field: str | None) -> Any:
    """A style element that marks the input ``field`` (an id of the page's own, never a value a
    browser sent) as refused; nothing where there is none."""
    from shiny import ui

    if field is None or not field.replace("_", "").isalnum():
        return None
    return ui.tags.style(f"#{field} {{ {REFUSED_MARK} }}")


def boxed(control: Any, message_id: str) -> Any:
    """An input with a line under it that names what is wrong with its value."""
    from shiny import ui

    return ui.div(control, ui.output_text(message_id, inline=False), class_="procure-input")


def fact(label: str, output_id: str, unit: str = "") -> Any:
    """One number on a line: its label, the output and its unit."""
    from shiny import ui

    return ui.div(ui.span(label, class_="procure-label"), ui.output_text(output_id, inline=True),
                  ui.span(unit, class_="procure-unit"), class_="procure-fact")  # fmt: skip


def shown(value: float) -> float | int:
    """A number as a box starts with it: a whole number without ".0"."""
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def choices(names: Iterable[str]) -> dict[str, str]:
    """Names of user text as a select input's choices: each value exact, each label shown
    with its control characters escaped (:func:`procure.interfaces.tables.visible`)."""
    return {name: visible(name) for name in names}


def number(value: Any, what: str, *, low: float = 0.0, high: float = math.inf, blank: bool = False,
           field: str | None = None) -> float | None:  # fmt: skip
    """A numeric input's value as a float in ``[low, high]``; None for a blank one when
    ``blank`` allows it. ``field``: the input's id, carried by the refusal.

    Raises
    ------
    Refused
        A blank box (a browser sends one too for a number it cannot hold, such as 1e400), a
        value that is not a number, or one out of range; the message names ``what``.
    """
    if value is None or value == "":
        if blank:
            return None
        raise Refused(f"{what} is blank or not a number a browser can hold: give a number ≥ {low:g}", field)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise Refused(f"{what} = {sent(value)} is invalid: give a number ≥ {low:g}", field)
    if not low <= value <= high:
        upper = f" and ≤ {high:g}" if math.isfinite(high) else ""
        raise Refused(f"{what} = {value:g} is invalid: must be ≥ {low:g}{upper}", field)
    return float(value)


def chosen(value: Any, allowed: Mapping[str, Any] | Iterable[str], what: str) -> str:
    """A select input's value, if it is one of the page's own ``allowed`` choices.

    Raises
    ------
    Refused
        Anything else (a forged value is never read as a name or a path).
    """
    names = list(allowed)
    if not isinstance(value, str) or value not in names:
        raise Refused(f"{what} = {sent(value)} is not one of the app's choices")
    return value


class LedgerFiles:
    """A ledger folder as it is now: read again whenever its files change, so that a page
    opened after someone saved sees what was saved.

    Parameters
    ----------
    folder : path or None
        The ledger folder (None: the shipped default ledger).
    """

    def __init__(self, folder: Path | str | None) -> None:
        from ...ledger import default_ledger_dir

        self.folder = Path(folder) if folder is not None else default_ledger_dir()
        self._lock = threading.Lock()
        self._read: tuple[Hashable, Ledger] | None = None

    def token(self) -> Hashable:
        """What the files are now: their inode, size and time of change (any edit or
        replacement changes it)."""
        out: list[tuple[int, int, int] | None] = []
        for name in ("sources.csv", "cluster.toml"):
            try:
                st = (self.folder / name).stat()
                out.append((st.st_ino, st.st_size, st.st_mtime_ns))
            except OSError:
                out.append(None)
        return tuple(out)

    def now(self) -> tuple[Hashable, Ledger]:
        """The ledger as its files are now, and their token.

        Raises
        ------
        LedgerError
            A file that cannot be read or is invalid now.
        """
        from ...ledger import load_ledger

        with self._lock:
            token = self.token()
            if self._read is None or self._read[0] != token:
                self._read = (token, load_ledger(self.folder))
            return self._read


#: The pages' style: facts on one line each, the number beside its label (not across the card
#: from it), messages in red, tables with numbers to the right that scroll inside their card
#: rather than spill out of it, figures as wide as their card.
STYLE = (
    ".procure-fact{display:flex;gap:.75em;align-items:baseline;margin:.15em 0}"
    ".procure-label{flex:0 1 13em;color:#555}.procure-unit{color:#777;font-size:.85em}"
    ".procure-fact .shiny-text-output{font-weight:600;font-variant-numeric:tabular-nums;white-space:nowrap}"
    ".procure-message,#pipeline_message,#plan_message,#budget_message,#cameras_message,#save_message,"
    "#prices_message{color:#b00020}"
    ".procure-note{color:#555;font-size:.85em}"
    ".procure-table{overflow-x:auto;max-width:100%}"
    ".procure-table table{font-size:.85em;width:auto}"
    ".procure-table td,.procure-table th{padding:.15rem .4rem!important;white-space:nowrap;text-align:right}"
    ".procure-table td:first-child,.procure-table th:first-child{text-align:left}"
    ".procure-figure img{width:100%;max-width:60rem;height:auto}"
)


def table(output_id: str) -> Any:
    """A table output (of :func:`html_table`) that scrolls sideways inside its card when it is
    wider."""
    from shiny import ui

    return ui.div(ui.output_ui(output_id), class_="procure-table")


def html_table(rows: Rows | None, columns: Sequence[str] | None = None) -> Any:
    """A table's cells (:class:`procure.interfaces.tables.Rows`, the total row last) as an
    HTML table, every cell escaped; only the ``columns`` (headings) given, in that order, if
    any. None: no table."""
    from shiny import ui

    if rows is None:
        return None
    heads = list(rows.headings) if columns is None else list(columns)
    at = [rows.headings.index(h) for h in heads]
    body = [*rows.cells, *([rows.total] if rows.total is not None else [])]
    head = "".join(f"<th>{escape(h)}</th>" for h in heads)
    lines = "".join("<tr>" + "".join(f"<td>{escape(cells[i])}</td>" for i in at) + "</tr>" for cells in body)
    return ui.HTML(f'<table class="table table-sm shiny-table w-auto"><thead><tr>{head}</tr></thead>'
                   f"<tbody>{lines}</tbody></table>")  # fmt: skip


def figure(output_id: str) -> Any:
    """A figure drawn off the event loop (an image no wider than its card)."""
    from shiny import ui

    return ui.div(ui.output_ui(output_id), class_="procure-figure")
