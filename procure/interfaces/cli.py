"""The command line: ``procure bill | simulate | solve | rank | sensitivity``.

The only module that prints (its tables are in :mod:`procure.interfaces.render`). Library
errors (:class:`procure.ProcureError`) and usage errors become one line on standard error and
exit code 2; ``--json`` prints one JSON object. Each command imports what it uses: the solver
only for the commands that solve, matplotlib only for ``--plot``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from ..errors import ProcureError
from ..ledger import READ_CHOICES, Ledger, cluster_with, load_ledger, variant
from ..output import check_plot_path, jsonable, write_atomic
from ..pipeline.queue import DEFAULT_BUFFER, DEFAULT_FRAMES, DEFAULT_WARMUP, simulate
from ..program import DEFAULT_TIME_LIMIT, DEFAULT_TOLERANCE, from_ledger
from . import render

#: Inputs ``procure sensitivity --vary`` takes, with their units (the sweep's own list, kept here
#: so that ``--help`` does not load the solver; a test checks the two agree).
VARY_PARAMETERS = ("byte_price_x", "budget", "accelerator_usd_per_hour", "core_usd_per_hour", "params")
#: ``procure rank --by`` choices (:data:`procure.analyses.rank.RANK_BY`).
RANK_CHOICES = ("volume", "value", "share", "price")

#: Width of the tables when the output is not a terminal (a file, a pipe) [characters].
PIPE_WIDTH = 130
console = Console(highlight=False, width=None if sys.stdout.isatty() else PIPE_WIDTH)

#: Keys of ``procure bill --json`` (DESIGN.md §6), in order, and the result column of each.
BILL_KEYS = {
    "demand_fps": "demand_fps",
    "supply_fps": "supply_fps",
    "read_fps": "read_fps",
    "decode_fps": "decode_fps",
    "busy": "busy",
    "stage": "stage",
    "cores_needed": "cores_needed",
    "pixels_per_token": "pixels_per_token",
    "tokens_per_frame": "tokens_per_frame",
    "gb_per_hour": "gb_per_hour",
    "bill_usd": "bill_usd",
    "bytes_usd": "bytes_usd",
    "cores_usd": "cores_usd",
    "idle_usd": "idle_usd",
}
#: Keys ``procure bill --json`` adds to the contract.
BILL_EXTRA_KEYS = (
    "source",
    "kind",
    "price_usd_per_hour",
    "share",
    "gb_decoded_per_hour",
    "frames_per_hour",
    "wall_seconds",
    "useful_seconds",
    "accelerator_hours",
    "core_hours",
    "g",
    "largest_stalling_params",
)


def _ledger_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--ledger",
        "ledger_dir",
        type=click.Path(path_type=Path),
        default=None,
        help="Ledger folder (sources.csv, cluster.toml). Default: the shipped default ledger.",
    )(f)


def _json_out_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--json",
        "json_out",
        is_flag=False,
        flag_value="-",
        default=None,
        metavar="[FILE]",
        help="Print one JSON object instead of tables; with FILE, write it there (atomically).",
    )(f)


def _emit_json(obj: dict[str, Any], target: str) -> None:
    text = json.dumps(jsonable(obj), indent=None if target == "-" else 2)
    if target == "-":
        click.echo(text)
    else:
        write_atomic(target, lambda tmp: tmp.write_text(text + "\n"))
        console.print(f"JSON written to {target}")


def _write_csv(frame: Any, target: Path) -> None:
    write_atomic(target, lambda tmp: frame.to_csv(tmp, index=False))


def _format_options(f: Callable[..., Any]) -> Callable[..., Any]:
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


def _variant_from(ledger: Ledger, o: dict[str, Any]) -> tuple[Any, Any]:
    cluster = cluster_with(
        ledger.cluster,
        model=o["model"],
        params=o["params"],
        side=o["side"],
        accelerator=o["accelerator"],
        cores=o["cores"],
        nvdec=o["nvdec"],
        byte_price_x=o["byte_price_x"],
    )
    return variant(
        ledger,
        o["kind"],
        cluster=cluster,
        cameras=o["cameras"],
        width=o["width"],
        height=o["height"],
        fps=o["fps"],
        bits_per_pixel=o["bits_per_pixel"],
        read=o["read"],
    )


def bill_record(row: Any) -> dict[str, Any]:
    """The JSON object of ``procure bill`` for one evaluated row."""
    out = {key: row[col] for key, col in BILL_KEYS.items()}
    out.update({key: row[key] for key in BILL_EXTRA_KEYS})
    return jsonable(out)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="procure")
def app() -> None:
    """procure: which robot-learning hours to buy next, once moving them is paid for."""


def _plot_option(what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return click.option(
        "--plot", type=click.Path(path_type=Path), default=None, help=f"Write {what} to FILE (.png or .svg)."
    )


@app.command("bill")
@_ledger_option
@_format_options
@_plot_option("busy against cores")
@_json_out_option
def bill_command(ledger_dir: Path | None, json_out: str | None, plot: Path | None, **options: Any) -> None:
    """One format's pipeline and the bill of one recorded hour."""
    if plot is not None:
        check_plot_path(plot)
    ledger = load_ledger(ledger_dir)
    row, cluster = _variant_from(ledger, options)
    if plot is not None:
        from .plots import busy_vs_cores, save

        save(busy_vs_cores(row), plot)
    if json_out is not None:
        _emit_json(bill_record(row), json_out)
    else:
        render.print_bill(console, row, cluster)


