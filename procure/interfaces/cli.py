"""The command line: ``procure bill | simulate | solve | rank | sensitivity``.

The only module that prints (its tables are in :mod:`procure.interfaces.render`). Library
errors (:class:`procure.ProcureError`) and usage errors become one line on standard error and
exit code 2; ``--json`` prints one JSON object. Each command imports what it uses: the solver
only for the commands that solve, matplotlib only for ``--plot``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.text import Text

from ..defaults import (
    DEFAULT_BUDGET,
    DEFAULT_BUFFER,
    DEFAULT_FRAMES,
    DEFAULT_RISK_ALPHA,
    DEFAULT_RISK_WEIGHT,
    DEFAULT_TIME_LIMIT,
    DEFAULT_TOLERANCE,
    DEFAULT_WARMUP,
    MAX_STEPS,
    RANK_CHOICES,
    READ_CHOICES,
    SWEEP_TOLERANCE,
    TABLE_COLUMNS,
    TABLE_ROWS,
    VARY_PARAMETERS,
)
from ..errors import ProcureError
from ..output import check_output_path, check_plot_path, jsonable, write_all

if TYPE_CHECKING:
    from ..ledger import Ledger

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


class Outputs:
    """The files a command writes: each path checked before any work starts, and all of them
    written together or none (:func:`procure.output.write_all`).

    ``--json`` with no file prints to standard output, after the files are written; a command
    that prints JSON there prints nothing else on it.
    """

    def __init__(self, *, json_out: str | None = None, csv_out: Path | None = None, plot: Path | None = None):
        self.json_out, self.csv_out, self.plot = json_out, csv_out, plot
        if json_out not in (None, "-"):
            check_output_path(json_out, "json")
        if csv_out is not None:
            check_output_path(csv_out, "csv")
        if plot is not None:
            check_plot_path(plot)
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
        """A table for the ``--csv`` file."""
        if self.csv_out is not None:
            self._files.append((self.csv_out, lambda tmp: frame.to_csv(tmp, index=False), "Table"))

    def figure(self, make: Callable[[], Any]) -> None:
        """A figure for the ``--plot`` file, drawn only when one is asked for."""
        if self.plot is not None:
            from .plots import write_figure

            fig = make()
            self._files.append((self.plot, lambda tmp: write_figure(fig, tmp), "Plot"))

    def commit(self) -> None:
        """Write every file (all or none), then what goes to standard output."""
        write_all([(path, write) for path, write, _what in self._files])
        if self._stdout is not None:
            click.echo(self._stdout)
        elif self.tables:
            for path, _write, what in self._files:
                console.print(Text(f"{what} written to {path}"))


@contextlib.contextmanager
def _progress(out: Outputs, what: str) -> Iterator[Callable[[int, int], None]]:
    """A progress bar with the time left on standard error, when it is a terminal and the
    tables are printed; yields ``tick(done, total)``."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    show = out.tables and sys.stderr.isatty()
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("left"),
               TimeRemainingColumn())  # fmt: skip
    with Progress(*columns, console=Console(stderr=True), disable=not show, transient=True) as bar:
        task = bar.add_task(what, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)


def _plots() -> Any:
    """The plotting module, loaded (with matplotlib) only when a plot is asked for."""
    from . import plots

    return plots


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


def _variant_from(ledger: Ledger, o: dict[str, Any]) -> tuple[Any, Any]:
    from ..ledger import cluster_with, variant

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
        gop=o["gop"],
        core_fps_1080p=o["core_fps_1080p"],
    )


def bill_record(row: Any) -> dict[str, Any]:
    """The JSON object of ``procure bill`` for one evaluated row."""
    out = {key: row[col] for key, col in BILL_KEYS.items()}
    out.update({key: row[key] for key in BILL_EXTRA_KEYS})
    return jsonable(out)


