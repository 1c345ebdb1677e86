"""``procure app``: the lesson's widget and the planner in a browser (Shiny for Python).

Three pages (four with a fit), a module each in :mod:`procure.interfaces.pages`:

* **Pipeline** — one format on one cluster, as ``procure bill`` evaluates it, and the queue as
  ``procure simulate`` runs it. No solve.
* **Plan** — the ledger's sources and the plan for a budget, re-solved in place as the budget
  moves; held hours and mix bounds rebuild it.
* **Byte prices** — hours per source against the byte-price multiplier, for the Plan page's
  inputs, with the interval over which the plan keeps its shape.
* **Fit** — where the ledger folder has a ``runs.csv``: the value curves fitted from the team's
  training runs (:mod:`procure.interfaces.pages.fit`).

The Plan page gains the schedule when the ledger folder has a ``periods.csv``, and the formats,
cores and rented capacity when its sources or cluster ask for a choice of infrastructure.

Every number shown comes from the library and is formatted by :mod:`procure.interfaces.tables`,
the cells the commands' tables print. Each browser session reads the ledger as it is when the
session opens and has its own inputs; solves and figures run in worker processes
(:mod:`procure.interfaces.pages.work`), so that sessions do not wait for each other, and what a
session kept there is dropped when it ends; once none is open they are replaced by fresh ones.
Nothing is written to the ledger but by the "save" button, and never into the installation
(:mod:`procure.interfaces.pages.held`).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..errors import InputError, ProcureError
from .guard import SameOrigin
from .pages import fit as fit_page
from .pages import pipeline, plan, prices
from .pages.parts import STYLE, LedgerFiles
from .pages.work import Latest, Workers, release_memory
from .tables import visible

#: The extra that installs the app's framework.
APP_EXTRA = "app"
#: Where the page loads Plotly's JavaScript from: the app's own address, under this path.
VENDOR = "vendor"
#: Plotly's JavaScript file in the installed package's ``package_data`` folder.
PLOTLY_JS = "plotly.min.js"
#: Seconds after the last session ends, if no session has opened meanwhile, before the worker
#: processes that served sessions are replaced by fresh ones (:meth:`.pages.work.Workers.recycle`,
#: which takes a core for a few seconds, in the background) and the server hands back the memory
#: it freed [s], > 0. Short, so that an idle server holds no more than a fresh one; a session
#: that opens while the fresh workers load waits for them once.
RELEASE_SECONDS = 2.0
#: Longest the server waits for open connections to close once it is told to stop [s].
SHUTDOWN_SECONDS = 5


def require_shiny() -> Any:
    """The ``shiny`` module, or an :class:`ImportError` naming the command that installs it."""
    try:
        import shiny
    except ImportError:
        from ..install import install_command

        raise ImportError(f"the app needs Shiny for Python: {install_command(APP_EXTRA)}") from None
    return shiny


def plotly_assets() -> Path | None:
    """The folder of the installed Plotly's own JavaScript (:data:`PLOTLY_JS`), which the app
    serves itself under :data:`VENDOR`: the page's charts need no network; None without Plotly."""
    try:
        import plotly
    except ImportError:
        return None
    folder = Path(plotly.__file__).parent / "package_data"
    return folder if (folder / PLOTLY_JS).is_file() else None


