"""The app's Plan page: the ledger's sources and the plan for a budget.

The plan is re-solved in place by one built :class:`procure.program.solve.Program` per browser
session as the budget moves; held hours and mix bounds rebuild it. Nothing is written to the
ledger but by the "save" button, atomically.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ...defaults import DEFAULT_BUDGET
from ...errors import ProcureError
from ...ledger import Ledger
from ..tables import capacity_rows, plan_numbers, plan_rows, rank_rows
from .parts import boxed, fact

#: Range of the budget slider, as powers of ten [$].
BUDGET_DECADES = (3.0, 7.0)
#: Columns of the plan table the page shows (headings of :func:`procure.interfaces.tables.plan_rows`).
PLAN_COLUMNS = ("source", "buy h", "purchase $", "transport $", "value", "value per next $")
#: Columns of the sources table the page shows (headings of :func:`procure.interfaces.tables.rank_rows`).
SOURCE_COLUMNS = ("source", "price $/h", "transport $/h", "share", "$ per useful h")


def kinds(ledger: Ledger) -> list[str]:
    """The ledger's kinds, each once, in ledger order: one mix-bound input each."""
    return list(dict.fromkeys(ledger.sources["kind"]))


def page(ledger: Ledger) -> Any:
    """The page's layout: budget, held hours and mix bounds; the plan, the sources, the curves."""
    from shiny import ui

    held_inputs = [
        ui.input_numeric(f"held_{i}", f"held h: {name}", float(h), min=0)
        for i, (name, h) in enumerate(zip(ledger.sources["source"], ledger.sources["held_hours"], strict=True))
    ]
    share_inputs = [
        ui.input_numeric(f"max_share_{i}", f"max share: {kind}", None, min=0, max=1, step=0.05)  # type: ignore[arg-type]
        for i, kind in enumerate(kinds(ledger))
    ]
    return ui.layout_sidebar(
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


def server(input: Any, output: Any, ledger: Ledger) -> None:
    """Register the page's outputs in the running session."""
    from shiny import reactive, ui
    from shiny import render as shiny_render

    from ...program import from_ledger
    from ...program.solve import Program
    from .. import plots

    mix_kinds = kinds(ledger)

    @reactive.effect
    @reactive.event(input.budget_slider, ignore_init=True)
    def _slider_to_box() -> None:
        ui.update_numeric("budget", value=round(10 ** float(input.budget_slider()), 2))

    @reactive.calc
    def setting() -> tuple[dict[str, float], dict[str, float]]:
        held = {name: input[f"held_{i}"]() for i, name in enumerate(ledger.sources["source"])}
        shares = {kind: input[f"max_share_{i}"]() for i, kind in enumerate(mix_kinds)}
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

    def number(key: str) -> Any:
        def text() -> str:
            p = plan()[0]
            return plan_numbers(p)[key] if p is not None else "—"

        return text

    for output_id, key in (("plan_value", "value"), ("lambda", "lambda"), ("spent_usd", "spent_usd")):
        output(id=output_id)(shiny_render.text(number(key)))

    @shiny_render.text
    def budget_message() -> str:
        message = plan()[2]
        return message if message.startswith("budget") else ""

    @shiny_render.text
    def plan_message() -> str:
        return plan()[2]

    @shiny_render.table
    def plan_table() -> pd.DataFrame:
        p = plan()[0]
        return plan_rows(p, every_row=True).frame(PLAN_COLUMNS) if p is not None else pd.DataFrame()

    @shiny_render.table
    def capacities() -> pd.DataFrame:
        p = plan()[0]
        return capacity_rows(p).frame() if p is not None else pd.DataFrame()

    @shiny_render.table
    def sources_table() -> pd.DataFrame:
        from ...analyses.rank import ranking_table

        built, _ = program()
        if built is None:
            return pd.DataFrame()
        return rank_rows(ranking_table(built.problem), every_row=True).frame(SOURCE_COLUMNS)

    @shiny_render.plot(alt="Each source's value against the dollars spent on it, with the plan's point")
    def curves() -> Any:
        p, problem, _ = plan()
        return plots.value_curves(p, problem) if p is not None else None

    save_state = reactive.value("")

    @reactive.effect
    @reactive.event(input.save)
    def _save() -> None:
        from ...ledger.edit import set_cells

        held, _ = setting()
        try:
            for name, hours in held.items():
                set_cells(ledger.path, name, {"held_hours": hours})
            save_state.set(f"Saved the held hours to {ledger.path / 'sources.csv'}")
        except (ProcureError, OSError) as exc:
            save_state.set(f"Not saved: {exc}")

    @shiny_render.text
    def save_message() -> str:
        return save_state()
