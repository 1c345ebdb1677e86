"""The app's Pipeline page charts, interactive (Plotly): the stages' rates with the binding one
marked, and the bill of one recorded hour split into its terms. A bar's hover shows its figure
as the page's facts print it (:mod:`procure.interfaces.cells`)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from .cells import money, number
from .report_charts import CHART_FONT, CHART_MARGIN

#: Height of each of the page's charts [px].
PIPELINE_CHART_HEIGHT = 260
#: Colour of the binding stage.
BINDING_COLOUR = "#d62728"
#: Colour of a stage that keeps up, beside the binding one's (:data:`BINDING_COLOUR`).
STAGE_COLOUR = "#999999"
#: Colours of the bill's terms, none of them a source's colour (the bill is one source's).
TERM_COLOURS = {"bytes": "#4c72b0", "cores": "#dd8452", "idle accelerator": "#8c8c8c"}
#: Bottom margin of the bill's chart, room for its legend under the axis [px].
BILL_LEGEND_MARGIN = 95
#: A bar's hover: its text as the page prints it, nothing else.
HOVER = "%{customdata}<extra></extra>"


def _layout(fig: Any, title: str) -> Any:
    fig.update_layout(title={"text": title, "x": 0.01, "xanchor": "left"}, height=PIPELINE_CHART_HEIGHT,
                      margin=CHART_MARGIN, font=CHART_FONT, template="plotly_white", hovermode="closest",
                      showlegend=False)  # fmt: skip
    return fig


def stage_chart(row: pd.Series) -> Any:
    """The accelerator's demand, the read and the decode stage [frames/s] (log scale), the
    binding stage in red; the hover: ``decode: 960.0 frames/s, binds``."""
    import plotly.graph_objects as go

    names = ["accelerator", "read", "decode"]
    rates = [float(row["demand_fps"]), float(row["read_fps"]), float(row["decode_fps"])]
    binding = str(row["stage"])
    text = [f"{n}: {number(r)} frames/s" + (", binds" if n == binding else "") for n, r in zip(names, rates,
                                                                                             strict=True)]  # fmt: skip
    colours = [BINDING_COLOUR if n == binding else STAGE_COLOUR for n in names]
    fig = go.Figure(go.Bar(y=names, x=rates, orientation="h", customdata=text, hovertemplate=HOVER,
                           marker_color=colours))  # fmt: skip
    fig.update_xaxes(type="log", title_text="frames/s (log scale)")
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, f"busy {100 * float(row['busy']):.1f} %")


def bill_chart(row: pd.Series) -> Any:
    """The bill of one recorded hour as one bar stacked by term [$]; the hover: ``bytes $4.75``."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for name, key in (("bytes", "bytes_usd"), ("cores", "cores_usd"), ("idle accelerator", "idle_usd")):
        value = float(row[key])
        fig.add_trace(go.Bar(y=["bill"], x=[value], orientation="h", name=name, marker_color=TERM_COLOURS[name],
                             customdata=[f"{name} {money(value)}"], hovertemplate=HOVER))  # fmt: skip
    fig.update_layout(barmode="stack")
    fig.update_xaxes(title_text="$ per recorded hour")
    fig.update_yaxes(showticklabels=False)
    fig = _layout(fig, f"bill {money(float(row['bill_usd']))}, {100 * float(row['share']):.1f} % of the price")
    fig.update_layout(showlegend=True, legend={"orientation": "h", "y": -0.6, "traceorder": "normal"},
                      margin={**CHART_MARGIN, "b": BILL_LEGEND_MARGIN})  # fmt: skip
    return fig


def pipeline_chart_html(name: str, row: pd.Series) -> str | None:
    """The page's chart ``name`` (``stage_rates`` or ``bill_split``) as HTML, or None where it
    has no interactive form or Plotly is not installed (the page then shows its figure)."""
    try:
        import plotly  # noqa: F401
    except ImportError:
        return None
    from .report_charts import chart_html

    make = {"stage_rates": stage_chart, "bill_split": bill_chart}.get(name)
    return None if make is None else chart_html(make(row), f"app-chart-{name.replace('_', '-')}")
