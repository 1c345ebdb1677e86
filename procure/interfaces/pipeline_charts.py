"""The app's Pipeline page charts, interactive (Plotly): the stages' rates with the binding one
marked, the bill of one recorded hour split into its terms, and the simulated queue's window
(:func:`queue_chart`). A bar's hover shows its figure as the page's facts print it
(:mod:`procure.interfaces.cells`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from .cells import money, number
from .queue_view import TIMELINE_FRAMES, QueueWindow, queue_window
from .report_charts import CHART_FONT, CHART_MARGIN

if TYPE_CHECKING:
    from ..pipeline.queue import SimulationResult

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
#: Colours of the queue's chart: a decoder's work by its kind, the buffer, the accelerator.
QUEUE_COLOURS = {"core": "#4c72b0", "nvdec": "#55a868", "buffer": "#dd8452", "accelerator": "#c44e52"}
#: The queue chart's height: fixed part, and per decoder lane [px].
QUEUE_CHART_HEIGHT = (330, 16)
#: Digits of the queue chart's times in its hovers [decimals of ms].
TIME_DIGITS = 2
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


def _span(start: float, end: float) -> str:
    return f"{start:.{TIME_DIGITS}f}–{end:.{TIME_DIGITS}f} ms"


def queue_chart(w: QueueWindow, busy_formula: float | None = None) -> Any:
    """The window of a simulated queue: each decoder's decodes on its lane, the buffer's level
    (its capacity dashed), and the accelerator's training, on one time axis [ms].

    Hovers: ``core 3 decodes frame 412: 1.25–9.80 ms``, ``12 frames in the buffer from
    3.10 ms``, ``frame 407 trains: 2.00–3.10 ms``.
    """
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    lanes = max(len(w.lanes), 1)
    titles = (w.decoders_title, w.buffer_title, w.accelerator_title(busy_formula))
    fig = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.09, row_heights=[lanes + 3.0, 5.0, 2.0],
                        subplot_titles=titles)  # fmt: skip
    for kind, part in w.decodes.groupby("kind", sort=True):
        text = [f"{lane} decodes frame {f}: {_span(a, b)}" for lane, f, a, b in zip(part["lane"], part["frame"],
                part["start_ms"], part["end_ms"], strict=True)]  # fmt: skip
        fig.add_trace(go.Bar(y=part["lane"], x=part["end_ms"] - part["start_ms"], base=part["start_ms"],
                             orientation="h", name=str(kind), customdata=text, hovertemplate=HOVER,
                             marker={"color": QUEUE_COLOURS.get(str(kind), STAGE_COLOUR),
                                     "line": {"color": "white", "width": 0.5}}), row=1, col=1)  # fmt: skip
    text = [f"{int(n)} frames in the buffer from {t:.{TIME_DIGITS}f} ms" for t, n in zip(w.buffer_ms,
            w.buffer_frames, strict=True)]  # fmt: skip
    fig.add_trace(go.Scatter(x=w.buffer_ms, y=w.buffer_frames, mode="lines", line={"shape": "hv",
                             "color": QUEUE_COLOURS["buffer"]}, name="buffer", customdata=text,
                             hovertemplate=HOVER), row=2, col=1)  # fmt: skip
    fig.add_hline(y=w.buffer, line={"dash": "dot", "color": STAGE_COLOUR, "width": 1}, row=2, col=1,
                  annotation_text=f"buffer holds {w.buffer}", annotation_position="top left")  # fmt: skip
    t = w.trains
    text = [f"frame {f} trains: {_span(a, b)}" for f, a, b in zip(t["frame"], t["start_ms"], t["end_ms"],
                                                                  strict=True)]  # fmt: skip
    fig.add_trace(go.Bar(y=["accelerator"] * len(t), x=t["end_ms"] - t["start_ms"], base=t["start_ms"],
                         orientation="h", name="training", customdata=text, hovertemplate=HOVER,
                         marker={"color": QUEUE_COLOURS["accelerator"], "line": {"color": "white", "width": 0.5}}),
                  row=3, col=1)  # fmt: skip
    # the lanes in the window's order, each drawn even when it decodes nothing in the window
    fig.update_yaxes(categoryorder="array", categoryarray=w.lanes, range=[lanes - 0.5, -0.5], row=1, col=1)
    fig.update_yaxes(title_text="frames", rangemode="tozero", row=2, col=1)
    fig.update_yaxes(showticklabels=False, row=3, col=1)
    fig.update_xaxes(title_text=w.time_label, row=3, col=1)
    fig.update_layout(height=QUEUE_CHART_HEIGHT[0] + QUEUE_CHART_HEIGHT[1] * lanes, margin=CHART_MARGIN,
                      font=CHART_FONT, template="plotly_white", hovermode="closest", showlegend=False,
                      barmode="overlay", bargap=0.15)  # fmt: skip
    fig.update_annotations(font={"size": CHART_FONT["size"]}, xanchor="left", x=0.0)
    return fig


def queue_chart_html(row: pd.Series, frames: int) -> str:
    """The app's queue chart of one evaluated pipeline row: the queue simulated over ``frames``
    frames (:func:`procure.pipeline.queue.simulate`), its window drawn by :func:`queue_chart`,
    as HTML. Run in a worker process: the simulation takes a moment."""
    from ..pipeline.queue import simulate
    from .report_charts import chart_html

    result: SimulationResult = simulate(row, frames=frames)
    return chart_html(queue_chart(queue_window(result, TIMELINE_FRAMES), float(row["busy"])), "app-chart-queue")


def interactive() -> bool:
    """Whether Plotly is installed, so that the page's charts are interactive (else figures)."""
    try:
        import plotly  # noqa: F401
    except ImportError:
        return False
    return True


def pipeline_chart_html(name: str, row: pd.Series) -> str | None:
    """The page's chart ``name`` (``stage_rates`` or ``bill_split``) as HTML, or None where it
    has no quick interactive form (the queue's is drawn in a worker: :func:`queue_chart_html`)
    or Plotly is not installed (the page then shows its figure)."""
    if not interactive():
        return None
    from .report_charts import chart_html

    make = {"stage_rates": stage_chart, "bill_split": bill_chart}.get(name)
    return None if make is None else chart_html(make(row), f"app-chart-{name.replace('_', '-')}")
