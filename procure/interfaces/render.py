"""The tables the commands print: each takes a result of the library and a rich console.

Nothing here computes what a result could say itself: shares, spreads and positions come
from the :class:`procure.program.Plan` and the tables of the analyses. User text (source
names, kinds) is printed as given, never read as markup.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pandas as pd
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..defaults import TABLE_COLUMNS, TABLE_ROWS
from ..ledger import Cluster
from ..pipeline.queue import SimulationResult
from ..program import Plan

if TYPE_CHECKING:
    from ..program.stochastic import ScenarioPlan


def _more(console: Console, shown: int, total: int, what: str) -> None:
    if total > shown:
        console.print(f"… {total - shown:,} more {what} not shown: --all prints every one, --csv FILE writes them.")


def number(value: float, digits: int = 1) -> str:
    """A number with thousands separators; ∞ for infinity, — for NaN."""
    if value != value:
        return "—"
    if value == math.inf:
        return "∞"
    return f"{value:,.{digits}f}"


def percent(value: float) -> str:
    """A share as a percentage with one decimal; — for NaN."""
    return "—" if value != value else f"{100 * value:.1f} %"


def money(value: float) -> str:
    """Dollars with cents."""
    return f"${value:,.2f}"


def _text(value: Any) -> Text:
    """User text as a cell, printed exactly as given (no markup)."""
    return Text(str(value))


def format_title(row: Any, cluster: Cluster) -> str:
    """One line naming a format and the cluster it runs on."""
    return (
        f"{row['source']}: {row['cameras']:g} × {row['width']:g}×{row['height']:g} at "
        f"{row['fps']:g} fps, {row['stored']}, read in {row['read']} — model {cluster.model}, "
        f"{cluster.accelerator}, {cluster.cores_per_accelerator:g} cores"
        f"{', NVDEC' if cluster.nvdec else ''}"
    )


def print_bill(console: Console, row: Any, cluster: Cluster) -> None:
    """The stages, the busy fraction and the transport bill of one recorded hour."""
    stages = Table(title=Text(format_title(row, cluster)), title_justify="left")
    stages.add_column("stage")
    stages.add_column("frames/s", justify="right")
    stages.add_column("", justify="left")
    binding = row["stage"]
    for name, rate, note in (
        ("accelerator (demand)", row["demand_fps"], f"{row['tokens_per_frame']:g} tokens a frame"),
        ("read", row["read_fps"], f"{row['bytes_per_frame']:,.0f} B a frame"),
        ("decode", row["decode_fps"], f"g = {row['g']:g} frames decoded per frame used"),
    ):
        mark = " ← binds" if name.split()[0] == binding else ""
        stages.add_row(name, number(rate), note + mark)
    console.print(stages)
    facts = Table(show_header=False, box=None)
    facts.add_column(justify="left")
    facts.add_column(justify="right")
    facts.add_row("busy", percent(row["busy"]))
    facts.add_row("cores needed (Little's law)", number(row["cores_needed"]))
    facts.add_row("pixels decoded per token π", number(row["pixels_per_token"], 0))
    facts.add_row("GB stored / decoded per hour", f"{row['gb_per_hour']:,.2f} / {row['gb_decoded_per_hour']:,.0f}")
    console.print(facts)
    bill = Table(title="Transport bill of one recorded hour", title_justify="left")
    bill.add_column("term")
    bill.add_column("$", justify="right")
    bill.add_column("share of bill", justify="right")
    total = row["bill_usd"]
    for name, key in (("bytes", "bytes_usd"), ("cores", "cores_usd"), ("idle accelerator", "idle_usd")):
        bill.add_row(name, f"{row[key]:,.2f}", percent(row[key] / total) if total > 0 else "—")
    bill.add_row(Text("bill", style="bold"), Text(f"{total:,.2f}", style="bold"), "")
    console.print(bill)
    console.print(Text(f"Price ${row['price_usd_per_hour']:,.2f}/h: moving takes {percent(row['share'])} of it."))


def print_simulation(console: Console, row: Any, cluster: Cluster, result: SimulationResult) -> None:
    """The simulated queue beside the closed form."""
    console.print(Text(format_title(row, cluster)))
    table = Table(
        title=f"Queue of {result.frames:,} frames, buffer {result.buffer}, first {result.warmup_frames:,} left out",
        title_justify="left",
    )
    table.add_column("")
    table.add_column("simulated", justify="right")
    table.add_column("closed form", justify="right")
    table.add_row("busy", percent(result.busy), percent(row["busy"]))
    table.add_row(
        "frames/s to the accelerator",
        number(result.throughput_fps),
        number(min(row["demand_fps"], row["supply_fps"])),
    )
    table.add_row("binding stage", result.stage, str(row["stage"]))
    util = result.decoder_utilisation
    table.add_row("decoders busy (mean)", percent(float(util.mean())) if len(util) else "—", "")
    table.add_row("frames in the buffer (mean)", f"{result.mean_buffer:.1f}", "")
    console.print(table)
    if result.note:
        console.print(Text(f"note: {result.note}"))


def print_plan(console: Console, plan: Plan, *, every_row: bool = False) -> None:
    """The plan: what to buy, what it costs, the bounds, λ, the capacities, the notes.

    With more than :data:`TABLE_ROWS` sources, the sources with the most money first and a
    line saying how many are left out (``every_row`` prints them all); the totals are of all.
    """
    s = plan.sources
    if plan.mode == "budget":
        head = f"Budget {money(plan.budget)}: what to buy"
    else:
        head = f"Target value {plan.target:,.1f}: the least money that reaches it"
    table = Table(title=head, title_justify="left")
    for col, just in (("source", "left"), ("buy h", "right"), ("held h", "right"), ("purchase $", "right"),
                      ("transport $", "right"), ("effective h", "right"), ("value", "right"),
                      ("value per next $", "right"), ("", "left")):  # fmt: skip
        table.add_column(col, justify=just)  # type: ignore[arg-type]
    shown = (
        s
        if every_row or len(s) <= TABLE_ROWS
        else s.loc[(s["purchase_usd"] + s["transport_usd"]).sort_values(ascending=False).index[:TABLE_ROWS]]
    )
    for _, r in shown.iterrows():
        table.add_row(
            _text(r["source"]), number(r["hours"]), number(r["held_hours"]), number(r["purchase_usd"], 2),
            number(r["transport_usd"], 2), number(r["effective_hours"]), number(r["value"], 1),
            f"{r['marginal_value_per_usd']:.3g}", {"cap": "all available", "zero": "", "between": ""}[r["position"]],
        )  # fmt: skip
    table.add_row(
        Text("total", style="bold"), number(s["hours"].sum()), number(s["held_hours"].sum()),
        number(plan.purchase_usd, 2), number(plan.transport_usd, 2), number(s["effective_hours"].sum()),
        number(plan.value, 1), "", "",
    )  # fmt: skip
    console.print(table)
    _more(console, len(shown), len(s), "sources")
    if plan.mode == "target":
        console.print(
            f"No plan that reaches the target costs less than {money(plan.money_lower_bound)} "
            f"(gap {100 * plan.gap:.4f} %, certified within {100 * plan.tolerance:g} %)."
        )
    console.print(
        f"All in: {money(plan.spent_usd)} = purchase {money(plan.purchase_usd)} + transport "
        f"{money(plan.transport_usd)} ({percent(plan.transport_share)} of the money goes to moving the hours)."
    )
    console.print(
        f"Value {plan.value:,.2f} own-hour equivalents; no plan is worth more than {plan.value_upper_bound:,.2f} "
        f"(gap {100 * plan.gap:.4f} %, certified within {100 * plan.tolerance:g} %)."
    )
    if plan.lambda_ > 0 and math.isfinite(plan.lambda_):
        console.print(
            f"λ = {plan.lambda_:.4g}: the next dollar buys {plan.lambda_:.4g} own-hour equivalents; one more "
            f"equivalent costs {money(1 / plan.lambda_)}. Sources bought in part return the same per dollar, "
            f"within {100 * plan.marginal_value_spread:.2f} % (a smaller --tolerance narrows it)."
        )
    elif plan.mode == "budget":
        console.print("λ = 0: the budget does not bind; more money buys nothing more (see the capacities).")
    caps = Table(title="Capacities", title_justify="left")
    for col in ("capacity", "used", "limit", "binds", "one more unit is worth"):
        caps.add_column(col, justify="left" if col in ("capacity", "binds") else "right")
    for _, c in plan.capacities.iterrows():
        worth = f"{money(c['shadow_usd'])} ({c['shadow_price']:.4g} value)" if c["binding"] else "—"
        caps.add_row(Text(f"{c['capacity']} [{c['unit']}]"), number(c["used"]), number(c["limit"]),
                     "binds" if c["binding"] else "", worth)  # fmt: skip
    console.print(caps)
    for note in plan.notes:
        console.print(Text(f"note: {note}"))


def print_scenarios(console: Console, sp: ScenarioPlan, *, every_row: bool = False) -> None:
    """The plan's value over the scenarios, the risk measure, EVPI and VSS, and later hours."""
    v = sp.scenario_values
    table = Table(title=f"The plan in each of {len(v)} scenarios", title_justify="left")
    for col in ("scenario", "probability", "value", "mean-scenario plan", "spent later $"):
        table.add_column(col, justify="left" if col == "scenario" else "right")
    mean = sp.mean_plan_values["value"].to_numpy() if sp.mean_plan_values is not None else None
    order = v.index if every_row or len(v) <= TABLE_ROWS else v["value"].sort_values().index[:TABLE_ROWS]
    for i in order:
        r = v.loc[i]
        table.add_row(_text(r["scenario"]), f"{r['probability']:.4g}", number(r["value"], 2),
                      number(mean[i], 2) if mean is not None else "", number(r["later_usd"], 2))  # fmt: skip
    console.print(table)
    _more(console, len(order), len(v), "scenarios (the worst are shown)")
    a = sp.risk_alpha
    console.print(
        f"Expected value {sp.expected_value:,.2f}; CVaR at {100 * a:g} % (mean of the worst {100 * a:g} % of "
        f"scenarios) {sp.cvar:,.2f}; the plan maximises {1 - sp.risk_weight:g} × expected + {sp.risk_weight:g} × "
        f"CVaR = {sp.value:,.2f}."
    )
    if math.isfinite(sp.evpi):
        console.print(
            f"EVPI {sp.evpi:,.2f}: knowing the scenario before buying would be worth that much value (the best "
            f"plans knowing each scenario average {sp.wait_and_see:,.2f}); at λ that is "
            f"{money(sp.evpi / sp.plan.lambda_) if sp.plan.lambda_ > 0 else '—'} of budget."
        )
        console.print(
            f"VSS {sp.vss:,.2f}: planning for the mean scenario instead would give {sp.mean_plan_objective:,.2f}."
        )
    if sp.recourse_price_x is not None:
        r = sp.recourse
        later = Table(title=f"Bought later at {sp.recourse_price_x:g} × the price, once a scenario is known",
                      title_justify="left")  # fmt: skip
        for col in ("scenario", "source", "hours", "$"):
            later.add_column(col, justify="left" if col in ("scenario", "source") else "right")
        shown = r if every_row or len(r) <= TABLE_ROWS else r.iloc[:TABLE_ROWS]
        for _, row in shown.iterrows():
            later.add_row(_text(row["scenario"]), _text(row["source"]), number(row["hours"]), number(row["usd"], 2))
        console.print(later if len(r) else Text("No scenario buys more later: every hour is worth buying now."))
        _more(console, len(shown), len(r), "later purchases")
    if sp.ran_on:
        console.print(Text(f"EVPI solves: {sp.ran_on}."))
    for note in sp.notes:
        console.print(Text(f"note: {note}"))