@app.command("simulate")
@_ledger_option
@_format_options
@click.option("--frames", type=int, default=DEFAULT_FRAMES, show_default=True, help="Frames simulated.")
@click.option(
    "--buffer", type=int, default=DEFAULT_BUFFER, show_default=True, help="Buffer before the accelerator [frames]."
)
@click.option(
    "--warmup", type=float, default=DEFAULT_WARMUP, show_default=True, help="Share of frames left out as warm-up."
)
@click.option(
    "--decode-cv", type=float, default=0.0, show_default=True, help="Coefficient of variation of decode times."
)
@click.option("--train-cv", type=float, default=0.0, show_default=True, help="Coefficient of variation of train times.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the jitter.")
@click.option(
    "--plot", type=click.Path(path_type=Path), default=None, help="Write the timeline to FILE (.png or .svg)."
)
@_json_out_option
def simulate_command(
    ledger_dir: Path | None,
    json_out: str | None,
    frames: int,
    buffer: int,
    warmup: float,
    decode_cv: float,
    train_cv: float,
    seed: int,
    plot: Path | None,
    **options: Any,
) -> None:
    """Run the pipeline as a queue and put its busy fraction beside the closed form's."""
    if plot is not None:
        check_plot_path(plot)
    ledger = load_ledger(ledger_dir)
    row, cluster = _variant_from(ledger, options)
    result = simulate(
        row, frames=frames, buffer=buffer, warmup=warmup, decode_cv=decode_cv, train_cv=train_cv, seed=seed
    )
    if plot is not None:
        from .plots import save, timeline

        save(timeline(result, busy_formula=row["busy"]), plot)
    if json_out is not None:
        out = bill_record(row)
        out.update(
            jsonable(
                {
                    "busy_simulated": result.busy,
                    "busy_formula": row["busy"],
                    "throughput_fps": result.throughput_fps,
                    "mean_buffer": result.mean_buffer,
                    "decoder_utilisation": float(result.decoder_utilisation.mean())
                    if len(result.decoder_utilisation)
                    else None,
                    "stage_simulated": result.stage,
                    "frames": result.frames,
                    "warmup_frames": result.warmup_frames,
                    "buffer": result.buffer,
                }
            )
        )
        _emit_json(out, json_out)
        if json_out == "-":
            return
    else:
        render.print_simulation(console, row, cluster, result)
    if plot is not None:
        console.print(f"Timeline written to {plot}")


