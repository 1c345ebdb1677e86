"""``procure app``: the lesson's widget and the planner in a browser (Shiny for Python).

Three pages:

* **Pipeline** — one format on one cluster, as ``procure bill`` evaluates it: the stages'
  rates with the binding one marked, the busy fraction, the cores Little's law asks for, the
  bill split, and the queue as ``procure simulate`` runs it. No solve.
* **Plan** — the ledger's sources and the plan for a budget, re-solved in place by one built
  :class:`procure.program.solve.Program` per browser session as the budget moves; held hours
  and mix bounds rebuild it.
* **Byte prices** — hours per source against the byte-price multiplier, with the interval over
  which the plan keeps its shape.

Every number shown comes from the library and is formatted by :mod:`procure.interfaces.render`,
as the commands print it. Each browser session has its own inputs and its own program. Nothing
is written to the ledger but by the "save" button, atomically.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..defaults import APP_MOST_CORES, APP_SIMULATED_FRAMES, APP_SWEEP_STEPS, DEFAULT_BUDGET
from ..errors import ProcureError
from ..ledger import Ledger, cluster_with, load_ledger, model_names, variant
from ..ledger.load import load_accelerators
from . import render

#: The extra that installs the app's framework.
APP_EXTRA = "procure[app]"
#: Preset resolutions of the ``resolution`` input: width × height [px].
RESOLUTIONS = {"480p": (854, 480), "720p": (1280, 720), "1080p": (1920, 1080), "2160p": (3840, 2160)}
#: Choices of the ``read`` input: label → the ledger's ``read`` value.
READS = {"order": "in order", "random": "random", "decoded": "decoded"}
#: Choices of the ``byte_price_x`` input [1]; "free" is 0.
BYTE_PRICES = {"0.1": "0.1 ×", "1": "1 ×", "10": "10 ×", "0": "free"}
#: Range of the budget slider, as powers of ten [$].
BUDGET_DECADES = (3.0, 7.0)


def require_shiny() -> Any:
    """The ``shiny`` module, or an :class:`ImportError` naming the extra to install."""
    try:
        import shiny
    except ImportError:
        raise ImportError(f"the app needs Shiny for Python: pip install '{APP_EXTRA}'") from None
    return shiny


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


#: Ids of the pipeline page's numbers, the keys of :func:`shown_numbers`.
NUMBER_IDS = ("busy", "stage", "cores_needed", "pixels_per_token", "gb_per_hour", "bill_usd", "share")


def shown_numbers(row: pd.Series) -> dict[str, str]:
    """The pipeline page's numbers, as ``procure bill`` prints them."""
    return {
        "busy": render.percent(row["busy"]),
        "stage": str(row["stage"]),
        "cores_needed": render.number(row["cores_needed"]),
        "pixels_per_token": render.number(row["pixels_per_token"], 0),
        "gb_per_hour": f"{row['gb_per_hour']:,.2f}",
        "bill_usd": render.money(row["bill_usd"]),
        "share": render.percent(row["share"]),
    }


