"""The files a writer keeps beside a file while it replaces it, and their removal once a writer
killed mid-way (``SIGKILL``, a power cut) has left them behind.

A writer (:func:`procure.files.write_all`) stages a file's new content beside it as
``.NAME.XXXXXXXX.SUFFIX`` (:func:`tempfile.mkstemp`'s eight letters) and, just before it renames
the new content over the file, gives the old content a second name ``.NAME.hhhhhhhh.old``
(:func:`keep_old`, eight hexadecimal digits) to put it back from should a later file of the
same write fail. Both are removed when the write ends, whatever its outcome; only a killed
writer leaves them. :func:`remove_staged` removes them under the lock every writer of the file
holds (a ledger's: :func:`procure.ledger.edit.ledger_lock`), when no live writer has one: every
staged file, and each second name that is only the file in place under another name.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
from pathlib import Path

#: The random part of a staged file's name (:func:`tempfile.mkstemp`: eight of a-z, 0-9, _).
STAGED_KEY = "[a-z0-9_]{8}"
#: Random bytes of a second name's part (:func:`keep_old`): written as twice as many hex digits.
BACKUP_BYTES = 4
#: The random part of a second name [regular expression].
BACKUP_KEY = f"[0-9a-f]{{{2 * BACKUP_BYTES}}}"


def staged_name(real: Path) -> re.Pattern[str]:
    """The names a writer gives the temporary files of ``real`` beside it:
    ``.NAME.XXXXXXXX.SUFFIX``."""
    return re.compile(rf"\.{re.escape(real.name)}\.{STAGED_KEY}{re.escape(real.suffix)}")


def backup_name(real: Path) -> re.Pattern[str]:
    """The second names :func:`keep_old` gives ``real``: ``.NAME.hhhhhhhh.old``."""
    return re.compile(rf"\.{re.escape(real.name)}\.{BACKUP_KEY}\.old")


def keep_old(path: Path) -> Path:
    """A second name for a file about to be replaced, beside it, to put it back from: a hard
    link, or a copy where the file system has none."""
    while True:
        backup = path.with_name(f".{path.name}.{secrets.token_hex(BACKUP_BYTES)}.old")
        try:
            os.link(path, backup)
            return backup
        except FileExistsError:
            continue
        except OSError:  # no hard links here: a copy
            shutil.copy2(path, backup)
            return backup


def backups_of(real: Path, st: os.stat_result) -> int:
    """How many of a file's hard links are second names :func:`keep_old` gave it (a live
    writer's, or one a killed writer left behind)."""
    name = backup_name(real)
    count = 0
    with contextlib.suppress(OSError):
        for entry in os.scandir(real.parent):
            if name.fullmatch(entry.name):
                with contextlib.suppress(OSError):
                    o = entry.stat(follow_symlinks=False)
                    count += (o.st_dev, o.st_ino) == (st.st_dev, st.st_ino)
    return count


def remove_staged(path: Path | str) -> list[Path]:
    """Remove the temporary files and second names writers of ``path`` left beside it.

    Call it only while holding the lock every writer of ``path`` holds while it writes (a
    ledger's, :func:`procure.ledger.edit.ledger_lock`): then no live writer has one, and those
    there were left by a writer killed mid-way. A second name is removed only where it is the
    file in place (a writer killed before its rename: the same file under two names); one that
    holds content the file no longer has (a writer killed after its rename, maybe between the
    renames of two files it wrote together) is kept: it may be the only copy of what was there
    before. Other files beside it are left alone.

    Returns
    -------
    list of Path
        The files removed.
    """
    real = Path(os.path.realpath(path))
    staged, backup = staged_name(real), backup_name(real)
    try:
        now = os.stat(real)
        here: tuple[int, int] | None = (now.st_dev, now.st_ino)
    except OSError:
        here = None
    gone = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(real.parent):
            if not entry.is_file(follow_symlinks=False):
                continue
            if backup.fullmatch(entry.name):
                st = entry.stat(follow_symlinks=False)
                if (st.st_dev, st.st_ino) != here:
                    continue  # the old content of a replaced file: kept
            elif not staged.fullmatch(entry.name):
                continue
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
                gone.append(Path(entry.path))
    return gone
