"""The charts of ``procure report``: Plotly figures drawn from a plan's JSON object
(:meth:`procure.analyses.request.Solution.to_dict`) and the byte-price sweep, each source in one
colour across every chart (:func:`procure.interfaces.colours.source_colours`).

Every hover label shows a number as the report's tables write it (:mod:`procure.interfaces.cells`),
so that what a reader points at reads the same as the table beside it. Nothing here computes
what the plan says itself.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from .cells import money, number, percent

#: Pattern of the transport part of a bar, beside the plain purchase part (Plotly's shape).
TRANSPORT_PATTERN = "/"
#: Height of a chart [px]; its width follows the page.
CHART_HEIGHT = 360
#: Height of the byte-price chart, three panels [px].
SENSITIVITY_HEIGHT = 620
#: Margins of a chart [px].
CHART_MARGIN = {"l": 60, "r": 20, "t": 40, "b": 50}
#: Font of the charts: the page's system fonts, none fetched [CSS font list, size in px].
CHART_FONT = {"family": "system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif", "size": 13}
#: Colour of a plan's line that is not a source's (the plan's value, the plan's distribution).
PLAN_COLOUR = "#222222"
#: Colour of the mean-scenario plan's distribution.
MEAN_PLAN_COLOUR = "#999999"
#: Significant digits of a range's numbers in the report [digits].
RANGE_DIGITS = 4
#: Height of one source's row in the ranges' chart [px].
RANGE_ROW_HEIGHT = 36
#: Options of every chart: no Plotly logo, sized to the page.
CHART_CONFIG = {"displaylogo": False, "responsive": True}


def _figure(title: str, height: int = CHART_HEIGHT) -> Any:
    import plotly.graph_objects as go

    fig = go.Figure()
    fig.update_layout(title={"text": title, "x": 0.01, "xanchor": "left"}, height=height, margin=CHART_MARGIN,
                      font=CHART_FONT, template="plotly_white", hovermode="closest",
                      legend={"orientation": "h", "y": -0.2})  # fmt: skip
    return fig


def chart_html(fig: Any, div_id: str) -> str:
    """A chart as an HTML fragment in a ``div.chart`` (Plotly's script not included: the page
    loads it once)."""
    return '<div class="chart">' + fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id,
                                               config=CHART_CONFIG) + "</div>"  # fmt: skip


def hours_chart(plan: list[dict[str, Any]], colours: dict[str, str]) -> Any:
    """Hours to buy of each source, a bar each in its colour; the hover shows the table's cell."""
    import plotly.graph_objects as go

    fig = _figure("Hours to buy, by source")
    names = [row["source"] for row in plan]
    fig.add_trace(go.Bar(x=names, y=[row["hours"] for row in plan], marker_color=[colours[n] for n in names],
                         customdata=[number(row["hours"]) for row in plan], name="hours to buy",
                         hovertemplate="%{x}: %{customdata} h<extra></extra>"))  # fmt: skip
    fig.update_yaxes(title_text="hours to buy [h]")
    fig.update_layout(showlegend=False)
    return fig


def bill_chart(plan: list[dict[str, Any]], colours: dict[str, str]) -> Any:
    """Each source's dollars: purchase plain, transport hatched, stacked, in the source's colour."""
    import plotly.graph_objects as go

    fig = _figure("Purchase (plain) and transport (hatched)")
    names = [row["source"] for row in plan]
    for key, label, pattern in (("purchase_usd", "purchase", ""), ("transport_usd", "transport", TRANSPORT_PATTERN)):
        fig.add_trace(go.Bar(x=names, y=[row[key] for row in plan], name=label,
                             marker={"color": [colours[n] for n in names], "pattern": {"shape": pattern}},
                             customdata=[money(row[key]) for row in plan],
                             hovertemplate=f"%{{x}} {label}: %{{customdata}}<extra></extra>"))  # fmt: skip
    fig.update_layout(barmode="stack", legend={"traceorder": "normal", "orientation": "h", "y": -0.2})
    fig.update_yaxes(title_text="$")
    return fig