#: Columns of the rank table: heading and column of :func:`procure.analyses.rank`.
RANK_HEADINGS = (
    ("rank", "rank"),
    ("source", "source"),
    ("GB/h", "gb_per_hour"),
    ("price $/h", "price_usd_per_hour"),
    ("transport $/h", "transport_usd_per_hour"),
    ("share", "share"),
    ("$ per useful h", "cost_per_useful_hour"),
    ("value per next $", "marginal_value_per_usd"),
)
#: Columns the rank table adds with a budget.
RANK_PLAN_HEADINGS = (("plan h", "plan_hours"), ("plan GB", "plan_gb"), ("plan value", "plan_value"))


def print_rank(console: Console, table: pd.DataFrame, by: str, *, every_row: bool = False) -> None:
    """The sources ranked (the first :data:`TABLE_ROWS` unless ``every_row``)."""
    out = Table(title=f"Sources ranked by {by}", title_justify="left")
    heads = list(RANK_HEADINGS) + (list(RANK_PLAN_HEADINGS) if "plan_hours" in table else [])
    for head, _ in heads:
        out.add_column(head, justify="left" if head == "source" else "right")
    shown = table if every_row else table.head(TABLE_ROWS)
    for _, r in shown.iterrows():
        cells: list[str | Text] = []
        for _, col in heads:
            v = r[col]
            if col == "share":
                cells.append(percent(v))
            elif col == "marginal_value_per_usd":
                cells.append(f"{v:.3g}")
            elif col == "source":
                cells.append(_text(v))
            else:
                cells.append(number(v, 0 if col == "rank" else 2))
        out.add_row(*cells)
    console.print(out)
    _more(console, len(shown), len(table), "sources")


