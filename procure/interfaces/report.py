"""``procure report``'s page: one self-contained HTML file of a solved request.

:func:`report_html` writes the page from the JSON object ``procure solve --json`` prints for the
same request (:meth:`procure.analyses.request.Solution.to_dict`) and the byte-price sweep of
:func:`byte_price_points`: the question and the answer first (what to buy, what it costs to buy
and to move, the value and its certificate), then the bill per source, the capacities and what
one more unit of each is worth, the byte-price sensitivity, and where the plan has them the
schedule over periods, the scenarios with EVPI and VSS, and the formats chosen.

Every number on the page is a number of that JSON object, formatted as the command line's tables
write it (:mod:`procure.interfaces.cells`); each carries its exact value in ``data-value`` and
its place in the object in ``data-key`` (``plan.twin.hours``), and the whole object is in the
page (``<script id="procure-plan">``). Plotly's JavaScript is inlined, so the page opens with no
network; the charts are :mod:`procure.interfaces.report_charts`.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..defaults import DEFAULT_TIME_LIMIT, RANGING_LIMITS, SWEEP_TOLERANCE
from .cells import money, number, percent

if TYPE_CHECKING:
    import pandas as pd

    from ..program import Problem

#: Byte-price multipliers the report's sweep spans, relative to the request's byte price [1].
SWEEP_RANGE = (0.1, 10.0)
#: Points of the report's sweep (log-spaced) [points].
SWEEP_STEPS = 9
#: Fewest seconds left of the time limit for the sweep to solve one more point [s].
SWEEP_LEAST_SECONDS = 1e-3
#: Digits λ and the shadow prices are written with [significant digits].
PRICE_DIGITS = 4
#: The page's style: system fonts only (none fetched), a column readable at 1280 px.
STYLE = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;margin:0;color:#222;
background:#fafafa}
main{max-width:1180px;margin:0 auto;padding:16px 24px 48px;background:#fff}
h1{font-size:1.6em;margin:.4em 0 .2em}h2{font-size:1.25em;margin:1.6em 0 .4em;border-bottom:1px solid #ddd}
.lead{font-size:1.1em;margin:.3em 0}.muted{color:#666}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:12px 0}
.card{flex:1 1 200px;border:1px solid #ddd;border-radius:6px;padding:8px 12px}
.card .label{color:#666;font-size:.85em}.card .big{font-size:1.4em;font-weight:600}
table{border-collapse:collapse;margin:8px 0;font-size:.92em}th,td{padding:3px 10px;border-bottom:1px solid #eee}
th{text-align:left;background:#f4f4f4}td{white-space:nowrap}td.n{text-align:right;font-variant-numeric:tabular-nums}
.swatch{display:inline-block;width:.8em;height:.8em;border-radius:2px;margin-right:6px;vertical-align:middle}
.chart{width:100%;min-width:0}.pair{display:grid;grid-template-columns:auto minmax(0,1fr);gap:16px;align-items:start}
@media (max-width:1000px){.pair{grid-template-columns:1fr}}
dl.q{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:8px 0}
dl.q dt{color:#666}dl.q dd{margin:0}
@media print{body{background:#fff}main{padding:0}.chart{break-inside:avoid}.modebar-container{display:none}}
"""


def byte_price_points(
    problem: Problem, *, tolerance: float = SWEEP_TOLERANCE, time_left: Callable[[], float] | None = None
) -> pd.DataFrame:
    """The plan of ``problem`` re-solved at :data:`SWEEP_STEPS` byte-price multipliers over
    :data:`SWEEP_RANGE`, one built program repriced (as :func:`procure.analyses.sensitivity.sweep`
    does), in the table of that sweep (:data:`procure.analyses.sensitivity.SWEEP_COLUMNS`).

    Parameters
    ----------
    problem : Problem
        The plan's problem at one time (budget or target mode).
    tolerance : float, default :data:`~procure.defaults.SWEEP_TOLERANCE`
        Of each re-solve [1].
    time_left : callable, optional
        The seconds left for the sweep, asked before each point [s]; none left, the sweep stops.

    Returns
    -------
    pandas.DataFrame
        The points solved; ``attrs["notes"]`` says which were not, and why (no time left, or
        no certified plan at that byte price).
    """
    import pandas as pd

    from ..analyses.sensitivity import SWEEP_COLUMNS, _check_grid, _rows
    from ..errors import SolveError
    from ..program.solve.program import Program

    notes: list[str] = []
    frames = []
    program: Program | None = None
    for x in _check_grid(*SWEEP_RANGE, SWEEP_STEPS):
        left = time_left() if time_left is not None else None
        if left is not None and left < SWEEP_LEAST_SECONDS:
            notes.append(f"the time limit ran out before the byte price ×{x:.3g}: the sweep stops there")
            break
        at = problem.with_byte_price_x(float(x))
        try:
            if program is None:
                limit = DEFAULT_TIME_LIMIT if left is None else left
                program = Program(problem, tolerance=tolerance, time_limit=limit)
            elif left is not None:
                program.time_limit = left
            program.reprice(at)
            frames.append(_rows(program.solve(), at, "byte_price_x", float(x), float(x)))
        except SolveError as exc:
            notes.append(f"no plan at the byte price ×{x:.3g}: {exc}")
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(SWEEP_COLUMNS))
    table.attrs["notes"] = notes
    return table