def capacity_chart(capacities: list[dict[str, Any]]) -> Any:
    """Each capacity's use as a share of its limit; a binding one in the plan's colour."""
    import plotly.graph_objects as go

    fig = _figure("Capacities: share used")
    names = [f"{c['capacity']} [{c['unit']}]" for c in capacities]
    shares = [c["used"] / c["limit"] if c["limit"] else 0.0 for c in capacities]
    text = [f"{number(c['used'])} of {number(c['limit'])} ({percent(s)})" for c, s in zip(capacities, shares,
                                                                                       strict=True)]  # fmt: skip
    fig.add_trace(go.Bar(y=names, x=[100 * s for s in shares], orientation="h", customdata=text,
                         marker_color=[PLAN_COLOUR if c["binding"] else MEAN_PLAN_COLOUR for c in capacities],
                         hovertemplate="%{y}: %{customdata}<extra></extra>"))  # fmt: skip
    fig.update_xaxes(title_text="used [% of the limit]", range=[0, 105])
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(showlegend=False, height=max(200, 70 * len(names) + 100))
    return fig


def sensitivity_chart(table: pd.DataFrame, colours: dict[str, str]) -> Any:
    """The byte-price sweep: hours of each source, the plan's value, and its bill (purchase and
    transport), against the byte-price multiplier (log scale)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.07,
                        subplot_titles=("hours to buy", "value of the plan", "the plan's dollars"))  # fmt: skip
    for source, part in table.groupby("source", sort=False):
        fig.add_trace(go.Scatter(x=part["byte_price_x"], y=part["hours"], mode="lines+markers", name=str(source),
                                 line={"color": colours.get(str(source), PLAN_COLOUR)},
                                 customdata=[number(h) for h in part["hours"]],
                                 hovertemplate=f"{source} at ×%{{x:.3g}}: %{{customdata}} h<extra></extra>"),
                      row=1, col=1)  # fmt: skip
    plan = table.groupby("byte_price_x", sort=True).agg(
        plan_value=("plan_value", "first"), purchase_usd=("purchase_usd", "sum"), transport_usd=("transport_usd", "sum")
    )
    fig.add_trace(go.Scatter(x=plan.index, y=plan["plan_value"], mode="lines+markers", name="value",
                             line={"color": PLAN_COLOUR}, customdata=[number(v, 2) for v in plan["plan_value"]],
                             hovertemplate="value at ×%{x:.3g}: %{customdata}<extra></extra>"),
                  row=2, col=1)  # fmt: skip
    for key, label, dash in (("purchase_usd", "purchase $", "solid"), ("transport_usd", "transport $", "dot")):
        fig.add_trace(go.Scatter(x=plan.index, y=plan[key], mode="lines+markers", name=label,
                                 line={"color": PLAN_COLOUR, "dash": dash}, customdata=[money(v) for v in plan[key]],
                                 hovertemplate=f"{label} at ×%{{x:.3g}}: %{{customdata}}<extra></extra>"),
                      row=3, col=1)  # fmt: skip
    ticks = sorted(set(table["byte_price_x"]))
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=[f"×{x:.3g}" for x in ticks])
    fig.update_xaxes(title_text="multiplier on the byte price [1]", row=3, col=1)
    fig.update_layout(height=SENSITIVITY_HEIGHT, margin=CHART_MARGIN, font=CHART_FONT, template="plotly_white",
                      hovermode="closest", legend={"orientation": "h", "y": -0.12})  # fmt: skip
    return fig


def schedule_chart(schedule: list[dict[str, Any]], periods: list[dict[str, Any]], colours: dict[str, str]) -> Any:
    """Hours bought in each period, stacked by source in its colour, and the money arriving."""
    import plotly.graph_objects as go

    fig = _figure("What to buy in each period")
    from ..program.readout.periods import hours_by_period

    order = [p["period"] for p in periods]
    table = hours_by_period(pd.DataFrame(schedule))
    expected = " (expected over the scenarios)" if any("scenario" in row for row in schedule[:1]) else ""
    fig.update_layout(title={"text": f"What to buy in each period{expected}"})
    for source in table.index:
        vals = [float(table.loc[source].get(p, 0.0)) for p in order]
        fig.add_trace(go.Bar(x=order, y=vals, name=str(source), marker_color=colours.get(str(source), PLAN_COLOUR),
                             customdata=[number(v) for v in vals],
                             hovertemplate=f"{source} in %{{x}}: %{{customdata}} h<extra></extra>"))  # fmt: skip
    fig.update_layout(barmode="stack")
    fig.update_yaxes(title_text="hours bought [h]")
    return fig


def scenario_chart(scenario_values: list[dict[str, Any]], mean_plan_values: list[dict[str, Any]] | None) -> Any:
    """The plan's value over the scenarios as a cumulative distribution, beside the
    mean-scenario plan's."""
    import plotly.graph_objects as go

    fig = _figure("The plan's value over the scenarios")
    series = [("the plan", scenario_values, PLAN_COLOUR)]
    if mean_plan_values:
        series.append(("the mean-scenario plan", mean_plan_values, MEAN_PLAN_COLOUR))
    for name, rows, colour in series:
        ordered = sorted(rows, key=lambda r: r["value"])
        cumulative, total = [], 0.0
        for row in ordered:
            total += row["probability"]
            cumulative.append(total)
        fig.add_trace(go.Scatter(x=[r["value"] for r in ordered], y=cumulative, mode="lines+markers", name=name,
                                 line={"shape": "hv", "color": colour},
                                 customdata=[[str(r["scenario"]), number(r["value"], 2)] for r in ordered],
                                 hovertemplate=f"{name}, scenario %{{customdata[0]}}: value %{{customdata[1]}}"
                                               "<extra></extra>"))  # fmt: skip
    fig.update_xaxes(title_text="value of the plan in a scenario [own-hour equivalents]")
    fig.update_yaxes(title_text="probability of a value at most this", range=[0, 1.02])
    return fig