def make_app(ledger_dir: Path | str | None = None, workers: Workers | None = None) -> Any:
    """The Shiny app of a ledger folder (the default ledger if None), solving and drawing in
    ``workers`` (new ones if None; they start with their first task).

    Raises
    ------
    LedgerError
        The ledger cannot be read now.
    """
    require_shiny()
    from shiny import App, ui

    files = LedgerFiles(ledger_dir)
    files.now()
    plotly_dir = plotly_assets()
    work = workers if workers is not None else Workers()
    live: set[str] = set()

    def page(request: Any) -> Any:
        try:
            _token, ledger = files.now()
        except ProcureError as exc:
            return ui.page_fluid(ui.h4("procure"), ui.p(visible(exc), class_="procure-message"))
        return ui.page_navbar(
            ui.nav_panel("Pipeline", pipeline.page(ledger)),
            ui.nav_panel("Plan", plan.page(ledger)),
            ui.nav_panel("Byte prices", prices.page()),
            *([ui.nav_panel("Fit", fit_page.page(ledger))] if fit_page.has_runs(ledger) else []),
            title=f"procure — {visible(ledger.path.name)}",
            id="page",
            header=ui.TagList(
                ui.tags.style(STYLE), *([ui.tags.script(src=f"{VENDOR}/{PLOTLY_JS}")] if plotly_dir else [])
            ),
        )

    def server(input: Any, output: Any, session: Any) -> None:
        try:
            token, ledger = files.now()
        except ProcureError:
            return  # the page said why
        key = str(session.id)
        live.add(key)
        jobs: list[Latest] = pipeline.server(input, output, ledger, work)
        plan_jobs, asked = plan.server(input, output, ledger, token, work, key)
        jobs += [*plan_jobs, prices.server(input, output, asked, work)]
        if fit_page.has_runs(ledger):
            jobs.append(fit_page.server(input, output, ledger, work))

        def ended() -> None:
            for job in jobs:
                job.close()
            work.forget(key)
            live.discard(key)
            if not live:  # once the ended sessions are gone from memory, hand it back
                asyncio.get_running_loop().call_later(RELEASE_SECONDS, quiet)

        session.on_ended(ended)

    def quiet() -> None:
        """No session has been open for :data:`RELEASE_SECONDS`: fresh workers, memory handed back."""
        if not live:
            work.recycle()
            release_memory()

    app = App(page, server, static_assets={f"/{VENDOR}": plotly_dir} if plotly_dir else None)
    app.procure_workers = work  # type: ignore[attr-defined]
    return app


def warm_up(app: Any) -> None:
    """Render the page once in the server, so that the first session does not wait for what
    that loads (and the memory it takes counts before any session)."""
    str(app.ui(None))
    release_memory()


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port``, for the server to accept connections on.

    Raises
    ------
    InputError
        The port is taken, or the address cannot be listened on (naming both).
    """
    try:
        family, kind, proto, _name, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except (OSError, UnicodeError) as exc:
        raise InputError(f"--host {visible(host)!r}: not an address this machine can listen on ({exc})") from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise InputError(
                f"--port {port}: {visible(host)}:{port} is in use by another program: give another --port"
            ) from None
        raise InputError(f"--port {port}: cannot listen on {visible(host)}:{port}: {exc.strerror}") from None
    return sock


def serve(ledger_dir: Path | str | None, host: str, port: int, *, announce: Callable[[str], object] = print) -> None:
    """Serve the app on ``host:port`` until interrupted; ``announce`` prints where it listens.

    Raises
    ------
    InputError
        The port is taken or the address cannot be listened on.
    LedgerError
        The ledger cannot be read.
    KeyboardInterrupt
        After Ctrl-C, once the server has stopped (the command line says ``procure: aborted``).
    SystemExit
        After a termination request (SIGTERM), once the server has stopped: exit code 143.
    """
    require_shiny()
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn's server, which leaves the signal that stopped it to :func:`serve`: the
        worker processes are stopped first, then Ctrl-C ends the command as it ends every
        command, and a termination request as it ends any program."""

        def __init__(self, config: uvicorn.Config) -> None:
            super().__init__(config)
            self.stopped_by: list[int] = []

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            before = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for sig, handler in before.items():
                    signal.signal(sig, handler)

        def handle_exit(self, sig: int, frame: Any) -> None:
            self.stopped_by.append(sig)
            super().handle_exit(sig, frame)

    sock = listen(host, port)
    workers = Workers()
    server: Server | None = None
    try:
        app = make_app(ledger_dir, workers)
        workers.start()
        warm_up(app)
        guarded = SameOrigin(app, host, sock.getsockname()[1])  # other sites' pages refused
        config = uvicorn.Config(guarded, log_level="warning", timeout_graceful_shutdown=SHUTDOWN_SECONDS,
                                ws_per_message_deflate=False)  # fmt: skip
        server = Server(config)
        announce(f"procure app: listening on http://{host}:{port} (Ctrl-C stops it)")
        server.run(sockets=[sock])
    finally:
        workers.shutdown()
        sock.close()
    if signal.SIGTERM in server.stopped_by:
        raise SystemExit(128 + signal.SIGTERM)  # as a shell reports a process ended by it
    if server.stopped_by:
        raise KeyboardInterrupt
