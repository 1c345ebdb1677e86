"""Re-solving across byte prices: one built model reused, a rebuild per point, raw highspy warm.

    python benchmarks/sensitivity_reuse.py [--sources 1000] [--points 50]

On a random ledger of N sources with a budget of $200 a source, the plan is solved at P
log-spaced byte-price multipliers from 0.1 to 10, each certified to 1e-4:

* reuse: one ``Program``; each point changes the cost parameters and re-solves warm (the
  persistent solver keeps its basis and the cuts found so far);
* rebuild: a new ``Program`` (Pyomo model and solver) at every point;
* raw highspy: one ``highspy.Highs``; each point changes the budget row's coefficients and runs
  the same cut refinement warm.

Prints seconds for each, the plan values' largest relative difference, and the ratios.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from solve_scaling import TOLERANCE, _base_lp, first_cuts, refine

from procure import from_ledger
from procure.ledger.synthetic import random_ledger
from procure.program.model import source_arrays
from procure.program.solve import Program


def raw_loop(base, grid) -> list[float]:
    st = source_arrays(base)
    h = _base_lp(base, st)
    first_cuts(h, st, base.n)
    values = []
    for m in grid:
        cost = base.with_byte_price_x(m).cost
        for i in range(base.n):
            h.changeCoeff(0, i, float(cost[i]))  # row 0 is the budget row
        values.append(refine(h, st, base.n)[0])
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=1_000)
    parser.add_argument("--points", type=int, default=50)
    args = parser.parse_args()
    base = from_ledger(random_ledger(args.sources, seed=1), budget=200.0 * args.sources)
    grid = np.geomspace(0.1, 10.0, args.points)

    t0 = time.perf_counter()
    program = Program(base, tolerance=TOLERANCE)
    reuse = []
    for m in grid:
        program.set_costs(base.with_byte_price_x(m).cost)
        reuse.append(program.solve().value)
    t_reuse = time.perf_counter() - t0

    t0 = time.perf_counter()
    rebuild = [Program(base.with_byte_price_x(m), tolerance=TOLERANCE).solve().value for m in grid]
    t_rebuild = time.perf_counter() - t0

    t0 = time.perf_counter()
    raw = raw_loop(base, grid)
    t_raw = time.perf_counter() - t0

    diff = max(
        np.max(np.abs(np.array(reuse) / np.array(rebuild) - 1)), np.max(np.abs(np.array(raw) / np.array(rebuild) - 1))
    )
    print(f"{args.sources:,} sources x {args.points} byte-price multipliers, each plan certified to {TOLERANCE:g}")
    print(f"  reuse one Pyomo model:   {t_reuse:7.2f} s")
    print(f"  rebuild at every point:  {t_rebuild:7.2f} s")
    print(f"  raw highspy, warm:       {t_raw:7.2f} s")
    print(f"  plan values agree within {diff:.1e} (relative)")
    print(f"  rebuild / reuse: {t_rebuild / t_reuse:.1f}x;  reuse / raw highspy: {t_reuse / t_raw:.1f}x")


if __name__ == "__main__":
    main()