def make_app(ledger_dir: Path | str | None = None) -> Any:
    """The Shiny app of a ledger (the default ledger if None)."""
    require_shiny()
    from shiny import App, reactive, ui
    from shiny import render as shiny_render

    ledger = load_ledger(ledger_dir)
    start = start_values(ledger)
    cards = model_names()
    accelerators = list(load_accelerators())
    kinds = list(dict.fromkeys(ledger.sources["kind"]))

    def boxed(control: Any, message_id: str) -> Any:
        return ui.div(control, ui.output_text(message_id, inline=False), class_="procure-input")

    pipeline_inputs = [
        ui.input_select("kind", "Source (its format)", list(ledger.sources["source"]), selected=start["kind"]),
        boxed(ui.input_numeric("cameras", "Cameras", start["cameras"], min=1, step=1), "cameras_message"),
        ui.input_select("resolution", "Resolution", [*RESOLUTIONS, "custom"], selected=start["resolution"]),
        ui.panel_conditional(
            "input.resolution === 'custom'",
            ui.input_numeric("width", "Width [px]", start["width"], min=1),
            ui.input_numeric("height", "Height [px]", start["height"], min=1),
        ),
        ui.input_numeric("fps", "Frames per second", start["fps"], min=1),
        ui.input_select("model", "Model card", cards, selected=start["model"]),
        ui.input_numeric("params", "Parameters (blank: the card's)", None, min=1e3),  # type: ignore[arg-type]
        ui.input_select("accelerator", "Accelerator", accelerators, selected=start["accelerator"]),
        ui.input_slider("cores", "CPU cores per accelerator", 1, APP_MOST_CORES, start["cores"], step=1),
        ui.input_switch("nvdec", "Decode on NVDEC too", start["nvdec"]),
        ui.input_select("read", "Read", READS, selected=start["read"]),
        ui.input_select("byte_price_x", "Byte price", BYTE_PRICES, selected=start["byte_price_x"]),
        ui.output_text("pipeline_message"),
    ]

    def fact(label: str, output_id: str, unit: str = "") -> Any:
        return ui.div(ui.span(label, class_="procure-label"), ui.output_text(output_id, inline=True),
                      ui.span(unit, class_="procure-unit"), class_="procure-fact")  # fmt: skip

    pipeline_page = ui.layout_sidebar(
        ui.sidebar(*pipeline_inputs, width=300),
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

    held_inputs = [
        ui.input_numeric(f"held_{i}", f"held h: {name}", float(h), min=0)
        for i, (name, h) in enumerate(zip(ledger.sources["source"], ledger.sources["held_hours"], strict=True))
    ]
    share_inputs = [
        ui.input_numeric(f"max_share_{i}", f"max share: {kind}", None, min=0, max=1, step=0.05)  # type: ignore[arg-type]
        for i, kind in enumerate(kinds)
    ]
    plan_page = ui.layout_sidebar(
        ui.sidebar(
            ui.input_slider("budget_slider", "Budget, log₁₀ $", *BUDGET_DECADES, math.log10(DEFAULT_BUDGET), step=0.01),
            boxed(ui.input_numeric("budget", "Budget [$]", DEFAULT_BUDGET, min=0, step=1000), "budget_message"),
            ui.h6("Hours already held"),
            *held_inputs,
            ui.h6("Mix bounds (share of effective hours)"),
            *share_inputs,
            ui.input_action_button("save", "Save held hours to the ledger"),
            ui.output_text("save_message"),
            width=300,
        ),
        ui.layout_columns(
            ui.card(
                ui.card_header("The plan"),
                fact("value", "plan_value", "own-hour equivalents"),
                fact("λ", "lambda", "value per $"),
                fact("spent", "spent_usd"),
                ui.output_text("plan_message"),
                ui.output_table("plan_table"),
                ui.output_table("capacities"),
            ),
            ui.card(ui.card_header("The ledger's sources"), ui.output_table("sources_table")),
            col_widths=(7, 5),
        ),
        ui.card(ui.card_header("Value curves and the plan's points"), ui.output_plot("curves", height="420px")),
    )
    prices_page = ui.card(
        ui.card_header("Hours per source as the byte price moves (the budget of the Plan page)"),
        ui.output_plot("byte_prices", height="520px"),
        ui.output_text("ranging"),
    )
    app_ui = ui.page_navbar(
        ui.nav_panel("Pipeline", pipeline_page),
        ui.nav_panel("Plan", plan_page),
        ui.nav_panel("Byte prices", prices_page),
        title=f"procure — {ledger.path.name}",
        id="page",
        header=ui.tags.style(
            ".procure-fact{display:flex;gap:.5em;align-items:baseline;margin:.15em 0}"
            ".procure-label{flex:1;color:#555}.procure-unit{color:#777;font-size:.85em}"
            "#pipeline_message,#plan_message,#budget_message,#cameras_message{color:#b00020}"
        ),
    )

    def server(input: Any, output: Any, session: Any) -> None:
        from ..program import from_ledger
        from ..program.solve import Program
        from . import plots

        # ------------------------------------------------------------ pipeline

        @reactive.calc
        def pipeline() -> tuple[pd.Series | None, str]:
            values = {k: input[k]() for k in ("kind", "cameras", "resolution", "width", "height", "fps", "model",
                                              "accelerator", "cores", "nvdec", "read", "byte_price_x")}  # fmt: skip
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
            from ..pipeline.queue import simulate

            row, _ = pipeline()
            if row is None:
                return None
            result = simulate(row, frames=APP_SIMULATED_FRAMES)
            return plots.timeline(result, busy_formula=float(row["busy"]))

        # ------------------------------------------------------------ plan

        @reactive.effect
        @reactive.event(input.budget_slider, ignore_init=True)
        def _slider_to_box() -> None:
            ui.update_numeric("budget", value=round(10 ** float(input.budget_slider()), 2))

        @reactive.calc
        def setting() -> tuple[dict[str, float], dict[str, float]]:
            held = {name: input[f"held_{i}"]() for i, name in enumerate(ledger.sources["source"])}
            shares = {kind: input[f"max_share_{i}"]() for i, kind in enumerate(kinds)}
            return ({k: float(v) if v is not None else 0.0 for k, v in held.items()},
                    {k: float(v) for k, v in shares.items() if v is not None})  # fmt: skip

        @reactive.calc
        def program() -> tuple[Any, str]:
            held, shares = setting()
            with reactive.isolate():
                budget = input.budget()
            try:
                problem = from_ledger(ledger, budget=float(budget or 0.0), held=held, max_share=shares or None)
                return Program(problem), ""
            except ProcureError as exc:
                return None, str(exc)

        @reactive.calc
        def plan() -> tuple[Any, Any, str]:
            built, message = program()
            budget = input.budget()
            if built is None:
                return None, None, message
            if budget is None or not (isinstance(budget, int | float) and math.isfinite(budget) and budget >= 0):
                return None, None, "budget: give a number ≥ 0 [$]"
            try:
                built.set_budget(float(budget))
                return built.solve(), built.problem, ""
            except ProcureError as exc:
                return None, None, str(exc)

        @shiny_render.text
        def budget_message() -> str:
            message = plan()[2]
            return message if message.startswith("budget") else ""

        @shiny_render.text
        def plan_message() -> str:
            return plan()[2]

        @shiny_render.text
        def plan_value() -> str:
            p = plan()[0]
            return f"{p.value:,.2f}" if p is not None else "—"

        @shiny_render.text
        def spent_usd() -> str:
            p = plan()[0]
            return render.money(p.spent_usd) if p is not None else "—"

        @output(id="lambda")
        @shiny_render.text
        def lambda_() -> str:
            p = plan()[0]
            return f"{p.lambda_:.4g}" if p is not None else "—"

        @shiny_render.table
        def plan_table() -> pd.DataFrame:
            p = plan()[0]
            if p is None:
                return pd.DataFrame()
            s = p.sources
            return pd.DataFrame({
                "source": s["source"], "hours": s["hours"].map(render.number),
                "purchase $": s["purchase_usd"].map(lambda v: render.number(v, 2)),
                "transport $": s["transport_usd"].map(lambda v: render.number(v, 2)),
                "value": s["value"].map(lambda v: render.number(v, 1)),
                "value per next $": s["marginal_value_per_usd"].map(lambda v: f"{v:.3g}"),
            })  # fmt: skip

        @shiny_render.table
        def capacities() -> pd.DataFrame:
            p = plan()[0]
            if p is None:
                return pd.DataFrame()
            c = p.capacities
            worth = [render.money(u) if b else "—" for u, b in zip(c["shadow_usd"], c["binding"], strict=True)]
            return pd.DataFrame({"capacity": c["capacity"] + " [" + c["unit"] + "]",
                                 "used": c["used"].map(render.number), "limit": c["limit"].map(render.number),
                                 "binds": np.where(c["binding"], "binds", ""),
                                 "one more unit is worth": worth})  # fmt: skip

        @shiny_render.table
        def sources_table() -> pd.DataFrame:
            from ..analyses.rank import ranking_table

            built, _ = program()
            if built is None:
                return pd.DataFrame()
            t = ranking_table(built.problem)
            return pd.DataFrame({"source": t["source"], "price $/h": t["price_usd_per_hour"].map(lambda v: f"{v:,.2f}"),
                                 "transport $/h": t["transport_usd_per_hour"].map(lambda v: f"{v:,.2f}"),
                                 "share": t["share"].map(render.percent),
                                 "$ per useful h": t["cost_per_useful_hour"].map(lambda v: f"{v:,.2f}")})  # fmt: skip

        @shiny_render.plot(alt="Each source's value against the dollars spent on it, with the plan's point")
        def curves() -> Any:
            p, problem, _ = plan()
            return plots.value_curves(p, problem) if p is not None else None

        @reactive.effect
        @reactive.event(input.save)
        def _save() -> None:
            from ..ledger.edit import set_cells

            held, _ = setting()
            try:
                for name, hours in held.items():
                    set_cells(ledger.path, name, {"held_hours": hours})
                save_state.set(f"Saved the held hours to {ledger.path / 'sources.csv'}")
            except (ProcureError, OSError) as exc:
                save_state.set(f"Not saved: {exc}")

        save_state = reactive.value("")

        @shiny_render.text
        def save_message() -> str:
            return save_state()

        # ------------------------------------------------------------ byte prices

        @reactive.calc
        def byte_sweep() -> tuple[pd.DataFrame | None, tuple[float, float] | None, str]:
            from ..analyses.sensitivity import byte_price_range, sweep

            budget = input.budget()
            if budget is None or budget <= 0:
                return None, None, "budget: give a number > 0 [$] on the Plan page"
            try:
                table = sweep(ledger, "byte_price_x", 0.1, 10.0, APP_SWEEP_STEPS, budget=float(budget), workers=1)
                span = byte_price_range(from_ledger(ledger, budget=float(budget)))
                return table, span, ""
            except ProcureError as exc:
                return None, None, str(exc)

        @shiny_render.plot(
            alt="Hours bought of each source against the byte-price multiplier, the ranging interval shaded"
        )
        def byte_prices() -> Any:
            table, span, _ = byte_sweep()
            return plots.sensitivity_hours(table, span=span) if table is not None else None

        @shiny_render.text
        def ranging() -> str:
            _table, span, message = byte_sweep()
            if span is None:
                return message
            return (f"The plan keeps its shape (which sources are bought, in part or to their cap, and which "
                    f"capacities bind) for byte-price multipliers from {span[0]:.3g} to {span[1]:.3g}.")  # fmt: skip

    return App(app_ui, server)


def serve(ledger_dir: Path | str | None, host: str, port: int, *, announce: Any = print) -> None:
    """Serve the app until interrupted."""
    require_shiny()
    import uvicorn

    app = make_app(ledger_dir)
    announce(f"procure app: listening on http://{host}:{port} (Ctrl-C stops it)")
    uvicorn.run(app, host=host, port=port, log_level="warning")
