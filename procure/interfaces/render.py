"""The tables the commands print: each takes a result of the library and a rich console.

The cells come from :mod:`procure.interfaces.tables`, which the app reads too; this module
sets them in rich tables and sentences. User text (source names, kinds, file names) is
printed as given, never read as markup.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import pandas as pd
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..defaults import TABLE_COLUMNS, TABLE_ROWS
from .tables import (
    Rows,
    bill_rows,
    calibration_rows,
    calibration_sentence,
    capacity_rows,
    fact_rows,
    format_title,
    ledger_row_rows,
    money,
    number,
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
]

Justify = Literal["left", "right"]


def _more(console: Console, left_out: int, what: str) -> None:
    if left_out > 0:
        console.print(f"… {left_out:,} more {what} not shown: --all prints every one, --csv FILE writes them.")


def _table(
    title: str | Text, rows: Rows, justify: Sequence[Justify], *, text: Sequence[int] = (), **options: Any
) -> Table:
    """A rich table of ``rows``, each column justified as given; the cells of the columns
    numbered in ``text`` (user text) are printed as given, never read as markup."""
    table = Table(title=title, title_justify="left", **options)
    for head, just in zip(rows.headings, justify, strict=True):
        table.add_column(head, justify=just)
    for cells in rows.cells:
        table.add_row(*[Text(c) if i in text else c for i, c in enumerate(cells)])
    return table


def print_bill(console: Console, row: Any, cluster: Cluster) -> None:
    """The stages, the busy fraction and the transport bill of one recorded hour."""
    console.print(_table(Text(format_title(row, cluster)), stage_rows(row), ("left", "right", "left")))
    facts = Table(show_header=False, box=None)
    facts.add_column(justify="left")
    facts.add_column(justify="right")
    for cells in fact_rows(row).cells:
        facts.add_row(*cells)
    console.print(facts)
    terms = bill_rows(row)
    bill = _table("Transport bill of one recorded hour", terms, ("left", "right", "right"))
    assert terms.total is not None
    bill.add_row(Text(terms.total[0], style="bold"), Text(terms.total[1], style="bold"), terms.total[2])
    console.print(bill)
    n = pipeline_numbers(row)
    console.print(Text(f"Price {n['price_usd_per_hour']}/h: moving takes {n['share']} of it."))


def print_simulation(console: Console, row: Any, cluster: Cluster, result: SimulationResult) -> None:
    """The simulated queue beside the closed form."""
    console.print(Text(format_title(row, cluster)))
    title = f"Queue of {result.frames:,} frames, buffer {result.buffer}, first {result.warmup_frames:,} left out"
    console.print(_table(title, simulation_rows(row, result), ("left", "right", "right")))
    if result.note:
        console.print(Text(f"note: {result.note}"))


def print_plan(console: Console, plan: Plan, *, every_row: bool = False) -> None:
    """The plan: what to buy, what it costs, the bounds, λ, the capacities, the notes.

    With more than :data:`TABLE_ROWS` sources, the sources with the most money first and a
    line saying how many are left out (``every_row`` prints them all); the totals are of all.
    """
    n = plan_numbers(plan)
    if plan.mode == "budget":
        head = f"Budget {n['budget']}: what to buy"
    else:
        head = f"Target value {n['target']}: the least money that reaches it"
    rows = plan_rows(plan, every_row=every_row)
    right: list[Justify] = ["right"] * 7
    justify: list[Justify] = ["left", *right, "left"]
    table = _table(head, rows, justify, text=(0,))
    assert rows.total is not None
    table.add_row(Text(rows.total[0], style="bold"), *rows.total[1:])
    console.print(table)
    _more(console, rows.left_out, "sources")
    certified = f"(gap {n['gap']}, certified within {n['tolerance']})."
    if plan.mode == "target":
        console.print(f"No plan that reaches the target costs less than {n['money_lower_bound']} {certified}")
    console.print(
        f"All in: {n['spent_usd']} = purchase {n['purchase_usd']} + transport "
        f"{n['transport_usd']} ({n['transport_share']} of the money goes to moving the hours)."
    )
    console.print(
        f"Value {n['value']} own-hour equivalents; no plan is worth more than {n['value_upper_bound']} {certified}"
    )
    if plan.lambda_ > 0 and math.isfinite(plan.lambda_):
        loose = plan.marginal_value_spread > EXACT_SPREAD
        console.print(
            f"λ = {n['lambda']}: the next dollar buys {n['lambda']} own-hour equivalents; one more "
            f"equivalent costs {n['cost_of_value']}. Sources bought in part return the same per dollar, "
            f"within {n['spread']}" + (" (a smaller --tolerance narrows it)." if loose else ".")
        )
    elif plan.mode == "budget":
        console.print("λ = 0: the budget does not bind; more money buys nothing more (see the capacities).")
    caps = _table("Capacities", capacity_rows(plan), ("left", "right", "right", "left", "right"), text=(0,))
    console.print(caps)
    for note in plan.notes:
        console.print(Text(f"note: {note}"))


#: Spread of the marginal values per dollar below which a plan's hours count as exact [1].
EXACT_SPREAD = 1e-6


def print_scenarios(console: Console, sp: ScenarioPlan, *, every_row: bool = False) -> None:
    """The plan's value over the scenarios, the risk measure, EVPI and VSS, and later hours."""
    rows = scenario_rows(sp, every_row=every_row)
    title = f"The plan in each of {len(sp.scenario_values)} scenarios"
    console.print(_table(title, rows, ("left", "right", "right", "right", "right"), text=(0,)))
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
        table = _table(title, later, ("left", "left", "right", "right"), text=(0, 1))
        none = Text("No scenario buys more later: every hour is worth buying now.")
        console.print(table if len(sp.recourse) else none)
        _more(console, later.left_out, "later purchases")
    if sp.ran_on:
        console.print(Text(f"EVPI solves: {sp.ran_on}."))
    for note in sp.notes:
        console.print(Text(f"note: {note}"))


