"""The tables the commands print: each takes a result of the library and a rich console.

The cells come from :mod:`procure.interfaces.tables`, which the app reads too; this module
sets them in rich tables and sentences (:func:`print_table`), fitted to the console's width:
numbers are never cut, and a table too wide for the terminal is printed in parts. User text
(source names, kinds, file names) is never read as markup, and its control characters are
shown as escapes (:func:`procure.interfaces.tables.visible`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pandas as pd
from rich.console import Console
from rich.text import Text

from ..defaults import TABLE_COLUMNS, TABLE_ROWS
from .table_fit import Justify, print_table
from .tables import (
    bill_rows,
    calibration_rows,
    calibration_sentence,
    capacity_rows,
    fact_rows,
    format_title,
    ledger_row_rows,
    money,
    number,
    objective_label,
    percent,
    pipeline_numbers,
    plan_numbers,
    plan_rows,
    ranging_sentence,
    rank_rows,
    recourse_rows,
    scenario_numbers,
    scenario_rows,
    simulation_rows,
    stage_rows,
    sweep_rows,
    visible,
)

if TYPE_CHECKING:
    from ..analyses.solving import ScenarioPlan
    from ..ledger import Cluster
    from ..pipeline.queue import SimulationResult
    from ..program import Plan

__all__ = [
    "TABLE_COLUMNS",
    "TABLE_ROWS",
    "Console",
    "format_title",
    "money",
    "number",
    "percent",
    "print_bill",
    "print_calibration",
    "print_plan",
    "print_ranging",
    "print_rank",
    "print_row",
    "print_scenarios",
    "print_simulation",
    "print_sweep",
    "print_table",
]


def _more(console: Console, left_out: int, what: str) -> None:
    if left_out > 0:
        console.print(f"… {left_out:,} more {what} not shown: --all prints every one, --csv FILE writes them.")


def print_bill(console: Console, row: Any, cluster: Cluster) -> None:
    """The stages, the busy fraction and the transport bill of one recorded hour."""
    print_table(console, Text(format_title(row, cluster)), stage_rows(row), ("left", "right", "left"))
    print_table(console, None, fact_rows(row), ("left", "right"), show_header=False, box=None)
    print_table(console, "Transport bill of one recorded hour", bill_rows(row), ("left", "right", "right"))
    n = pipeline_numbers(row)
    console.print(Text(f"Price {n['price_usd_per_hour']}/h: moving takes {n['share']} of it."))
    if row.get("nvdec_note"):
        console.print(Text(f"note: {visible(row['nvdec_note'])}"))


def print_simulation(console: Console, row: Any, cluster: Cluster, result: SimulationResult) -> None:
    """The simulated queue beside the closed form."""
    console.print(Text(format_title(row, cluster)))
    title = f"Queue of {result.frames:,} frames, buffer {result.buffer}, first {result.warmup_frames:,} left out"
    print_table(console, title, simulation_rows(row, result), ("left", "right", "right"))
    if result.note:
        console.print(Text(f"note: {visible(result.note)}"))


def print_plan(console: Console, plan: Plan, *, every_row: bool = False, scenarios: ScenarioPlan | None = None) -> None:
    """The plan: what to buy, what it costs, the bounds, λ, the capacities, the notes (with
    ``scenarios``, the scenario plan whose ``plan`` it is: each value named as what it is).

    With more than :data:`TABLE_ROWS` sources, the sources with the most money first and a
    line saying how many are left out (``every_row`` prints them all); the totals are of all.
    """
    n = plan_numbers(plan)
    if plan.mode == "budget":
        head = f"Budget {n['budget']}: what to buy"
    else:
        head = f"Target value {n['target']}: the least money that reaches it"
    rows = plan_rows(plan, every_row=every_row, scenarios=scenarios)
    right: list[Justify] = ["right"] * 7
    print_table(console, head, rows, ["left", *right, "left"])
    _more(console, rows.left_out, "sources")
    certified = f"(gap {n['gap']}, certified within {n['tolerance']})."
    if plan.mode == "target":
        console.print(f"No plan that reaches the target costs less than {n['money_lower_bound']} {certified}")
    rent = sum(plan.infrastructure["rent_usd"].values()) if plan.infrastructure is not None else 0.0
    console.print(
        f"All in: {n['spent_usd']} = purchase {n['purchase_usd']} + transport {n['transport_usd']}"
        + (f" + rented capacity {money(rent)}" if rent > 0 else "")
        + f" ({n['transport_share']} of the money goes to moving the hours)."
    )
    console.print(
        f"{objective_label(scenarios)} {n['value']} own-hour equivalents; no plan is worth more than "
        f"{n['value_upper_bound']} {certified}"
    )
    if plan.schedule is not None and plan.lambda_ > 0 and math.isfinite(plan.lambda_):
        console.print(
            f"λ = {n['lambda']}: one more budget dollar, split as the periods' money is, buys {n['lambda']} own-hour "
            "equivalents (by period: below)."
        )
    elif plan.lambda_ > 0 and math.isfinite(plan.lambda_):
        loose = plan.marginal_value_spread > EXACT_SPREAD
        console.print(
            f"λ = {n['lambda']}: the next dollar buys {n['lambda']} own-hour equivalents; one more "
            f"equivalent costs {n['cost_of_value']}. Sources bought in part return the same per dollar, "
            f"within {n['spread']}" + (" (a smaller --tolerance narrows it)." if loose else ".")
        )
    elif plan.mode == "budget":
        console.print("λ = 0: the budget does not bind; more money buys nothing more (see the capacities).")
    print_table(console, "Capacities", capacity_rows(plan), ("left", "right", "right", "left", "right"))
    for note in plan.notes:
        console.print(Text(f"note: {visible(note)}"))


#: Spread of the marginal values per dollar below which a plan's hours count as exact [1].
EXACT_SPREAD = 1e-6


def print_scenarios(console: Console, sp: ScenarioPlan, *, every_row: bool = False) -> None:
    """The plan's value over the scenarios, the risk measure, EVPI and VSS, and later hours."""
    rows = scenario_rows(sp, every_row=every_row)
    title = f"The plan in each of {len(sp.scenario_values)} scenarios"
    print_table(console, title, rows, ("left", "right", "right", "right", "right"))
    _more(console, rows.left_out, "scenarios (the worst are shown)")
    n = scenario_numbers(sp)
    console.print(
        f"Expected value {n['expected_value']}; CVaR at {n['risk_alpha']} (mean of the worst {n['risk_alpha']} of "
        f"scenarios) {n['cvar']}; the plan maximises {n['keep']} × expected + {n['risk_weight']} × "
        f"CVaR = {n['objective']}."
    )
    if math.isfinite(sp.evpi):
        console.print(
            f"EVPI {n['evpi']}: knowing the scenario before buying would be worth that much value (the best "
            f"plans knowing each scenario average {n['wait_and_see']}); at λ that is {n['evpi_usd']} of budget."
        )
        console.print(f"VSS {n['vss']}: planning for the mean scenario instead would give {n['mean_plan_objective']}.")
    if sp.recourse_price_x is not None:
        later = recourse_rows(sp, every_row=every_row)
        title = f"Bought later at {sp.recourse_price_x:g} × the price, once a scenario is known"
        if len(sp.recourse):
            print_table(console, title, later, ("left", "left", "right", "right"), keys=2)
        else:
            console.print(Text("No scenario buys more later: every hour is worth buying now."))
        _more(console, later.left_out, "later purchases")
    if sp.ran_on:
        console.print(Text(f"EVPI solves: {visible(sp.ran_on)}."))
    for note in sp.notes:
        console.print(Text(f"note: {visible(note)}"))


