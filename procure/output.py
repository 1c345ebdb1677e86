"""Writing results: JSON-safe values, and the outputs of one command written all together or
none.

:class:`Outputs` collects what a command writes (a JSON object, a table as CSV, a figure, a
ledger edit), checks every path before any work starts, and commits them with
:func:`procure.files.write_all`: every file staged first, then put in place, the ledger edits
last; a device or a FIFO written in place, never replaced; a replaced file keeping its
permissions, owner and group. It prints through the callables it is given, so that this module
loads no terminal or plotting library.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from .errors import invalid
from .files import FileEdit, Target, check_distinct, target, write_all, write_atomic
from .install import in_installation

#: Why an output or an edit inside procure's installation is refused.
INSTALLATION_REFUSAL = (
    "it is inside procure's installation (its shipped ledgers, model cards and package), which nothing "
    "writes: give a file of your own (procure init DIR copies the default ledger)"
)

__all__ = [
    "PLOT_FORMATS",
    "FileEdit",
    "Outputs",
    "Target",
    "check_output_path",
    "check_plot_path",
    "jsonable",
    "target",
    "write_all",
    "write_atomic",
]

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


def check_output_path(path: Path | str, option: str) -> Path:
    """Check, before any work, that an output can be written where the user asked.

    Raises
    ------
    InputError
        Naming the option and the path as given: a folder, socket or block device in its
        place, a folder that does not exist or cannot be written to, a file that cannot be.
    """
    where = target(path, option)
    if where.stream:
        if not os.access(where.given, os.W_OK):
            raise invalid(option, str(path), "it cannot be written to")
        return where.given
    if in_installation(where.real):
        raise invalid(option, str(path), INSTALLATION_REFUSAL)
    if not os.access(where.real.parent, os.W_OK | os.X_OK):
        raise invalid(option, str(path), f"folder {str(where.real.parent)!r} cannot be written to")
    if where.old is not None and not os.access(where.real, os.W_OK):
        raise invalid(option, str(path), "the file exists and cannot be written to")
    return where.given


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


def _same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file (links followed; a file need not exist yet)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


class Outputs:
    """The files a command writes: each path checked before any work starts, and all of them
    written together or none (:func:`write_all`), ledger edits last.

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
        :func:`check_plot_path`), or one file given to two options.
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
        check_distinct((option, target(path, option)) for option, path in self._paths())
        self._echo, self._say = echo, say
        self._write_figure = write_figure or (lambda fig, path: fig.savefig(path, format=path.suffix.lower()[1:]))
        self._files: list[tuple[Path | str, Callable[[Path], object], str]] = []
        self._edits: list[tuple[FileEdit, str | None]] = []
        self._stdout: str | None = None

    def _paths(self) -> list[tuple[str, Path]]:
        """The output files, by option."""
        given = [("json", self.json_out if self.json_out != "-" else None), ("csv", self.csv_out), ("plot", self.plot)]
        return [(option, Path(path)) for option, path in given if path is not None]

    def reads(self, files: Iterable[Path | str], what: str = "a file this command reads") -> None:
        """Refuse, before any work, an output onto a file the command reads (a ledger's).

        Raises
        ------
        InputError
            Naming the option, the path and the file it would overwrite.
        """
        for option, path in self._paths():
            for file in files:
                if not target(path, option).stream and _same_file(path, Path(file)):
                    raise invalid(option, str(path), f"it is {what} ({file}): give another file")

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

    def will_edit(self, path: Path | str) -> None:
        """Refuse, before any work, a ledger file this command would edit but cannot replace
        whole (see :func:`procure.files.target`), or one an output of the command would overwrite.

        Raises
        ------
        InputError
            Naming the file and why.
        """
        where = target(path, "edit")
        if where.old is None and not where.stream:
            raise invalid("edit", str(path), "no such file: the ledger folder needs it")
        if where.stream:
            raise invalid("edit", str(path), "it is not a regular file")
        if in_installation(where.real):
            raise invalid("edit", str(path), INSTALLATION_REFUSAL)
        self.reads([path], "the ledger file this command edits")

    def ledger_edit(self, edit: FileEdit, message: str | None = None) -> None:
        """A change to a ledger file, written by :meth:`commit` after the other files, with them
        or not at all; ``message`` is printed once it has landed, when the tables are printed.

        Raises
        ------
        InputError
            An output of this command is the file the edit changes.
        """
        if in_installation(Path(edit.path)):
            raise invalid("edit", str(edit.path), INSTALLATION_REFUSAL)
        self.reads([edit.path], "the ledger file this command edits")
        self._edits.append((edit, message))

    def commit(self) -> None:
        """Write every file and edit (all or none), then what goes to standard output."""
        write_all([(path, write) for path, write, _what in self._files], [edit for edit, _m in self._edits])
        if self._stdout is not None:
            self._echo(self._stdout)
        elif self.tables:
            for path, _write, what in self._files:
                self._say(f"{what} written to {path}")
            for _edit, message in self._edits:
                if message:
                    self._say(message)
