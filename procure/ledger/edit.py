"""Changing a ledger's ``sources.csv`` in place: one row's cells, or one new row.

Only the lines that change are rewritten: the header (when a column is added), the row edited
and, for an added column, an empty cell at the end of each other row. Every other cell, row,
blank line and ``#`` line stays as it was. The new file is read back and validated before it
replaces the old one, atomically: a change that would make the ledger invalid never lands.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import LedgerError
from ..output import write_atomic
from .sources import read_sources


def _cell(value: Any) -> str:
    """A value as a CSV cell: blank for NaN or None, numbers without needless digits."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.10g}"
    return str(value)


def _line(cells: list[str]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="").writerow(cells)
    return out.getvalue()


def _split(line: str) -> list[str]:
    return next(csv.reader([line]), [])


def _rewrite(path: Path, lines: list[str]) -> None:
    text = "\n".join(lines) + "\n"

    def write(tmp: Path) -> None:
        tmp.write_text(text)
        try:
            read_sources(tmp)  # the new ledger must be valid before it replaces the old one
        except LedgerError as exc:  # name the user's file, not the temporary one
            raise LedgerError(str(exc).replace(str(tmp), str(path))) from None

    write_atomic(path, write)


def _load(folder: str | Path) -> tuple[Path, list[str], list[str]]:
    path = Path(folder) / "sources.csv"
    if not path.is_file():
        raise LedgerError(f"{path}: no such file: a ledger folder needs sources.csv")
    lines = path.read_text().splitlines()
    if not lines:
        raise LedgerError(f"{path}: empty: it needs a header line")
    return path, lines, [c.strip() for c in _split(lines[0])]


def _with_columns(lines: list[str], header: list[str], columns: list[str]) -> tuple[list[str], list[str]]:
    """Add missing ``columns`` to the header, and an empty cell to each row for each."""
    new = [c for c in columns if c not in header]
    if not new:
        return lines, header
    header = header + new
    out = [_line(header)]
    for line in lines[1:]:
        out.append(line if not line.strip() else line + "," * len(new))
    return out, header


def set_cells(folder: str | Path, source: str, values: Mapping[str, Any]) -> Path:
    """Write ``values`` (column → value) into the row of ``source`` of a ledger's sources.csv.

    Raises
    ------
    LedgerError
        No such source, or a value the ledger does not accept (the file is then untouched).
    """
    path, lines, header = _load(folder)
    lines, header = _with_columns(lines, header, list(values))
    name_at = header.index("source") if "source" in header else 0
    for k, line in enumerate(lines[1:], start=1):
        cells = _split(line)
        if len(cells) > name_at and cells[name_at].strip() == source:
            cells += [""] * (len(header) - len(cells))
            for column, value in values.items():
                cells[header.index(column)] = _cell(value)
            lines[k] = _line(cells)
            _rewrite(path, lines)
            return path
    raise LedgerError(f"{path}: source = {source!r} is not a row of the ledger")


def append_row(folder: str | Path, row: Mapping[str, Any]) -> Path:
    """Add ``row`` (column → value) at the end of a ledger's sources.csv.

    Raises
    ------
    LedgerError
        A source of that name exists already, or the row is invalid (the file is untouched).
    """
    path, lines, header = _load(folder)
    name = str(row.get("source", ""))
    existing = read_sources(path)
    if name in set(existing["source"]):
        raise LedgerError(f"{path}: source = {name!r} exists already: give another --source")
    lines, header = _with_columns(lines, header, list(row))
    while lines and not lines[-1].strip():
        lines.pop()
    lines.append(_line([_cell(row.get(column)) for column in header]))
    _rewrite(path, lines)
    return path
