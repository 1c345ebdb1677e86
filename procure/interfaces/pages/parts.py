"""Pieces of layout the app's pages share (Shiny's ``ui``, loaded with the app)."""

from __future__ import annotations

from typing import Any


def boxed(control: Any, message_id: str) -> Any:
    """An input with a line under it that names what is wrong with its value."""
    from shiny import ui

    return ui.div(control, ui.output_text(message_id, inline=False), class_="procure-input")


def fact(label: str, output_id: str, unit: str = "") -> Any:
    """One number on a line: its label, the output and its unit."""
    from shiny import ui

    return ui.div(ui.span(label, class_="procure-label"), ui.output_text(output_id, inline=True),
                  ui.span(unit, class_="procure-unit"), class_="procure-fact")  # fmt: skip


#: The pages' style: facts on one line each, messages in red.
STYLE = (
    ".procure-fact{display:flex;gap:.5em;align-items:baseline;margin:.15em 0}"
    ".procure-label{flex:1;color:#555}.procure-unit{color:#777;font-size:.85em}"
    "#pipeline_message,#plan_message,#budget_message,#cameras_message{color:#b00020}"
)
