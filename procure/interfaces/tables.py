"""Every table and number the interfaces show, formatted once: the terminal and the app both
read their cells here.

Each ``*_rows`` function takes a result of the library and returns :class:`Rows`: headings
and cells as text, the rows shown (the first :data:`TABLE_ROWS` unless ``every_row``) and how
many were left out. :mod:`procure.interfaces.render` sets them in the terminal's tables, the
app's pages show them as they are, so that a number reads the same in both. Nothing here
computes what a result could say itself: shares, spreads and positions come from the
:class:`procure.program.Plan` and the tables of the analyses.

Here are the cells of plans and of the analyses. How each cell is written is
:mod:`procure.interfaces.cells`, and the cells of a format's pipeline and of a calibration are
:mod:`procure.interfaces.pipeline_tables`; their names are offered here too.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..defaults import TABLE_COLUMNS, TABLE_ROWS
from .cells import Rows, money, number, percent, visible
from .pipeline_tables import bill_rows as bill_rows
from .pipeline_tables import calibration_rows as calibration_rows
from .pipeline_tables import calibration_sentence as calibration_sentence
from .pipeline_tables import fact_rows as fact_rows
from .pipeline_tables import format_title as format_title
from .pipeline_tables import ledger_row_rows as ledger_row_rows
from .pipeline_tables import pipeline_numbers as pipeline_numbers
from .pipeline_tables import simulation_rows as simulation_rows
from .pipeline_tables import stage_rows as stage_rows

if TYPE_CHECKING:
    import pandas as pd

    from ..analyses.solving import ScenarioPlan
    from ..program import Plan


# ----------------------------------------------------------------------------- plans

#: What the last column of the plan table says of a source's position.
POSITIONS = {"cap": "all available", "zero": "", "between": ""}


def plan_numbers(plan: Plan) -> dict[str, str]:
    """A plan's totals, bounds and prices, formatted: ``value``, ``value_upper_bound``,
    ``lambda``, ``cost_of_value`` ($ of one more unit of value), ``spread``, ``gap``,
    ``tolerance``, ``spent_usd``, ``purchase_usd``, ``transport_usd``, ``transport_share``,
    ``budget``, ``target`` and ``money_lower_bound``."""
    lam = plan.lambda_
    return {
        "value": f"{plan.value:,.2f}",
        "value_upper_bound": f"{plan.value_upper_bound:,.2f}",
        "lambda": f"{lam:.4g}",
        "cost_of_value": money(1 / lam) if lam > 0 and math.isfinite(lam) else "—",
        "spread": f"{100 * plan.marginal_value_spread:.2f} %",
        "gap": f"{100 * plan.gap:.4f} %",
        "tolerance": f"{100 * plan.tolerance:g} %",
        "spent_usd": money(plan.spent_usd),
        "purchase_usd": money(plan.purchase_usd),
        "transport_usd": money(plan.transport_usd),
        "transport_share": percent(plan.transport_share),
        "budget": money(plan.budget),
        "target": f"{plan.target:,.1f}",
        "money_lower_bound": money(plan.money_lower_bound),
    }


def objective_label(scenarios: ScenarioPlan | None = None) -> str:
    """What a plan's ``value`` is: "Value" for a plan at one set of numbers; over scenarios
    "Expected value", "CVaR at A (the objective)" or "Objective ((1 − W) × expected + W × CVaR
    at A)", as the risk weight W makes it."""
    if scenarios is None:
        return "Value"
    w, alpha = scenarios.risk_weight, f"{100 * scenarios.risk_alpha:g} %"
    if w == 0:
        return "Expected value"
    if w == 1:
        return f"CVaR at {alpha} (the objective)"
    return f"Objective ({1 - w:g} × expected + {w:g} × CVaR at {alpha})"


def _risk_rows(scenarios: ScenarioPlan, width: int, at: int) -> list[tuple[str, ...]]:
    """The rows under a scenario plan's expected total: its CVaR, and the objective where it is
    neither the expected value nor the CVaR; the number in column ``at`` of ``width``."""
    w, rows = scenarios.risk_weight, []
    if w > 0:
        label = f"CVaR at {100 * scenarios.risk_alpha:g} %" + (" (objective)" if w == 1 else "")
        rows.append((label, number(scenarios.cvar, 1)))
    if 0 < w < 1:
        rows.append(("objective", number(scenarios.value, 1)))
    return [(label, *[""] * (at - 1), cell, *[""] * (width - at - 1)) for label, cell in rows]


