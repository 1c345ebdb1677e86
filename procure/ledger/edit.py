"""Changing a ledger's ``sources.csv`` in place: cells of some rows, or one new row.

Only the records that change are rewritten: the header (when a column is added), the rows
edited and, for an added column, an empty cell at the end of each other row. Every other cell,
row, blank line and ``#`` line stays byte for byte as it was; so do a byte-order mark and the
file's line ends (CRLF stays CRLF on every line, the new ones too). The new file is read back
and validated before it replaces the old one: a change that would make the ledger invalid never
lands. The replacement keeps the file's permissions, owner and group, and a ``sources.csv``
that is a link to a shared ledger stays a link: the file it points to is changed
(:func:`procure.output.write_all`).

Two programs may edit one ledger at once: each edit holds an advisory lock
(:func:`ledger_lock`, on ``.sources.csv.lock`` beside the file) while it reads the file afresh,
changes it and replaces it, so no edit is lost; a second edit waits for the first, at most
:data:`LOCK_TIMEOUT` seconds. Once it holds the lock, an edit removes what an edit killed
mid-way (``SIGKILL``) left beside the file: its staged file ``.sources.csv.XXXXXXXX.csv`` and
the old file's second name ``.sources.csv.hhhhhhhh.old`` (:func:`procure.leftovers.remove_staged`);
no live edit has one then. An editor that shows the ledger and writes it back later (the app)
uses :func:`update_cells`, which refuses a change to a cell someone else changed since the
editor read it.

Each change is an :class:`SourcesEdit`: :func:`set_cells`, :func:`append_row` and
:func:`update_cells` write one at once; a command that writes other files too hands the edit
to :meth:`procure.output.Outputs.ledger_edit`, which writes it last, with the others, all or
none.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeAlias

from ..errors import EditConflict, LedgerError
from ..files import write_all
from ..leftovers import remove_staged
from .csvtext import check_regular
from .schema import SOURCE_COLUMNS, USER_COLUMN_PREFIX
from .sheet import NEEDS, Sheet
from .sources import check_source_value

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks
    fcntl = None  # type: ignore[assignment]

#: Cells of some rows, ``{source: {column: value}}``.
Cells: TypeAlias = Mapping[str, Mapping[str, Any]]
#: Longest an edit waits for another to finish with the ledger [s].
LOCK_TIMEOUT = 10.0
#: How often a waiting edit tries the lock again [s].
LOCK_POLL = 0.02


def lock_path(path: Path | str) -> Path:
    """The lock file of a ledger file: ``.NAME.lock`` beside the file a link points to."""
    real = Path(os.path.realpath(path))
    return real.with_name(f".{real.name}.lock")


@contextlib.contextmanager
def ledger_lock(path: Path | str, timeout: float | None = None) -> Iterator[Path]:
    """Hold the advisory lock of a ledger file (:func:`lock_path`) while the block runs.

    Parameters
    ----------
    path : path-like
        The ledger file (``sources.csv``).
    timeout : float, optional
        Longest wait for another holder to let go [s]; default :data:`LOCK_TIMEOUT`.

    Yields
    ------
    Path
        The lock file.

    Raises
    ------
    LedgerError
        The lock is still held after ``timeout`` seconds, or its file cannot be created.
    """
    lock = lock_path(path)
    limit = LOCK_TIMEOUT if timeout is None else timeout
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    except PermissionError:  # another user's lock file: a lock needs it open only for reading
        try:
            fd = os.open(lock, os.O_RDONLY)
        except OSError as exc:
            raise LedgerError(f"{path}: cannot lock the ledger for an edit ({lock}: {exc.strerror})") from None
    except OSError as exc:
        raise LedgerError(f"{path}: cannot lock the ledger for an edit ({lock}: {exc.strerror})") from None
    try:
        deadline = time.monotonic() + limit
        while fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LedgerError(
                        f"{path}: another program is changing this ledger (it has held {lock.name} for more than "
                        f"{limit:g} s): nothing was written, try again when it is done"
                    ) from None
                time.sleep(LOCK_POLL)
        if fcntl is not None:  # held: what a writer of the file staged was left by one killed mid-way
            remove_staged(path)
        yield lock
    finally:
        os.close(fd)  # lets go of the lock


class SourcesEdit:
    """A change to a ledger's ``sources.csv``, made on the file as it is when it is written,
    under the ledger's lock (a :class:`procure.output.FileEdit`).

    Parameters
    ----------
    folder : path-like
        The ledger folder.
    change : callable
        ``change(sheet)`` makes the change on a :class:`Sheet` of the file as it is now; it
        raises :class:`procure.errors.LedgerError` to refuse.
    timeout : float, optional
        Longest wait for the lock [s]; default :data:`LOCK_TIMEOUT`.
    """

    def __init__(self, folder: str | Path, change: Callable[[Sheet], None], timeout: float | None = None) -> None:
        self.path = Path(folder) / "sources.csv"
        self._change = change
        self._timeout = timeout

    def lock(self) -> contextlib.AbstractContextManager[Path]:
        """The ledger's lock (:func:`ledger_lock`).

        Raises
        ------
        LedgerError
            The ledger has no ``sources.csv`` (or it is not a regular file).
        """
        check_regular(self.path, NEEDS)
        return ledger_lock(self.path, self._timeout)

    def write(self, tmp: Path) -> None:
        """Read the file afresh, make the change and write the result into ``tmp``, validated."""
        sheet = Sheet(self.path)
        self._change(sheet)
        sheet.write(tmp)


def _commit(edit: SourcesEdit) -> Path:
    write_all([], [edit])
    return edit.path


def cells_edit(folder: str | Path, source: str, values: Mapping[str, Any]) -> SourcesEdit:
    """The edit that writes ``values`` (column → value) into the row of ``source``
    (:func:`set_cells`, for :meth:`procure.output.Outputs.ledger_edit`)."""

    def change(sheet: Sheet) -> None:
        k = sheet.row(source)
        if k is None:
            raise LedgerError(f"{sheet.path}: source = {source!r} is not a row of the ledger")
        sheet.set(k, values)

    return SourcesEdit(folder, change)


def set_cells(folder: str | Path, source: str, values: Mapping[str, Any]) -> Path:
    """Write ``values`` (column → value) into the row of ``source`` of a ledger's sources.csv.

    Returns
    -------
    Path
        The ledger's ``sources.csv``.

    Raises
    ------
    LedgerError
        No such source, or a value the ledger does not accept (the file is then untouched);
        the lock held by another edit for more than :data:`LOCK_TIMEOUT` seconds.
    """
    return _commit(cells_edit(folder, source, values))


def row_edit(folder: str | Path, row: Mapping[str, Any]) -> SourcesEdit:
    """The edit that adds ``row`` at the end of sources.csv (:func:`append_row`, for
    :meth:`procure.output.Outputs.ledger_edit`)."""
    name = str(row.get("source", ""))

    def change(sheet: Sheet) -> None:
        if sheet.row(name) is not None:
            raise LedgerError(f"{sheet.path}: source = {name!r} exists already: give another --source")
        sheet.append(row)

    return SourcesEdit(folder, change)


def append_row(folder: str | Path, row: Mapping[str, Any]) -> Path:
    """Add ``row`` (column → value) at the end of a ledger's sources.csv.

    Raises
    ------
    LedgerError
        A source of that name exists already, or the row is invalid (the file is untouched);
        the lock held by another edit for more than :data:`LOCK_TIMEOUT` seconds.
    """
    return _commit(row_edit(folder, row))


def _same(column: str, seen: Any, now: str) -> bool:
    """Whether a cell's text ``now`` holds the value ``seen`` (as read by
    :func:`procure.ledger.read_sources`, or as text)."""
    if isinstance(seen, str) or column not in SOURCE_COLUMNS or SOURCE_COLUMNS[column].kind != "number":
        return (str(seen).strip() if seen is not None else "") == now
    try:
        value = check_source_value(column, now)
    except LedgerError:
        return False
    if seen is None or (isinstance(seen, float) and math.isnan(seen)):
        return value is None or (isinstance(value, float) and math.isnan(value))
    try:
        return bool(float(seen) == value)
    except (TypeError, ValueError):
        return False


def _check_change(path: Path, source: str, column: str, value: Any) -> None:
    """One change, validated as its cell would be (a column of the user's own takes any text)."""
    where = f"{path} (source {source!r})"
    if column in SOURCE_COLUMNS:
        check_source_value(column, value, where)
    elif not column.startswith(USER_COLUMN_PREFIX):
        raise LedgerError(
            f"{where}: column {column!r} is unknown: columns of your own start with {USER_COLUMN_PREFIX!r}"
        )


def update_edit(folder: str | Path, changes: Cells, seen: Cells) -> SourcesEdit:
    """The edit of :func:`update_cells`, for :meth:`procure.output.Outputs.ledger_edit`."""
    path = Path(folder) / "sources.csv"
    for source, values in changes.items():
        for column, value in values.items():
            if column not in seen.get(source, {}):
                raise LedgerError(
                    f"{path}: seen has no value for source {source!r}, column {column!r}: give the value you "
                    "read for every cell you change"
                )
            _check_change(path, source, column, value)

    def change(sheet: Sheet) -> None:
        rows = {}
        for source, values in changes.items():
            k = sheet.row(source)
            if k is None:
                raise EditConflict(
                    f"{sheet.path}: source {source!r} is no longer a row of the ledger: someone else removed or "
                    "renamed it; reload the ledger"
                )
            for column in values:
                now = sheet.cell(k, column)
                if not _same(column, seen[source][column], now):
                    raise EditConflict(
                        f"{sheet.path}: source {source!r}, {column}: you read {seen[source][column]!r} but the file "
                        f"now holds {now!r}: someone else changed it; reload the ledger (nothing was written)"
                    )
            rows[source] = k
        for source, values in changes.items():
            sheet.set(rows[source], values)

    return SourcesEdit(folder, change)


def update_cells(folder: str | Path, changes: Cells, seen: Cells) -> Path:
    """Write cells an editor changed, unless someone else changed them since the editor read them.

    For an editor that shows a ledger and writes it back later (the app). Under the ledger's
    lock (:func:`ledger_lock`) the file is read afresh and each changed cell compared with
    what the editor read: as a number for a column of numbers (``"2000"``, ``"2e3"`` and
    ``2000.0`` are the same; a blank is its default, so an unlimited ``available_hours``
    reads as ``inf``), as stripped text otherwise. Only if every one still holds what the
    editor read are the changes written, all of them in one replacement of the file; other
    cells and rows, changed meanwhile or not, stay as the file now has them.

    Parameters
    ----------
    folder : path-like
        The ledger folder.
    changes : mapping of str to mapping of str to Any
        ``{source: {column: new value}}``: numbers, text, or None / NaN for a blank.
    seen : mapping of str to mapping of str to Any
        ``{source: {column: value}}``: what the editor read for each of the same cells (for
        instance from :func:`procure.ledger.read_sources` when it loaded the ledger).

    Returns
    -------
    Path
        The ledger's ``sources.csv``.

    Raises
    ------
    EditConflict
        A changed cell no longer holds what the editor read, or its row is gone: one line
        naming the source, the column, what the editor read and what the file now holds.
        Nothing is written.
    LedgerError
        A cell of ``changes`` without its value in ``seen``; a value its column does not
        accept, or a change that makes the ledger invalid (each checked before anything is
        written); the lock held by another edit for more than :data:`LOCK_TIMEOUT` seconds.

    Examples
    --------
    >>> ledger = load_ledger(folder)                         # doctest: +SKIP
    >>> was = ledger.source("own")["held_hours"]             # doctest: +SKIP
    >>> update_cells(folder, {"own": {"held_hours": 350.0}}, {"own": {"held_hours": was}})  # doctest: +SKIP
    """
    return _commit(update_edit(folder, changes, seen))
