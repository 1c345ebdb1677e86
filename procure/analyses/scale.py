"""Running independent chunks of work: in this process, on a local Dask cluster, or on yours.

Work that splits (the per-scenario solves of EVPI, the points of a sweep) is cut into chunks
whose boundaries do not depend on where they run; each chunk is one task, which builds its
model once and re-solves it for each item of the chunk. The results come back in order and are
the same wherever the chunks ran: the serial path runs the same chunks, one after another.

Where: with ``scheduler`` (an address such as ``tcp://10.0.0.5:8786``), on that cluster. Else
the first chunk runs here and is timed; when the rest would take longer than
:data:`LOCAL_CLUSTER_PAYS_SECONDS`, a local cluster of worker processes (one thread each)
takes the rest, else it runs here too. Without Dask installed everything runs here, and one
note says so.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ..errors import InputError

T = TypeVar("T")
R = TypeVar("R")

#: The extra that installs Dask.
SCALE_EXTRA = "procure[scale]"
#: Seconds of remaining serial work above which a local cluster is started: a bit more than
#: twice what starting one costs on 2 cores (``benchmarks/scenarios_scale.py`` times it: 1.9 s
#: median), so that the cluster pays for itself when the work splits over 2 workers [s].
LOCAL_CLUSTER_PAYS_SECONDS = 5.0


def dask_missing() -> str | None:
    """None when ``dask.distributed`` can be imported, else the one line saying how to get it."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        return f"Dask is not installed, so the work runs in this process: pip install '{SCALE_EXTRA}'"
    return None


def chunks(items: Sequence[T], size: int) -> list[list[T]]:
    """``items`` cut into consecutive chunks of ``size`` (the last may be shorter)."""
    if not (isinstance(size, int) and size >= 1):
        raise InputError(f"chunk size = {size!r} is invalid: must be a whole number ≥ 1")
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


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
        Address of a running Dask scheduler (``dask scheduler`` prints it).
    workers : int, optional
        Worker processes of a local cluster (default: the machine's cores); 1 runs
        everything in this process.
    progress : callable, optional
        ``progress(done, total)`` after each chunk.
    notes : list of str, optional
        Gets one line when Dask is missing and a cluster would have paid.
    where : list of str, optional
        Gets one line saying where the chunks ran.
    """
    total = len(parts)
    results: list[list[R]] = []
    if workers is not None and not (isinstance(workers, int) and workers >= 1):
        raise InputError(f"workers = {workers!r} is invalid: must be a whole number ≥ 1")
    if scheduler is not None:
        missing = dask_missing()
        if missing:
            raise InputError(f"scheduler = {scheduler!r} needs Dask: pip install '{SCALE_EXTRA}'")
        from distributed import Client

        with Client(scheduler, timeout="10s") as client:
            _say(where, f"{total} chunks on the Dask cluster at {scheduler}")
            return _flatten(_on_cluster(client, func, args, parts, progress, 0, total))
    if not parts:
        return []
    t0 = time.perf_counter()
    results.append(func(*args, parts[0]))
    if progress is not None:
        progress(1, total)
    remaining = (time.perf_counter() - t0) * (total - 1)
    cores = workers or os.cpu_count() or 1
    if remaining > LOCAL_CLUSTER_PAYS_SECONDS and cores > 1 and total > 1:
        missing = dask_missing()
        if missing is None:
            from distributed import Client, LocalCluster

            start = time.perf_counter()
            with (
                LocalCluster(
                    n_workers=cores,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=":0",
                    silence_logs=logging.ERROR,
                ) as cluster,  # fmt: skip
                Client(cluster) as client,
            ):
                _say(where, f"{total - 1} of {total} chunks on a local Dask cluster of {cores} worker processes "
                     f"(started in {time.perf_counter() - start:.1f} s)")  # fmt: skip
                results += _on_cluster(client, func, args, parts[1:], progress, 1, total)
            return _flatten(results)
        if notes is not None:
            notes.append(missing)
    _say(where, f"{total} chunks in this process")
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


def _on_cluster(
    client: Any,
    func: Callable[..., list[R]],
    args: tuple[Any, ...],
    parts: Sequence[Any],
    progress: Callable[[int, int], None] | None,
    done: int,
    total: int,
) -> list[list[R]]:
    from distributed import as_completed

    shared = [client.scatter(a, broadcast=True) for a in args]
    futures = [client.submit(func, *shared, part, pure=False) for part in parts]
    for _future in as_completed(futures):
        done += 1
        if progress is not None:
            progress(done, total)
    return list(client.gather(futures))
