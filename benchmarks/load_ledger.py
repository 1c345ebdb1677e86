"""Reading a large ledger: ``read_sources`` and ``load_ledger`` against ``pandas.read_csv``.

    python benchmarks/load_ledger.py [--rows 100000] [--repeat 5]

Writes a ledger of 100,000 random sources (``procure.ledger.synthetic.random_sources``, every
column of ``sources.csv``, blanks where a value is unlimited or missing) and the default
cluster in a temporary folder, then times ``procure.ledger.read_sources`` (read and validate
every cell), ``procure.ledger.load_ledger`` (the same and ``cluster.toml``) and
``pandas.read_csv`` of the same file (no validation), interleaved and repeated. Prints the
median and min–max of each and the ratios. Goal: ``read_sources`` under 0.5 s at 100,000 rows.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from timing import interleaved, machine, ratio

from procure.ledger import default_ledger_dir, load_ledger, read_sources
from procure.ledger.synthetic import random_sources

#: Most seconds ``read_sources`` may take on 100,000 rows (the median of the repeats) [s].
GOAL_SECONDS = 0.5


def write_ledger(folder: Path, rows: int, seed: int = 0) -> Path:
    """A ledger folder of ``rows`` random sources and the default cluster; its sources.csv."""
    sources = random_sources(rows, seed, curves=("linear", "log", "exp", "power", "hill"))
    path = folder / "sources.csv"
    sources.replace([np.inf], np.nan).to_csv(path, index=False, na_rep="")
    shutil.copy(default_ledger_dir() / "cluster.toml", folder / "cluster.toml")
    return path


def spread(label: str, seconds: list[float]) -> str:
    """``label: median X s (min–max A–B s)``."""
    return f"{label}: median {statistics.median(seconds):.3f} s (min–max {min(seconds):.3f}–{max(seconds):.3f} s)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = write_ledger(folder, args.rows)
        size_mb = path.stat().st_size / 1e6
        read = read_sources(path)
        agree = len(read) == args.rows and read["source"].is_unique
        t = interleaved(
            {
                "read_sources": lambda: read_sources(path),
                "load_ledger": lambda: load_ledger(folder),
                "read_csv": lambda: pd.read_csv(path),
            },
            args.repeat,
        )
    print(machine())
    print(f"{args.rows:,} sources, {len(read.columns)} columns, {size_mb:.1f} MB; every row read back: {agree}")
    for name in t:
        print(spread(name, t[name]))
    median = statistics.median(t["read_sources"])
    verdict = "met" if median < GOAL_SECONDS else "missed"
    print(ratio("read_sources / pandas.read_csv", t["read_sources"], t["read_csv"]))
    print(ratio("load_ledger / pandas.read_csv", t["load_ledger"], t["read_csv"]))
    print(f"goal: read_sources under {GOAL_SECONDS:g} s (median): {verdict}")


if __name__ == "__main__":
    main()
