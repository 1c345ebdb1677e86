"""The app's Byte prices page: hours per source as the byte price moves, for the Plan page's
budget, held hours and mix bounds, with the interval over which the plan keeps its shape,
said as ``procure solve --ranging`` says it.

The sweep (:data:`procure.defaults.APP_SWEEP_STEPS` points from :data:`SPAN`, each solved to
:data:`procure.defaults.SWEEP_TOLERANCE` on one built program), the ranging and the figure
run in a worker process (:mod:`.work`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from ...defaults import APP_SWEEP_STEPS, SWEEP_TOLERANCE
from ...errors import ProcureError
from ..tables import Rows, ranging_sentence, sweep_rows
from .parts import figure, html_table, table
from .work import Drawing, Latest, PlanRequest, Workers, draw, image_uri

#: The byte-price multipliers the chart spans [1].
SPAN = (0.1, 10.0)


def page() -> Any:
    """The page's layout: the chart, the sentence on the ranging, the table of the sweep."""
    from shiny import ui

    return ui.card(
        ui.card_header(
            "Hours per source as the byte price moves (the budget, held hours and mix bounds of the Plan page)"
        ),
        figure("byte_prices"),
        ui.output_text("ranging"),
        table("sweep_table"),
    )


def sweep_frame(request: PlanRequest) -> pd.DataFrame:
    """The plan of ``request`` at each byte-price multiplier of the chart, as rows of
    :data:`procure.analyses.sensitivity.SWEEP_COLUMNS`: one built program re-priced at each."""
    import numpy as np

    from ...program.solve.program import Program

    base = request.problem()
    program = Program(base, tolerance=SWEEP_TOLERANCE)
    frames = []
    for x in np.geomspace(*SPAN, APP_SWEEP_STEPS):
        problem = base.with_byte_price_x(float(x))
        program.reprice(problem)
        plan = program.solve()
        s = plan.sources
        idle = float(problem.sources["idle_usd_per_hour"].to_numpy() @ s["hours"].to_numpy())
        frames.append(pd.DataFrame({
            "parameter": "byte_price_x", "x": float(x), "byte_price_x": float(x), "source": s["source"],
            "hours": s["hours"], "purchase_usd": s["purchase_usd"], "transport_usd": s["transport_usd"],
            "value": s["value"], "plan_value": plan.value, "lambda": plan.lambda_,
            "idle_share": idle / plan.transport_usd if plan.transport_usd > 0 else 0.0,
            "transport_share": plan.transport_usd / plan.spent_usd if plan.spent_usd > 0 else 0.0,
        }))  # fmt: skip
    return pd.concat(frames, ignore_index=True)


def sweep_chart(frame: pd.DataFrame) -> str | None:
    """The sweep as an interactive chart (HTML for the page, which loads Plotly once), each
    source in its colour; None where Plotly is not installed."""
    try:
        import plotly  # noqa: F401
    except ImportError:
        return None
    from ..colours import source_colours
    from ..report_charts import chart_html, sensitivity_chart

    colours = source_colours(list(dict.fromkeys(frame["source"])))
    return chart_html(sensitivity_chart(frame, colours), "app-chart-byte-prices")


def sweep_result(request: PlanRequest) -> tuple[tuple[bytes | str, str, Rows] | None, str]:
    """In a worker: the figure (an interactive chart's HTML, or a PNG without Plotly), the
    ranging sentence and the sweep's table of ``request``, or why there are none."""
    from ...analyses.sensitivity import RANGING_LIMITS, byte_price_range

    try:
        frame = sweep_frame(request)
        span = byte_price_range(request.problem())
    except ProcureError as exc:
        return None, str(exc)
    chart = sweep_chart(frame)
    shown = chart if chart is not None else draw(Drawing("sensitivity_hours", None, (frame, span)))
    return (shown, ranging_sentence(span, RANGING_LIMITS), sweep_rows(frame, "byte_price_x")), ""


def server(input: Any, output: Any, asked: Callable[[], tuple[PlanRequest | None, str]], workers: Workers) -> Latest:
    """Register the page's outputs in the running session (its inputs are the Plan page's);
    returns its job, to close when the session ends."""
    from shiny import reactive, ui
    from shiny import render as shiny_render

    async def run(request: PlanRequest) -> Any:
        return await workers.call(sweep_result, request)

    job = Latest(run)

    @reactive.calc
    def sweep() -> tuple[Any, str]:
        request, message = asked()
        if request is None:
            return None, f"{message} (on the Plan page)"
        if request.budget <= 0:
            return None, "budget: give a number > 0 [$] on the Plan page"
        return job.get(request)

    @shiny_render.ui
    def byte_prices() -> Any:
        result, _ = sweep()
        if result is None:
            return None
        if isinstance(result[0], str):
            return ui.HTML(result[0])
        alt = "Hours bought of each source against the byte-price multiplier, the ranging interval shaded"
        return ui.img(src=image_uri(result[0]), alt=alt)

    @shiny_render.text
    def ranging() -> str:
        result, message = sweep()
        return result[1] if result is not None else message

    @shiny_render.ui
    def sweep_table() -> Any:
        result, _ = sweep()
        return html_table(result[2]) if result is not None else None

    return job
