"""The app's Fit page: the value curves fitted from the ledger folder's ``runs.csv``.

Shown when the ledger folder has a ``runs.csv`` (:func:`has_runs`): the metric against the runs'
value V with the runs as points and the posterior band, each fitted source's value curve, the
fitted numbers beside their priors, and the sampler's diagnostics, as ``procure fit`` prints
them. The fit (emcee, the extra ``fit``) and the figure run in a worker process (:mod:`.work`);
without emcee the page says which command installs it. Nothing is written to the ledger.
"""

from __future__ import annotations

import io
from typing import Any

from ...errors import ProcureError
from ...ledger import Ledger
from ...ledger.runs import RUNS_FILE
from ..tables import Rows
from .parts import figure, html_table, table
from .work import Latest, Workers, image_uri


def has_runs(ledger: Ledger) -> bool:
    """Whether the ledger folder has a ``runs.csv`` for the page to fit."""
    return (ledger.path / RUNS_FILE).is_file()


def page(ledger: Ledger) -> Any:
    """The page's layout: the figure, a line on the fit, the fitted numbers and the link."""
    from shiny import ui

    return ui.card(
        ui.card_header(f"Value curves fitted from {RUNS_FILE} (posterior median and 90 % band)"),
        figure("fit_figure"),
        ui.output_text("fit_message"),
        table("fit_parameters"),
        table("fit_link"),
    )


def fit_result(folder: str) -> tuple[tuple[bytes, Rows, Rows] | None, str]:
    """In a worker: the fit of ``folder``'s runs: the figure (PNG), the tables of the fitted
    numbers and of the link, and the diagnostics line; or why there is none."""
    from ...analyses.fit.fitting import fit
    from .. import fit_view

    try:
        result = fit(None, folder)
    except ProcureError as exc:
        return None, str(exc)
    buffer = io.BytesIO()
    fit_view.figure(result).savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    line = fit_view.diagnostics_sentence(result)
    notes = " ".join(f"Warning: {w}." for w in result.warnings)
    return (buffer.getvalue(), fit_view.parameter_rows(result), fit_view.link_rows(result)), f"{line}. {notes}".strip()


def server(input: Any, output: Any, ledger: Ledger, workers: Workers) -> Latest:
    """Register the page's outputs in the running session; returns its job, to close when the
    session ends."""
    from shiny import reactive, ui
    from shiny import render as shiny_render

    async def run(folder: str) -> Any:
        return await workers.call(fit_result, folder)

    job = Latest(run)

    @reactive.calc
    def fitted() -> tuple[Any, str]:
        return job.get(str(ledger.path))

    @shiny_render.ui
    def fit_figure() -> Any:
        result, _ = fitted()
        alt = "The metric against the runs' value with the posterior band, and the fitted value curves"
        return ui.img(src=image_uri(result[0]), alt=alt) if result is not None else None

    @shiny_render.text
    def fit_message() -> str:
        return fitted()[1]

    @shiny_render.ui
    def fit_parameters() -> Any:
        result, _ = fitted()
        return html_table(result[1]) if result is not None else None

    @shiny_render.ui
    def fit_link() -> Any:
        result, _ = fitted()
        return html_table(result[2]) if result is not None else None

    return job
