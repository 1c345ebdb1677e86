"""Every table and number the interfaces show, formatted once: the terminal and the app both
read their cells here.

Each ``*_rows`` function takes a result of the library and returns :class:`Rows`: headings
and cells as text, the rows shown (the first :data:`TABLE_ROWS` unless ``every_row``) and how
many were left out. :mod:`procure.interfaces.render` sets them in the terminal's tables, the
app's pages show them as they are, so that a number reads the same in both. Nothing here
computes what a result could say itself: shares, spreads and positions come from the
:class:`procure.program.Plan` and the tables of the analyses.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..defaults import TABLE_COLUMNS, TABLE_ROWS

if TYPE_CHECKING:
    import pandas as pd

    from ..analyses.solving import ScenarioPlan
    from ..ledger import Cluster
    from ..pipeline.queue import SimulationResult
    from ..program import Plan


#: Characters of user text shown as an escape (``\\x1b``, ``\\u202e``): the C0 and C1 control
#: characters and DEL, which a terminal would act on (clear the screen, set its title), and the
#: bidirectional overrides, which would reorder the text around them.
_HIDDEN = {*range(0x00, 0x20), *range(0x7F, 0xA0), 0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F),
           *range(0x2066, 0x206A)}  # fmt: skip
_ESCAPES = {c: (f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}") for c in _HIDDEN}


def visible(text: object) -> str:
    """User text (a source name, a kind, a file name) as a table shows it: every control
    character and bidirectional override as its escape (``ESC`` as ``\\x1b``), the rest as
    given. JSON and files keep the text exact; only what is shown is escaped."""
    return str(text).translate(_ESCAPES)


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


@dataclass(frozen=True)
class Rows:
    """A table's headings and cells, formatted.

    Attributes
    ----------
    headings : tuple of str
        One per column.
    cells : sequence of tuple of str
        The rows shown, one string per column.
    total : tuple of str, optional
        A last row of totals (of every row, shown or not).
    left_out : int
        Rows (for :func:`sweep_rows`, source columns) not shown.
    """

    headings: tuple[str, ...]
    cells: Sequence[tuple[str, ...]] = field(default_factory=list)
    total: tuple[str, ...] | None = None
    left_out: int = 0

    def frame(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """The table as a DataFrame of strings, the total row last; only the ``columns``
        (headings) given, in that order, if any."""
        import pandas as pd

        rows = [*self.cells, *([self.total] if self.total is not None else [])]
        frame = pd.DataFrame(rows, columns=list(self.headings))
        return frame if columns is None else frame[list(columns)]


# ----------------------------------------------------------------------------- one format


def format_title(row: Any, cluster: Cluster) -> str:
    """One line naming a format and the cluster it runs on."""
    return (
        f"{visible(row['source'])}: {row['cameras']:g} × {row['width']:g}×{row['height']:g} at "
        f"{row['fps']:g} fps, {row['stored']}, read in {row['read']} — model {visible(cluster.model)}, "
        f"{visible(cluster.accelerator)}, {cluster.cores_per_accelerator:g} cores"
        f"{', NVDEC' if cluster.nvdec else ''}"
    )


def pipeline_numbers(row: Any) -> dict[str, str]:
    """The numbers of one recorded hour (a row of :func:`procure.ledger.variant`), formatted:
    ``busy``, ``stage``, ``cores_needed``, ``pixels_per_token``, ``gb_per_hour``,
    ``gb_decoded_per_hour``, ``bill_usd``, ``share`` and ``price_usd_per_hour``."""
    return {
        "busy": percent(row["busy"]),
        "stage": str(row["stage"]),
        "cores_needed": number(row["cores_needed"]),
        "pixels_per_token": number(row["pixels_per_token"], 0),
        "gb_per_hour": f"{row['gb_per_hour']:,.2f}",
        "gb_decoded_per_hour": f"{row['gb_decoded_per_hour']:,.0f}",
        "bill_usd": money(row["bill_usd"]),
        "share": percent(row["share"]),
        "price_usd_per_hour": money(row["price_usd_per_hour"]),
    }


def stage_rows(row: Any) -> Rows:
    """The stages' rates [frames/s], the binding one marked."""
    cells = []
    for name, rate, note in (
        ("accelerator (demand)", row["demand_fps"], f"{row['tokens_per_frame']:g} tokens a frame"),
        ("read", row["read_fps"], f"{row['bytes_per_frame']:,.0f} B a frame"),
        ("decode", row["decode_fps"], f"g = {row['g']:g} frames decoded per frame used"),
    ):
        mark = " ← binds" if name.split()[0] == row["stage"] else ""
        cells.append((name, number(rate), note + mark))
    return Rows(("stage", "frames/s", ""), cells)


