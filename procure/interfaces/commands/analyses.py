"""``procure rank`` and ``procure sensitivity``: how sources rank, how the plan moves."""

from __future__ import annotations

from pathlib import Path

import click

from ...defaults import (
    DEFAULT_BUDGET,
    MAX_STEPS,
    RANK_CHOICES,
    SWEEP_TOLERANCE,
    TABLE_COLUMNS,
    TABLE_ROWS,
    VARY_PARAMETERS,
)
from ...errors import ProcureError
from ..options import (
    Money,
    check_number,
    field_range,
    json_out_option,
    ledger_option,
    plot_option,
)
from ..terminal import console, outputs, plots, progress


def _one_time_note(ledger_dir: Path | None, command: str) -> None:
    """Say on standard error when the ledger asks for what this command does not plan: periods, or
    a choice of formats or rented capacity (it plans at one time, every source as recorded)."""
    from ...analyses.infra import chooses
    from ...ledger import load_ledger
    from ...ledger.periods import ledger_periods

    try:
        ledger = load_ledger(ledger_dir)
    except ProcureError:
        return  # the command itself says why
    parts = (["periods.csv"] if ledger_periods(ledger.path, None) is not None else []) + (
        ["formats or rent keys"] if chooses(ledger) else []
    )
    if parts:
        click.echo(f"procure: note: {command} plans at one time with every source as recorded: the ledger's "
                   f"{' and '.join(parts)} are for procure solve", err=True)  # fmt: skip


@click.command("rank")
@ledger_option
@click.option(
    "--by",
    type=click.Choice(RANK_CHOICES),
    default="value",
    show_default=True,
    help="volume: GB an hour; value: value per $ of the next hour (with --budget: value in the plan); "
    "share: transport's share of the price; price: purchase price.",
)
@click.option(
    "--budget",
    type=Money(),
    default=None,
    help="Add each source's hours, GB and value in this budget's plan [$]: 100000, 100k, 1.5M or $100,000.",
)
@click.option("--all", "every_row", is_flag=True, help=f"Print every source, not the first {TABLE_ROWS}.")
@plot_option("the bill split per source (bytes, cores, idle)")
@json_out_option
def rank_command(ledger_dir: Path | None, by: str, budget: float | None, every_row: bool, plot: Path | None,
                 json_out: str | None) -> None:  # fmt: skip
    """How sources rank by volume, value, transport share or price."""
    from ...analyses.rank import rank
    from ...ledger import load_ledger, transport
    from ...ledger.load import ledger_files
    from .. import render

    out = outputs(json_out=json_out, plot=plot)
    out.reads(ledger_files(ledger_dir))
    _one_time_note(ledger_dir, "rank")
    budget = check_number("budget", budget, "--budget")
    ledger = load_ledger(ledger_dir)
    table = rank(ledger, by, budget=budget)
    out.figure(lambda: plots().bill_split(transport(ledger.sources, ledger.cluster)))
    if json_out is not None:
        out.json({"by": by, "rows": table.to_dict("records")})
    if out.tables:
        render.print_rank(console, table, by, every_row=every_row)
    out.commit()


