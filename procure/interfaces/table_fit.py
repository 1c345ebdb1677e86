"""A table set to the console's width: numbers never cut, text wrapped, and a table too wide
for the terminal printed in parts, each with the rows' names (:func:`print_table`).

The widths are pure functions of the cells' widths in terminal cells (:func:`rich.cells.cell_len`:
a wide character takes two): ``_widths`` (each column at its most and its least), ``_fit``
(narrowed into the room) and ``_parts`` (split into the fewest even parts).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any, Literal

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .tables import Rows

Justify = Literal["left", "right"]

#: Columns the box draws: one between cells and one at each edge [characters].
RULE = 1
#: Blank columns on each side of a cell [characters].
PAD = 1
#: Narrowest a column of text (names, notes) is made before the table splits: its longer
#: words then wrap [characters].
TEXT_WIDTH = 12


def _widths(heads: Sequence[str], columns: Sequence[Sequence[str]], text: Sequence[bool]) -> tuple[list, list]:
    """Each column's width at its most (every cell and its heading on one line) and at its
    least (numbers whole on one line, headings broken between words, text columns down to
    :data:`TEXT_WIDTH`) [characters]."""
    most, least = [], []
    for head, cells, is_text in zip(heads, columns, text, strict=True):
        cell = max((cell_len(c) for c in cells), default=0)
        word = max((cell_len(w) for w in head.split()), default=0)
        most.append(max(cell, cell_len(head)))
        least.append(max(min(cell, TEXT_WIDTH), min(word, TEXT_WIDTH)) if is_text else max(cell, word))
    return most, least


def _span(widths: Sequence[int]) -> int:
    """The characters a table of columns this wide takes, box and padding included."""
    return sum(w + 2 * PAD for w in widths) + RULE * (len(widths) + 1)


def _fit(most: list[int], least: list[int], room: int) -> list[int]:
    """Column widths that fit in ``room``: each at its most, the columns with the most slack
    narrowed first, none below its least (the result is wider than ``room`` only when the
    least widths are)."""
    widths = list(most)
    while _span(widths) > room:
        slack = [w - lo for w, lo in zip(widths, least, strict=True)]
        i = max(range(len(widths)), key=lambda k: (slack[k], widths[k]))
        if slack[i] <= 0:
            break
        widths[i] -= 1
    return widths


def _parts(keys: list[int], others: list[int], least: list[int], room: int) -> list[list[int]]:
    """The columns ``others`` (indices, in order) split into the fewest parts that each fit in
    ``room`` beside the ``keys`` columns, as even in width as order allows."""

    def span(part: Sequence[int]) -> int:
        return _span([least[i] for i in (*keys, *part)])

    count = 1
    while True:
        best = _even(others, count, span, room)
        if best is not None or count >= len(others):
            return best or [[i] for i in others]
        count += 1


def _even(others: list[int], count: int, span: Callable[[Sequence[int]], int], room: int) -> list[list[int]] | None:
    """``others`` cut into ``count`` consecutive parts of the least widest span, or None if
    the widest does not fit in ``room``."""
    n = len(others)
    # best[k][j]: (widest span, cuts) of the first j columns in k parts
    best: dict[tuple[int, int], tuple[int, list[int]]] = {(0, 0): (0, [])}
    for k in range(1, count + 1):
        for j in range(k, n - (count - k) + 1):
            options = [(max(best[(k - 1, i)][0], span(others[i:j])), [*best[(k - 1, i)][1], j])
                       for i in range(k - 1, j) if (k - 1, i) in best]  # fmt: skip
            if options:
                best[(k, j)] = min(options, key=lambda o: o[0])
    widest, cuts = best.get((count, n), (room + 1, []))
    if widest > room:
        return None
    edges = [0, *cuts]
    return [others[a:b] for a, b in itertools.pairwise(edges)]


def print_table(
    console: Console,
    title: str | Text | None,
    rows: Rows,
    justify: Sequence[Justify],
    *,
    keys: int = 1,
    bold_total: bool = True,
    **options: Any,
) -> None:
    """Print ``rows`` as one rich table, or as several when it is wider than the console.

    Every cell is printed as given (never read as markup). Right-justified columns (numbers)
    are never cut: each keeps its widest cell on one line, and headings break between words;
    left-justified ones (names, notes) wrap. A column with no heading and no text in any cell
    is left out. When even so the table is wider than the console, its columns are split into
    parts printed one below the other, each with the first ``keys`` columns (the row's name),
    and a line says how wide a terminal prints it whole.
    """
    total = [rows.total] if rows.total is not None else []
    every = [*rows.cells, *total]
    shown = [i for i, head in enumerate(rows.headings) if head or any(r[i] for r in every)]
    heads = [rows.headings[i] for i in shown]
    columns = [[r[i] for r in every] for i in shown]
    text = [justify[i] == "left" for i in shown]
    most, least = _widths(heads, columns, text)
    room = console.width
    key_count = min(keys, len(shown))
    keys_at = list(range(key_count))
    others = list(range(key_count, len(shown)))
    parts = [others] if _span(least) <= room or not others else _parts(keys_at, others, least, room)
    for k, part in enumerate(parts):
        cols = [*keys_at, *part]
        widths = _fit([most[i] for i in cols], [least[i] for i in cols], room)
        table = Table(title=(title if k == 0 else None), title_justify="left", **options)
        for i, width in zip(cols, widths, strict=True):
            table.add_column(Text(heads[i]), justify=justify[shown[i]], width=width, overflow="fold")
        for n in range(len(every)):
            style = "bold" if bold_total and total and n == len(every) - 1 else ""
            table.add_row(*[Text(columns[i][n], style=style if i < key_count else "") for i in cols])
        console.print(table)
    if len(parts) > 1:
        whole = _span(most)
        console.print(Text(f"In {len(parts)} parts to fit {room} columns; at {whole} (COLUMNS={whole}) the table "
                           "prints whole."))  # fmt: skip