def print_rank(console: Console, table: pd.DataFrame, by: str, *, every_row: bool = False) -> None:
    """The sources ranked (the first :data:`TABLE_ROWS` unless ``every_row``)."""
    rows = rank_rows(table, every_row=every_row)
    justify: list[Justify] = ["left" if head == "source" else "right" for head in rows.headings]
    console.print(_table(f"Sources ranked by {by}", rows, justify, text=(rows.headings.index("source"),)))
    _more(console, rows.left_out, "sources")


def print_sweep(
    console: Console, table: pd.DataFrame, parameter: str, budget: float, *, every_row: bool = False
) -> None:
    """The plan at each value of the varied input: value, λ, shares and hours per source (the
    :data:`TABLE_COLUMNS` sources bought most, unless ``every_row``)."""
    rows = sweep_rows(table, parameter, every_row=every_row)
    out = Table(title=f"The plan at {budget:,.0f} $ as {parameter} moves", title_justify="left")
    for i, head in enumerate(rows.headings):
        out.add_column(Text(head) if i >= 5 else head, justify="right")
    for cells in rows.cells:
        out.add_row(*cells)
    console.print(out)
    _more(console, rows.left_out, "source columns")


def print_ranging(console: Console, span: tuple[float, float], limits: tuple[float, float]) -> None:
    """The byte-price multipliers over which the plan keeps its shape; a search limit is said as one."""
    console.print(ranging_sentence(span, limits))


def print_calibration(console: Console, files: list[Any], total: dict[str, Any]) -> None:
    """Each file's calibration, then the values a ledger row takes."""
    rows = calibration_rows(files)
    title = "Calibration: one decoding thread, frames decoded and converted to RGB"
    justify: list[Justify] = ["left" if head in ("file", "codec") else "right" for head in rows.headings]
    console.print(_table(title, rows, justify, text=(0, 1)))
    console.print(Text(calibration_sentence(total)))


def print_row(console: Console, row: dict[str, Any]) -> None:
    """One ledger row, a column a line."""
    console.print(_table("Ledger row", ledger_row_rows(row), ("left", "right"), text=(1,), show_header=False))
