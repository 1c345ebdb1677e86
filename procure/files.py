"""Files replaced all together or none: the content staged beside each file, then renamed over
it; a link followed to the file it points to; a device or a FIFO written in place.

Where a file goes depends on what its path holds:

* nothing, or a regular file: the content is written to a temporary file beside it, flushed
  to disk, and renamed over it. A file replaced keeps its permissions, owner and group (the
  owner as far as the process may set it: root may);
* a link to a regular file: the file it points to is replaced so; the link stays a link;
* a regular file with other hard links: refused (replaced whole, it would leave its other names
  on the old content);
* a character device or a FIFO (``/dev/null``, a terminal, a pipe): written in place, never
  renamed over; an error while writing (``/dev/full``: no space left) is an error of the
  command. A FIFO no program opens for reading within :data:`FIFO_READER_WAIT_S` is refused
  (one line, nothing written, no temporary file left) rather than waited on for ever;
* ``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N``: written to that descriptor of the process
  where it stands, whatever it is open on (a file a shell opened with ``>>`` is appended to);
* a folder, a socket or a block device: refused.

:func:`write_all` writes several files and edits of files (:class:`FileEdit`, a ledger's
``sources.csv``) all or none: every one is staged first, then put in place, the edits last; an
error undoes the replacements already made (each old file is kept under a second name until
all have landed).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from .errors import invalid
from .leftovers import backups_of, keep_old

#: Bytes copied at a time into a device or a FIFO.
CHUNK_BYTES = 1 << 16
#: Longest wait for a program to open a FIFO output for reading before the output is refused
#: [s], > 0: long enough for a reader started beside the command (``procure … --json p & cat p``)
#: to open it, short enough that a FIFO no one reads is told at once rather than waited on.
FIFO_READER_WAIT_S = 2.0
#: Pause between two tries to open a FIFO output while no program reads it [s], > 0 and far
#: below :data:`FIFO_READER_WAIT_S`.
FIFO_RETRY_S = 0.01
#: Reads of a file's hard links before other ones are taken as the user's (another writer's
#: second name of the file may come or go between reading the links and the names).
LINK_READS = 5
#: Paths that name a descriptor of this process rather than a file.
DESCRIPTOR_PATH = re.compile(r"/dev/(stdout|stderr)|/(?:dev|proc/self)/fd/(\d+)")
#: The descriptors of the standard streams, by their name in ``/dev``.
STANDARD_STREAMS = {"stdout": 1, "stderr": 2}


def _umask() -> int:
    """The process's file-creation mask (read by setting it and putting it back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


class FileEdit(Protocol):
    """A change to a file others may change too: the new content is made from the file as it
    is when it is written, under a lock held until it has landed (see
    :class:`procure.ledger.edit.SourcesEdit`)."""

    @property
    def path(self) -> Path:
        """The file changed, as the user names it."""

    def lock(self) -> contextlib.AbstractContextManager[object]:
        """The lock held from reading the file until its replacement has landed."""

    def write(self, tmp: Path) -> None:
        """Read the file, write the changed content into ``tmp``; raise to refuse."""


@dataclass(frozen=True)
class Target:
    """Where a file is written.

    Attributes
    ----------
    given : Path
        The path as the user gave it.
    real : Path
        The file written: ``given`` with every link followed.
    stream : bool
        True for a character device, a FIFO or a descriptor of this process, written in place.
    old : os.stat_result or None
        The regular file replaced, None for a new file or a stream.
    fd : int or None
        For ``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N`` and ``/proc/self/fd/N``: the
        descriptor written to, where it stands (after what a shell's ``>>`` holds).
    """

    given: Path
    real: Path
    stream: bool
    old: os.stat_result | None
    fd: int | None = None


def _descriptor(path: Path) -> int | None:
    """The descriptor of this process a path names (``/dev/stdout`` is 1), None for others."""
    match = DESCRIPTOR_PATH.fullmatch(str(path))
    if match is None:
        return None
    return STANDARD_STREAMS[match.group(1)] if match.group(1) in STANDARD_STREAMS else int(match.group(2))


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISSOCK, "a socket"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a regular file"


