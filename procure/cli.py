"""The command line: ``procure bill | simulate | solve | rank | sensitivity``.

The only module that prints. Library errors (:class:`procure.ProcureError`) and usage errors
become one line on standard error and exit code 2; ``--json`` prints one JSON object.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from .errors import ProcureError
from .ledger import Ledger, load_ledger
from .output import jsonable, write_atomic
from .plan import Plan
from .plots import check_path as check_plot_path
from .problem import from_ledger
from .program import DEFAULT_TIME_LIMIT, DEFAULT_TOLERANCE, solve
from .scenario import READ_CHOICES, cluster_with, scenario
from .simulate import DEFAULT_BUFFER, DEFAULT_FRAMES, DEFAULT_WARMUP, simulate

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


def _json_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of tables.")(f)


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


def _scenario_from(ledger: Ledger, o: dict[str, Any]) -> tuple[Any, Any]:
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
    return scenario(
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


def _fmt(value: float, digits: int = 1) -> str:
    if value == float("inf"):
        return "∞"
    return f"{value:,.{digits}f}"


def _pct(value: float) -> str:
    return "—" if value != value else f"{100 * value:.1f} %"


def bill_record(row: Any) -> dict[str, Any]:
    """The JSON object of ``procure bill`` for one evaluated row."""
    out = {key: row[col] for key, col in BILL_KEYS.items()}
    out.update({key: row[key] for key in BILL_EXTRA_KEYS})
    return jsonable(out)


def _title(row: Any, cluster: Any) -> str:
    return (
        f"{row['source']}: {row['cameras']:g} × {row['width']:g}×{row['height']:g} at "
        f"{row['fps']:g} fps, {row['stored']}, read in {row['read']} — model {cluster.model}, "
        f"{cluster.accelerator}, {cluster.cores_per_accelerator:g} cores"
        f"{', NVDEC' if cluster.nvdec else ''}"
    )


def _print_bill_header(row: Any, cluster: Any) -> None:
    console.print(_title(row, cluster))


def _print_bill(row: Any, cluster: Any) -> None:
    stages = Table(title=_title(row, cluster), title_justify="left")
    stages.add_column("stage")
    stages.add_column("frames/s", justify="right")
    stages.add_column("", justify="left")
    binding = row["stage"]
    for name, value, note in (
        ("accelerator (demand)", row["demand_fps"], f"{row['tokens_per_frame']:g} tokens a frame"),
        ("read", row["read_fps"], f"{row['bytes_per_frame']:,.0f} B a frame"),
        ("decode", row["decode_fps"], f"g = {row['g']:g} frames decoded per frame used"),
    ):
        mark = " ← binds" if name.split()[0] == binding else ""
        stages.add_row(name, _fmt(value), note + mark)
    console.print(stages)
    facts = Table(show_header=False, box=None)
    facts.add_column(justify="left")
    facts.add_column(justify="right")
    facts.add_row("busy", _pct(row["busy"]))
    facts.add_row("cores needed (Little's law)", _fmt(row["cores_needed"]))
    facts.add_row("pixels decoded per token π", _fmt(row["pixels_per_token"], 0))
    facts.add_row("GB stored / decoded per hour", f"{row['gb_per_hour']:,.2f} / {row['gb_decoded_per_hour']:,.0f}")
    console.print(facts)
    bill = Table(title="Bill of one recorded hour", title_justify="left")
    bill.add_column("term")
    bill.add_column("$", justify="right")
    bill.add_column("share of bill", justify="right")
    total = row["bill_usd"]
    for name, key in (("bytes", "bytes_usd"), ("cores", "cores_usd"), ("idle accelerator", "idle_usd")):
        bill.add_row(name, f"{row[key]:,.2f}", _pct(row[key] / total) if total > 0 else "—")
    bill.add_row("[bold]bill[/bold]", f"[bold]{total:,.2f}[/bold]", "")
    console.print(bill)
    console.print(f"Price ${row['price_usd_per_hour']:,.2f}/h: moving takes {_pct(row['share'])} of it.")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="procure")
def app() -> None:
    """procure: which robot-learning hours to buy next, once moving them is paid for."""


@app.command("bill")
@_ledger_option
@_format_options
@_json_option
def bill_command(ledger_dir: Path | None, as_json: bool, **options: Any) -> None:
    """One format's pipeline and the bill of one recorded hour."""
    ledger = load_ledger(ledger_dir)
    row, cluster = _scenario_from(ledger, options)
    if as_json:
        click.echo(json.dumps(bill_record(row)))
    else:
        _print_bill(row, cluster)


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
@_json_option
def simulate_command(
    ledger_dir: Path | None,
    as_json: bool,
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
    row, cluster = _scenario_from(ledger, options)
    result = simulate(
        row, frames=frames, buffer=buffer, warmup=warmup, decode_cv=decode_cv, train_cv=train_cv, seed=seed
    )
    if plot is not None:
        from .plots import save, timeline

        save(timeline(result, busy_formula=row["busy"]), plot)
    if as_json:
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
        click.echo(json.dumps(out))
        return
    _print_bill_header(row, cluster)
    table = Table(
        title=f"Queue of {result.frames:,} frames, buffer {result.buffer}, first {result.warmup_frames:,} left out",
        title_justify="left",
    )
    table.add_column("")
    table.add_column("simulated", justify="right")
    table.add_column("closed form", justify="right")
    table.add_row("busy", _pct(result.busy), _pct(row["busy"]))
    table.add_row(
        "frames/s to the accelerator", _fmt(result.throughput_fps), _fmt(min(row["demand_fps"], row["supply_fps"]))
    )
    table.add_row("binding stage", result.stage, str(row["stage"]))
    util = result.decoder_utilisation
    table.add_row("decoders busy (mean)", _pct(float(util.mean())) if len(util) else "—", "")
    table.add_row("frames in the buffer (mean)", f"{result.mean_buffer:.1f}", "")
    console.print(table)
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


def _money(x: float) -> str:
    return f"${x:,.2f}"


def _print_plan(plan: Plan) -> None:
    s = plan.sources
    if plan.mode == "budget":
        head = f"Budget {_money(plan.budget)}: what to buy"
    else:
        head = f"Target value {plan.target:,.1f}: the least money that reaches it"
    table = Table(title=head, title_justify="left")
    for col, just in (("source", "left"), ("buy h", "right"), ("held h", "right"), ("purchase $", "right"),
                      ("moving $", "right"), ("effective h", "right"), ("value", "right"),
                      ("value per next $", "right"), ("", "left")):  # fmt: skip
        table.add_column(col, justify=just)
    for _, r in s.iterrows():
        table.add_row(
            r["source"], _fmt(r["hours"]), _fmt(r["held_hours"]), _fmt(r["purchase_usd"], 2),
            _fmt(r["transport_usd"], 2), _fmt(r["effective_hours"]), _fmt(r["value"], 1),
            f"{r['marginal_value_per_usd']:.3g}", {"cap": "all available", "zero": "", "between": ""}[r["position"]],
        )  # fmt: skip
    table.add_row(
        "[bold]total[/bold]", _fmt(s["hours"].sum()), _fmt(s["held_hours"].sum()), _fmt(plan.purchase_usd, 2),
        _fmt(plan.transport_usd, 2), _fmt(s["effective_hours"].sum()), _fmt(plan.value, 1), "", "",
    )  # fmt: skip
    console.print(table)
    share = plan.transport_usd / plan.spent_usd if plan.spent_usd > 0 else float("nan")
    console.print(
        f"All in: {_money(plan.spent_usd)} = purchase {_money(plan.purchase_usd)} + moving "
        f"{_money(plan.transport_usd)} ({_pct(share)} of the money goes to moving the hours)."
    )
    console.print(
        f"Value {plan.value:,.2f} own-hour equivalents; no plan is worth more than {plan.value_upper_bound:,.2f} "
        f"(gap {100 * plan.gap:.4f} %, certified within {100 * plan.tolerance:g} %)."
    )
    if plan.lambda_ > 0 and plan.lambda_ != float("inf"):
        between = s.loc[s["position"] == "between", "marginal_value_per_usd"]
        spread = float((between / plan.lambda_ - 1).abs().max()) if len(between) else 0.0
        console.print(
            f"λ = {plan.lambda_:.4g}: the next dollar buys {plan.lambda_:.4g} own-hour equivalents; one more "
            f"equivalent costs {_money(1 / plan.lambda_)}. Sources bought in part return the same per dollar, "
            f"within {100 * spread:.2f} % (a smaller --tolerance narrows it)."
        )
    elif plan.mode == "budget":
        console.print("λ = 0: the budget does not bind; more money buys nothing more (see the capacities).")
    caps = Table(title="Capacities", title_justify="left")
    for col in ("capacity", "used", "limit", "binds", "one more unit is worth"):
        caps.add_column(col, justify="left" if col in ("capacity", "binds") else "right")
    for _, c in plan.capacities.iterrows():
        worth = f"{_money(c['shadow_usd'])} ({c['shadow_price']:.4g} value)" if c["binding"] else "—"
        caps.add_row(f"{c['capacity']} [{c['unit']}]", _fmt(c["used"]), _fmt(c["limit"]),
                     "binds" if c["binding"] else "", worth)  # fmt: skip
    console.print(caps)
    for note in plan.notes:
        console.print(f"note: {note}")


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
    json_out: str | None,
) -> None:
    """What to buy next: the plan of most value for a budget (or least money for a value)."""
    ledger = load_ledger(ledger_dir)
    cluster = cluster_with(ledger.cluster, byte_price_x=byte_price_x)
    problem = from_ledger(
        ledger,
        budget=budget,
        target=target,
        cluster=cluster,
        held=_pairs("--held", held) or None,
        max_share=_pairs("--max-share", max_share) or None,
    )
    plan = solve(problem, tolerance=tolerance, time_limit=time_limit)
    if csv_out is not None:
        _write_csv(plan.sources, csv_out)
    if json_out is not None:
        _emit_json(plan.to_dict(), json_out)
        if json_out == "-":
            return
    else:
        _print_plan(plan)
    if csv_out is not None:
        console.print(f"Plan written to {csv_out}")


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit code (0 ok, 2 bad input or usage)."""
    try:
        app.main(args=argv, prog_name="procure", standalone_mode=False)
    except ProcureError as exc:
        click.echo(f"procure: error: {exc}", err=True)
        return 2
    except click.exceptions.Abort:
        click.echo("procure: aborted", err=True)
        return 130
    except click.ClickException as exc:
        click.echo(f"procure: error: {exc.format_message()}", err=True)
        return exc.exit_code or 2
    except OSError as exc:
        click.echo(f"procure: error: {exc}", err=True)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