def _num(key: str, value: Any, text: str) -> str:
    """A number as shown, with its exact value and its place in the plan's object."""
    return (
        f'<span class="num" data-key="{html.escape(key)}" data-value="{html.escape(json.dumps(value))}">{text}</span>'
    )


def _price(value: float) -> str:
    return f"{value:.{PRICE_DIGITS}g}"


def _table(heads: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool]) -> str:
    """An HTML table; cells are HTML already (escaped where they are text)."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in heads)
    body = "".join(
        "<tr>" + "".join(f'<td class="n">{c}</td>' if n else f"<td>{c}</td>" for c, n in zip(r, numeric, strict=True))
        + "</tr>" for r in rows
    )  # fmt: skip
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _card(label: str, inner: str, note: str = "") -> str:
    extra = f'<div class="muted">{note}</div>' if note else ""
    return f'<div class="card"><div class="label">{html.escape(label)}</div><div class="big">{inner}</div>{extra}</div>'


def _swatch(name: str, colours: dict[str, str]) -> str:
    return f'<span class="swatch" style="background:{colours.get(name, "#222")}"></span>{html.escape(name)}'


def _answer(r: dict[str, Any], colours: dict[str, str]) -> str:
    from .report_charts import chart_html, hours_chart

    bought = [row for row in r["plan"] if row["hours"] > 0]
    words = ", ".join(f"{number(row['hours'])} h of {html.escape(row['source'])}" for row in bought) or "nothing"
    if r["mode"] == "target":
        lead = (f"Reach a value of {_num('target', r['target'], number(r['target'], 1))} at least cost: buy {words}, "
                f"for {_num('spent_usd', r['spent_usd'], money(r['spent_usd']))} all in.")  # fmt: skip
        bound = _card(
            "least money any plan needs",
            _num("money_lower_bound", r["money_lower_bound"], money(r["money_lower_bound"] or 0.0)),
        )
    else:
        lead = (f"With {_num('budget', r['budget'], money(r['budget']))} to spend: buy {words}.")  # fmt: skip
        bound = _card(
            "no plan is worth more than",
            _num("value_upper_bound", r["value_upper_bound"], number(r["value_upper_bound"], 2)),
        )
    share = r["transport_usd"] / r["spent_usd"] if r["spent_usd"] else 0.0
    lam, tolerance = r["lambda"], f"{100 * r['tolerance']:g} %"
    cards = [
        _card("all in", _num("spent_usd", r["spent_usd"], money(r["spent_usd"])),
              f"to buy {_num('purchase_usd', r['purchase_usd'], money(r['purchase_usd']))} + to move "
              f"{_num('transport_usd', r['transport_usd'], money(r['transport_usd']))} ({percent(share)} moving)"),
        _card("value [own-hour equivalents]", _num("value", r["value"], number(r["value"], 2)),
              f"status {r['status']}"),
        bound,
        _card("certificate: gap", _num("gap", r["gap"], f"{100 * r['gap']:.4f} %"),
              f"within the tolerance {_num('tolerance', r['tolerance'], tolerance)}"),
        _card("λ: value of the next dollar", _num("lambda", lam, _price(lam)),
              f"one more equivalent costs {money(1 / lam)}" if lam and lam > 0 else ""),
    ]  # fmt: skip
    heads = ["source", "buy h", "held h", "purchase $", "transport $", "effective h", "value", "value per next $"]
    with_format = any("format" in row for row in r["plan"])
    if with_format:
        heads.insert(1, "format")
    rows = []
    for row in r["plan"]:
        s = row["source"]
        cells = [_swatch(s, colours)]
        if with_format:
            cells.append(html.escape(str(row.get("format", ""))))
        cells += [_num(f"plan.{s}.hours", row["hours"], number(row["hours"])),
                  _num(f"plan.{s}.held_hours", row["held_hours"], number(row["held_hours"])),
                  _num(f"plan.{s}.purchase_usd", row["purchase_usd"], money(row["purchase_usd"])),
                  _num(f"plan.{s}.transport_usd", row["transport_usd"], money(row["transport_usd"])),
                  _num(f"plan.{s}.effective_hours", row["effective_hours"], number(row["effective_hours"])),
                  _num(f"plan.{s}.value", row["value"], number(row["value"], 2)),
                  _num(f"plan.{s}.marginal_value_per_usd", row["marginal_value_per_usd"],
                       _price(row["marginal_value_per_usd"]))]  # fmt: skip
        rows.append(cells)
    numeric = [False] * (2 if with_format else 1) + [True] * 7
    chart = chart_html(hours_chart(r["plan"], colours), "chart-hours")
    return (f'<section id="answer"><h2>The answer</h2><p class="lead">{lead}</p><div class="cards">{"".join(cards)}'
            f'</div><div class="pair">{_table(heads, rows, numeric)}{chart}</div></section>')  # fmt: skip


def _bill(r: dict[str, Any], colours: dict[str, str]) -> str:
    from .report_charts import bill_chart, chart_html

    rows = []
    for row in r["plan"]:
        s, all_in = row["source"], row["purchase_usd"] + row["transport_usd"]
        rows.append([_swatch(s, colours),
                     _num(f"plan.{s}.purchase_usd", row["purchase_usd"], money(row["purchase_usd"])),
                     _num(f"plan.{s}.transport_usd", row["transport_usd"], money(row["transport_usd"])),
                     money(all_in), percent(row["transport_usd"] / all_in) if all_in else "—"])  # fmt: skip
    table = _table(["source", "purchase $", "transport $", "all in $", "moving share"], rows, [False, *[True] * 4])
    return (f'<section id="bill"><h2>The bill per source</h2><p>What each source costs to buy, and to move through '
            f"the training run (its transport bill).</p><div class=\"pair\">{table}"
            f"{chart_html(bill_chart(r['plan'], colours), 'chart-bill')}</div></section>")  # fmt: skip


def _capacities(r: dict[str, Any]) -> str:
    from .report_charts import capacity_chart, chart_html

    per_period = any("period" in c for c in r["capacities"])
    heads = (["period"] if per_period else []) + ["capacity", "used", "limit", "binds", "value of one more unit",
                                                  "$ of one more unit"]  # fmt: skip
    rows = []
    for c in r["capacities"]:
        key = f"capacities.{c['capacity']}" + (f".{c['period']}" if per_period else "")
        rows.append(([html.escape(str(c["period"]))] if per_period else []) + [
            html.escape(f"{c['capacity']} [{c['unit']}]"), number(c["used"]), number(c["limit"]),
            "binds" if c["binding"] else "", _num(f"{key}.shadow_price", c["shadow_price"], _price(c["shadow_price"])),
            _num(f"{key}.shadow_usd", c["shadow_usd"], money(c["shadow_usd"]))])  # fmt: skip
    prices = "".join(f"<li>{html.escape(name)}: {_num(f'shadow_prices.{name}', v, _price(v))} value per unit</li>"
                     for name, v in r["shadow_prices"].items())  # fmt: skip
    lam = r["lambda"]
    text = (f"<p>λ = {_num('lambda', lam, _price(lam))}: the value the next dollar buys. A capacity that binds has a "
            "shadow price: the value one more unit of it would bring, and in dollars (its value over λ) what the plan "
            f"could pay for that unit.</p><ul>{prices}</ul>")  # fmt: skip
    numeric = ([False] if per_period else []) + [False, True, True, False, True, True]
    chart = "" if per_period else chart_html(capacity_chart(r["capacities"]), "chart-capacities")
    return (f'<section id="capacities"><h2>Capacities, and what one more unit is worth</h2>{text}'
            f"{_table(heads, rows, numeric)}{chart}</section>")  # fmt: skip


def _sensitivity(r: dict[str, Any], sweep: pd.DataFrame | None, colours: dict[str, str]) -> str:
    from .report_charts import chart_html, sensitivity_chart

    if sweep is None:
        return ""
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in sweep.attrs.get("notes", []))
    notes = f"<ul>{notes}</ul>" if notes else ""
    if sweep.empty:
        return f'<section id="sensitivity"><h2>If bytes cost more or less</h2>{notes}</section>'
    plan = sweep.groupby("byte_price_x", sort=True).agg(
        value=("plan_value", "first"), lam=("lambda", "first"), purchase=("purchase_usd", "sum"),
        transport=("transport_usd", "sum"))  # fmt: skip
    rows = [[f"×{x:.3g}", number(p.value, 2), _price(p.lam), money(p.purchase), money(p.transport)]
            for x, p in plan.iterrows()]  # fmt: skip
    ranging = ""
    if r.get("byte_price_range") is not None:
        lo, hi = r["byte_price_range"]
        low = f"below {RANGING_LIMITS[0]:g}" if lo <= RANGING_LIMITS[0] else f"{lo:.3g}"
        high = f"above {RANGING_LIMITS[1]:g}" if hi >= RANGING_LIMITS[1] else f"{hi:.3g}"
        ranging = (f"<p>The plan keeps its shape (the same sources bought, the same capacities binding) from "
                   f"{_num('byte_price_range.0', lo, low)} to {_num('byte_price_range.1', hi, high)} times the byte "
                   "price.</p>")  # fmt: skip
    return (f'<section id="sensitivity"><h2>If bytes cost more or less</h2><p>The plan at one time, every source '
            f"as recorded and without scenarios, re-solved at {SWEEP_STEPS} multipliers of the byte price from "
            f"{SWEEP_RANGE[0]:g} to {SWEEP_RANGE[1]:g} (each to a relative gap of {SWEEP_TOLERANCE:g}).</p>"
            f"{notes}{ranging}"
            f"{_table(['byte price', 'value', 'λ', 'purchase $', 'transport $'], rows, [False, *[True] * 4])}"
            f"{chart_html(sensitivity_chart(sweep, colours), 'chart-sensitivity')}</section>")  # fmt: skip


def _schedule(r: dict[str, Any], colours: dict[str, str]) -> str:
    from .report_charts import chart_html, schedule_chart

    if not r.get("periods"):
        return ""
    heads = ["period", "months", "money arriving", "purchase $", "transport $", "spent $", "carried $", "value", "λ"]
    rows = [[html.escape(str(p["period"])), number(p["months"], 1),
             *(_num(f"periods.{p['period']}.{k}", p[k], money(p[k]))
               for k in ("money_usd", "purchase_usd", "transport_usd", "spent_usd", "carried_usd")),
             _num(f"periods.{p['period']}.value", p["value"], number(p["value"], 2)),
             _num(f"periods.{p['period']}.lambda", p["lambda"], _price(p["lambda"]))]
            for p in r["periods"]]  # fmt: skip
    chart = chart_html(schedule_chart(r["schedule"], r["periods"], colours), "chart-schedule")
    return (f'<section id="schedule"><h2>The schedule: what to buy in each period</h2>'
            f"{_table(heads, rows, [False, *[True] * 8])}{chart}</section>")  # fmt: skip


def _scenarios(r: dict[str, Any]) -> str:
    from .report_charts import chart_html, scenario_chart

    if not r.get("scenario_values"):
        return ""
    facts = [("expected value", "expected_value", 2), ("CVaR: mean of the worst share", "cvar", 2),
             ("worst share (CVaR's α)", "risk_alpha", None), ("weight of the CVaR", "risk_weight", None),
             ("EVPI: what knowing the scenario would be worth", "evpi", 2),
             ("VSS: what planning over the scenarios is worth over the mean scenario", "vss", 2),
             ("wait and see: the value with the scenario known", "wait_and_see", 2),
             ("the mean-scenario plan's objective", "mean_plan_objective", 2)]  # fmt: skip
    rows = []
    for label, key, digits in facts:
        v = r.get(key)
        if v is None:
            continue
        rows.append([html.escape(label), _num(key, v, number(v, digits) if digits is not None else f"{v:g}")])
    chart = chart_html(scenario_chart(r["scenario_values"], r.get("mean_plan_values")), "chart-scenarios")
    return (f'<section id="scenarios"><h2>Over {len(r["scenario_values"])} scenarios</h2>'
            f"{_table(['', 'value [own-hour equivalents]'], rows, [False, True])}{chart}</section>")  # fmt: skip


def _formats(r: dict[str, Any]) -> str:
    if not r.get("formats"):
        return ""
    heads = ["source", "format", "all-in $/h", "bill $/h", "accel-h/h", "core-h/h", "GB/h", "px/token", "bought h"]
    rows = [[html.escape(f["source"]), html.escape(f["format"]) + (" ✓" if f["hours"] > 0 else ""),
             money(f["cost_usd_per_hour"]), money(f["bill_usd_per_hour"]), f"{f['accelerator_hours']:.3f}",
             number(f["core_hours"], 2), number(f["gb_per_hour"], 2), number(f["pixels_per_token"], 0),
             _num(f"formats.{f['source']}.{f['format']}.hours", f["hours"], number(f["hours"]))]
            for f in r["formats"]]  # fmt: skip
    cores = r.get("cores_per_accelerator")
    rented = ", ".join(f"{html.escape(k)} {number(v)}" for k, v in (r.get("rented") or {}).items()) or "nothing"
    extra = (f"<p>Cores per accelerator: {_num('cores_per_accelerator', cores, f'{cores:g}')}. Rented: {rented}.</p>"
             if cores is not None else "")  # fmt: skip
    return (f'<section id="formats"><h2>The formats chosen</h2><p>What keeping each hour in each format costs and '
            f"uses; ✓ marks the format the plan keeps a source in.</p>{extra}"
            f"{_table(heads, rows, [False, False, *[True] * 7])}</section>")  # fmt: skip


def _ranges(record: dict[str, Any], ranges: pd.DataFrame | None, colours: dict[str, str]) -> str:
    from .report_charts import RANGE_DIGITS, chart_html, range_chart

    if ranges is None or ranges.empty:
        return ""
    if record.get("scenario_values"):
        used = "The plan above is made over its scenarios (with <code>--samples N</code>, drawn from these ranges)."
    else:
        used = "The plan above uses each number's value; <code>--samples N</code> draws scenarios from these ranges."
    rows = [[_swatch(r.source, colours), html.escape(r.number),
             *(_num(f"ranges.{r.source}.{r.number}.{k}", v, f"{v:.{RANGE_DIGITS}g}")
               for k, v in (("low", r.low), ("value", r.value), ("high", r.high)))]
            for r in ranges.itertuples()]  # fmt: skip
    chart = chart_html(range_chart(ranges, colours), "chart-ranges")
    return ('<section id="ranges"><h2>The uncertain numbers</h2><p>The ranges the ledger gives (<code>NAME_low'
            "</code> and <code>NAME_high</code> in sources.csv; <code>procure fit --write</code> writes a fitted "
            f"number's interval there, 90 % by default). {used}</p>"
            f"{_table(['source', 'number', 'low', 'value', 'high'], rows, [False, False, True, True, True])}"
            f"{chart}</section>")  # fmt: skip


def report_html(record: dict[str, Any], question: Sequence[tuple[str, str]], *, sweep: pd.DataFrame | None = None,
                ranges: pd.DataFrame | None = None, title: str = "What to buy next") -> str:  # fmt: skip
    """The report's page.

    Parameters
    ----------
    record : dict
        The plan's JSON object, as ``procure solve --json`` prints it (:meth:`Solution.to_dict
        <procure.analyses.request.Solution.to_dict>`).
    question : sequence of (str, str)
        What was asked, as (label, text) lines: the ledger, the budget or target, and each option given.
    sweep : pandas.DataFrame, optional
        The byte-price sweep (:func:`byte_price_points`); without it, no sensitivity section.
    ranges : pandas.DataFrame, optional
        The ledger's ranges (:func:`procure.ledger.scenarios.range_table`); without them or
        when empty, no section of the uncertain numbers.
    title : str, default "What to buy next"
        The page's heading.

    Returns
    -------
    str
        A whole HTML document, Plotly's JavaScript inlined.
    """
    from plotly.offline import get_plotlyjs

    from .colours import source_colours

    colours = source_colours([row["source"] for row in record["plan"]])
    asked = "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in question)
    notes = "".join(f"<li>{html.escape(str(n))}</li>" for n in record.get("notes") or [])
    sections = [
        f'<section id="question"><h2>The question</h2><dl class="q">{asked}</dl></section>',
        _answer(record, colours),
        _bill(record, colours),
        _capacities(record),
        _sensitivity(record, sweep, colours),
        _schedule(record, colours),
        _scenarios(record),
        _formats(record),
        _ranges(record, ranges, colours),
        f'<section id="notes"><h2>Notes</h2><ul>{notes}</ul></section>' if notes else "",
    ]
    data = json.dumps(record).replace("</", "<\\/")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style><script>{get_plotlyjs()}</script></head><body><main>"
            f"<h1>{html.escape(title)}</h1>{''.join(sections)}"
            f'<script type="application/json" id="procure-plan">{data}</script></main></body></html>\n')  # fmt: skip
