"""Writing results: JSON-safe values and atomic file writes."""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .errors import InputError, invalid

#: File endings a plot can be written to.
PLOT_FORMATS = (".png", ".svg")


def jsonable(value: Any) -> Any:
    """Turn numpy scalars into Python ones and non-finite floats into ``None`` (JSON null)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_atomic(path: Path | str, write: Callable[[Path], object]) -> Path:
    """Write a file so that a reader sees the old one or the whole new one, never a part.

    ``write`` is called with a temporary path in the same folder; the file is then renamed
    over ``path``. On any error the temporary file is removed and ``path`` is untouched.

    Raises
    ------
    InputError
        If the folder of ``path`` does not exist.
    """
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise InputError(f"output = {str(target)!r} is invalid: folder {str(folder)!r} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=target.suffix, dir=folder)
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def check_plot_path(path: Path | str) -> Path:
    """Check a plot's path before any work: it ends in .png or .svg, its folder exists.

    Raises
    ------
    InputError
        Naming the path as the user gave it.
    """
    target = Path(path)
    if target.suffix.lower() not in PLOT_FORMATS:
        raise invalid("plot", str(path), "the file must end in .png or .svg")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise invalid("plot", str(path), f"folder {str(folder)!r} does not exist")
    return target