def target(path: Path | str, field: str = "output") -> Target:
    """Where ``path`` is written (see the module), checked.

    Raises
    ------
    InputError
        Naming ``field`` and the path: a folder, a socket or a block device in its place, a
        file with other hard links (replaced whole, it would leave them on the old content),
        or a folder that does not exist.
    """
    given = Path(path)
    fd = _descriptor(given)
    if fd is not None:
        try:
            os.fstat(fd)
        except OSError:
            raise invalid(field, str(path), f"descriptor {fd} is not open") from None
        return Target(given, given, True, None, fd)
    try:
        st = os.stat(given)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise invalid(field, str(path), f"it cannot be reached ({exc.strerror})") from None
    if st is not None and (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
        return Target(given, given, True, None)
    if st is not None and not stat.S_ISREG(st.st_mode):
        what = _kind(st.st_mode)
        raise invalid(field, str(path), f"it is {what}: give a file name" if what == "a folder" else f"it is {what}")
    real = Path(os.path.realpath(given))
    links = 0 if st is None else _links(given, real, st)
    if links > 1:
        why = f"it has {links} hard links: a file replaced whole would leave its other names on the old content"
        raise invalid(field, str(path), f"{why}; give another path, or make it a file of its own first")
    if not real.parent.is_dir():
        folder = real.parent if given.is_symlink() else given.parent if str(given.parent) else Path(".")
        raise invalid(field, str(path), f"folder {str(folder)!r} does not exist")
    return Target(given, real, False, st)


def _links(given: Path, real: Path, st: os.stat_result) -> int:
    """A regular file's hard links but the second names a writer gives it while replacing it;
    counted again where another writer's second name came or went between the two reads
    (:data:`LINK_READS` times at most)."""
    links = st.st_nlink - backups_of(real, st)
    for _ in range(LINK_READS - 1):
        if links <= 1:
            break
        with contextlib.suppress(OSError):
            st = os.stat(given)
        links = st.st_nlink - backups_of(real, st)
    return links


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _keep_metadata(tmp: Path, old: os.stat_result | None, mode: int) -> None:
    """Give a staged file the permissions, owner and group of the file it replaces (the owner
    where the process may set it), or ``mode`` for a new file."""
    if old is None:
        os.chmod(tmp, mode)
        return
    mine = os.stat(tmp)
    if (mine.st_uid, mine.st_gid) != (old.st_uid, old.st_gid):
        for uid in (old.st_uid, -1):
            try:
                os.chown(tmp, uid, old.st_gid)
                break
            except PermissionError:
                continue
    os.chmod(tmp, stat.S_IMODE(old.st_mode))


def _stage(where: Target, write: Callable[[Path], object], mode: int) -> Path:
    """Write one file's new content into a temporary file, flushed to disk: beside the file it
    replaces, or, for a stream, in the system's temporary folder."""
    folder = None if where.stream else where.real.parent
    try:
        fd, name = tempfile.mkstemp(prefix=f".{where.real.name}.", suffix=where.real.suffix, dir=folder)
    except OSError as exc:
        raise _named(exc, where.given) from None
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        _fsync(tmp)
        if not where.stream:
            _keep_metadata(tmp, where.old, mode)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise _named(exc, where.given) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def _named(exc: OSError, path: Path) -> OSError:
    """An error of the system while a file is written (on its temporary file, its second name,
    its renaming or a stream), named by the user's path and said as such: ``not written: No
    space left on device`` (:func:`procure.errors.system_message` prints it)."""
    if not exc.errno:
        return exc
    return OSError(exc.errno, f"not written: {exc.strerror or os.strerror(exc.errno)}", str(path))


def _replace(src: Path, dst: Path) -> None:
    """Rename ``src`` over ``dst``, atomically."""
    os.replace(src, dst)


def _open_stream(path: Path) -> int:
    """A device or a FIFO opened for writing; a FIFO only once a program reads it.

    A FIFO is opened without blocking, tried again every :data:`FIFO_RETRY_S` for at most
    :data:`FIFO_READER_WAIT_S` while no program has it open for reading, then set to block
    again so that the copy waits for the reader as a pipe does.

    Raises
    ------
    InputError
        A FIFO no program opened for reading in that time, naming the path.
    """
    if not stat.S_ISFIFO(os.stat(path).st_mode):
        return os.open(path, os.O_WRONLY)
    deadline = time.monotonic() + FIFO_READER_WAIT_S
    while True:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: no reader
                raise
            if time.monotonic() >= deadline:
                why = f"it is a FIFO no program reads (none opened it within {FIFO_READER_WAIT_S:g} s)"
                raise invalid("output", str(path), f"{why}: start its reader first, or give a file") from None
            time.sleep(FIFO_RETRY_S)
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    return fd


def _pour(src: Path, where: Target) -> None:
    """Copy a staged file into a device, a FIFO or a descriptor, in place."""
    try:
        if where.fd is not None:
            for text in (sys.stdout, sys.stderr):
                text.flush()  # what was printed comes first
        fd = where.fd if where.fd is not None else _open_stream(where.given)
        try:
            with src.open("rb") as fh:
                while chunk := fh.read(CHUNK_BYTES):
                    view = memoryview(chunk)
                    while view:
                        view = view[os.write(fd, view) :]
        finally:
            if where.fd is None:
                os.close(fd)
    except OSError as exc:
        raise _named(exc, where.given) from None


def check_distinct(targets: Iterable[tuple[str, Target]]) -> None:
    """Refuse a regular file named twice (under two options, or by two paths to one file); a
    device or a FIFO may take several outputs.

    Parameters
    ----------
    targets : iterable of (str, Target)
        Each target with the field it was given to, for the message.

    Raises
    ------
    InputError
        Naming the second field, its path and the first field.
    """
    seen: dict[Path, str] = {}
    for field, where in targets:
        if where.stream:
            continue
        if where.real in seen:
            raise invalid(field, str(where.given), f"it is also the {seen[where.real]} file: give each its own file")
        seen[where.real] = field


def write_all(
    items: Sequence[tuple[Path | str, Callable[[Path], object]]], edits: Sequence[FileEdit] = ()
) -> list[Path]:
    """Write several files, and change others, so that a reader sees all the old ones or all
    the new ones.

    Each ``write`` is called with a temporary path and writes the file's content there; each
    edit's lock is taken and its ``write`` called likewise, after the files. Only when every
    one has succeeded are they put in place: streams first (written in place), then the files,
    then the edits, each old file kept under a second name until all have landed. On any error
    or interrupt the replacements made are undone, the temporary files removed, and the error
    raised. New files get the permissions ``0666`` less the user's umask, as a plain ``open``
    would give them; a replaced file keeps its own (see the module).

    Parameters
    ----------
    items : sequence of (path, write)
        The files and how to write each.
    edits : sequence of FileEdit, optional
        Changes to files under a lock (a ledger's ``sources.csv``).

    Returns
    -------
    list of Path
        The paths of ``items``, as given.

    Raises
    ------
    InputError
        A target that cannot be written (see :func:`target`), or one file named twice.
    OSError
        Writing failed (a full disk); nothing has changed but what a stream took in.
    """
    mode = 0o666 & ~_umask()
    files = [target(path) for path, _write in items]
    check_distinct([("output", t) for t in files])
    staged: list[tuple[Target, Path]] = []
    kept: list[tuple[Path, Path | None]] = []  # (file replaced, its old content or None if new)
    with contextlib.ExitStack() as locks:
        try:
            changed = []
            for edit in sorted(edits, key=lambda e: os.path.realpath(e.path)):
                locks.enter_context(edit.lock())
                where = target(edit.path, "edit")
                if where.stream or where.old is None:
                    raise invalid("edit", str(edit.path), "it is not a regular file")
                changed.append((where, edit))
            check_distinct([("output", t) for t in files] + [("edit", where) for where, _edit in changed])
            for where, (_path, write) in zip(files, items, strict=True):
                staged.append((where, _stage(where, write, mode)))
            for where, edit in changed:
                staged.append((where, _stage(where, edit.write, mode)))
            for where, tmp in [s for s in staged if s[0].stream]:
                _pour(tmp, where)
            for where, tmp in [s for s in staged if not s[0].stream]:
                try:
                    kept.append((where.real, keep_old(where.real) if where.old is not None else None))
                    _replace(tmp, where.real)
                except OSError as exc:
                    raise _named(exc, where.given) from None
        except BaseException:
            for real, backup in reversed(kept):
                with contextlib.suppress(OSError):
                    if backup is not None:
                        os.replace(backup, real)
                    else:
                        real.unlink()
            raise
        finally:
            for _where, tmp in staged:
                tmp.unlink(missing_ok=True)
            for _real, backup in kept:
                if backup is not None:
                    backup.unlink(missing_ok=True)
    return [Path(path) for path, _write in items]


def write_atomic(path: Path | str, write: Callable[[Path], object]) -> Path:
    """Write one file so that a reader sees the old one or the whole new one, never a part
    (:func:`write_all` of one file)."""
    return write_all([(path, write)])[0]
