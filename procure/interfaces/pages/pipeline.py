"""The app's Pipeline page: one format on one cluster, as ``procure bill`` evaluates it.

The stages' rates with the binding one marked, the busy fraction, the cores Little's law asks
for, the bill split, and the queue as ``procure simulate`` runs it. No solve.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...defaults import APP_MOST_CORES, APP_SIMULATED_FRAMES
from ...errors import ProcureError
from ...ledger import Ledger, cluster_with, model_names, variant
from ...ledger.load import load_accelerators
from ..tables import pipeline_numbers
from .parts import boxed, fact

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


def page(ledger: Ledger) -> Any:
    """The page's layout: the format and cluster inputs, the hour's numbers, the figures."""
    from shiny import ui

    start = start_values(ledger)
    inputs = [
        ui.input_select("kind", "Source (its format)", list(ledger.sources["source"]), selected=start["kind"]),
        boxed(ui.input_numeric("cameras", "Cameras", start["cameras"], min=1, step=1), "cameras_message"),
        ui.input_select("resolution", "Resolution", [*RESOLUTIONS, "custom"], selected=start["resolution"]),
        ui.panel_conditional(
            "input.resolution === 'custom'",
            ui.input_numeric("width", "Width [px]", start["width"], min=1),
            ui.input_numeric("height", "Height [px]", start["height"], min=1),
        ),
        ui.input_numeric("fps", "Frames per second", start["fps"], min=1),
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
            ui.card(ui.card_header("Stage rates"), ui.output_plot("stage_rates", height="260px")),
            ui.card(ui.card_header("The bill"), ui.output_plot("bill_split", height="260px")),
            col_widths=(4, 4, 4),
        ),
        ui.card(ui.card_header("The queue, simulated"), ui.output_plot("queue", height="420px")),
    )


def server(input: Any, output: Any, ledger: Ledger) -> None:
    """Register the page's outputs in the running session."""
    from shiny import reactive
    from shiny import render as shiny_render

    from .. import plots

    @reactive.calc
    def pipeline() -> tuple[pd.Series | None, str]:
        values = {k: input[k]() for k in INPUT_IDS}
        params = input.params()
        values["params"] = float(params) if params not in (None, "") else None
        for key in ("cameras", "fps", "width", "height"):
            if values[key] is None:
                return None, f"{key} is blank: give a number"
        try:
            return pipeline_row(ledger, values), ""
        except ProcureError as exc:
            return None, str(exc)

    @shiny_render.text
    def pipeline_message() -> str:
        return pipeline()[1]

    @shiny_render.text
    def cameras_message() -> str:
        message = pipeline()[1]
        return message if message.startswith("cameras") else ""

    def shown(key: str) -> Any:
        def text() -> str:
            row, _ = pipeline()
            return shown_numbers(row)[key] if row is not None else "—"

        return text

    for key in NUMBER_IDS:
        output(id=key)(shiny_render.text(shown(key)))

    @shiny_render.plot(alt="The stages' rates in frames per second, the binding stage marked")
    def stage_rates() -> Any:
        row, _ = pipeline()
        return plots.stage_rates(row) if row is not None else None

    @shiny_render.plot(alt="The bill of one recorded hour split into bytes, cores and idle accelerator")
    def bill_split() -> Any:
        row, _ = pipeline()
        return plots.bill_terms(row) if row is not None else None

    @shiny_render.plot(alt="The queue simulated: decoders at work, the buffer, the accelerator's training")
    def queue() -> Any:
        from ...pipeline.queue import simulate

        row, _ = pipeline()
        if row is None:
            return None
        result = simulate(row, frames=APP_SIMULATED_FRAMES)
        return plots.timeline(result, busy_formula=float(row["busy"]))
