"""The app's Pipeline page: one format on one cluster, as ``procure bill`` evaluates it.

The stages' rates with the binding one marked, the busy fraction, the cores Little's law asks
for, the bill split, and the queue as ``procure simulate`` runs it. No solve. The numbers are
evaluated at once; the figures are drawn in a worker process (:mod:`.work`). Every input is
checked before it is read: a select takes only the page's own choices.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...defaults import APP_MOST_CORES, APP_SIMULATED_FRAMES
from ...errors import ProcureError
from ...ledger import Ledger, cluster_with, model_names, variant
from ...ledger.load import load_accelerators
from ..pipeline_charts import interactive, pipeline_chart_html, queue_chart_html
from ..tables import pipeline_numbers
from .parts import Refused, boxed, choices, chosen, fact, figure, number, shown
from .work import Drawing, Latest, Workers, image_uri

#: Preset resolutions of the ``resolution`` input: width × height [px].
RESOLUTIONS = {"480p": (854, 480), "720p": (1280, 720), "1080p": (1920, 1080), "2160p": (3840, 2160)}
#: Choices of the ``read`` input: label → the ledger's ``read`` value.
READS = {"order": "in order", "random": "random", "decoded": "decoded"}
#: Choices of the ``byte_price_x`` input [1]; "free" is 0.
BYTE_PRICES = {"0.1": "0.1 ×", "1": "1 ×", "10": "10 ×", "0": "free"}
#: Ids of the page's numbers, keys of :func:`shown_numbers`.
NUMBER_IDS = ("busy", "stage", "cores_needed", "pixels_per_token", "gb_per_hour", "bill_usd", "share")
#: Inputs that describe the format and the cluster.
INPUT_IDS = ("kind", "cameras", "resolution", "width", "height", "fps", "model", "accelerator", "cores", "nvdec",
             "read", "byte_price_x")  # fmt: skip
#: The numeric inputs: label in messages, least and most value.
NUMBERS = {"cameras": ("cameras", 1.0, 1e3), "width": ("width", 1.0, 16_384.0), "height": ("height", 1.0, 16_384.0),
           "fps": ("fps", 1e-3, 1e4), "cores": ("cores", 1.0, float(APP_MOST_CORES))}  # fmt: skip


def _resolution_of(width: float, height: float) -> str:
    for name, (w, h) in RESOLUTIONS.items():
        if (w, h) == (int(width), int(height)):
            return name
    return "custom"


def start_values(ledger: Ledger) -> dict[str, Any]:
    """The inputs' starting values: the ledger's first row on its cluster."""
    row = ledger.sources.iloc[0]
    c = ledger.cluster
    return {
        "kind": str(row["source"]),
        "cameras": float(row["cameras"]),
        "resolution": _resolution_of(row["width"], row["height"]),
        "width": float(row["width"]),
        "height": float(row["height"]),
        "fps": float(row["fps"]),
        "model": c.model,
        "accelerator": c.accelerator,
        "cores": float(c.cores_per_accelerator),
        "nvdec": bool(c.nvdec),
        "read": str(row["read"]),
        "byte_price_x": "1",
    }


def pipeline_row(ledger: Ledger, inputs: dict[str, Any]) -> pd.Series:
    """One format on the ledger's cluster, evaluated as ``procure bill`` does."""
    width, height = RESOLUTIONS.get(inputs["resolution"], (inputs["width"], inputs["height"]))
    cluster = cluster_with(ledger.cluster, model=inputs["model"], params=inputs.get("params"),
                           accelerator=inputs["accelerator"], cores=inputs["cores"], nvdec=inputs["nvdec"],
                           byte_price_x=float(inputs["byte_price_x"]))  # fmt: skip
    row, _ = variant(ledger, inputs["kind"], cluster=cluster, cameras=inputs["cameras"], width=width, height=height,
                     fps=inputs["fps"], read=inputs["read"])  # fmt: skip
    return row


def shown_numbers(row: pd.Series) -> dict[str, str]:
    """The page's numbers, as ``procure bill`` prints them (:func:`procure.interfaces.tables.pipeline_numbers`)."""
    numbers = pipeline_numbers(row)
    return {key: numbers[key] for key in NUMBER_IDS}


#: Widths of the three cards of the top row, of 12, by screen size: one above the other on a
#: narrow screen, side by side on a wide one.
LAYOUT: dict[Any, Any] = {"sm": (12, 12, 12), "lg": (4, 4, 4)}


