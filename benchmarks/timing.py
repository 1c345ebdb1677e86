"""Timing shared by the benchmarks: methods interleaved and repeated, ratios as median (min–max).

Each repeat runs every method once, in an order that alternates between repeats, so that load
on the machine falls on all methods alike; a ratio is taken within each repeat and the median
and range of those ratios are printed.
"""

from __future__ import annotations

import gc
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from importlib import metadata


def machine() -> str:
    """One line naming the machine and the versions the figures come from."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    versions = []
    for name in ("numpy", "pandas", "pyomo", "highspy"):
        try:
            versions.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, " + ", ".join(versions)


def interleaved(
    methods: dict[str, Callable[[], object]], repeats: int, *, collect: bool = False
) -> dict[str, list[float]]:
    """Seconds of each method in each repeat; the order alternates between repeats.

    ``collect``: a full collection of Python's collector runs before each method, outside its
    seconds, so that no method pays for freeing the cyclic garbage another left (a dropped
    Pyomo model is millions of objects in cycles); what freeing its own costs is then not in
    any method's seconds (:func:`freeing` measures it).
    """
    times: dict[str, list[float]] = {name: [] for name in methods}
    names = list(methods)
    for r in range(repeats):
        for name in names if r % 2 == 0 else reversed(names):
            if collect:
                gc.collect()
            t0 = time.perf_counter()
            methods[name]()
            times[name].append(time.perf_counter() - t0)
    return times


def freeing(method: Callable[[], object]) -> float:
    """Seconds a full collection of Python's collector takes after ``method`` runs, less one on
    the heap before it: what freeing the cyclic garbage ``method`` leaves costs [s]."""
    gc.collect()
    t0 = time.perf_counter()
    gc.collect()
    baseline = time.perf_counter() - t0
    method()
    t0 = time.perf_counter()
    gc.collect()
    return time.perf_counter() - t0 - baseline


def ratio(label: str, numerator: list[float], denominator: list[float], goal: str = "") -> str:
    """``label: median R× (min–max), a s against b s`` for paired timings."""
    ratios = [a / b for a, b in zip(numerator, denominator, strict=True)]
    line = (
        f"{label}: {statistics.median(ratios):.2f}x (min {min(ratios):.2f}, max {max(ratios):.2f}; "
        f"median {statistics.median(numerator):.3f} s against {statistics.median(denominator):.3f} s, "
        f"{len(ratios)} repeats)"
    )
    return f"{line}  goal {goal}" if goal else line


def command(argv: list[str]) -> Callable[[], object]:
    """A method that runs a command and checks that it succeeds."""

    def run() -> object:
        return subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    return run


PYTHON = sys.executable