def print_sweep(
    console: Console, table: pd.DataFrame, parameter: str, budget: float, *, every_row: bool = False
) -> None:
    """The plan at each value of the varied input: value, λ, shares and hours per source (the
    :data:`TABLE_COLUMNS` sources bought most, unless ``every_row``)."""
    out = Table(title=f"The plan at {budget:,.0f} $ as {parameter} moves", title_justify="left")
    every = list(dict.fromkeys(table["source"]))
    most = table.groupby("source", sort=False)["hours"].max().sort_values(ascending=False, kind="stable")
    sources = every if every_row or len(every) <= TABLE_COLUMNS else list(most.index[:TABLE_COLUMNS])
    for head in [parameter, "plan value", "λ", "transport share", "idle share of transport"]:
        out.add_column(head, justify="right")
    for name in sources:
        out.add_column(Text(f"{name} h"), justify="right")
    for x, part in table.groupby("x", sort=True):
        first = part.iloc[0]
        hours = part.set_index("source")["hours"]
        out.add_row(f"{x:.4g}", f"{first['plan_value']:,.1f}", f"{first['lambda']:.4g}",
                    percent(first["transport_share"]), percent(first["idle_share"]),
                    *[number(hours[s]) for s in sources])  # fmt: skip
    console.print(out)
    _more(console, len(sources), len(every), "source columns")


