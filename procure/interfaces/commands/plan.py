"""``procure solve``: what to buy next, with or without scenarios.

The command reads its options and hands them to :func:`procure.analyses.solving.prepare`,
the same rules :func:`procure.solve` follows; it prints what comes back.
"""

from __future__ import annotations

from pathlib import Path

import click

from ...defaults import DEFAULT_RISK_ALPHA, DEFAULT_RISK_WEIGHT, DEFAULT_TIME_LIMIT, DEFAULT_TOLERANCE, TABLE_ROWS
from ...errors import InputError
from ..options import (
    SCHEDULER_HELP,
    TIME_LIMIT_HELP,
    WORKERS_HELP,
    FieldNumber,
    Money,
    check_number,
    format_list,
    json_out_option,
    ledger_option,
    pairs,
    plot_option,
)
from ..terminal import console, outputs, plots, progress

#: How the messages of a solve name its arguments: as this command's options.
OPTION_NAMES = {
    "budget": "--budget",
    "budget_or_target": "--budget B or --target V",
    "ranging": "--ranging",
    "risk_alpha": "--risk-alpha",
    "risk_weight": "--risk-weight",
    "recourse_price_x": "--recourse-price-x",
    "scheduler": "--scheduler",
    "time_limit": "--time-limit",
    "workers": "--workers",
    "evpi": "--no-evpi",
    "scenarios": "--scenarios FILE",
    "samples": "--samples N",
    "periods": "--periods FILE",
    "carry": "--no-carry",
    "formats": "--formats",
    "cores_choices": "--cores-choices",
    "rent": "--rent",
}


@click.command("solve")
@ledger_option
@click.option(
    "--budget", type=Money(), default=None, help="Dollars to spend, all in [$]: 100000, 100k, 1.5M or $100,000."
)
@click.option("--target", type=float, default=None, help="Value to reach at least cost [own-hour equivalents].")
@click.option(
    "--periods",
    "periods_file",
    type=click.Path(path_type=Path),
    default=None,
    help="Plan over periods (CSV; period_sources.csv beside it). Default: the ledger's periods.csv, if any.",
)
@click.option("--no-carry", is_flag=True, help="Over periods: money not spent in its period is lost.")
@click.option("--now", "now_only", is_flag=True, help="Over periods: print only what to buy in the first period.")
@click.option(
    "--formats",
    default=None,
    metavar="LIST",
    help="Formats every source may be kept in, for the plan to choose: recorded,model_side,decoded.",
)
@click.option(
    "--cores-choices",
    default=None,
    metavar="LIST",
    help="Cores per accelerator for the plan to choose one of: 8,16,24,32 or a range 8-32.",
)
@click.option("--rent", multiple=True, metavar="CAPACITY=UNITS",
              help="Most of a capacity the plan may rent at its price (repeatable): accelerator_hours, core_hours, "
                   "storage_gb.")  # fmt: skip
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
@click.option("--time-limit", type=float, default=DEFAULT_TIME_LIMIT, show_default=True, help=TIME_LIMIT_HELP)
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
@click.option("--seed", type=FieldNumber("seed", integer=True), default=0, show_default=True, help="Seed of --samples.")
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
@click.option("--scheduler", default=None, metavar="ADDRESS", help=SCHEDULER_HELP)
@click.option(
    "--workers",
    type=int,
    default=None,
    help=WORKERS_HELP,
)
@plot_option(
    "the value curves with the plan's points and the λ line (with scenarios: the value distribution; over "
    "periods: hours bought per period by source)"
)
@json_out_option
def solve_command(
    ledger_dir: Path | None,
    budget: float | None,
    target: float | None,
    periods_file: Path | None,
    no_carry: bool,
    now_only: bool,
    formats: str | None,
    cores_choices: str | None,
    rent: tuple[str, ...],
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
    most expected (or risk-adjusted) value over them, with EVPI and VSS. Over periods (a
    periods file or the ledger's periods.csv), what to buy in each period.
    """
    from ...analyses.solving import ScenarioPlan, prepare
    from ...ledger.load import ledger_files
    from .. import render

    out = outputs(json_out=json_out, csv_out=csv_out, plot=plot)
    from ...ledger.periods import PERIOD_SOURCES_FILE

    period_files = [periods_file, periods_file.parent / PERIOD_SOURCES_FILE] if periods_file else []
    out.reads([*ledger_files(ledger_dir), *([scenarios_file] if scenarios_file else []), *period_files])
    budget, target = check_number("budget", budget, "--budget"), check_number("target", target, "--target")
    held_hours, shares = pairs("--held", held, "held_hours"), pairs("--max-share", max_share, "max_share")
    from ...analyses.infra import parse_cores

    kept = format_list(formats, "--formats")
    counts = parse_cores(cores_choices, "--cores-choices") if cores_choices is not None else None
    request = prepare(ledger_dir, budget=budget, target=target, periods=periods_file, carry=not no_carry,
                      formats=kept, cores_choices=counts, rent=pairs("--rent", rent) or None,
                      held=held_hours,
                      max_share=shares, scenarios=scenarios_file, samples=samples, seed=seed,
                      risk_weight=risk_weight, risk_alpha=risk_alpha, recourse_price_x=recourse_price_x,
                      byte_price_x=byte_price_x, tolerance=tolerance, time_limit=time_limit, evpi=not no_evpi,
                      scheduler=scheduler, workers=workers, ranging=ranging, names=OPTION_NAMES)  # fmt: skip
    if now_only and request.periods is None:
        raise InputError("--now needs periods: --periods FILE or periods.csv in the ledger")
    with progress(out, request.task) as tick:
        solution = request.solve(tick)
    result = solution.result
    over = solution.plan.schedule is not None
    if isinstance(result, ScenarioPlan):
        out.figure(lambda: plots().scenario_values(result))
    elif over:
        out.figure(lambda: plots().schedule(solution.plan))
    else:
        out.figure(lambda: plots().value_curves(result, solution.problem))
    out.csv(solution.plan.schedule if solution.plan.schedule is not None else solution.plan.sources)
    if json_out is not None:
        out.json(solution.to_dict())
    if out.tables and now_only:
        render.print_now(console, solution.plan)
    elif out.tables:
        shown = result if isinstance(result, ScenarioPlan) else None
        render.print_plan(console, solution.plan, every_row=every_row, scenarios=shown)
        if over:
            render.print_schedule(console, solution.plan, every_row=every_row)
        if solution.plan.infrastructure is not None:
            render.print_infrastructure(console, solution.plan)
        if isinstance(result, ScenarioPlan):
            render.print_scenarios(console, result, every_row=every_row)
        if solution.byte_price_range is not None:
            from ...analyses.sensitivity import RANGING_LIMITS

            render.print_ranging(console, solution.byte_price_range, RANGING_LIMITS)
    out.commit()
