"""Writing results: JSON-safe values, atomic file writes, and the outputs of one command.

:class:`Outputs` collects what a command writes (a JSON object, a table as CSV, a figure) and
writes the files all together or none. It prints through the callables it is given, so that
this module loads no terminal or plotting library.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .errors import InputError, invalid

#: File endings a plot can be written to.
PLOT_FORMATS = (".png", ".svg")


def jsonable(value: Any) -> Any:
    """Turn numpy scalars into Python ones and non-finite floats into ``None`` (JSON null)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if type(value).__module__ == "numpy" and hasattr(value, "item"):  # a numpy scalar (numpy not imported here)
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _umask() -> int:
    """The process's file-creation mask (read by setting it and putting it back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_all(items: Sequence[tuple[Path | str, Callable[[Path], object]]]) -> list[Path]:
    """Write several files so that a reader sees all the old ones or all the new ones.

    Each ``write`` is called with a temporary path in its target's folder; only when every
    one has succeeded are the files renamed over their targets. On any error or interrupt,
    every temporary file is removed and every target is untouched. New files get the
    permissions ``0666`` less the user's umask, as a plain ``open`` would give them.

    Raises
    ------
    InputError
        If the folder of a target does not exist (naming the path as given).
    """
    temps: list[tuple[Path, Path]] = []
    mode = 0o666 & ~_umask()
    try:
        for path, write in items:
            target = Path(path)
            folder = target.parent if str(target.parent) else Path(".")
            if not folder.is_dir():
                raise InputError(f"output = {str(path)!r} is invalid: folder {str(folder)!r} does not exist")
            fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=target.suffix, dir=folder)
            os.close(fd)
            temps.append((Path(name), target))
            write(Path(name))
            os.chmod(name, mode)
        for done, final in temps:
            os.replace(done, final)
    except BaseException:
        for left, _final in temps:
            left.unlink(missing_ok=True)
        raise
    return [target for _tmp, target in temps]


def write_atomic(path: Path | str, write: Callable[[Path], object]) -> Path:
    """Write one file so that a reader sees the old one or the whole new one, never a part
    (:func:`write_all` of one file)."""
    return write_all([(path, write)])[0]


def check_output_path(path: Path | str, option: str) -> Path:
    """Check, before any work, that an output can be written where the user asked.

    Raises
    ------
    InputError
        Naming the option and the path as given: a folder in its place, a folder that does
        not exist, or one that cannot be written to.
    """
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise invalid(option, str(path), "it is a folder: give a file name")
    if not folder.is_dir():
        raise invalid(option, str(path), f"folder {str(folder)!r} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise invalid(option, str(path), f"folder {str(folder)!r} cannot be written to")
    if target.exists() and not os.access(target, os.W_OK):
        raise invalid(option, str(path), "the file exists and cannot be written to")
    return target


def check_plot_path(path: Path | str) -> Path:
    """Check a plot's path before any work: it ends in .png or .svg, its folder exists.

    Raises
    ------
    InputError
        Naming the path as the user gave it.
    """
    if Path(path).suffix.lower() not in PLOT_FORMATS:
        raise invalid("plot", str(path), "the file must end in .png or .svg")
    return check_output_path(path, "plot")


class Outputs:
    """The files a command writes: each path checked before any work starts, and all of them
    written together or none (:func:`write_all`).

    ``json_out="-"`` prints the JSON object to standard output, after the files are written;
    a command that prints JSON there prints nothing else on it.

    Parameters
    ----------
    json_out : str, optional
        ``"-"`` for standard output, or the file the JSON object goes to.
    csv_out : path, optional
        The file a table goes to (CSV).
    plot : path, optional
        The file a figure goes to (``.png`` or ``.svg``).
    echo : callable, default print
        Prints the JSON object (one line) to standard output.
    say : callable, default print
        Prints a line saying which file was written, when the tables are printed.
    write_figure : callable, optional
        ``write_figure(figure, path)`` draws a figure into a file; by default the figure's own
        ``savefig``.

    Raises
    ------
    InputError
        An output path that cannot be written (see :func:`check_output_path` and
        :func:`check_plot_path`).
    """

    def __init__(
        self,
        *,
        json_out: str | None = None,
        csv_out: Path | None = None,
        plot: Path | None = None,
        echo: Callable[[str], object] = print,
        say: Callable[[str], object] = print,
        write_figure: Callable[[Any, Path], object] | None = None,
    ) -> None:
        self.json_out, self.csv_out, self.plot = json_out, csv_out, plot
        if json_out not in (None, "-"):
            check_output_path(json_out, "json")
        if csv_out is not None:
            check_output_path(csv_out, "csv")
        if plot is not None:
            check_plot_path(plot)
        self._echo, self._say = echo, say
        self._write_figure = write_figure or (lambda fig, path: fig.savefig(path, format=path.suffix.lower()[1:]))
        self._files: list[tuple[Path | str, Callable[[Path], object], str]] = []
        self._stdout: str | None = None

    @property
    def tables(self) -> bool:
        """True when the command prints its tables (no JSON on standard output)."""
        return self.json_out != "-"

    def json(self, obj: dict[str, Any]) -> None:
        """The command's JSON object, for standard output or its file."""
        if self.json_out == "-":
            self._stdout = json.dumps(jsonable(obj))
        elif self.json_out is not None:
            text = json.dumps(jsonable(obj), indent=2) + "\n"
            self._files.append((self.json_out, lambda tmp: tmp.write_text(text), "JSON"))

    def csv(self, frame: Any) -> None:
        """A table (a pandas DataFrame) for the CSV file."""
        if self.csv_out is not None:
            self._files.append((self.csv_out, lambda tmp: frame.to_csv(tmp, index=False), "Table"))

    def figure(self, make: Callable[[], Any]) -> None:
        """A figure for the plot file, drawn only when one is asked for."""
        if self.plot is not None:
            fig = make()
            self._files.append((self.plot, lambda tmp: self._write_figure(fig, tmp), "Plot"))

    def commit(self) -> None:
        """Write every file (all or none), then what goes to standard output."""
        write_all([(path, write) for path, write, _what in self._files])
        if self._stdout is not None:
            self._echo(self._stdout)
        elif self.tables:
            for path, _write, what in self._files:
                self._say(f"{what} written to {path}")
