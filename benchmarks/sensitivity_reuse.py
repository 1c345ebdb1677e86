"""Re-solving across byte prices: one built model reused, a rebuild per point, raw highspy warm.

    python benchmarks/sensitivity_reuse.py [--sources 1000] [--points 50]

On a random ledger of N sources with a budget of $200 a source, the plan is solved at P
log-spaced byte-price multipliers from 0.1 to 10, each certified to 1e-4:

* reuse: one ``Program``; each point changes the budget row's coefficients in place and
  re-solves warm (HiGHS keeps its basis, the model the cuts found so far);
* rebuild: a new ``Program`` (Pyomo model and solver) at every point;
* raw highspy: one ``highspy.Highs``; each point changes the budget row's coefficients and runs
  the same cut refinement warm;
* builds: the rebuild's Pyomo programs built and handed to HiGHS, not solved (the part of a
  rebuild that reusing the model saves); and within reuse, the seconds HiGHS itself runs
  (``Highs.getRunTime``): the ratio of a rebuild to that is the most rebuild / reuse could be
  if everything around HiGHS took no time;
* the guide alone: at each point's prices (computed beforehand), the dual from the point before's
  multipliers and its hours made exact, with no model: what places each point's cuts. With
  HiGHS's own run in reuse it is the least a point costs while each point's Pyomo program is
  guided and solved, so rebuild / (the two) is the most rebuild / reuse could be then.

The three are interleaved and repeated; prints the plan values' largest relative difference
and the ratios as medians with their min–max (goals: rebuild / reuse ≥ 10×, reuse / raw ≤ 2×), and
rebuild / raw: what the same loop written straight in highspy, with no Pyomo model at all, gains.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from solve_scaling import TOLERANCE, _base_lp, first_cuts, refine
from timing import interleaved, machine, ratio

from procure import from_ledger
from procure.ledger.synthetic import random_ledger
from procure.program.dual import solve_dual
from procure.program.numbers.bounds import source_arrays
from procure.program.rows import capacity_rows_of, coupling_rows
from procure.program.solve.polish import exact_hours
from procure.program.solve.program import Program


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


def reuse_loop(base, grid, inside: list[float] | None = None) -> list[float]:
    """The sweep on one program; appends to ``inside`` the seconds HiGHS itself ran [s]."""
    program = Program(base, tolerance=TOLERANCE)
    values = []
    ran = 0.0
    for m in grid:
        program.reprice(base.with_byte_price_x(m))
        h = program.highs.h  # a rebuild makes a new HiGHS object: count each one's own run time
        before = h.getRunTime()
        values.append(program.solve().value)
        ran += (program.highs.h.getRunTime() - before) if program.highs.h is h else program.highs.h.getRunTime()
    if inside is not None:
        inside.append(ran)
    return values


def guide_loop(problems) -> None:
    """The dual and its exact hours at each point's prices, each dual from the point before's μ."""
    start = None
    for problem in problems:
        a = source_arrays(problem)
        names = capacity_rows_of(problem)
        dual = solve_dual(a, coupling_rows(problem, problem.budget, names), start)
        exact_hours(problem, a, names, problem.budget, dual.x, dual.mu, -np.inf)
        start = dual.mu


def build_loop(base, grid) -> None:
    """The rebuild's Pyomo programs built and handed to HiGHS, not solved."""
    for m in grid:
        Program(base.with_byte_price_x(m), tolerance=TOLERANCE)


def rebuild_loop(base, grid) -> list[float]:
    return [Program(base.with_byte_price_x(m), tolerance=TOLERANCE).solve().value for m in grid]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=1_000)
    parser.add_argument("--points", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    base = from_ledger(random_ledger(args.sources, seed=1), budget=200.0 * args.sources)
    grid = np.geomspace(0.1, 10.0, args.points)
    out: dict[str, list[float]] = {}
    inside: list[float] = []
    problems = [base.with_byte_price_x(m) for m in grid]
    t = interleaved(
        {
            "guide": lambda: guide_loop(problems),
            "reuse": lambda: out.__setitem__("reuse", reuse_loop(base, grid, inside)),
            "builds": lambda: build_loop(base, grid),
            "rebuild": lambda: out.__setitem__("rebuild", rebuild_loop(base, grid)),
            "raw": lambda: out.__setitem__("raw", raw_loop(base, grid)),
        },
        args.repeat,
    )
    rebuild = np.array(out["rebuild"])
    diff = max(np.max(np.abs(np.array(out[k]) / rebuild - 1)) for k in ("reuse", "raw"))
    print(machine())
    print(f"{args.sources:,} sources x {args.points} byte-price multipliers, each plan certified to {TOLERANCE:g}")
    print(f"  plan values agree within {diff:.1e} (relative)")
    print("  " + ratio("rebuild / reuse one model", t["rebuild"], t["reuse"], "≥ 10x"))
    print("  " + ratio("reuse one model / raw highspy warm loop", t["reuse"], t["raw"], "≤ 2x"))
    raw = ratio("rebuild / raw highspy warm loop", t["rebuild"], t["raw"])
    print(f"  {raw}: what the same cuts written straight in highspy, with no Pyomo model, gain on a rebuild")
    per = 1e3 / args.points
    print(f"  per point (medians): rebuild {statistics.median(t['rebuild']) * per:.1f} ms, of which the Pyomo "
          f"build {statistics.median(t['builds']) * per:.1f} ms; reuse {statistics.median(t['reuse']) * per:.1f} ms, "
          f"of which HiGHS's own run {statistics.median(inside) * per:.1f} ms")  # fmt: skip
    limit = ratio("rebuild / HiGHS's own run in reuse", t["rebuild"], inside)
    print(f"  {limit}: the most rebuild / reuse could be were all but HiGHS free")
    floor = [g + h for g, h in zip(t["guide"], inside, strict=True)]
    guided = ratio("rebuild / (the guide alone + HiGHS's own run in reuse)", t["rebuild"], floor)
    print(f"  {guided}: the most rebuild / reuse could be while each point's program is guided and solved")
    print(f"  per point, the guide alone (dual and exact hours): {statistics.median(t['guide']) * per:.1f} ms")


if __name__ == "__main__":
    main()