def range_chart(ranges: pd.DataFrame, colours: dict[str, str]) -> Any:
    """Each range of the ledger as an interval around its value, a panel per number (the
    numbers have their own units); the hover: ``twin survival: 0.5 (0.42 to 0.61)``."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    numbers = list(dict.fromkeys(ranges["number"]))
    sources = list(dict.fromkeys(ranges["source"]))
    fig = make_subplots(rows=1, cols=len(numbers), subplot_titles=numbers, horizontal_spacing=0.12)
    for k, name in enumerate(numbers, start=1):
        part = ranges[ranges["number"] == name]
        text = [f"{s} {name}: {v:.{RANGE_DIGITS}g} ({lo:.{RANGE_DIGITS}g} to {hi:.{RANGE_DIGITS}g})"
                for s, lo, v, hi in zip(part["source"], part["low"], part["value"], part["high"],
                                        strict=True)]  # fmt: skip
        fig.add_trace(go.Scatter(x=part["value"], y=part["source"], mode="markers", name=name, customdata=text,
                                 hovertemplate="%{customdata}<extra></extra>",
                                 marker={"size": 10, "color": [colours.get(s, PLAN_COLOUR) for s in part["source"]]},
                                 error_x={"type": "data", "symmetric": False, "array": part["high"] - part["value"],
                                          "arrayminus": part["value"] - part["low"], "thickness": 2, "width": 6}),
                      row=1, col=k)  # fmt: skip
        # every panel lists every source with a range, in the ledger's order: a source at one height
        fig.update_yaxes(categoryorder="array", categoryarray=sources, range=[len(sources) - 0.5, -0.5], row=1,
                         col=k)  # fmt: skip
    rows = RANGE_ROW_HEIGHT * len(sources)
    height = max(CHART_HEIGHT // 2, rows + CHART_MARGIN["t"] + CHART_MARGIN["b"])
    fig.update_layout(height=height, margin=CHART_MARGIN, font=CHART_FONT, template="plotly_white",
                      hovermode="closest", showlegend=False)  # fmt: skip
    return fig