class Interrupted(Exception):
    """Ctrl-C during a command: carried past click, which would print a blank line for it."""


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise Interrupted from None


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
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
    from ..ledger import load_ledger
    from . import render

    out = Outputs(json_out=json_out, plot=plot)
    ledger = load_ledger(ledger_dir)
    row, cluster = _variant_from(ledger, options)
    out.figure(lambda: _plots().busy_vs_cores(row))
    out.json(bill_record(row))
    if out.tables and json_out is None:
        render.print_bill(console, row, cluster)
    out.commit()


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
    from ..ledger import load_ledger
    from ..pipeline.queue import simulate
    from . import render

    out = Outputs(json_out=json_out, plot=plot)
    ledger = load_ledger(ledger_dir)
    row, cluster = _variant_from(ledger, options)
    result = simulate(
        row, frames=frames, buffer=buffer, warmup=warmup, decode_cv=decode_cv, train_cv=train_cv, seed=seed
    )
    out.figure(lambda: _plots().timeline(result, busy_formula=row["busy"]))
    if json_out is not None:
        record = bill_record(row)
        record.update(
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
                    "note": result.note,
                    "warmup_frames": result.warmup_frames,
                    "buffer": result.buffer,
                }
            )
        )
        out.json(record)
    else:
        render.print_simulation(console, row, cluster, result)
    out.commit()


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
@click.option("--all", "every_row", is_flag=True, help=f"Print every source, not the first {TABLE_ROWS}.")
@click.option(
    "--scenarios",
    "scenarios_file",
    type=click.Path(path_type=Path),
    default=None,
    help="Scenarios of the uncertain columns (CSV). Default: the ledger's scenarios.csv, if any.",
)
@click.option("--samples", type=int, default=None, help="Draw this many scenarios from sources.csv's ranges.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of --samples.")
@click.option(
    "--risk-alpha",
    type=float,
    default=None,
    help=f"CVaR share: the worst share of scenarios whose mean is the CVaR [default {DEFAULT_RISK_ALPHA:g}].",
)
@click.option(
    "--risk-weight",
    type=float,
    default=None,
    help=f"Weight of the CVaR in the objective, 0 to 1 [default {DEFAULT_RISK_WEIGHT:g}].",
)
@click.option(
    "--recourse-price-x",
    type=float,
    default=None,
    help="Let each scenario buy more later at this multiple (≥ 1) of its price.",
)
@click.option("--no-evpi", is_flag=True, help="Skip EVPI and VSS (one solve per scenario more).")
@click.option("--scheduler", default=None, metavar="ADDRESS", help="A Dask scheduler for the per-scenario solves.")
@click.option("--workers", type=int, default=None, help="Worker processes of a local Dask cluster (1: none).")
@_plot_option("the value curves with the plan's points and the λ line (with scenarios: the value distribution)")
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
    every_row: bool,
    scenarios_file: Path | None,
    samples: int | None,
    seed: int,
    risk_alpha: float | None,
    risk_weight: float | None,
    recourse_price_x: float | None,
    no_evpi: bool,
    scheduler: str | None,
    workers: int | None,
    plot: Path | None,
    json_out: str | None,
) -> None:
    """What to buy next: the plan of most value for a budget (or least money for a value).

    With scenarios (a scenarios file, --samples, or the ledger's scenarios.csv), the plan of
    most expected (or risk-adjusted) value over them, with EVPI and VSS.
    """
    from ..ledger import load_ledger
    from ..ledger.scenarios import ledger_scenarios
    from ..program import from_ledger
    from . import render

    out = Outputs(json_out=json_out, csv_out=csv_out, plot=plot)
    if ranging and budget is None:
        raise click.UsageError("--ranging needs --budget")
    ledger = load_ledger(ledger_dir)
    scenarios = ledger_scenarios(ledger, scenarios_file, samples=samples, seed=seed)
    uncertain = {"--risk-alpha": risk_alpha, "--risk-weight": risk_weight, "--recourse-price-x": recourse_price_x,
                 "--scheduler": scheduler, "--workers": workers}  # fmt: skip
    if scenarios is None:
        given = [name for name, v in uncertain.items() if v is not None] + (["--no-evpi"] if no_evpi else [])
        if given:
            raise click.UsageError(f"{given[0]} needs scenarios: --scenarios FILE, --samples N, or scenarios.csv")
    elif ranging:
        raise click.UsageError("--ranging is for a plan without scenarios")
    problem = from_ledger(
        ledger,
        budget=budget,
        target=target,
        held=_pairs("--held", held) or None,
        max_share=_pairs("--max-share", max_share) or None,
    )
    if byte_price_x is not None:
        problem = problem.with_byte_price_x(byte_price_x)
    if scenarios is not None:
        _solve_scenarios(out, problem, scenarios, tolerance=tolerance, time_limit=time_limit, every_row=every_row,
                         information=not no_evpi, risk_alpha=risk_alpha, risk_weight=risk_weight,
                         recourse_price_x=recourse_price_x, scheduler=scheduler, workers=workers)  # fmt: skip
        return
    from ..program.solve import solve_problem

    plan = solve_problem(problem, tolerance=tolerance, time_limit=time_limit)
    span = None
    if ranging:
        from ..analyses.sensitivity import RANGING_LIMITS, byte_price_range

        span = byte_price_range(problem)
    out.figure(lambda: _plots().value_curves(plan, problem))
    out.csv(plan.sources)
    if json_out is not None:
        record = plan.to_dict()
        if span is not None:
            record["byte_price_range"] = list(span)
            record["byte_price_range_at_search_limit"] = [span[0] <= RANGING_LIMITS[0], span[1] >= RANGING_LIMITS[1]]
        out.json(record)
    else:
        render.print_plan(console, plan, every_row=every_row)
        if span is not None:
            render.print_ranging(console, span, RANGING_LIMITS)
    out.commit()