def print_ranging(console: Console, span: tuple[float, float], limits: tuple[float, float]) -> None:
    """The byte-price multipliers over which the plan keeps its shape; a search limit is said as one."""
    low = f"below {limits[0]:g}" if span[0] <= limits[0] else f"{span[0]:.4g}"
    high = f"above {limits[1]:g}" if span[1] >= limits[1] else f"{span[1]:.4g}"
    console.print(
        f"The plan keeps its shape (the same sources bought, the same constraints binding) for byte prices "
        f"from {low} to {high} times the ledger's (the search looks from {limits[0]:g} to {limits[1]:g})."
    )


def print_calibration(console: Console, files: list[Any], total: dict[str, Any]) -> None:
    """Each file's calibration, then the values a ledger row takes."""
    table = Table(title="Calibration: one decoding thread, frames decoded and converted to RGB", title_justify="left")
    for head in ("file", "codec", "size", "fps", "frames", "bit/px", "gop", "decode fps (min–max)",
                 "1080p fps", "random read frames"):  # fmt: skip
        table.add_column(head, justify="left" if head in ("file", "codec") else "right")
    for f in files:
        table.add_row(
            Text(f.file), Text(f.codec), f"{f.width}×{f.height}", f"{f.fps:g}", f"{f.frames:,}",
            f"{f.bits_per_pixel:.4f}", f"{f.gop:g}",
            f"{f.decode_fps:,.0f} ({f.decode_fps_min:,.0f}–{f.decode_fps_max:,.0f})",
            f"{f.core_fps_1080p:,.1f}", f"{f.random_read_frames:.2f}",
        )  # fmt: skip
    console.print(table)
    console.print(
        Text(
            f"For a ledger row: codec {total['codec']}, {total['width']}×{total['height']} at {total['fps']:g} fps, "
            f"bits_per_pixel {total['bits_per_pixel']:.4f}, gop {total['gop']:g}, "
            f"core_fps_1080p {total['core_fps_1080p']:,.1f}"
        )
    )


def print_row(console: Console, row: dict[str, Any]) -> None:
    """One ledger row, a column a line."""
    table = Table(title="Ledger row", title_justify="left", show_header=False)
    table.add_column("column")
    table.add_column("value", justify="right")
    for column, value in row.items():
        shown = (
            ""
            if isinstance(value, float) and value != value
            else (f"{value:,.6g}" if isinstance(value, float) else str(value))
        )
        table.add_row(column, Text(shown))
    console.print(table)
