"""A ledger CSV file as the text it holds: its byte-order mark, its line endings, and its records
with the line each starts on.

Excel's "CSV UTF-8" starts the file with a byte-order mark and ends every line with CRLF; both
are read through, and :mod:`procure.ledger.edit` writes them back as they were. A quoted cell
may hold line breaks, so a record can span several lines of the file: every message names the
line a record starts on. A file separated by ``;`` or tabs (Excel's CSV where the decimal
separator is a comma, or its "Unicode text") is refused with the hint to save it as CSV with
commas: its decimal commas cannot be told from separators.

Cells are split as :mod:`csv` and :func:`pandas.read_csv` split them (``"`` quotes a cell that
starts with it, ``""`` inside is one quote), with no limit on a cell's length.
"""

from __future__ import annotations

import dataclasses
import math
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from ..errors import LedgerError, cut

#: The byte-order mark Excel's "CSV UTF-8" starts a file with.
BOM = "\ufeff"
#: What ends a line: CRLF, LF, or a lone CR (as :mod:`csv` and pandas read them).
LINE_END = re.compile(r"\r\n|\n|\r")
#: Characters :meth:`str.splitlines` splits on but CSV does not.
OTHER_LINE_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
#: Separators of other programs' CSV files that are refused, with their names in the message.
OTHER_SEPARATORS = {";": "';'", "\t": "tabs"}
#: Most digits of a whole number a message shows in full [digits].
SHOWN_DIGITS = 20


class Record(NamedTuple):
    """One record of a CSV file.

    Attributes
    ----------
    body : str
        The record as written, without the line end that closes it (a quoted cell may hold
        line breaks).
    ending : str
        The line end that closes it: CRLF, LF, CR, or "" on a last line without one.
    line : int
        The line of the file it starts on [1-based].
    """

    body: str
    ending: str
    line: int

    @property
    def text(self) -> str:
        """The record as written, its line end included."""
        return self.body + self.ending

    def cells(self) -> list[str]:
        """The record's cells, unquoted (``[]`` for a blank line)."""
        return split_cells(self.body)


@dataclass(frozen=True)
class CsvText:
    """A CSV file's text: whether it starts with a byte-order mark, and its records, as the
    bodies, line ends and first lines of :class:`Record`.

    Attributes
    ----------
    bom : bool
        The file starts with a byte-order mark.
    bodies, endings : tuple of str
        Each record without its line end, and its line end.
    starts : tuple of int
        The line each record starts on [1-based].
    """

    bom: bool
    bodies: tuple[str, ...]
    endings: tuple[str, ...]
    starts: tuple[int, ...]

    @property
    def newline(self) -> str:
        """The line end of the header, which new and rewritten lines take (LF if it has none)."""
        return self.endings[0] if self.endings and self.endings[0] else "\n"

    def records(self) -> list[Record]:
        """Every record."""
        return [Record(*r) for r in zip(self.bodies, self.endings, self.starts, strict=True)]

    def header(self) -> list[str]:
        """The cells of the first record, stripped."""
        return [c.strip() for c in split_cells(self.bodies[0])] if self.bodies else []

    def lines(self) -> list[int]:
        """The line each record below the header starts on."""
        return list(self.starts[1:])

    def encode(self, records: list[str] | None = None) -> bytes:
        """The file's bytes: ``records`` (texts with their line ends; default the file's own),
        the byte-order mark first if the file had one."""
        texts = records if records is not None else [b + e for b, e in zip(self.bodies, self.endings, strict=True)]
        return ((BOM if self.bom else "") + "".join(texts)).encode("utf-8")


#: States of the scanner of a record: at the start of a cell (spaces skipped), inside an
#: unquoted cell, inside quotes, just after a closing quote.
START, PLAIN, QUOTED, CLOSED = range(4)


def _scan(text: str, state: int = START, cells: list[str] | None = None) -> int:
    """Scan ``text`` from ``state``; append each finished cell to ``cells`` if given (the
    last, unfinished one too). Returns the state at the end."""
    cell: list[str] = []
    for ch in text:
        if state == QUOTED:
            if ch == '"':
                state = CLOSED
            else:
                cell.append(ch)
            continue
        if ch == ",":
            if cells is not None:
                cells.append("".join(cell))
            cell, state = [], START
        elif ch == '"' and state in (START, CLOSED):
            if state == CLOSED:
                cell.append('"')  # "" inside quotes: one quote
            else:
                cell = []
            state = QUOTED
        elif state == START and ch == " ":
            continue  # spaces before a cell are skipped, as pandas' skipinitialspace does
        else:
            cell.append(ch)
            state = PLAIN
    if cells is not None:
        cells.append("".join(cell))
    return state


def split_cells(body: str) -> list[str]:
    """The cells of one record's text, as :mod:`csv` splits them (``"`` quotes a cell that
    starts with it; ``""`` inside quotes is one ``"``; spaces before a cell skipped);
    ``[]`` for ""."""
    if not body:
        return []
    if '"' not in body and ", " not in body and not body.startswith(" "):
        return body.split(",")
    cells: list[str] = []
    _scan(body, START, cells)
    return cells


def ends_quoted(body: str) -> bool:
    """True where a record's text ends inside a quoted cell: a quote that opens a cell is
    never closed (a quote within a cell that does not start with one is text)."""
    return _scan(body, START) == QUOTED


def _lines(text: str) -> tuple[list[str], list[str]]:
    """The lines of a text and the line end of each (CRLF, LF or CR; "" after the last)."""
    if any(ch in text for ch in OTHER_LINE_BREAKS):
        pieces, ends = LINE_END.split(text), LINE_END.findall(text)
        return pieces, [*ends, ""][: len(pieces)]
    lines = text.splitlines(keepends=True)
    bodies = [line.rstrip("\r\n") for line in lines]
    ends = [line[len(body) :] for line, body in zip(lines, bodies, strict=True)]
    if not lines or ends[-1]:
        bodies.append("")
        ends.append("")
    return bodies, ends


