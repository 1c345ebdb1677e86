"""The options several commands share: the ledger, ``--json [FILE]``, ``--plot FILE``, the
format and cluster options of ``bill`` and ``simulate``, ``NAME=NUMBER`` pairs, and numbers
checked against the range of the field they set (:class:`FieldNumber`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

import click

from ..defaults import READ_CHOICES

if TYPE_CHECKING:
    from ..spec import Range

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def field_range(name: str) -> Range:
    """The :class:`procure.spec.Range` of a number, by the name :func:`procure.ledger.schema.field`
    takes: a ``sources.csv`` column, an option, or a ``cluster.toml`` key as ``table.key``."""
    from ..ledger.schema import field

    return field(name)


@overload
def check_number(name: str, value: float, option: str) -> float: ...
@overload
def check_number(name: str, value: None, option: str) -> None: ...
def check_number(name: str, value: float | None, option: str) -> float | None:
    """An option's number checked against the range of field ``name`` (None passes through).

    Raises
    ------
    InputError
        Naming the option (without its dashes), the value and what is allowed.
    """
    if value is None:
        return None
    from ..spec import check

    return check(field_range(name), value, option.lstrip("-").replace("-", "_"))


class FieldNumber(click.ParamType):
    """A number option with the range of a field (:func:`field_range`): ``--price`` takes
    what ``price_usd_per_hour`` takes in a ledger, with the same message on a bad one.

    Parameters
    ----------
    field : str
        The field's name.
    integer : bool, default False
        Read the option as a whole number (``--seed``).
    """

    name = "number"

    def __init__(self, field: str, integer: bool = False) -> None:
        self.field, self.integer = field, integer

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """The option's text read as a number and checked (an :class:`procure.errors.InputError`
        when it is out of range)."""
        if not isinstance(value, str):
            number = value
        else:
            try:
                number = int(value) if self.integer else float(value)
            except ValueError:
                self.fail(f"{value!r} is not a {'whole number' if self.integer else 'number'}", param, ctx)
        option = param.opts[0] if param is not None and param.opts else self.field
        checked = check_number(self.field, number, option)
        return int(number) if self.integer and checked is not None else checked


class Money(click.ParamType):
    """An amount of money (:func:`procure.interfaces.money.parse_money`: ``100k``,
    ``$100,000``, ``1.5M``, …) [$]; its range is checked by the command, as the field's."""

    name = "money"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """The option's text read as dollars; a text that is no amount says what is taken."""
        from .money import MONEY_FORMS, parse_money

        if not isinstance(value, str):
            return value
        amount = parse_money(value)
        if amount is None:
            self.fail(f"{value!r} is not an amount of money: give {MONEY_FORMS}", param, ctx)
        return amount


def ledger_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--ledger DIR``: the ledger folder, passed as ``ledger_dir``."""
    return click.option(
        "--ledger",
        "ledger_dir",
        type=click.Path(path_type=Path),
        default=None,
        metavar="DIR",
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
        click.option("--codec", default=None, help="The video's codec: h264, hevc, av1, vp9, … (ffprobe's names)."),
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


def pairs(option: str, values: tuple[str, ...], field: str | None = None) -> dict[str, float]:
    """Parse repeated ``NAME=NUMBER`` options into ``{name: number}``.

    Parameters
    ----------
    option : str
        The option, for the messages (``--held``).
    values : tuple of str
        Each ``NAME=NUMBER`` given.
    field : str, optional
        The field whose range each number must be in (:func:`field_range`): ``held_hours``
        for ``--held``.

    Raises
    ------
    click.BadParameter
        An item that is not ``NAME=NUMBER``, or a name given twice, naming the option.
    InputError
        A number out of the field's range, named as ``held own``.
    """
    out: dict[str, float] = {}
    for item in values:
        name, sep, number = item.partition("=")
        name = name.strip()
        try:
            if not sep or not name:
                raise ValueError
            value = float(number)
        except ValueError:
            raise click.BadParameter(f"{item!r} is not NAME=NUMBER", param_hint=f"'{option}'") from None
        if name in out:
            raise click.BadParameter(
                f"{name!r} is given twice ({name}={out[name]:g} and {item}): give each name once",
                param_hint=f"'{option}'",
            )
        if field is not None:
            from ..spec import check

            value = check(field_range(field), value, f"{option.lstrip('-').replace('-', '_')} {name}")
        out[name] = value
    return out


#: Help of ``--time-limit``.
TIME_LIMIT_HELP = (
    "Seconds allowed for all the solves together: the plan, EVPI's per-scenario solves, VSS and --ranging "
    "(loading the ledger is not counted)."
)
#: Help of ``--scheduler``.
SCHEDULER_HELP = "A Dask scheduler (tcp://host:port, tls://host:port or host:port); checked before solving."
#: Help of ``--workers``.
WORKERS_HELP = "Worker processes of a local Dask cluster (1: none; at most this machine's cores)."


def format_list(given: str | None, option: str = "--formats") -> list[str] | None:
    """The formats a comma-separated option names, stripped (``None`` when not given).

    Parameters
    ----------
    given : str or None
        The option's text, ``recorded,model_side,decoded`` or some of them.
    option : str, default "--formats"
        The option's name, for the message.

    Raises
    ------
    InputError
        No format at all, or an empty one between commas (``recorded,,decoded``,
        ``recorded,``): naming the option, its value and what is allowed.
    """
    from ..errors import InputError, invalid
    from ..ledger.schema import FORMATS

    if given is None:
        return None
    kept = [f.strip() for f in given.split(",")]
    if not any(kept):
        raise InputError(f"{option} is empty: give {', '.join(FORMATS[:-1])} or {FORMATS[-1]}, comma-separated")
    if not all(kept):
        raise invalid(option, given, f"an empty format between commas; give {', '.join(FORMATS)}, comma-separated")
    return kept
