"""The app's Byte prices page: hours per source as the byte price moves, at the Plan page's
budget, with the interval over which the plan keeps its shape."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...defaults import APP_SWEEP_STEPS
from ...errors import ProcureError
from ...ledger import Ledger

#: The byte-price multipliers the chart spans [1].
SPAN = (0.1, 10.0)


def page() -> Any:
    """The page's layout: the chart and a sentence on the ranging."""
    from shiny import ui

    return ui.card(
        ui.card_header("Hours per source as the byte price moves (the budget of the Plan page)"),
        ui.output_plot("byte_prices", height="520px"),
        ui.output_text("ranging"),
    )


def server(input: Any, ledger: Ledger) -> None:
    """Register the page's outputs in the running session (the budget is the Plan page's input)."""
    from shiny import reactive
    from shiny import render as shiny_render

    from ...program import from_ledger
    from .. import plots

    @reactive.calc
    def byte_sweep() -> tuple[pd.DataFrame | None, tuple[float, float] | None, str]:
        from ...analyses.sensitivity import byte_price_range, sweep

        budget = input.budget()
        if budget is None or budget <= 0:
            return None, None, "budget: give a number > 0 [$] on the Plan page"
        try:
            table = sweep(ledger, "byte_price_x", *SPAN, APP_SWEEP_STEPS, budget=float(budget), workers=1)
            span = byte_price_range(from_ledger(ledger, budget=float(budget)))
            return table, span, ""
        except ProcureError as exc:
            return None, None, str(exc)

    @shiny_render.plot(alt="Hours bought of each source against the byte-price multiplier, the ranging interval shaded")
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
