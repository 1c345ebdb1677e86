"""What the commands print through: one console on standard output, a progress bar on
standard error, and the outputs of a command (:class:`procure.output.Outputs`) printed here.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from ..output import Outputs
from .tables import visible

#: What stands for a space the wrapping of a note must not break at (a character no note has).
NO_BREAK = "\x00"
#: Width of the tables when the output is not a terminal (a file, a pipe) and the ``COLUMNS``
#: environment variable does not set one [characters].
PIPE_WIDTH = 130


def output_width() -> int | None:
    """The width the tables are fitted to [characters]: ``COLUMNS`` if it is a whole number,
    else the terminal's (None: rich reads it), else :data:`PIPE_WIDTH`."""
    if os.environ.get("COLUMNS", "").strip().isdigit() or sys.stdout.isatty():
        return None
    return PIPE_WIDTH


console = Console(highlight=False, width=output_width())


def say(line: str) -> None:
    """Print a line of text on standard output as given (no markup), its control characters
    shown as escapes (:func:`procure.interfaces.tables.visible`); a long line is left for
    the terminal to wrap, never broken, so that a command in it can be copied whole."""
    console.print(Text(visible(line)), soft_wrap=True)


def note(line: str, whole: str = "") -> None:
    """Print a note of prose on standard output, wrapped at its spaces to the console's width;
    ``whole`` (a file's path in it), and any word longer than a line, is never broken, so that
    it can be copied."""
    shown, kept = visible(line), visible(whole)
    if kept:
        shown = shown.replace(kept, kept.replace(" ", NO_BREAK))
    for part in wrap_cells(shown, console.width):
        console.print(Text(part.replace(NO_BREAK, " ")), soft_wrap=True)


def wrap_cells(text: str, width: int) -> list[str]:
    """Lines of ``text`` broken at its spaces, each at most ``width`` terminal cells wide (a
    wide character, such as a CJK ideograph or most emoji, takes two), except a word wider
    than a line, which keeps a line to itself whole; the spaces at a break are dropped.

    Parameters
    ----------
    text : str
        One paragraph, with no control characters (:data:`NO_BREAK` counts as a space's cell).
    width : int
        The most cells a line takes [cells, ≥ 1].

    Returns
    -------
    list of str
        The lines, never empty (``[""]`` for an empty ``text``).
    """
    lines: list[str] = []
    line = ""
    for word in re.findall(r"[^ ]+ *", text.lstrip(" ")):
        if line and cell_len((line + word).rstrip(" ").replace(NO_BREAK, " ")) > width:
            lines.append(line.rstrip(" "))
            line = ""
        line += word
    return [*lines, line.rstrip(" ")]


def plots() -> Any:
    """The plotting module, loaded (with matplotlib) only when a plot is asked for."""
    from . import plots

    return plots


def write_figure(fig: Any, path: Path) -> None:
    """Draw a figure into a file (:func:`procure.interfaces.plots.write_figure`)."""
    plots().write_figure(fig, path)


def outputs(*, json_out: str | None = None, csv_out: Path | None = None, plot: Path | None = None) -> Outputs:
    """The outputs of a command, each path checked now: the JSON object (``"-"``: standard
    output), the CSV table and the figure, written all together or none by ``commit``."""
    return Outputs(json_out=json_out, csv_out=csv_out, plot=plot, echo=click.echo, say=say, write_figure=write_figure)


@contextlib.contextmanager
def progress(out: Outputs, what: str | None) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar with the time left on standard error, when it is a terminal and the
    tables are printed; yields ``tick(done, total)`` (None when there is nothing to count)."""
    if what is None:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    show = out.tables and sys.stderr.isatty()
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("left"),
               TimeRemainingColumn())  # fmt: skip
    with Progress(*columns, console=Console(stderr=True), disable=not show, transient=True) as bar:
        task = bar.add_task(what, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)
