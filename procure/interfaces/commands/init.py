"""``procure init DIR``: a ledger of one's own, copied from the shipped default ledger.

The default ledger belongs to the installation (inside the installed package, or a
checkout's ``ledgers/default``); nothing writes into it. ``procure init`` copies it to a new
folder that the user owns, which ``--ledger DIR`` then reads and the app's "Save held hours"
writes.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import click

from ...errors import invalid
from ..terminal import say


def copy_default_ledger(folder: Path | str) -> list[str]:
    """Copy the shipped default ledger's files into ``folder`` (made, with its parents, if it
    does not exist; an existing folder must be empty); return the names of the files copied.

    The folder and files get the permissions a new folder and file get (``0777`` and ``0666``
    less the umask), whatever the installed copies have. The folder appears whole or not at
    all: the files are copied into a temporary folder beside it, which is then renamed to
    ``folder``.

    Raises
    ------
    InputError
        ``folder`` is a file, or a folder that is not empty.
    OSError
        The folder cannot be made or written.
    """
    from ...ledger import default_ledger_dir

    target = Path(folder).expanduser()
    if target.exists() and not target.is_dir():
        raise invalid("DIR", str(folder), "it is a file: give a folder that does not exist or is empty")
    if target.is_dir() and any(target.iterdir()):
        raise invalid("DIR", str(folder), "the folder is not empty: give a new folder, or an empty one")
    source = default_ledger_dir()
    names = sorted(p.name for p in source.iterdir() if p.is_file())
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        os.chmod(staging, 0o777 & ~_umask())  # as a plain mkdir makes it, not mkdtemp's 0700
        for name in names:
            shutil.copyfile(source / name, staging / name)
        if target.is_dir():
            target.rmdir()  # empty, checked above: the renamed staging folder takes its place
        staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return names


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@click.command("init")
@click.argument("folder", metavar="DIR", type=click.Path(path_type=Path))
def init_command(folder: Path) -> None:
    """Copy the shipped default ledger to DIR (a new or empty folder), to edit and save into."""
    names = copy_default_ledger(folder)
    say(f"Copied the default ledger ({', '.join(names)}) to {folder}.")
    say(f"Plan with it: procure solve --ledger {folder} --budget 100000; the app saves held hours there: "
        f"procure app --ledger {folder}")  # fmt: skip