def plan_rows(plan: Plan, *, every_row: bool = False, scenarios: ScenarioPlan | None = None) -> Rows:
    """What to buy: per source the hours, the money, the value, the value of the next dollar.

    With more than :data:`TABLE_ROWS` sources, the sources with the most money first (all of
    them with ``every_row``); the totals are of all. With ``scenarios`` (the scenario plan whose
    ``plan`` this is) the sources' values are expectations over the scenarios: the column is
    headed so, the total row is the expected value (their sum), and with a risk weight a row of
    the CVaR follows it, and one of the objective the plan maximises where that is neither.
    """
    s = plan.sources
    shown = (
        s
        if every_row or len(s) <= TABLE_ROWS
        else s.loc[(s["purchase_usd"] + s["transport_usd"]).sort_values(ascending=False).index[:TABLE_ROWS]]
    )
    cells: list[tuple[str, ...]] = [
        (visible(r["source"]) + (f" ({r['format']})" if "format" in s else ""), number(r["hours"]),
         number(r["held_hours"]), number(r["purchase_usd"], 2), number(r["transport_usd"], 2),
         number(r["effective_hours"]), number(r["value"], 1), f"{r['marginal_value_per_usd']:.3g}",
         POSITIONS[r["position"]])
        for _, r in shown.iterrows()
    ]  # fmt: skip
    value = "value" if scenarios is None else "expected value"
    worth = plan.value if scenarios is None else scenarios.expected_value
    total: tuple[str, ...] = ("total" if scenarios is None else "total: expected value", number(s["hours"].sum()),
             number(s["held_hours"].sum()), number(plan.purchase_usd, 2), number(plan.transport_usd, 2),
             number(s["effective_hours"].sum()), number(worth, 1), "", "")  # fmt: skip
    headings = ("source", "buy h", "held h", "purchase $", "transport $", "effective h", value,
                "value per next $", "")  # fmt: skip
    risk = _risk_rows(scenarios, len(headings), headings.index(value)) if scenarios is not None else []
    if risk:  # the expected total among the rows, the last of the risk rows the table's last
        cells, total = [*cells, total, *risk[:-1]], risk[-1]
    return Rows(headings, cells, total=total, left_out=len(s) - len(shown))


def capacity_rows(plan: Plan) -> Rows:
    """Each capacity: used, limit, whether it binds and what one more unit is worth."""
    cells = []
    priced = plan.lambda_ > 0 and math.isfinite(plan.lambda_)
    for _, c in plan.capacities.iterrows():
        if not c["binding"]:
            worth = "—"
        elif priced:
            worth = f"{money(c['shadow_usd'])} ({c['shadow_price']:.4g} value)"
        else:  # the budget does not bind: a unit has a value but no price in budget dollars
            worth = f"{c['shadow_price']:.4g} value (no $: the budget does not bind)"
        at = f" at {visible(c['period'])}" if isinstance(c.get("period"), str) else ""
        cells.append((f"{c['capacity']} [{c['unit']}]{at}", number(c["used"]), number(c["limit"]),
                      "binds" if c["binding"] else "", worth))  # fmt: skip
    return Rows(("capacity", "used", "limit", "binds", "one more unit is worth"), cells)


def scenario_rows(sp: ScenarioPlan, *, every_row: bool = False) -> Rows:
    """The plan's value in each scenario beside the mean-scenario plan's, and what it spends
    later (the worst :data:`TABLE_ROWS` scenarios unless ``every_row``)."""
    v = sp.scenario_values
    mean = sp.mean_plan_values["value"].to_numpy() if sp.mean_plan_values is not None else None
    order = v.index if every_row or len(v) <= TABLE_ROWS else v["value"].sort_values().index[:TABLE_ROWS]
    cells = []
    for i in order:
        r = v.loc[i]
        cells.append((visible(r["scenario"]), f"{r['probability']:.4g}", number(r["value"], 2),
                      number(mean[i], 2) if mean is not None else "", number(r["later_usd"], 2)))  # fmt: skip
    headings = ("scenario", "probability", "value", "mean-scenario plan", "spent later $")
    return Rows(headings, cells, left_out=len(v) - len(order))


def scenario_numbers(sp: ScenarioPlan) -> dict[str, str]:
    """The risk measure and the worth of information, formatted: ``expected_value``,
    ``cvar``, ``risk_alpha``, ``keep`` and ``risk_weight`` (the objective's weights),
    ``objective``, ``evpi``, ``evpi_usd``, ``wait_and_see``, ``vss`` and
    ``mean_plan_objective``."""
    lam = sp.plan.lambda_
    return {
        "expected_value": f"{sp.expected_value:,.2f}",
        "cvar": f"{sp.cvar:,.2f}",
        "risk_alpha": f"{100 * sp.risk_alpha:g} %",
        "keep": f"{1 - sp.risk_weight:g}",
        "risk_weight": f"{sp.risk_weight:g}",
        "objective": f"{sp.value:,.2f}",
        "evpi": f"{sp.evpi:,.2f}",
        "evpi_usd": money(sp.evpi / lam) if lam > 0 else "—",
        "wait_and_see": f"{sp.wait_and_see:,.2f}",
        "vss": f"{sp.vss:,.2f}",
        "mean_plan_objective": f"{sp.mean_plan_objective:,.2f}",
    }


