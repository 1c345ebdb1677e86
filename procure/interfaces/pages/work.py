"""The app's slow work, done in worker processes so that no session waits for another's.

Shiny for Python runs every session's reactive updates on one event loop, under one lock: a
solve or a figure drawn there would hold up every other session. So the app hands them to
worker processes (:class:`Workers`):

* **solvers**, :data:`APP_SOLVERS` processes of one task each. A session is served by one of
  them, which keeps the session's built :class:`procure.program.solve.program.Program` and re-solves
  it in place as the budget moves (a new held hour or mix bound rebuilds it); at most
  :data:`PROGRAMS_KEPT` programs a process, and a session's program is dropped when the
  session ends.
* **drawers**, :data:`APP_DRAWERS` processes for the figures (drawn to PNG at their own size)
  and the byte-price sweep; they keep nothing.

Worker processes are started afresh (never forked from the server), ignore Ctrl-C (the
server stops them), end with the server, and draw with matplotlib's warnings kept out of the
terminal; the drawers run at a lower priority than the solvers. Once no session is open the app
replaces those that served sessions by fresh ones (:meth:`Workers.recycle`). A session asks for
a result through a :class:`.latest.Latest`.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import multiprocessing
import os
import signal
import sys
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ...errors import ProcureError
from ..tables import Rows
from .latest import Latest as Latest  # a session's side (:mod:`.latest`), which the pages import from here
from .latest import image_uri as image_uri
from .views import Drawing as Drawing  # what a session asks and sees (:mod:`.views`), imported from here too
from .views import PlanRequest as PlanRequest
from .views import PlanView as PlanView
from .views import Solved as Solved
from .views import sources_rows

if TYPE_CHECKING:
    from ...program import Plan, Problem

#: Worker processes that solve plans, each keeping the programs of the sessions it serves.
APP_SOLVERS = 2
#: Worker processes that draw figures and sweep byte prices.
APP_DRAWERS = 1
#: Built programs one solver process keeps, the least recently used dropped first.
PROGRAMS_KEPT = 64
#: Wall time allowed for all the solves of one plan in the app [s].
APP_TIME_LIMIT = 30.0
#: Resolution figures are drawn at [dots per inch].
FIGURE_DPI = 120
#: How far below the server's priority the drawers run (``nice``), so that solves come first.
DRAWER_NICENESS = 10
#: Linux's ``prctl`` option that sends a signal to a process when its parent ends.
PR_SET_PDEATHSIG = 1
#: Longest the server waits for a worker process to stop once told to [s].
SHUTDOWN_WAIT = 10.0
#: Sources drawn in the value-curves figure at most, those with the most money first.
APP_CURVES = 12


# ----------------------------------------------------------------------------- in the workers

#: Per session: what its program was built for, the program, and its sources table.
_PROGRAMS: OrderedDict[str, tuple[Hashable, Any, Rows]] = OrderedDict()


def _start_worker(niceness: int = 0) -> None:
    """A worker process: Ctrl-C is the server's to handle, the process ends with the server
    (on Linux, however the server ends), it runs at ``niceness`` below the server's priority,
    and matplotlib draws off screen."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _ended)
    _end_with_parent()
    if niceness:
        os.nice(niceness)
    import matplotlib

    matplotlib.use("Agg")


def _ended(sig: int, _frame: Any) -> None:
    """A worker asked to end (the server's shutdown ends one still at work): it leaves through
    Python's own exit, so that what it holds of the server's (the pool's semaphores) is released,
    not left for the resource tracker to report as leaked."""
    raise SystemExit(128 + sig)