def _solve_scenarios(out: Outputs, problem: Any, scenarios: Any, *, every_row: bool, risk_alpha: float | None,
                     risk_weight: float | None, **options: Any) -> None:  # fmt: skip
    """``procure solve`` with scenarios: the plan, its value in each scenario, EVPI and VSS."""
    from ..analyses.uncertainty import solve_uncertain
    from ..program.scenarios import scenario_problem
    from . import render

    sp = scenario_problem(
        problem,
        scenarios,
        risk_alpha=DEFAULT_RISK_ALPHA if risk_alpha is None else risk_alpha,
        risk_weight=DEFAULT_RISK_WEIGHT if risk_weight is None else risk_weight,
        recourse_price_x=options.pop("recourse_price_x"),
    )
    with _progress(out, f"solving {sp.count} scenarios one by one (EVPI)") as tick:
        result = solve_uncertain(sp, progress=tick, **options)
    out.figure(lambda: _plots().scenario_values(result))
    out.csv(result.plan.sources)
    if out.json_out is not None:
        out.json(result.to_dict())
    else:
        render.print_plan(console, result.plan, every_row=every_row)
        render.print_scenarios(console, result, every_row=every_row)
    out.commit()


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
@click.option("--all", "every_row", is_flag=True, help=f"Print every source, not the first {TABLE_ROWS}.")
@_plot_option("the bill split per source (bytes, cores, idle)")
@_json_out_option
def rank_command(ledger_dir: Path | None, by: str, budget: float | None, every_row: bool, plot: Path | None,
                 json_out: str | None) -> None:  # fmt: skip
    """How sources rank by volume, value, transport share or price."""
    from ..ledger import load_ledger
    from . import render

    out = Outputs(json_out=json_out, plot=plot)
    from ..analyses.rank import rank
    from ..ledger import transport

    ledger = load_ledger(ledger_dir)
    table = rank(ledger, by, budget=budget)
    out.figure(lambda: _plots().bill_split(transport(ledger.sources, ledger.cluster)))
    if json_out is not None:
        out.json({"by": by, "rows": table.to_dict("records")})
    else:
        render.print_rank(console, table, by, every_row=every_row)
    out.commit()


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
@click.option("--budget", type=float, default=DEFAULT_BUDGET, show_default=True, help="Dollars to spend [$].")
@click.option(
    "--tolerance",
    type=float,
    default=SWEEP_TOLERANCE,
    show_default=True,
    help="Of each plan: tighter than solve's, so that hours do not move between points by more than prices do.",
)
@click.option("--csv", "csv_out", type=click.Path(path_type=Path), default=None, help="Write the table to FILE.")
@click.option("--all", "every_row", is_flag=True, help=f"A column for every source, not the first {TABLE_COLUMNS}.")
@click.option("--scheduler", default=None, metavar="ADDRESS", help="A Dask scheduler to solve the points on.")
@click.option("--workers", type=int, default=None, help="Worker processes of a local Dask cluster (1: none).")
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
    every_row: bool,
    scheduler: str | None,
    workers: int | None,
    plot: Path | None,
    json_out: str | None,
) -> None:
    """How the plan and the bill move with byte prices (or another input)."""
    from ..ledger import load_ledger
    from . import render

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
    if not 2 <= steps <= MAX_STEPS:
        raise click.BadParameter(f"{steps} is invalid: must be ≥ 2 and ≤ {MAX_STEPS:,}", param_hint="'--steps'")
    out = Outputs(json_out=json_out, csv_out=csv_out, plot=plot)
    from ..analyses.sensitivity import sweep

    ledger = load_ledger(ledger_dir)
    with _progress(out, f"solving {steps} plans") as tick:
        table = sweep(ledger, parameter, lo, hi, steps, budget=budget, tolerance=tolerance, progress=tick,
                      scheduler=scheduler, workers=workers)  # fmt: skip
    out.figure(lambda: _plots().sensitivity_hours(table))
    out.csv(table)
    if json_out is not None:
        out.json({"parameter": parameter, "rows": table.to_dict("records")})
    else:
        render.print_sweep(console, table, parameter, budget, every_row=every_row)
    out.commit()


