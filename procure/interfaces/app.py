"""``procure app``: the lesson's widget and the planner in a browser (Shiny for Python).

Three pages, a module each in :mod:`procure.interfaces.pages`:

* **Pipeline** — one format on one cluster, as ``procure bill`` evaluates it, and the queue as
  ``procure simulate`` runs it. No solve.
* **Plan** — the ledger's sources and the plan for a budget, re-solved in place as the budget
  moves; held hours and mix bounds rebuild it.
* **Byte prices** — hours per source against the byte-price multiplier, with the interval over
  which the plan keeps its shape.

Every number shown comes from the library and is formatted by :mod:`procure.interfaces.tables`,
the cells the commands' tables print. Each browser session has its own inputs and its own
program. Nothing is written to the ledger but by the "save" button, atomically.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..ledger import load_ledger
from .pages import pipeline, plan, prices
from .pages.parts import STYLE

#: The extra that installs the app's framework.
APP_EXTRA = "procure[app]"


def require_shiny() -> Any:
    """The ``shiny`` module, or an :class:`ImportError` naming the extra to install."""
    try:
        import shiny
    except ImportError:
        raise ImportError(f"the app needs Shiny for Python: pip install '{APP_EXTRA}'") from None
    return shiny


def make_app(ledger_dir: Path | str | None = None) -> Any:
    """The Shiny app of a ledger (the default ledger if None)."""
    require_shiny()
    from shiny import App, ui

    ledger = load_ledger(ledger_dir)
    app_ui = ui.page_navbar(
        ui.nav_panel("Pipeline", pipeline.page(ledger)),
        ui.nav_panel("Plan", plan.page(ledger)),
        ui.nav_panel("Byte prices", prices.page()),
        title=f"procure — {ledger.path.name}",
        id="page",
        header=ui.tags.style(STYLE),
    )

    def server(input: Any, output: Any, session: Any) -> None:
        pipeline.server(input, output, ledger)
        plan.server(input, output, ledger)
        prices.server(input, ledger)

    return App(app_ui, server)


def serve(ledger_dir: Path | str | None, host: str, port: int, *, announce: Callable[[str], object] = print) -> None:
    """Serve the app on ``host:port`` until interrupted; ``announce`` prints where it listens."""
    require_shiny()
    import uvicorn

    app = make_app(ledger_dir)
    announce(f"procure app: listening on http://{host}:{port} (Ctrl-C stops it)")
    uvicorn.run(app, host=host, port=port, log_level="warning")