def _check_range(byte_range: tuple[float, float] | None, vary: tuple[str, float, float] | None,
                 steps: int) -> tuple[str, float, float]:  # fmt: skip
    """The input to vary and its range, from ``--byte-price-x LO HI`` or ``--vary NAME LO HI``:
    both ends above 0 (the values are log-spaced) and in the range the input has wherever it
    enters (``procure.ledger.schema.VARY_FIELDS``: ``params`` as in a model card, a price as
    in ``cluster.toml``).

    Raises
    ------
    click.UsageError, click.BadParameter
        Both options, an input that cannot vary, a range or a number of steps out of bounds.
    """
    if byte_range is not None and vary is not None:
        raise click.UsageError("give --byte-price-x or --vary, not both")
    if vary is not None:
        parameter, lo, hi = vary
        if parameter not in VARY_PARAMETERS:
            raise click.BadParameter(
                f"{parameter!r} is not an input that can vary: allowed are {', '.join(VARY_PARAMETERS)}",
                param_hint="'--vary'",
            )
    else:
        parameter, (lo, hi) = "byte_price_x", byte_range or (0.1, 10.0)
    option = "--byte-price-x" if parameter == "byte_price_x" else "--vary"
    if not lo > 0:
        raise click.BadParameter(f"LO = {lo:g} is invalid: must be > 0", param_hint=f"'{option}'")
    if hi < lo:
        raise click.BadParameter(f"HI = {hi:g} is invalid: must be ≥ LO ({lo:g})", param_hint=f"'{option}'")
    spec = field_range(parameter)
    for end, value in (("LO", lo), ("HI", hi)):
        if not spec.contains(value):
            raise click.BadParameter(
                f"{end} = {value:g} is invalid: {parameter} {spec.rule()}", param_hint=f"'{option}'"
            )
    if not 2 <= steps <= MAX_STEPS:
        raise click.BadParameter(f"{steps} is invalid: must be ≥ 2 and ≤ {MAX_STEPS:,}", param_hint="'--steps'")
    return parameter, lo, hi


@click.command("sensitivity")
@ledger_option
@click.option(
    "--byte-price-x",
    "byte_range",
    type=float,
    nargs=2,
    default=None,
    metavar="LO HI",
    help="Vary the byte-price multiplier from LO to HI (log-spaced).",
)
@click.option(
    "--vary",
    type=(str, float, float),
    default=None,
    metavar="NAME LO HI",
    help=f"Vary another input instead: {', '.join(VARY_PARAMETERS)}.",
)
@click.option("--steps", type=int, default=9, show_default=True, help="Points in the range.")
@click.option(
    "--budget",
    type=Money(),
    default=DEFAULT_BUDGET,
    show_default=True,
    help="Dollars to spend [$]: 100000, 100k, 1.5M or $100,000.",
)
@click.option(
    "--tolerance",
    type=float,
    default=SWEEP_TOLERANCE,
    show_default=True,
    help="Of each plan: tighter than solve's, so that hours do not move between points by more than prices do.",
)
@click.option("--csv", "csv_out", type=click.Path(path_type=Path), default=None, help="Write the table to FILE.")
@click.option("--all", "every_row", is_flag=True, help=f"A column for every source, not the first {TABLE_COLUMNS}.")
@click.option(
    "--scheduler",
    default=None,
    metavar="ADDRESS",
    help="A Dask scheduler (tcp://host:port, tls://host:port or host:port) to solve the points on.",
)
@click.option(
    "--workers",
    type=int,
    default=None,
    help="Worker processes of a local Dask cluster (1: none; at most this machine's cores).",
)
@plot_option("hours per source against the input")
@json_out_option
def sensitivity_command(
    ledger_dir: Path | None,
    byte_range: tuple[float, float] | None,
    vary: tuple[str, float, float] | None,
    steps: int,
    budget: float,
    tolerance: float,
    csv_out: Path | None,
    every_row: bool,
    scheduler: str | None,
    workers: int | None,
    plot: Path | None,
    json_out: str | None,
) -> None:
    """How the plan and the bill move with byte prices (or another input)."""
    from ...ledger import load_ledger
    from ...ledger.load import ledger_files
    from .. import render

    parameter, lo, hi = _check_range(byte_range, vary, steps)
    out = outputs(json_out=json_out, csv_out=csv_out, plot=plot)
    out.reads(ledger_files(ledger_dir))
    _one_time_note(ledger_dir, "sensitivity")
    budget = check_number("budget", budget, "--budget")
    from ...analyses.sensitivity import sweep

    ledger = load_ledger(ledger_dir)
    with progress(out, f"solving {steps} plans") as tick:
        table = sweep(ledger, parameter, lo, hi, steps, budget=budget, tolerance=tolerance, progress=tick,
                      scheduler=scheduler, workers=workers)  # fmt: skip
    out.figure(lambda: plots().sensitivity_hours(table))
    out.csv(table)
    if json_out is not None:
        out.json({"parameter": parameter, "rows": table.to_dict("records")})
    if out.tables:
        render.print_sweep(console, table, parameter, budget, every_row=every_row)
    out.commit()