def _pairs(option: str, values: tuple[str, ...]) -> dict[str, float]:
    """Parse repeated ``NAME=NUMBER`` options."""
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


@app.command("solve")
@_ledger_option
@click.option("--budget", type=float, default=None, help="Dollars to spend, all in [$].")
@click.option("--target", type=float, default=None, help="Value to reach at least cost [own-hour equivalents].")
@click.option("--held", multiple=True, metavar="SOURCE=HOURS", help="Hours already held (repeatable).")
@click.option(
    "--max-share",
    multiple=True,
    metavar="KIND=SHARE",
    help="At most this share of effective hours from a source or kind (repeatable).",
)
@click.option(
    "--tolerance",
    type=float,
    default=DEFAULT_TOLERANCE,
    show_default=True,
    help="Relative gap between the upper bound and the plan's true value.",
)
@click.option("--time-limit", type=float, default=DEFAULT_TIME_LIMIT, show_default=True, help="Seconds allowed.")
@click.option("--byte-price-x", type=float, default=None, help="Multiplier on the byte price [1].")
@click.option(
    "--csv",
    "csv_out",
    type=click.Path(path_type=Path),
    default=None,
    help="Write the plan's rows to FILE (atomically).",
)
@click.option(
    "--ranging", is_flag=True, help="Also find the byte-price multipliers over which the plan keeps its shape."
)
@_plot_option("the value curves with the plan's points and the λ line")
@_json_out_option
def solve_command(
    ledger_dir: Path | None,
    budget: float | None,
    target: float | None,
    held: tuple[str, ...],
    max_share: tuple[str, ...],
    tolerance: float,
    time_limit: float,
    byte_price_x: float | None,
    csv_out: Path | None,
    ranging: bool,
    plot: Path | None,
    json_out: str | None,
) -> None:
    """What to buy next: the plan of most value for a budget (or least money for a value)."""
    if plot is not None:
        check_plot_path(plot)
    if ranging and budget is None:
        raise click.UsageError("--ranging needs --budget")
    ledger = load_ledger(ledger_dir)
    problem = from_ledger(
        ledger,
        budget=budget,
        target=target,
        held=_pairs("--held", held) or None,
        max_share=_pairs("--max-share", max_share) or None,
    )
    if byte_price_x is not None:
        problem = problem.with_byte_price_x(byte_price_x)
    from ..program.solve import solve_problem

    plan = solve_problem(problem, tolerance=tolerance, time_limit=time_limit)
    span = None
    if ranging:
        from ..analyses.sensitivity import byte_price_range

        span = byte_price_range(problem)
    if plot is not None:
        from .plots import save, value_curves

        save(value_curves(plan, problem), plot)
    if csv_out is not None:
        _write_csv(plan.sources, csv_out)
    if json_out is not None:
        out = plan.to_dict()
        if span is not None:
            out["byte_price_range"] = list(span)
        _emit_json(out, json_out)
        if json_out == "-":
            return
    else:
        render.print_plan(console, plan)
        if span is not None:
            console.print(
                f"The plan keeps its shape (the same sources bought, the same constraints binding) for byte "
                f"prices from {span[0]:.4g} to {span[1]:.4g} times the ledger's."
            )
    for path, what in ((csv_out, "Plan"), (plot, "Plot")):
        if path is not None:
            console.print(f"{what} written to {path}")