def _end_with_parent() -> None:
    """Ask Linux to kill this process when its parent (the server) ends; elsewhere nothing."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the server ended before the request was made
        os._exit(0)


def warm_up(drawer: bool) -> int:
    """Load a worker's libraries and run a small task through them (the first request then
    runs at full speed): a solve of the default ledger, or for a drawer a small figure of it;
    returns the process id."""
    from ...ledger import load_ledger, variant
    from ...program.solve.program import Program

    ledger = load_ledger()
    program = Program(PlanRequest(ledger, None, (), (), 1e5).problem())
    plan = program.solve()
    if drawer:
        row = variant(ledger)[0]
        for drawing in (Drawing("curves", None, (plan, program.problem)), Drawing("bill_terms", None, (row,))):
            draw(drawing)
    release_memory()
    return os.getpid()


def release_memory() -> int:
    """Collect garbage and hand freed memory back to the system (glibc's ``malloc_trim`` on
    Linux), so that a process's resident memory falls once the sessions it served have
    ended; returns the objects collected."""
    import gc

    found = gc.collect()
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6").malloc_trim(0)
    return found


def solve_plan(session: str, request: PlanRequest) -> tuple[Solved | None, str]:
    """The plan of ``request`` for ``session``: its kept program re-solved at the new budget
    when the ledger, held hours and mix bounds are those it was built for, else built anew.
    Returns ``(solved, "")``, or ``(None, message)`` for a request the program cannot meet."""
    from ...program.solve.program import Program

    setting = (request.token, request.held, request.shares)
    try:
        kept = _PROGRAMS.pop(session, None)
        if kept is not None and kept[0] == setting:
            _, program, sources = kept
            program.set_budget(request.budget)
        else:
            program = Program(request.formulation(), time_limit=APP_TIME_LIMIT)
            sources = sources_rows(program.problem)
        _PROGRAMS[session] = (setting, program, sources)
        while len(_PROGRAMS) > PROGRAMS_KEPT:
            _PROGRAMS.popitem(last=False)
        plan = program.solve()
        problem = program.problem.asking(budget=request.budget)
        return Solved(plan, problem, PlanView.of(plan, sources)), ""
    except ProcureError as exc:
        return None, str(exc)


def forget(session: str) -> int:
    """Drop the program kept for ``session`` (:func:`release_memory`); returns how many
    programs are still kept."""
    _PROGRAMS.pop(session, None)
    release_memory()
    return len(_PROGRAMS)


def _png(fig: Any) -> bytes:
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=FIGURE_DPI)
    return out.getvalue()


def _curves(plan: Plan, problem: Problem) -> Any:
    """The value curves of the :data:`APP_CURVES` sources with the most money."""
    from .. import plots

    if problem.n > APP_CURVES:
        s = plan.sources
        most = (s["purchase_usd"] + s["transport_usd"]).to_numpy().argsort(kind="stable")[::-1][:APP_CURVES]
        keep = sorted(int(i) for i in most)
        problem = replace(problem, sources=problem.sources.iloc[keep].reset_index(drop=True))
        plan = replace(plan, sources=s.iloc[keep].reset_index(drop=True))
    return plots.value_curves(plan, problem)


def _queue(row: Any, frames: int) -> Any:
    from ...pipeline.queue import simulate
    from .. import plots

    return plots.timeline(simulate(row, frames=frames), busy_formula=float(row["busy"]))


def _figure(name: str) -> Callable[..., Any]:
    from .. import plots

    return getattr(plots, name)


#: The figures a :class:`Drawing` can name: each takes the drawing's ``args``.
FIGURES: dict[str, Callable[..., Any]] = {
    "curves": _curves,
    "queue": _queue,
    "stage_rates": lambda row: _figure("stage_rates")(row),
    "bill_terms": lambda row: _figure("bill_terms")(row),
    "sensitivity_hours": lambda frame, span: _figure("sensitivity_hours")(frame, span=span),
}


def draw(drawing: Drawing) -> bytes:
    """A figure of :data:`FIGURES` as PNG bytes, matplotlib's warnings kept quiet."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fig = FIGURES[drawing.what](*drawing.args)
        return _png(fig)


# ----------------------------------------------------------------------------- in the server


