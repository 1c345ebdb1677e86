"""Running independent chunks of work: in this process, on a local Dask cluster, or on yours.

Work that splits (the per-scenario solves of EVPI, the points of a sweep) is cut into chunks
whose boundaries do not depend on where they run; each chunk is one task, which builds its
model once and re-solves it for each item of the chunk. The results come back in order and are
the same wherever the chunks ran: the serial path runs the same chunks, one after another.

Where: with ``scheduler`` (``tcp://host:port``, ``tls://host:port`` or ``host:port``), on
that cluster, once it has answered Dask's handshake within :data:`SCHEDULER_TIMEOUT`
(:func:`check_scheduler`). Else the first chunk runs here and is timed; when the rest would
take longer than :data:`LOCAL_CLUSTER_PAYS_SECONDS` and a :class:`Deadline`, if any, leaves
that long, a local cluster of worker processes (one thread each, at most one per core,
listening on loopback only) takes the rest, else it runs here too. Without Dask installed
everything runs here, and one note says so.

On a cluster, a chunk whose worker died or whose task was cancelled runs again, once
(:data:`CHUNK_RETRIES`); lost again, the run ends with one line. A :class:`Deadline` bounds the
wait for the chunks' results.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ..errors import InputError, Reason, SolveError
from ..ledger.schema import OPTION_FIELDS
from ..spec import check
from .scheduler import SCHEDULER_TIMEOUT, check_scheduler, dask_missing
from .scheduler import scheduler_address as scheduler_address

T = TypeVar("T")
R = TypeVar("R")

#: Seconds of remaining serial work above which a local cluster is started: a bit more than
#: twice what starting one costs on 2 cores (``benchmarks/scenarios_scale.py`` times it: 1.9 s
#: median), so that the cluster pays for itself when the work splits over 2 workers [s].
LOCAL_CLUSTER_PAYS_SECONDS = 5.0
#: Interface the local cluster's scheduler, workers and nannies listen on: loopback only.
LOCAL_CLUSTER_HOST = "127.0.0.1"
#: Where the local cluster's HTTP server (dashboard, health) listens: loopback, a free port.
LOCAL_DASHBOARD_ADDRESS = "127.0.0.1:0"
#: Log level of the local cluster's own loggers: its warnings and errors (a worker restarted, a
#: task lost) are said in this module's one line or notes instead.
LOCAL_CLUSTER_LOG_LEVEL = logging.CRITICAL + 1
#: Times a chunk lost on a cluster (its worker died, its task was cancelled) runs again.
CHUNK_RETRIES = 1
#: Seconds a cluster has to offer a worker for the work sent again after a loss [s].
WORKER_WAIT_SECONDS = 30.0
#: Seconds past a deadline that the results of chunks are still waited for: a chunk stops at
#: the deadline itself, and its answer (out of time) takes a moment to come back [s].
RESULT_GRACE_SECONDS = 2.0
#: The reason of the :class:`~procure.errors.SolveError` when a chunk is lost twice or no worker
#: takes it: the values it was to certify (EVPI's, a sweep's points) are not certified.
LOST_WORK_REASON = Reason.LOST


@dataclass(frozen=True)
class Deadline:
    """The wall-clock time by which a command's solves end.

    It crosses process boundaries (a chunk on a Dask worker reads it), so it is a time of
    :func:`time.time` [s since the epoch].

    Attributes
    ----------
    seconds : float
        The time limit it was made from [s], > 0.
    at : float
        When it passes [s since the epoch].
    option : str, default "time_limit"
        How messages name the time limit.
    skip : str, default "evpi=False"
        How messages name skipping EVPI and VSS.
    """

    seconds: float
    at: float
    option: str = "time_limit"
    skip: str = "evpi=False"

    @classmethod
    def after(cls, seconds: float, option: str = "time_limit", skip: str = "evpi=False") -> Deadline:
        """The deadline ``seconds`` from now [s, > 0 and at most
        :data:`procure.ledger.schema.MOST_TIME_LIMIT`]; ``option``, ``skip`` as above."""
        seconds = check(OPTION_FIELDS["time_limit"], seconds, option)
        return cls(float(seconds), time.time() + float(seconds), option, skip)

    def left(self) -> float:
        """Seconds until the deadline (negative once it has passed) [s]."""
        return self.at - time.time()

    def time_limit(self) -> float:
        """The seconds left, for one more solve [s, > 0].

        Raises
        ------
        SolveError
            The deadline has passed (``Reason.TIME_LIMIT``).
        """
        left = self.left()
        if left <= 0:
            raise self.expired("before the next solve")
        return left

    def expired(self, finished: str) -> SolveError:
        """The one-line error of a request out of time; ``finished`` says what was done."""
        return SolveError(
            f"out of time: the time limit of {self.seconds:g} s ran out {finished}: raise {self.option}",
            Reason.TIME_LIMIT,
        )


def chunks(items: Sequence[T], size: int) -> list[list[T]]:
    """``items`` cut into consecutive chunks of ``size`` (the last may be shorter)."""
    if not (isinstance(size, int) and size >= 1):
        raise InputError(f"chunk size = {size!r} is invalid: must be a whole number ≥ 1")
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def check_workers(workers: int | None, name: str = "workers") -> None:
    """Raise :class:`~procure.errors.InputError` unless ``workers`` is None or a whole number ≥ 1."""
    if workers is not None and not (isinstance(workers, int) and not isinstance(workers, bool) and workers >= 1):
        raise InputError(f"{name} = {workers!r} is invalid: must be a whole number ≥ 1")


def worker_count(workers: int | None, notes: list[str] | None = None, name: str = "workers") -> int:
    """Worker processes of a local cluster: ``workers``, at most the machine's cores (default: all).

    Parameters
    ----------
    workers : int, optional
        Asked for, ≥ 1.
    notes : list of str, optional
        Gets one line when ``workers`` is more than the machine's cores.
    name : str, default "workers"
        How messages name the argument.
    """
    check_workers(workers, name)
    cores = os.cpu_count() or 1
    if workers is None:
        return cores
    if workers > cores:
        if notes is not None:
            notes.append(f"{name} = {workers} is more than this machine's {cores} cores: at most {cores} worker "
                         "processes run")  # fmt: skip
        return cores
    return workers


#: Why the automatic local cluster's worker processes could not start, and what to do. The usual
#: cause: a script that calls procure at its top level, without ``if __name__ == "__main__":``,
#: which each new worker process runs again as it starts.
NO_CLUSTER_NOTE = (
    "the local Dask cluster could not start its worker processes: a script that calls procure at its top level "
    'needs if __name__ == "__main__": (or workers=1 to solve in this process)'
)


def run_chunks(
    func: Callable[..., list[R]],
    parts: Sequence[Any],
    *,
    args: tuple[Any, ...] = (),
    scheduler: str | None = None,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    notes: list[str] | None = None,
    where: list[str] | None = None,
    deadline: Deadline | None = None,
) -> list[R]:
    """Run ``func(*args, part)`` for each part; the concatenated results, in order.

    Parameters
    ----------
    func : callable
        A module-level function (the workers import it), returning a list per part.
    parts : sequence
        The chunks.
    args : tuple
        Arguments before the part, the same for every chunk (sent to each worker once).
    scheduler : str, optional
        Address of a running Dask scheduler (``dask scheduler`` prints it): checked with
        :func:`check_scheduler` first.
    workers : int, optional
        Worker processes of a local cluster (default and most: the machine's cores); 1 runs
        everything in this process.
    progress : callable, optional
        ``progress(done, total)`` after each chunk.
    notes : list of str, optional
        Gets one line when Dask is missing and a cluster would have paid, when ``workers``
        is capped at the cores, and when a lost chunk ran again.
    where : list of str, optional
        Gets one line saying where the chunks ran.
    deadline : Deadline, optional
        The results of chunks on a cluster are waited for until then, and
        :data:`RESULT_GRACE_SECONDS` more (the chunks themselves read it from ``args``); no
        local cluster starts with less than :data:`LOCAL_CLUSTER_PAYS_SECONDS` left.

    Raises
    ------
    InputError
        Bad ``workers``; a ``scheduler`` that is malformed or does not answer.
    SolveError
        A chunk lost on a cluster twice (reason :data:`LOST_WORK_REASON`), the deadline passed
        on a cluster (``Reason.TIME_LIMIT``), or what ``func`` raises.
    """
    total = len(parts)
    results: list[list[R]] = []
    check_workers(workers)
    if scheduler is not None:
        address = check_scheduler(scheduler)
        from distributed import Client

        with Client(address, timeout=SCHEDULER_TIMEOUT, set_as_default=False) as client:
            _say(where, f"{total} chunks on the Dask cluster at {address}")
            return _flatten(_on_cluster(client, func, args, parts, progress, 0, total, deadline, notes,
                                        f"the Dask cluster at {address}"))  # fmt: skip
    cores = worker_count(workers, notes)
    if not parts:
        return []
    t0 = time.perf_counter()
    results.append(func(*args, parts[0]))
    if progress is not None:
        progress(1, total)
    remaining = (time.perf_counter() - t0) * (total - 1)
    # a cluster pays when the rest of the work, and the time left for it, outlast its start-up
    time_left = math.inf if deadline is None else deadline.left()
    if remaining > LOCAL_CLUSTER_PAYS_SECONDS and time_left > LOCAL_CLUSTER_PAYS_SECONDS and cores > 1 and total > 1:
        missing = dask_missing()
        if missing is None:
            from distributed import Client, LocalCluster

            start = time.perf_counter()
            try:
                cluster = LocalCluster(
                    n_workers=cores,
                    threads_per_worker=1,
                    processes=True,
                    host=LOCAL_CLUSTER_HOST,
                    dashboard_address=LOCAL_DASHBOARD_ADDRESS,
                    silence_logs=LOCAL_CLUSTER_LOG_LEVEL,
                )
            except RuntimeError as exc:  # its worker processes cannot start
                raise InputError(NO_CLUSTER_NOTE) from exc
            with cluster, Client(cluster, set_as_default=False) as client:
                _say(where, f"{total - 1} of {total} chunks on a local Dask cluster of {cores} worker processes "
                     f"(started in {time.perf_counter() - start:.1f} s)")  # fmt: skip
                results += _on_cluster(client, func, args, parts[1:], progress, 1, total, deadline, notes,
                                       "the local Dask cluster")  # fmt: skip
            return _flatten(results)
        elif notes is not None:
            notes.append(missing)
    _say(where, f"{total} chunk{'s' if total != 1 else ''} in this process")
    for done, part in enumerate(parts[1:], start=2):
        results.append(func(*args, part))
        if progress is not None:
            progress(done, total)
    return _flatten(results)


def _say(where: list[str] | None, line: str) -> None:
    if where is not None:
        where.append(line)


def _flatten(results: list[list[R]]) -> list[R]:
    return [item for part in results for item in part]


def _lost(exc: BaseException) -> bool:
    """Whether a chunk's error says the cluster lost it (its worker died, its task was cancelled)."""
    from concurrent.futures import CancelledError

    from distributed.scheduler import KilledWorker

    return isinstance(exc, CancelledError | KilledWorker | asyncio.CancelledError)


def _on_cluster(
    client: Any,
    func: Callable[..., list[R]],
    args: tuple[Any, ...],
    parts: Sequence[Any],
    progress: Callable[[int, int], None] | None,
    done: int,
    total: int,
    deadline: Deadline | None,
    notes: list[str] | None,
    place: str,
) -> list[list[R]]:
    """The chunks' results from ``client``'s cluster, in order; a lost chunk runs again once."""
    from distributed import as_completed

    def scatter(first: bool) -> list[Any]:
        try:
            # each argument whole ([a]: a dict or a list would be scattered item by item)
            return [client.scatter([a], broadcast=True, hash=first, timeout=WORKER_WAIT_SECONDS)[0] for a in args]
        except TimeoutError as exc:
            raise SolveError(f"{place} offered no worker within {WORKER_WAIT_SECONDS:g} s to run the work on",
                             LOST_WORK_REASON) from exc  # fmt: skip

    shared = scatter(True)
    index: dict[str, int] = {}
    tries = [0] * len(parts)
    results: dict[int, list[R]] = {}

    def submit(i: int) -> Any:
        future = client.submit(func, *shared, parts[i], pure=False)
        index[future.key] = i
        return future

    futures = [submit(i) for i in range(len(parts))]
    left = math.inf if deadline is None else deadline.left()
    wait = max(left, 0.0) + RESULT_GRACE_SECONDS if math.isfinite(left) else None
    pending = as_completed(futures, loop=client.loop, raise_errors=False, timeout=wait)
    try:
        for future in pending:
            i = index[future.key]
            try:
                results[i] = future.result(timeout=wait)
            except Exception as exc:
                if not _lost(exc):
                    raise
                if tries[i] >= CHUNK_RETRIES:
                    raise SolveError(
                        f"chunk {i + 1} of {len(parts)} was lost on {place} {CHUNK_RETRIES + 1} times (its worker "
                        f"died or its task was cancelled: {type(exc).__name__}); check the workers' memory and logs",
                        LOST_WORK_REASON,
                    ) from exc
                tries[i] += 1
                if notes is not None:
                    notes.append(f"chunk {i + 1} of {len(parts)} was lost on {place} and ran again")
                if any(s.status != "finished" for s in shared):
                    shared = scatter(False)
                new = submit(i)
                futures.append(new)
                pending.add(new)
                continue
            done += 1
            if progress is not None:
                progress(done, total)
    except TimeoutError as exc:
        if wait is None or deadline is None:  # only a deadline makes the waits time out: this is the chunk's own
            raise
        raise deadline.expired(f"with {len(results)} of {len(parts)} chunks back from {place}") from exc
    finally:
        client.cancel([f for f in futures if not f.done()])
    return [results[i] for i in range(len(parts))]