@app.command("rank")
@_ledger_option
@click.option(
    "--by",
    type=click.Choice(RANK_CHOICES),
    default="value",
    show_default=True,
    help="volume: GB an hour; value: value per $ of the next hour (with --budget: value in the plan); "
    "share: transport's share of the price; price: purchase price.",
)
@click.option("--budget", type=float, default=None, help="Add each source's hours, GB and value in this budget's plan.")
@_plot_option("the bill split per source (bytes, cores, idle)")
@_json_out_option
def rank_command(ledger_dir: Path | None, by: str, budget: float | None, plot: Path | None,
                 json_out: str | None) -> None:  # fmt: skip
    """How sources rank by volume, value, transport share or price."""
    if plot is not None:
        check_plot_path(plot)
    from ..analyses.rank import rank
    from ..ledger import transport

    ledger = load_ledger(ledger_dir)
    table = rank(ledger, by, budget=budget)
    if plot is not None:
        from .plots import bill_split, save

        save(bill_split(transport(ledger.sources, ledger.cluster)), plot)
    if json_out is not None:
        _emit_json({"by": by, "rows": table.to_dict("records")}, json_out)
        if json_out == "-":
            return
    else:
        render.print_rank(console, table, by)
    if plot is not None:
        console.print(f"Plot written to {plot}")


@app.command("sensitivity")
@_ledger_option
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
@click.option("--budget", type=float, default=100_000.0, show_default=True, help="Dollars to spend [$].")
@click.option("--tolerance", type=float, default=DEFAULT_TOLERANCE, show_default=True)
@click.option("--csv", "csv_out", type=click.Path(path_type=Path), default=None, help="Write the table to FILE.")
@_plot_option("hours per source against the input")
@_json_out_option
def sensitivity_command(
    ledger_dir: Path | None,
    byte_range: tuple[float, float] | None,
    vary: tuple[str, float, float] | None,
    steps: int,
    budget: float,
    tolerance: float,
    csv_out: Path | None,
    plot: Path | None,
    json_out: str | None,
) -> None:
    """How the plan and the bill move with byte prices (or another input)."""
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
    if steps < 2:
        raise click.BadParameter(f"{steps} is invalid: must be ≥ 2", param_hint="'--steps'")
    if plot is not None:
        check_plot_path(plot)
    from rich.progress import Progress

    from ..analyses.sensitivity import sweep

    ledger = load_ledger(ledger_dir)
    show = json_out != "-" and sys.stderr.isatty()
    with Progress(console=Console(stderr=True), disable=not show, transient=True) as bar:
        task = bar.add_task(f"solving {steps} plans", total=steps)
        table = sweep(ledger, parameter, lo, hi, steps, budget=budget, tolerance=tolerance,
                      progress=lambda done, _total: bar.update(task, completed=done))  # fmt: skip
    if plot is not None:
        from .plots import save, sensitivity_hours

        save(sensitivity_hours(table), plot)
    if csv_out is not None:
        _write_csv(table, csv_out)
    if json_out is not None:
        _emit_json({"parameter": parameter, "rows": table.to_dict("records")}, json_out)
        if json_out == "-":
            return
    else:
        render.print_sweep(console, table, parameter, budget)
    for path, what in ((csv_out, "Table"), (plot, "Plot")):
        if path is not None:
            console.print(f"{what} written to {path}")


#: Set this environment variable to see the traceback of an internal error.
DEBUG_VARIABLE = "PROCURE_TRACEBACK"


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit code.

    0 success; 2 bad input, a usage error, or a request the program cannot meet (one line on
    standard error); 1 an internal error (one line; the traceback with ``PROCURE_TRACEBACK=1``);
    130 interrupted.
    """
    try:
        app.main(args=argv, prog_name="procure", standalone_mode=False)
    except ProcureError as exc:
        click.echo(f"procure: error: {exc}", err=True)
        return 2
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("procure: aborted", err=True)
        return 130
    except click.ClickException as exc:
        click.echo(f"procure: error: {exc.format_message()}", err=True)
        return exc.exit_code or 2
    except OSError as exc:
        click.echo(f"procure: error: {exc}", err=True)
        return 2
    except Exception as exc:
        if os.environ.get(DEBUG_VARIABLE):
            raise
        first = str(exc).splitlines()[0] if str(exc) else ""
        click.echo(
            f"procure: internal error: {type(exc).__name__}: {first} (run with {DEBUG_VARIABLE}=1 for the traceback)",
            err=True,
        )
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
