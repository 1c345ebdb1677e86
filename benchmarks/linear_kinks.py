"""Ledgers with linear curves: the dual at its kinks, against the refinement and cvxpy.

    python benchmarks/linear_kinks.py [--sizes 1000 10000] [--repeat 5] [--no-evpi]

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

Then EVPI: ``procure solve --budget 100000 --samples 1000 --workers 1`` end to end (a fresh
process each) on the shipped default ledger with its twin and simulated sources' curves made
linear, with its force-bearing source's, and with all five (an LP in every scenario), against
the same command on the default ledger as shipped (all log curves), and that at $1,000,000, a
budget no scenario spends; the twin linear at $200,000 (bought in part, where the core and
accelerator rows are nearly alike over the log sources) against the default ledger at that
budget; and where each linear
ledger's 1,000 wait-and-see values are certified (:func:`evpi_paths`).
"""

from __future__ import annotations

import argparse
import csv
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from evpi_scale import procure_command
from solve_scaling import TOLERANCE, cvxpy_solve
from timing import command, interleaved, machine, ratio

from procure import from_ledger
from procure.ledger import load_ledger
from procure.ledger.scenarios import ledger_scenarios
from procure.ledger.synthetic import random_ledger
from procure.program.dual import solve_dual
from procure.program.numbers.bounds import source_arrays
from procure.program.numbers.scenarios import scenario_problem
from procure.program.rows import capacity_rows_of, coupling_rows
from procure.program.solve.certify import dual_certified
from procure.program.solve.program import Program
from procure.program.solve.wait_and_see import wait_and_see_values

#: The mixes of curves of the ledgers.
MIXES = (("log", "exp", "linear"), ("linear", "log"))
#: The default ledger's sources whose curves the EVPI case makes linear, one ledger each.
LINEAR_SOURCES = (("twin", "sim"), ("force",), ("own", "twin", "older_arm", "force", "sim"))
#: The EVPI case where the rows are nearly alike over the sources that bend: the twin linear,
#: bought in part at this budget [$].
ALIKE_BUDGET = 200_000.0


def linear_ledger(folder: Path, sources: tuple[str, ...] = LINEAR_SOURCES[0]) -> Path:
    """A copy of the default ledger in ``folder`` with ``sources``' curves linear."""
    target = folder / "_".join(sources)
    shutil.copytree(load_ledger().path, target)
    with open(target / "sources.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    column = rows[0].index("curve")
    for row in rows[1:]:
        if row[0] in sources:
            row[column] = "linear"
    with open(target / "sources.csv", "w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    return target


def evpi_case(repeat: int) -> None:
    """Time ``--samples 1000`` with EVPI on each ledger with linear curves and on the default."""
    solve = [*procure_command(), "solve", "--budget", "100000", "--samples", "1000", "--workers", "1"]
    with tempfile.TemporaryDirectory() as tmp:
        folders = {" and ".join(names): linear_ledger(Path(tmp), names) for names in LINEAR_SOURCES}
        methods = {name: command([*solve, "--ledger", str(f)]) for name, f in folders.items()}
        slack = [*solve[: solve.index("100000")], "1000000", *solve[solve.index("100000") + 1 :]]
        twin = linear_ledger(Path(tmp), ("twin",))
        at = [*solve[: solve.index("100000")], f"{ALIKE_BUDGET:.0f}", *solve[solve.index("100000") + 1 :]]
        alike = command([*at, "--ledger", str(twin)])
        t = interleaved({**methods, "default": command(solve), "slack": command(slack), "alike": alike,
                         "default there": command(at)}, repeat)  # fmt: skip
        print(
            f"--samples 1000 with EVPI, the twin linear at ${ALIKE_BUDGET:,.0f} (bought in part; the core and "
            f"accelerator rows nearly alike over the log sources): median {statistics.median(t['alike']):.2f} s "
            f"(min {min(t['alike']):.2f}, max {max(t['alike']):.2f})"
        )
        print("  " + ratio(f"against the default ledger's at ${ALIKE_BUDGET:,.0f}", t["alike"], t["default there"]))
        print("  " + evpi_paths(twin, ALIKE_BUDGET))
        print(
            f"--samples 1000 with EVPI, the default ledger at $1,000,000 (a budget no scenario spends): "
            f"median {statistics.median(t['slack']):.2f} s (min {min(t['slack']):.2f}, max {max(t['slack']):.2f})"
        )
        print("  " + ratio("against the default ledger's at $100,000", t["slack"], t["default"]))
        for name, folder in folders.items():
            print(f"--samples 1000 with EVPI, {name} linear: median {statistics.median(t[name]):.2f} s "
                  f"(min {min(t[name]):.2f}, max {max(t[name]):.2f})")  # fmt: skip
            print("  " + ratio("against the default ledger's", t[name], t["default"]))
            print("  " + evpi_paths(folder))


def evpi_paths(folder: Path, budget: float = 100_000.0) -> str:
    """Where the wait-and-see values of the command's 1,000 scenarios (seed 0) of the ledger in
    ``folder`` at ``budget`` [$] are certified, in the order EVPI tries: together in the batch,
    by each scenario's dual on its own (started from the one before), else by the Pyomo program."""
    ledger = load_ledger(folder)
    sp = scenario_problem(from_ledger(ledger, budget=budget), ledger_scenarios(ledger, samples=1000, seed=0))
    together = wait_and_see_values(sp, TOLERANCE)
    left = [k for k, v in enumerate(together) if v is None]
    alone, start = 0, None
    for k in left:
        found = dual_certified(sp.scenario(k), TOLERANCE, start)
        if found is not None:
            alone, start = alone + 1, found[1]
    return (f"of {sp.count:,} scenarios: {sp.count - len(left):,} certified together, {alone:,} by the dual "
            f"on its own, {len(left) - alone:,} by the Pyomo program")  # fmt: skip


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
    parser.add_argument("--no-evpi", action="store_true", help="leave out the EVPI case")
    args = parser.parse_args()
    print(machine())
    for n in args.sizes:
        for mix in MIXES:
            case(n, mix, args.repeat)
    if not args.no_evpi:
        evpi_case(args.repeat)


if __name__ == "__main__":
    main()
