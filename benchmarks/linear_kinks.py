"""Ledgers with linear curves: the dual at its kinks, against the refinement and cvxpy.

    python benchmarks/linear_kinks.py [--sizes 1000 10000] [--repeat 5]

A source with a linear curve is bought all or nothing at a price, so where the optimum buys one
in part the dual's minimum lies on a kink (``procure.program.kinks``). On random ledgers of N
sources (``procure.ledger.synthetic.random_ledger``, budget $200 a source) with two mixes of
curves that include linear ones, side by side in one run (interleaved, repeated):

* procure end to end from the loaded problem: ``Program(problem).solve()`` (the dual guides the
  cuts, one HiGHS solve certifies);
* procure's refinement alone: ``Program(problem, dual_guide=False).solve()`` (cuts from spread
  first points, rounds until certified): what the guided solve falls back to where the dual
  does not converge;
* cvxpy with Clarabel (linear terms, exponential cones), what a capable user would write.

Prints the medians, the ratios (median and min–max) and how many evaluations the dual took and
whether it converged; the plans' values must agree within the tolerance.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from solve_scaling import TOLERANCE, cvxpy_solve
from timing import interleaved, machine, ratio

from procure import from_ledger
from procure.ledger.synthetic import random_ledger
from procure.program.bounds import source_arrays
from procure.program.dual import capacity_rows_of, coupling_rows, solve_dual
from procure.program.solve import Program

#: The mixes of curves of the ledgers.
MIXES = (("log", "exp", "linear"), ("linear", "log"))


def case(n: int, mix: tuple[str, ...], repeat: int) -> None:
    """Time and print one ledger size and mix."""
    problem = from_ledger(random_ledger(n, seed=2, curves=mix), budget=200.0 * n)
    a = source_arrays(problem)
    dual = solve_dual(a, coupling_rows(problem, problem.budget, capacity_rows_of(problem)))
    out: dict[str, float | None] = {}

    def guided() -> None:
        out["guided"] = Program(problem, tolerance=TOLERANCE).solve().value

    def refinement() -> None:
        out["refinement"] = Program(problem, tolerance=TOLERANCE, dual_guide=False).solve().value

    def cvxpy() -> None:
        out["cvxpy"] = cvxpy_solve(problem)

    methods = {"guided": guided, "refinement": refinement}
    if cvxpy_solve(from_ledger(random_ledger(20, seed=1, curves=mix), budget=4_000.0)) is not None:
        methods["cvxpy"] = cvxpy
    t = interleaved(methods, repeat)
    rounds = Program(problem, tolerance=TOLERANCE).solve().rounds
    values = {k: float(v) for k, v in out.items() if v is not None}
    agree = max(abs(v / values["guided"] - 1) for v in values.values())
    state = "converged" if dual.converged else "did not converge"
    print(f"{n:,} sources, curves {'/'.join(mix)}: the dual {state} in {dual.evaluations} evaluations;")
    print(f"  the guided solve took {rounds} round(s); the plans' values agree within {agree:.1e}")
    print(f"  procure end to end: median {statistics.median(t['guided']):.3f} s")
    print("  " + ratio("refinement / guided", t["refinement"], t["guided"]))
    if "cvxpy" in t:
        print("  " + ratio("cvxpy + Clarabel / guided", t["cvxpy"], t["guided"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(machine())
    for n in args.sizes:
        for mix in MIXES:
            case(n, mix, args.repeat)


if __name__ == "__main__":
    main()
