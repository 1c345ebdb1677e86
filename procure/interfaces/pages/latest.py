"""A session's side of the app's slow work: the newest result of a job, for its outputs.

A job (a solve, a figure) runs in a worker process (:mod:`.work`); a session asks for its result
through a :class:`Latest`, whose outputs show their last value as "in progress" until the newest
request is done. Figures come back as PNG bytes, shown as ``data:`` URIs (:func:`image_uri`).
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Awaitable, Callable
from typing import Any

_NOTHING = object()


def image_uri(png: bytes) -> str:
    """PNG bytes as a ``data:`` URI for an ``<img>``."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


class Latest:
    """The newest result of a slow job, for one session's outputs.

    :meth:`get` returns the result for the arguments given if it is ready; otherwise it asks
    for it and raises Shiny's "in progress" signal, so that the outputs reading it keep their
    last value, marked as updating. One job runs at a time; arguments asked for meanwhile
    replace each other, and only the newest is run next. The job's exceptions become the
    result ``(None, message)``. :meth:`close` drops the job, the arguments and the result.

    Parameters
    ----------
    run : callable
        ``await run(args)``: the job.
    """

    def __init__(self, run: Callable[[Any], Awaitable[Any]] | None) -> None:
        from shiny import reactive

        self._run = run
        self._done: tuple[Any, Any] | None = None  # (args, result) of the last job done
        self._count = 0
        self._version: Any = reactive.value(0)  # the count of jobs done, for outputs to depend on
        self._wanted: Any = _NOTHING
        self._running: Any = _NOTHING
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    def get(self, args: Any) -> Any:
        """The result for ``args``; read in a reactive context (it depends on the result)."""
        from shiny import req

        self._version()
        done = self._done
        if done is not None and done[0] == args:
            return done[1]
        self._wanted = _NOTHING if args == self._running or self._closed else args
        if self._task is None and not self._closed:
            self._task = asyncio.get_running_loop().create_task(self._work())
        req(False, cancel_output="progress")

    async def _work(self) -> None:
        from shiny import reactive

        try:
            while self._wanted is not _NOTHING and not self._closed and self._run is not None:
                self._running, self._wanted = self._wanted, _NOTHING
                try:
                    outcome = await self._run(self._running)
                except Exception as exc:  # a worker that died, a result that would not pickle
                    outcome = (None, f"internal error: {type(exc).__name__}: {exc}")
                if self._closed:
                    return
                async with reactive.lock():
                    self._done, self._count = (self._running, outcome), self._count + 1
                    self._version.set(self._count)
                    await reactive.flush()
        finally:
            self._running, self._task = _NOTHING, None

    @property
    def closed(self) -> bool:
        """Whether the session has ended (:meth:`close`)."""
        return self._closed

    def close(self) -> None:
        """The session has ended: run nothing more, and let go of the job (and what its closure
        holds), the arguments asked for and the last result."""
        self._closed = True
        self._run, self._wanted, self._done = None, _NOTHING, None
        if self._task is not None:
            self._task.cancel()