@contextlib.contextmanager
def _no_interrupts() -> Iterator[None]:
    """Ctrl-C ignored while worker processes are started, so that they start ignoring it
    (a process inherits an ignored signal) and a Ctrl-C meanwhile stops the server alone."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


class Workers:
    """The worker processes of one server: :data:`APP_SOLVERS` solvers (a session stays on
    one) and a pool of :data:`APP_DRAWERS` drawers, started by :meth:`start` (or by the first
    task), replaced by fresh ones by :meth:`recycle` and stopped by :meth:`shutdown`. Start
    and recycle them from the thread that runs the server (on Linux a worker ends when the
    thread that started it does).

    Parameters
    ----------
    solvers : int
        Solver processes, ≥ 1.
    drawers : int
        Drawer processes, ≥ 1.
    """

    def __init__(self, solvers: int = APP_SOLVERS, drawers: int = APP_DRAWERS) -> None:
        self._context = multiprocessing.get_context("spawn")  # never a fork of a server with threads
        self._solver_count, self._drawer_count = max(1, solvers), max(1, drawers)
        self._solvers: list[ProcessPoolExecutor] = []
        self._drawers: ProcessPoolExecutor | None = None
        self._sessions: dict[str, int] = {}
        self._used: set[Executor] = set()  # the pools that have run a task since they started
        self._retired: list[ProcessPoolExecutor] = []  # pools replaced, whose processes may still run

    def _pool(self, size: int, drawer: bool) -> ProcessPoolExecutor:
        """A pool of ``size`` processes, each started now with a first task that loads it."""
        niceness = DRAWER_NICENESS if drawer else 0
        pool = ProcessPoolExecutor(size, mp_context=self._context, initializer=_start_worker, initargs=(niceness,))
        with _no_interrupts():
            for _ in range(size):
                pool.submit(warm_up, drawer)
        return pool

    def start(self) -> None:
        """Start every process and load its libraries, without waiting for them."""
        if not self._solvers:
            self._solvers = [self._pool(1, False) for _ in range(self._solver_count)]
        if self._drawers is None:
            self._drawers = self._pool(self._drawer_count, True)

    def _solver(self, session: str) -> int:
        self.start()
        if session not in self._sessions:
            load = [0] * len(self._solvers)
            for k in self._sessions.values():
                load[k] += 1
            self._sessions[session] = min(range(len(load)), key=load.__getitem__)
        return self._sessions[session]

    async def _run(self, pool: Executor, fn: Callable[..., Any], *args: Any) -> Any:
        self._used.add(pool)
        return await asyncio.get_running_loop().run_in_executor(pool, fn, *args)

    async def solve(self, session: str, request: PlanRequest) -> tuple[Solved | None, str]:
        """The plan of ``request`` (:func:`solve_plan`), on the session's solver."""
        k = self._solver(session)
        try:
            return await self._run(self._solvers[k], solve_plan, session, request)
        except BrokenProcessPool:
            self._solvers[k] = self._pool(1, False)
            return None, "the solver's process stopped (out of memory?): change an input to try again"

    async def draw(self, drawing: Drawing) -> bytes:
        """A figure (:func:`draw`) as PNG bytes."""
        return await self.call(draw, drawing)

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` in a drawer process (``fn`` a module-level function)."""
        self.start()
        assert self._drawers is not None
        try:
            return await self._run(self._drawers, fn, *args)
        except BrokenProcessPool:
            self._drawers = self._pool(self._drawer_count, True)
            raise

    def forget(self, session: str) -> None:
        """A session has ended: its solver drops the program it kept for it, and once no
        session is left every process hands back the memory it no longer uses."""
        k = self._sessions.pop(session, None)
        with contextlib.suppress(RuntimeError):  # a pool shut down keeps nothing
            if k is not None:
                self._solvers[k].submit(forget, session)
            if not self._sessions and self._drawers is not None:
                self._drawers.submit(release_memory)

    def recycle(self) -> int:
        """Replace each pool that has run a task since it started and serves no session (the
        drawers serve every session) by a fresh one, started and loaded now without waiting
        for it: what the tasks left in a process (matplotlib's caches, memory its allocator
        keeps) goes with it. A task under way in a replaced pool still finishes there. Returns
        how many pools were replaced."""
        serving = set(self._sessions.values())
        replaced = 0
        for k, pool in enumerate(self._solvers):
            if pool in self._used and k not in serving:
                self._solvers[k], replaced = self._retire(pool, False), replaced + 1
        if self._drawers is not None and self._drawers in self._used and not self._sessions:
            self._drawers, replaced = self._retire(self._drawers, True), replaced + 1
        return replaced

    def _retire(self, pool: ProcessPoolExecutor, drawer: bool) -> ProcessPoolExecutor:
        """Let ``pool`` end once its work is done; a fresh pool of its size in its place."""
        self._used.discard(pool)
        self._retired = [p for p in self._retired if _processes(p)]
        with contextlib.suppress(RuntimeError):  # already shut down
            pool.shutdown(wait=False)
        self._retired.append(pool)
        return self._pool(self._drawer_count if drawer else 1, drawer)

    def shutdown(self) -> None:
        """Stop every worker process: work not started is dropped, work under way is given
        :data:`SHUTDOWN_WAIT` seconds to finish, then stopped."""
        import time

        pools = [*self._solvers, *([self._drawers] if self._drawers is not None else []), *self._retired]
        processes = [p for pool in pools for p in _processes(pool)]
        for pool in pools:
            pool.shutdown(wait=False, cancel_futures=True)
        deadline = time.monotonic() + SHUTDOWN_WAIT
        for process in processes:
            process.join(timeout=max(0.0, deadline - time.monotonic()))
        for process in processes:
            if process.is_alive():
                process.terminate()
                process.join(timeout=SHUTDOWN_WAIT)
        for pool in pools:
            pool.shutdown(wait=True)


def _processes(pool: ProcessPoolExecutor) -> list[Any]:
    """The processes of a pool that are still alive."""
    return [p for p in list((getattr(pool, "_processes", None) or {}).values()) if p.is_alive()]