def split_records(text: str) -> CsvText:
    """The records of a CSV text, each with the line it starts on (no byte-order mark)."""
    pieces, ends = _lines(text)
    last = len(pieces) - 1
    if '"' not in text:  # one record a line
        keep = last if pieces[-1] == "" else last + 1
        return CsvText(False, tuple(pieces[:keep]), tuple(ends[:keep]), tuple(range(1, keep + 1)))
    bodies: list[str] = []
    endings: list[str] = []
    starts: list[int] = []
    current: list[str] = []
    first = 1
    state = START
    for n, piece in enumerate(pieces):
        if not current:
            first, state = n + 1, START
        if '"' in piece or state == QUOTED:
            state = _scan(piece, state)
        if state == QUOTED and n < last:
            current.append(piece + ends[n])
            continue
        if current or piece or n < last:
            bodies.append("".join(current) + piece)
            endings.append(ends[n])
            starts.append(first)
        current = []
    return CsvText(False, tuple(bodies), tuple(endings), tuple(starts))


def records(text: str) -> list[Record]:
    """The records of a CSV text, each with the line it starts on."""
    return split_records(text).records()


def check_regular(path: Path, what: str) -> None:
    """A file to read must be a regular file (or a link to one).

    Raises
    ------
    LedgerError
        No such file (``what`` says what it is for), a link to nothing, or a folder, FIFO,
        socket or device in its place.
    """
    tail = f": {what}" if what else ""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        dangling = path.is_symlink()
        raise LedgerError(f"{path}: {'a link to nothing' if dangling else 'no such file'}{tail}") from None
    except OSError as exc:
        raise LedgerError(f"{path}: cannot be read: {exc.strerror}{tail}") from None
    if not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "not a regular file"
        raise LedgerError(f"{path}: is {kind}, not a file{tail}")


def decode(path: Path, data: bytes) -> tuple[bool, str]:
    """Whether the bytes start with a byte-order mark, and their text as UTF-8 without it.

    Raises
    ------
    LedgerError
        Bytes that are not UTF-8 (UTF-16, a legacy code page, a binary file).
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise LedgerError(f"{path}: is UTF-16 text: save it as UTF-8 (in Excel: CSV UTF-8)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LedgerError(
            f"{path}: is not UTF-8 text (byte {exc.start + 1}): save it as UTF-8 (in Excel: CSV UTF-8)"
        ) from None
    if "\x00" in text:
        raise LedgerError(f"{path}: holds a NUL byte: it is not a text file")
    return text.startswith(BOM), text.removeprefix(BOM)


def check_separator(path: Path, header: str) -> None:
    """Refuse a file whose header is separated by ``;`` or tabs rather than commas.

    Raises
    ------
    LedgerError
        Naming the separator, with the hint to save the file as CSV with commas.
    """
    if "," in header:
        return
    for sep, name in OTHER_SEPARATORS.items():
        if sep in header:
            raise LedgerError(
                f"{path}: the file is separated by {name}: save it as CSV with commas (in Excel, a list "
                "separator ',' and a decimal point '.'), procure reads no other separator"
            )


def first_record(text: str) -> Record | None:
    """The first record of a CSV text (the header), read no further than its end; None for
    an empty text."""
    state, start = START, 0
    for match in LINE_END.finditer(text):
        piece = text[start : match.start()]
        if '"' in piece or state == QUOTED:
            state = _scan(piece, state)
        if state != QUOTED:
            return Record(text[: match.start()], match.group(), 1)
        start = match.end()
    return Record(text, "", 1) if text else None


def read_header(path: Path, what: str) -> list[str]:
    """The column names of a ledger CSV file, stripped, the file checked as :func:`read_text`
    checks it.

    Raises
    ------
    LedgerError
        See :func:`read_text`.
    """
    check_regular(path, what)
    _bom, text = decode(path, path.read_bytes())
    header = first_record(text)
    if header is None:
        return []
    check_separator(path, header.body)
    return [c.strip() for c in header.cells()]


def read_text(path: Path, what: str) -> CsvText:
    """A ledger CSV file's text, checked: a regular file of UTF-8 text (a byte-order mark
    read through) separated by commas.

    Raises
    ------
    LedgerError
        See :func:`check_regular`, :func:`decode` and :func:`check_separator`.
    """
    check_regular(path, what)
    bom, text = decode(path, path.read_bytes())
    found = split_records(text)
    if found.bodies:
        check_separator(path, found.bodies[0])
    return dataclasses.replace(found, bom=bom)


def short(text: str) -> str:
    """Text as a message quotes it: at most :data:`procure.errors.SHOWN_CHARS` characters, then
    ``…`` and its length (:func:`procure.errors.cut`)."""
    return cut(text)


def shown(value: object) -> object:
    """A value as a message shows it: a whole number of more than :data:`SHOWN_DIGITS` digits
    by its first digits and its length (text), anything else as it is."""
    if not isinstance(value, int) or isinstance(value, bool) or -(10**SHOWN_DIGITS) < value < 10**SHOWN_DIGITS:
        return value
    try:
        text = str(value)
    except ValueError:  # beyond Python's digit limit for text
        return f"a whole number of about {math.log10(abs(value)):,.0f} digits"
    digits = len(text.lstrip("-"))
    return f"{text[: SHOWN_DIGITS + text.startswith('-')]}… ({digits:,} digits)"
