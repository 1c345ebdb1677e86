"""How every figure is made and written: each is a :class:`matplotlib.figure.Figure` of its own,
drawn without pyplot, so that making or writing one selects no backend and changes no setting of
the caller's matplotlib (a notebook keeps its backend), and no figure is left open in pyplot's
list; user text is shown exactly as given (:func:`label`), the fonts' missing glyphs draw without
a warning each (:func:`quiet_glyphs`), and a figure is written atomically to PNG or SVG
(:func:`save`).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypeVar

import matplotlib
from matplotlib.figure import Figure

from ..output import check_plot_path, write_atomic

F = TypeVar("F", bound=Callable[..., Any])


def subplots(
    *args: Any, figsize: tuple[float, float], layout: Literal["constrained"] | None = None, **kwargs: Any
) -> tuple[Figure, Any]:
    """A new figure of its own (no pyplot) and its axes, as ``pyplot.subplots`` would make them."""
    fig = Figure(figsize=figsize, layout=layout)
    return fig, fig.subplots(*args, **kwargs)


def quiet_glyphs(draw: F) -> F:
    """Draw without a warning per character the fonts here lack: a PNG shows such characters
    as boxes (README says so), an SVG keeps them as text."""

    @functools.wraps(draw)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"Glyph \d+ .* missing from font", category=UserWarning)
            return draw(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def label(text: object) -> str:
    """User text for a figure, shown exactly as given: matplotlib would read ``$…$`` as maths."""
    return str(text).replace("$", r"\$")


@quiet_glyphs
def write_figure(fig: Figure, path: Path) -> None:
    """Draw a figure into ``path``; its ending, ``.png`` or ``.svg``, gives the format.

    An SVG keeps text as text, so that a name is stored exactly as given whatever the fonts
    here draw (the setting holds for this write only).
    """
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        fig.savefig(path, format=path.suffix.lower()[1:], dpi=120, bbox_inches="tight")


def save(fig: Figure, path: Path | str) -> Path:
    """Save a figure to ``path`` (``.png`` or ``.svg``) atomically.

    Raises
    ------
    InputError
        A path that does not end in .png or .svg, or whose folder does not exist.
    """
    target = check_plot_path(path)
    return write_atomic(target, lambda tmp: write_figure(fig, tmp))