def print_rank(console: Console, table: pd.DataFrame, by: str, *, every_row: bool = False) -> None:
    """The sources ranked (the first :data:`TABLE_ROWS` unless ``every_row``)."""
    rows = rank_rows(table, every_row=every_row)
    justify: list[Justify] = ["left" if head == "source" else "right" for head in rows.headings]
    print_table(console, f"Sources ranked by {by}", rows, justify, keys=rows.headings.index("source") + 1)
    _more(console, rows.left_out, "sources")


def print_sweep(
    console: Console, table: pd.DataFrame, parameter: str, budget: float, *, every_row: bool = False
) -> None:
    """The plan at each value of the varied input: value, λ, shares and hours per source (the
    :data:`TABLE_COLUMNS` sources bought most, unless ``every_row``)."""
    rows = sweep_rows(table, parameter, every_row=every_row)
    title = f"The plan at {money(budget)} as {parameter} moves"
    if parameter == "budget":
        title = "The plan as the budget moves"
    right: list[Justify] = ["right"] * len(rows.headings)
    print_table(console, title, rows, right)
    _more(console, rows.left_out, "source columns")


def print_ranging(console: Console, span: tuple[float, float], limits: tuple[float, float]) -> None:
    """The byte-price multipliers over which the plan keeps its shape; a search limit is said as one."""
    console.print(ranging_sentence(span, limits))