def fact_rows(row: Any) -> Rows:
    """The busy fraction, the cores needed, pixels per token and the gigabytes of an hour."""
    n = pipeline_numbers(row)
    return Rows(
        ("", ""),
        [
            ("busy", n["busy"]),
            ("cores needed (Little's law)", n["cores_needed"]),
            ("pixels decoded per token π", n["pixels_per_token"]),
            ("GB stored / decoded per hour", f"{n['gb_per_hour']} / {n['gb_decoded_per_hour']}"),
        ],
    )


def bill_rows(row: Any) -> Rows:
    """The transport bill of one recorded hour by term [$], each term's share, the total."""
    total = row["bill_usd"]
    cells = [
        (name, f"{row[key]:,.2f}", percent(row[key] / total) if total > 0 else "—")
        for name, key in (("bytes", "bytes_usd"), ("cores", "cores_usd"), ("idle accelerator", "idle_usd"))
    ]
    return Rows(("term", "$", "share of bill"), cells, total=("bill", f"{total:,.2f}", ""))


def simulation_rows(row: Any, result: SimulationResult) -> Rows:
    """The simulated queue beside the closed form."""
    util = result.decoder_utilisation
    cells = [
        ("busy", percent(result.busy), percent(row["busy"])),
        (
            "frames/s to the accelerator",
            number(result.throughput_fps),
            number(min(row["demand_fps"], row["supply_fps"])),
        ),
        ("binding stage", result.stage, str(row["stage"])),
        ("decoders busy (mean)", percent(float(util.mean())) if len(util) else "—", ""),
        ("frames in the buffer (mean)", f"{result.mean_buffer:.1f}", ""),
    ]
    return Rows(("", "simulated", "closed form"), cells)


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


def plan_rows(plan: Plan, *, every_row: bool = False) -> Rows:
    """What to buy: per source the hours, the money, the value, the value of the next dollar.

    With more than :data:`TABLE_ROWS` sources, the sources with the most money first (all of
    them with ``every_row``); the totals are of all.
    """
    s = plan.sources
    shown = (
        s
        if every_row or len(s) <= TABLE_ROWS
        else s.loc[(s["purchase_usd"] + s["transport_usd"]).sort_values(ascending=False).index[:TABLE_ROWS]]
    )
    cells = [
        (visible(r["source"]) + (f" ({r['format']})" if "format" in s else ""), number(r["hours"]),
         number(r["held_hours"]), number(r["purchase_usd"], 2), number(r["transport_usd"], 2),
         number(r["effective_hours"]), number(r["value"], 1), f"{r['marginal_value_per_usd']:.3g}",
         POSITIONS[r["position"]])
        for _, r in shown.iterrows()
    ]  # fmt: skip
    total = ("total", number(s["hours"].sum()), number(s["held_hours"].sum()), number(plan.purchase_usd, 2),
             number(plan.transport_usd, 2), number(s["effective_hours"].sum()), number(plan.value, 1), "",
             "")  # fmt: skip
    headings = ("source", "buy h", "held h", "purchase $", "transport $", "effective h", "value",
                "value per next $", "")  # fmt: skip
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


# ----------------------------------------------------------------------------- data


def calibration_rows(files: list[Any]) -> Rows:
    """Each calibrated file: codec, size, rate, bits per pixel, keyframe interval, decode rates."""
    cells = [
        (visible(f.file), visible(f.codec), f"{f.width}×{f.height}", f"{f.fps:g}", f"{f.frames:,}",
         f"{f.bits_per_pixel:.4f}", f"{f.gop:g}",
         f"{f.decode_fps:,.0f} ({f.decode_fps_min:,.0f}–{f.decode_fps_max:,.0f})",
         f"{f.core_fps_1080p:,.1f}", f"{f.random_read_frames:.2f}")
        for f in files
    ]  # fmt: skip
    headings = ("file", "codec", "size", "fps", "frames", "bit/px", "gop", "decode fps (min–max)", "1080p fps",
                "random read frames")  # fmt: skip
    return Rows(headings, cells)


def calibration_sentence(total: dict[str, Any]) -> str:
    """The values a ledger row takes from a calibration."""
    return (
        f"For a ledger row: codec {visible(total['codec'])}, {total['width']}×{total['height']} at "
        f"{total['fps']:g} fps, "
        f"bits_per_pixel {total['bits_per_pixel']:.4f}, gop {total['gop']:g}, "
        f"core_fps_1080p {total['core_fps_1080p']:,.1f}"
    )


def ledger_row_rows(row: dict[str, Any]) -> Rows:
    """One ledger row, a column a line; a missing number is blank."""
    cells = []
    for column, value in row.items():
        shown = (
            ""
            if isinstance(value, float) and value != value
            else (f"{value:,.6g}" if isinstance(value, float) else visible(value))
        )
        cells.append((column, shown))
    return Rows(("column", "value"), cells)
