"""A ``sources.csv`` as text, to change a few records of and write back as it was otherwise.

Only the records that change are rewritten; every other one stays byte for byte as it was,
with its own line end, and so does a byte-order mark. A rewritten or new record ends as the
header does (CRLF in a file saved by Excel). Values are written exactly: a whole number without
a decimal point, any other number with the fewest digits that read back as the same float.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import LedgerError
from .csvtext import CsvText, read_text, split_cells
from .schema import SOURCE_COLUMNS
from .sources import read_sources

#: What a ledger folder needs, for the message when its sources.csv is missing.
NEEDS = "a ledger folder needs sources.csv"
#: Largest whole number written without a decimal point or an exponent.
MOST_WHOLE = 1e15


def cell_text(value: Any, column: str = "") -> str:
    """A value as a CSV cell: blank for NaN or None (and for the default a blank stands for,
    such as an unlimited ``available_hours``); numbers exactly, without needless digits."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    spec = SOURCE_COLUMNS.get(column)
    if isinstance(value, float) and math.isinf(value) and spec is not None and spec.default == value:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):  # numpy's too
        number = float(value)
        return str(int(number)) if number.is_integer() and abs(number) < MOST_WHOLE else repr(number)
    return str(value)


def record_text(cells: list[str]) -> str:
    """One record's text from its cells (quoted where :mod:`csv` must), without a line end."""
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow(cells)
    return out.getvalue()


class Sheet:
    """A ``sources.csv`` as text, to change a few records of and write back.

    Attributes
    ----------
    path : Path
        The file, as the ledger names it.
    text : CsvText
        What it held when it was read.
    bodies, endings : list of str
        Each record's text without its line end, and its line end; the changes are made here.
    cells : list of list of str
        Each record's cells.
    header : list of str
        The column names.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.text: CsvText = read_text(path, NEEDS)
        if not self.text.bodies:
            raise LedgerError(f"{path}: empty: it needs a header line")
        self.bodies = list(self.text.bodies)
        self.endings = list(self.text.endings)
        self.cells = [split_cells(body) for body in self.bodies]
        self.header = [c.strip() for c in self.cells[0]]

    @property
    def newline(self) -> str:
        """The line end of the file's header, which new and rewritten lines take."""
        return self.text.newline

    def add_columns(self, columns: list[str]) -> None:
        """Add the ``columns`` the header lacks, and an empty cell to each row for each."""
        new = [c for c in dict.fromkeys(columns) if c not in self.header]
        if not new:
            return
        self.header = self.header + new
        self.bodies[0], self.cells[0] = record_text(self.header), list(self.header)
        for k in range(1, len(self.bodies)):
            if self.bodies[k].strip():
                self.bodies[k] += "," * len(new)
                self.cells[k] = self.cells[k] + [""] * len(new)

    def row(self, source: str) -> int | None:
        """The record of ``source`` (its ``source`` cell, stripped), None if there is none."""
        at = self.header.index("source") if "source" in self.header else 0
        for k in range(1, len(self.cells)):
            cells = self.cells[k]
            if len(cells) > at and cells[at].strip() == source:
                return k
        return None

    def cell(self, k: int, column: str) -> str:
        """The text of one cell, stripped ("" where the column or the cell is missing)."""
        if column not in self.header:
            return ""
        i = self.header.index(column)
        return self.cells[k][i].strip() if i < len(self.cells[k]) else ""

    def set(self, k: int, values: Mapping[str, Any]) -> None:
        """Write ``values`` (column → value) into record ``k``; its other cells as they are."""
        self.add_columns(list(values))
        cells = self.cells[k] + [""] * (len(self.header) - len(self.cells[k]))
        for column, value in values.items():
            cells[self.header.index(column)] = cell_text(value, column)
        self.cells[k], self.bodies[k] = cells, record_text(cells)

    def append(self, row: Mapping[str, Any]) -> None:
        """Add ``row`` (column → value) after the last record that is not blank; the blank
        lines after that record stay after the new one, as they were, and a file that ended
        without a line end still does."""
        self.add_columns(list(row))
        last = max(k for k, body in enumerate(self.bodies) if k == 0 or body.strip())
        cells = [cell_text(row.get(column), column) for column in self.header]
        ending = self.newline if self.endings[last] else ""  # the file's end, if it had none
        self.bodies.insert(last + 1, record_text(cells))
        self.endings.insert(last + 1, ending)
        self.cells.insert(last + 1, cells)

    def encode(self) -> bytes:
        """The file's bytes as changed: every record with its own line end (the header's
        where it had none and another follows, and on new records)."""
        last = len(self.bodies) - 1
        ends = [e or (self.newline if k < last else "") for k, e in enumerate(self.endings)]
        return self.text.encode([b + e for b, e in zip(self.bodies, ends, strict=True)])

    def write(self, tmp: Path) -> None:
        """Write the changed file into ``tmp`` and validate it as the ledger's.

        Raises
        ------
        LedgerError
            The changed ledger is invalid: the message names the ledger's file, not ``tmp``.
        """
        tmp.write_bytes(self.encode())
        try:
            read_sources(tmp)
        except LedgerError as exc:
            raise type(exc)(str(exc).replace(str(tmp), str(self.path))) from None