def print_calibration(console: Console, files: list[Any], total: dict[str, Any]) -> None:
    """Each file's calibration, then the values a ledger row takes."""
    rows = calibration_rows(files)
    title = "Calibration: one decoding thread, frames decoded and converted to RGB"
    justify: list[Justify] = ["left" if head in ("file", "codec") else "right" for head in rows.headings]
    print_table(console, title, rows, justify)
    console.print(Text(calibration_sentence(total, files)))


def print_row(console: Console, row: dict[str, Any]) -> None:
    """One ledger row, a column a line."""
    print_table(console, "Ledger row", ledger_row_rows(row), ("left", "left"), show_header=False)


#: How the number columns of the periods table are justified.
PERIOD_JUSTIFY: list[Justify] = ["right"] * 7


def print_schedule(console: Console, plan: Plan, *, every_row: bool = False) -> None:
    """A plan over periods: the hours bought in each period, and the money and λ of each."""
    from .schedule_tables import PERIOD_COLUMNS, period_rows, schedule_rows, schedule_rows_by_period

    assert plan.schedule is not None and plan.periods is not None
    many = len(plan.periods) > PERIOD_COLUMNS
    rows = schedule_rows_by_period(plan) if many else schedule_rows(plan, every_row=every_row)
    right: list[Justify] = ["right"] * (len(rows.headings) - 1)
    title = "Hours bought, by period" + (" (expected over the scenarios)" if "scenario" in plan.schedule else "")
    print_table(console, title, rows, ["left", *right])
    _more(console, rows.left_out, "sources")
    money = period_rows(plan)
    print_table(console, "Money and value, by period", money, ["left", *PERIOD_JUSTIFY])
    console.print(
        "λ per $ is what one more dollar arriving at the period's start is worth; each run pays the transport bill "
        "of every bought hour it trains on."
    )


def print_now(console: Console, plan: Plan) -> None:
    """What to buy this period (the first), and what the rest of the schedule assumes."""
    from .schedule_tables import now_rows, period_rows

    assert plan.periods is not None and plan.schedule is not None
    n = plan_numbers(plan)
    first = visible(plan.periods["period"].iloc[0])
    print_table(console, f"Buy now, in period {first}", now_rows(plan), ["left", "right", "right", "right"])
    console.print(
        f"{'Expected value' if 'scenario' in plan.schedule else 'Value'} of the whole schedule {n['value']} "
        "own-hour equivalents; no schedule is worth more than "
        f"{n['value_upper_bound']} (gap {n['gap']}, certified within {n['tolerance']})."
    )
    if len(plan.periods) > 1:
        print_table(console, "What the rest of the schedule assumes", period_rows(plan, first=1),
                    ["left", *PERIOD_JUSTIFY])  # fmt: skip
    for note in plan.notes:
        console.print(Text(f"note: {visible(note)}"))


def print_infrastructure(console: Console, plan: Plan) -> None:
    """The formats each source could be kept in and which the plan chose, the cores and the rent."""
    from .infra_tables import format_rows, infrastructure_lines

    rows = format_rows(plan)
    right: list[Justify] = ["right"] * (len(rows.headings) - 2)
    print_table(console, "Formats: what keeping each hour costs and uses", rows, ["left", "left", *right], keys=2)
    for line in infrastructure_lines(plan):
        console.print(Text(line))