@app.command("app")
@_ledger_option
@click.option(
    "--host", default="127.0.0.1", show_default=True, help="Address to listen on (this machine only by default)."
)
@click.option("--port", type=int, default=8000, show_default=True, help="Port to listen on.")
def app_command(ledger_dir: Path | None, host: str, port: int) -> None:
    """The lesson's widget and the planner in a browser: pipeline, plan, byte prices."""
    from .app import serve

    if not 0 < port < 65536:
        raise click.BadParameter(f"{port} is invalid: must be between 1 and 65535", param_hint="'--port'")
    try:
        serve(ledger_dir, host, port, announce=lambda line: console.print(Text(line)))
    except ImportError as exc:
        raise click.ClickException(str(exc)) from None


@app.command("calibrate")
@click.argument("videos", nargs=-1, type=click.Path(path_type=Path))
@click.option("--repeat", type=int, default=5, show_default=True, help="Timed decoding runs of each file.")
@click.option("--ledger", "ledger_dir", type=click.Path(path_type=Path), default=None,
              help="With --source and --write: the ledger whose row takes the measured columns.")  # fmt: skip
@click.option("--source", default=None, help="The ledger row that takes the measured columns.")
@click.option("--write", is_flag=True, help="Write the measured format columns into that row (atomically).")
@_json_out_option
def calibrate_command(
    videos: tuple[Path, ...], repeat: int, ledger_dir: Path | None, source: str | None, write: bool,
    json_out: str | None,
) -> None:  # fmt: skip
    """Measure your own video: codec, size, bits per pixel, keyframe interval, decode rate."""
    from ..pipeline.calibrate import LEDGER_COLUMNS, calibrate_file, require_av, summary
    from . import render

    if not videos:
        raise click.UsageError("give one or more VIDEO files")
    if write and (ledger_dir is None or source is None):
        raise click.UsageError("--write needs --ledger DIR and --source NAME")
    out = Outputs(json_out=json_out)
    require_av()
    show = json_out != "-" and sys.stderr.isatty() and len(videos) > 1
    from rich.progress import Progress

    files = []
    with Progress(console=Console(stderr=True), disable=not show, transient=True) as bar:
        task = bar.add_task(f"calibrating {len(videos)} files", total=len(videos))
        for video in videos:
            files.append(calibrate_file(video, repeat=repeat))
            bar.update(task, advance=1)
    total = summary(files)
    out.json({"files": [f.to_dict() for f in files], "summary": total})
    if json_out is None:
        render.print_calibration(console, files, total)
    if write:
        from ..ledger.edit import set_cells

        set_cells(ledger_dir, str(source), {k: total[k] for k in LEDGER_COLUMNS})  # type: ignore[arg-type]
        if out.tables:
            console.print(Text(f"Wrote {', '.join(LEDGER_COLUMNS)} into {source!r} of {ledger_dir}/sources.csv"))
    out.commit()


@app.group("import")
def import_group() -> None:
    """Import a dataset as a ledger row."""


@import_group.command("lerobot")
@click.argument("dataset", type=click.Path(path_type=Path))
@click.option("--source", default=None, help="The row's name. Default: the dataset folder's name.")
@click.option("--kind", default="own", show_default=True, help="The row's kind.")
@click.option("--price", type=float, default=None, help="Price of an hour [$/h]. Default 0 (held already).")
@click.option(
    "--saturation-hours",
    type=float,
    default=None,
    help="The row's value scale k [effective h]: your estimate; --append needs it (the curve is log).",
)
@_ledger_option
@click.option("--append", is_flag=True, help="Add the row to the ledger's sources.csv (atomically).")
@_json_out_option
def import_lerobot_command(
    dataset: Path, source: str | None, kind: str, price: float | None, saturation_hours: float | None,
    ledger_dir: Path | None, append: bool, json_out: str | None,
) -> None:  # fmt: skip
    """A LeRobot dataset (meta/info.json, v2.0, v2.1 or v3.0) as a ledger row."""
    from ..ledger.lerobot import import_lerobot
    from . import render

    if append and ledger_dir is None:
        raise click.UsageError("--append needs --ledger DIR")
    if append and saturation_hours is None:
        raise click.UsageError(
            "--append needs --saturation-hours H: the row's value scale, which a dataset cannot tell (docs/program.md)"
        )
    out = Outputs(json_out=json_out)
    row = import_lerobot(dataset, source=source, kind=kind, price=price)
    if saturation_hours is not None:
        from ..ledger.load import check_source_value

        row["saturation_hours"] = check_source_value("saturation_hours", saturation_hours, "--saturation-hours")
    out.json(row)
    if json_out is None:
        render.print_row(console, row)
    if append:
        from ..ledger.edit import append_row

        append_row(ledger_dir, row)  # type: ignore[arg-type]
        if out.tables:
            console.print(Text(f"Added {row['source']!r} to {ledger_dir}/sources.csv"))
    out.commit()


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
    except (click.exceptions.Abort, KeyboardInterrupt, Interrupted):
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
