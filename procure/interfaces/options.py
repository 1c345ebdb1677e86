"""The options several commands share: the ledger, ``--json [FILE]``, ``--plot FILE``, the
format and cluster options of ``bill`` and ``simulate``, and ``NAME=NUMBER`` pairs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ..defaults import READ_CHOICES

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def ledger_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--ledger DIR``: the ledger folder, passed as ``ledger_dir``."""
    return click.option(
        "--ledger",
        "ledger_dir",
        type=click.Path(path_type=Path),
        default=None,
        help="Ledger folder (sources.csv, cluster.toml). Default: the shipped default ledger.",
    )(f)


def json_out_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--json [FILE]``: one JSON object on standard output (``"-"``) or in FILE, as ``json_out``."""
    return click.option(
        "--json",
        "json_out",
        is_flag=False,
        flag_value="-",
        default=None,
        metavar="[FILE]",
        help="Print one JSON object instead of tables; with FILE, write it there (atomically).",
    )(f)


def plot_option(what: str) -> Decorator:
    """``--plot FILE``: write ``what`` to a PNG or SVG file."""
    return click.option(
        "--plot", type=click.Path(path_type=Path), default=None, help=f"Write {what} to FILE (.png or .svg)."
    )


def format_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The format, model and cluster options shared by ``bill`` and ``simulate``."""
    options = [
        click.option("--kind", default=None, help="A ledger row (source name or kind). Default: the first row."),
        click.option("--cameras", type=float, default=None, help="Camera streams [count]."),
        click.option("--width", type=float, default=None, help="Frame width [px]."),
        click.option("--height", type=float, default=None, help="Frame height [px]."),
        click.option("--fps", type=float, default=None, help="Frames per second per camera [1/s]."),
        click.option("--bits-per-pixel", type=float, default=None, help="Encoded rate [bit/px]."),
        click.option(
            "--read",
            type=click.Choice(READ_CHOICES),
            default=None,
            help="Frames of video in order or at random, or stored decoded.",
        ),
        click.option("--gop", type=float, default=None, help="Frames between keyframes of this source [frames]."),
        click.option(
            "--core-fps-1080p",
            type=float,
            default=None,
            help="One core's 1080p decode rate for this source [frames/s].",
        ),
        click.option("--model", default=None, help="Model card name in models/ (25m, 93m, 411m, 7b)."),
        click.option("--params", type=float, default=None, help="Model parameters (overrides --model)."),
        click.option("--side", type=float, default=None, help="Model input side [px]."),
        click.option("--accelerator", default=None, help="Accelerator card: H100 or A100."),
        click.option("--cores", type=float, default=None, help="CPU cores decoding per accelerator."),
        click.option("--nvdec/--no-nvdec", default=None, help="Decode on the NVDEC engines too."),
        click.option("--byte-price-x", type=float, default=None, help="Multiplier on the byte price [1]."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def pairs(option: str, values: tuple[str, ...]) -> dict[str, float]:
    """Parse repeated ``NAME=NUMBER`` options into ``{name: number}``.

    Raises
    ------
    click.BadParameter
        An item that is not ``NAME=NUMBER``, naming the option.
    """
    out: dict[str, float] = {}
    for item in values:
        name, sep, number = item.partition("=")
        try:
            if not sep or not name:
                raise ValueError
            out[name.strip()] = float(number)
        except ValueError:
            raise click.BadParameter(f"{item!r} is not NAME=NUMBER", param_hint=f"'{option}'") from None
    return out
