"""The default sweep of ``procure sensitivity`` on a large random ledger: does every point certify,
and how long does it take?

    python benchmarks/sweep_scale.py [--sources 200000] [--workers N]

On ``procure.ledger.synthetic.random_ledger(N)`` the sweep the command runs with its defaults
(the byte-price multiplier from 0.1 to 10 in 9 log-spaced points, a budget of
``procure.defaults.DEFAULT_BUDGET``, each plan certified to ``procure.defaults.SWEEP_TOLERANCE``)
is run once through :func:`procure.analyses.sensitivity.sweep`, the function the command calls
after loading the ledger. A point that does not certify raises, so a finished sweep certified
every point. Then, on one program, the build and each point's solve are timed apart.

Prints the machine, the time to make the ledger, the sweep's wall time and where it ran, and the
per-point times with each plan's status.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import machine

from procure.analyses.sensitivity import _Sweeper, sweep
from procure.defaults import DEFAULT_BUDGET, SWEEP_TOLERANCE
from procure.ledger.synthetic import random_ledger

#: The command's default range and points (``procure sensitivity`` without options).
LO, HI, STEPS = 0.1, 10.0, 9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=200_000)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--no-points", action="store_true", help="Skip the per-point timing.")
    args = parser.parse_args()
    print(machine())
    t0 = time.perf_counter()
    ledger = random_ledger(args.sources)
    print(f"random_ledger({args.sources:,}): {time.perf_counter() - t0:.1f} s")

    t0 = time.perf_counter()
    table = sweep(ledger, "byte_price_x", LO, HI, STEPS, budget=DEFAULT_BUDGET, tolerance=SWEEP_TOLERANCE,
                  workers=args.workers)  # fmt: skip
    took = time.perf_counter() - t0
    notes = "; ".join(table.attrs.get("notes") or []) or "none"
    print(f"default sweep ({STEPS} points, {LO:g}-{HI:g}, budget ${DEFAULT_BUDGET:,.0f}, tolerance "
          f"{SWEEP_TOLERANCE:g}): every point certified, {took:.1f} s; notes: {notes}")  # fmt: skip

    if args.no_points:
        return
    t0 = time.perf_counter()
    sweeper = _Sweeper(ledger, ledger.cluster, DEFAULT_BUDGET, "byte_price_x", SWEEP_TOLERANCE)
    print(f"  problem and model built once: {time.perf_counter() - t0:.1f} s")
    for x in np.unique(np.geomspace(LO, HI, STEPS)):
        t0 = time.perf_counter()
        program, _problem, _ = sweeper.at(float(x))
        plan = program.solve()
        print(f"  x = {x:6.3f}: {time.perf_counter() - t0:5.1f} s, {plan.status}, rounds {plan.rounds}, "
              f"gap {plan.gap:.1e}")  # fmt: skip


if __name__ == "__main__":
    main()