def page(ledger: Ledger) -> Any:
    """The page's layout: the format and cluster inputs, the hour's numbers, the figures."""
    from shiny import ui

    start = start_values(ledger)
    inputs = [
        ui.input_select("kind", "Source (its format)", choices(ledger.sources["source"]), selected=start["kind"]),
        boxed(ui.input_numeric("cameras", "Cameras", shown(start["cameras"]), min=1, step=1), "cameras_message"),
        ui.input_select("resolution", "Resolution", [*RESOLUTIONS, "custom"], selected=start["resolution"]),
        ui.panel_conditional(
            "input.resolution === 'custom'",
            ui.input_numeric("width", "Width [px]", shown(start["width"]), min=1),
            ui.input_numeric("height", "Height [px]", shown(start["height"]), min=1),
        ),
        ui.input_numeric("fps", "Frames per second", shown(start["fps"]), min=1),
        ui.input_select("model", "Model card", model_names(), selected=start["model"]),
        ui.input_numeric("params", "Parameters (blank: the card's)", None, min=1e3),  # type: ignore[arg-type]
        ui.input_select("accelerator", "Accelerator", list(load_accelerators()), selected=start["accelerator"]),
        ui.input_slider("cores", "CPU cores per accelerator", 1, APP_MOST_CORES, start["cores"], step=1),
        ui.input_switch("nvdec", "Decode on NVDEC too", start["nvdec"]),
        ui.input_select("read", "Read", READS, selected=start["read"]),
        ui.input_select("byte_price_x", "Byte price", BYTE_PRICES, selected=start["byte_price_x"]),
        ui.output_text("pipeline_message"),
    ]
    return ui.layout_sidebar(
        ui.sidebar(*inputs, width=300),
        ui.layout_columns(
            ui.card(
                ui.card_header("One recorded hour"),
                fact("busy", "busy"),
                fact("binding stage", "stage"),
                fact("cores needed (Little's law)", "cores_needed"),
                fact("pixels decoded per token", "pixels_per_token"),
                fact("GB stored per hour", "gb_per_hour"),
                fact("transport bill of an hour", "bill_usd"),
                fact("share of the price", "share"),
            ),
            ui.card(ui.card_header("Stage rates"), figure("stage_rates")),
            ui.card(ui.card_header("The bill"), figure("bill_split")),
            col_widths=LAYOUT,
        ),
        ui.card(ui.card_header("The queue, simulated"), figure("queue")),
    )


def checked(ledger: Ledger, values: dict[str, Any]) -> dict[str, Any]:
    """The page's inputs as :func:`pipeline_row` takes them, each checked (:mod:`.parts`).

    Raises
    ------
    Refused
        A blank or out-of-range number, or a choice that is not the page's own.
    """
    out = dict(values)
    out["kind"] = chosen(values["kind"], list(ledger.sources["source"]), "source")
    out["resolution"] = chosen(values["resolution"], [*RESOLUTIONS, "custom"], "resolution")
    out["model"] = chosen(values["model"], model_names(), "model")
    out["accelerator"] = chosen(values["accelerator"], list(load_accelerators()), "accelerator")
    out["read"] = chosen(values["read"], READS, "read")
    out["byte_price_x"] = chosen(values["byte_price_x"], BYTE_PRICES, "byte price")
    for key, (what, low, high) in NUMBERS.items():
        if key in ("width", "height") and out["resolution"] != "custom":
            continue
        out[key] = number(values[key], what, low=low, high=high)
    out["params"] = number(values.get("params"), "parameters", low=1e3, high=1e15, blank=True)
    if not isinstance(values["nvdec"], bool):
        raise Refused("nvdec is invalid: it is a switch, on or off")
    return out


#: The page's figures: output id → figure of :data:`procure.interfaces.pages.work.FIGURES`
#: and what it shows, for a screen reader.
FIGURES = {
    "stage_rates": ("stage_rates", "The stages' rates in frames per second, the binding stage marked"),
    "bill_split": ("bill_terms", "The bill of one recorded hour split into bytes, cores and idle accelerator"),
    "queue": ("queue", "The queue simulated: decoders at work, the buffer, the accelerator's training"),
}


#: The job of the interactive queue chart (:func:`procure.interfaces.pipeline_charts.queue_chart_html`).
QUEUE_CHART = "queue_chart"


def server(input: Any, output: Any, ledger: Ledger, workers: Workers) -> list[Latest]:
    """Register the page's outputs in the running session; returns its figure jobs, to close
    when the session ends."""
    from shiny import reactive, ui
    from shiny import render as shiny_render

    @reactive.calc
    def pipeline() -> tuple[pd.Series | None, tuple[Any, ...], str]:
        try:
            values = checked(ledger, {k: input[k]() for k in (*INPUT_IDS, "params")})
            return pipeline_row(ledger, values), tuple(sorted(values.items())), ""
        except (ProcureError, Refused) as exc:
            return None, (), str(exc)

    @shiny_render.text
    def pipeline_message() -> str:
        return pipeline()[2]

    @shiny_render.text
    def cameras_message() -> str:
        message = pipeline()[2]
        return message if message.startswith("cameras") else ""

    def fact_text(key: str) -> Any:
        def text() -> str:
            row = pipeline()[0]
            return shown_numbers(row)[key] if row is not None else "—"

        return text

    for key in NUMBER_IDS:
        output(id=key)(shiny_render.text(fact_text(key)))

    async def run(drawing: Drawing) -> tuple[bytes | str | None, str]:
        if drawing.what == QUEUE_CHART:  # the interactive queue: HTML of a simulation run in a worker
            return await workers.call(queue_chart_html, *drawing.args), ""
        return await workers.draw(drawing), ""

    jobs = {name: Latest(run) for name in FIGURES}

    def picture(name: str) -> Any:
        what, alt = FIGURES[name]

        def render() -> Any:
            row, key, _ = pipeline()
            if row is None:
                return None
            chart = pipeline_chart_html(name, row)  # interactive where it has that form
            if chart is not None:
                return ui.HTML(chart)
            args = (row, APP_SIMULATED_FRAMES) if what == "queue" else (row,)
            if what == "queue" and interactive():
                page, message = jobs[name].get(Drawing(QUEUE_CHART, key, args))
                return ui.HTML(page) if page is not None else ui.span(message)
            png, message = jobs[name].get(Drawing(what, key, args))
            return ui.img(src=image_uri(png), alt=alt) if png is not None else ui.span(message)

        return render

    for name in jobs:
        output(id=name)(shiny_render.ui(picture(name)))
    return list(jobs.values())