def recourse_rows(sp: ScenarioPlan, *, every_row: bool = False) -> Rows:
    """What each scenario buys later, once it is known (the first :data:`TABLE_ROWS`)."""
    r = sp.recourse
    shown = r if every_row or len(r) <= TABLE_ROWS else r.iloc[:TABLE_ROWS]
    cells = [
        (visible(row["scenario"]), visible(row["source"]), number(row["hours"]), number(row["usd"], 2))
        for _, row in shown.iterrows()
    ]
    return Rows(("scenario", "source", "hours", "$"), cells, left_out=len(r) - len(shown))


# ----------------------------------------------------------------------------- analyses

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


def _rank_cell(col: str, v: Any) -> str:
    if col == "share":
        return percent(v)
    if col == "marginal_value_per_usd":
        return f"{v:.3g}"
    if col == "source":
        return visible(v)
    return number(v, 0 if col == "rank" else 2)


def rank_rows(table: pd.DataFrame, *, every_row: bool = False) -> Rows:
    """Sources ranked (a table of :func:`procure.analyses.rank`, or of
    :func:`procure.analyses.ranking_table` without the ranks): the columns of
    :data:`RANK_HEADINGS` it has, and with a budget :data:`RANK_PLAN_HEADINGS`."""
    heads = [(h, c) for h, c in RANK_HEADINGS if c in table] + (
        list(RANK_PLAN_HEADINGS) if "plan_hours" in table else []
    )
    shown = table if every_row else table.head(TABLE_ROWS)
    cells = [tuple(_rank_cell(col, r[col]) for _, col in heads) for _, r in shown.iterrows()]
    return Rows(tuple(h for h, _ in heads), cells, left_out=len(table) - len(shown))


#: How the sweep table heads and writes the varied input: heading and format of a value.
SWEEP_INPUTS: dict[str, tuple[str, Callable[[float], str]]] = {
    "byte_price_x": ("byte_price_x", lambda x: f"{x:.4g}"),
    "budget": ("budget $", lambda x: number(x, 2)),
    "accelerator_usd_per_hour": ("accelerator $/h", lambda x: number(x, 2)),
    "core_usd_per_hour": ("core $/h", lambda x: number(x, 4)),
    "params": ("params", lambda x: number(x, 0)),
}


def sweep_rows(table: pd.DataFrame, parameter: str, *, every_row: bool = False) -> Rows:
    """The plan at each value of the varied input: value, λ, shares and hours per source (the
    :data:`TABLE_COLUMNS` sources bought most unless ``every_row``; ``left_out`` counts the
    source columns not shown). The input's value is written as :data:`SWEEP_INPUTS` says
    (dollars as the other tables write them)."""
    heading, write = SWEEP_INPUTS.get(parameter, (parameter, lambda x: f"{x:.4g}"))
    every = list(dict.fromkeys(table["source"]))
    most = table.groupby("source", sort=False)["hours"].max().sort_values(ascending=False, kind="stable")
    sources = every if every_row or len(every) <= TABLE_COLUMNS else list(most.index[:TABLE_COLUMNS])
    cells = []
    for x, part in table.groupby("x", sort=True):
        first = part.iloc[0]
        hours = part.set_index("source")["hours"]
        cells.append((write(float(x)), f"{first['plan_value']:,.1f}", f"{first['lambda']:.4g}",
                      percent(first["transport_share"]), percent(first["idle_share"]),
                      *[number(hours[s]) for s in sources]))  # fmt: skip
    named = [f"{visible(s)} h" for s in sources]
    headings = (heading, "plan value", "λ", "transport share", "idle share of transport", *named)
    return Rows(headings, cells, left_out=len(every) - len(sources))


def ranging_sentence(span: tuple[float, float], limits: tuple[float, float]) -> str:
    """The byte-price multipliers over which the plan keeps its shape; a search limit is said as one."""
    low = f"below {limits[0]:g}" if span[0] <= limits[0] else f"{span[0]:.4g}"
    high = f"above {limits[1]:g}" if span[1] >= limits[1] else f"{span[1]:.4g}"
    return (
        f"The plan keeps its shape (the same sources bought, the same constraints binding) for byte prices "
        f"from {low} to {high} times the ledger's (the search looks from {limits[0]:g} to {limits[1]:g})."
    )
