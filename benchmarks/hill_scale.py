"""Many S-shaped sources against the same ledger with log curves, end to end.

    python benchmarks/hill_scale.py [--repeat 5]

The ledger of ``benchmarks/time_limit.py``: 1,000 random sources of the default ledger's kinds,
about half of them S-shaped (hill, shape 1.5–3), on 80 accelerators, at $200,000. Side by side
in one run (interleaved, repeated), as the ``procure solve --json`` command:

* that ledger;
* the same ledger with every hill curve made log (same scale): the reference the goal is
  stated against.

Then, in the process, the plan of that ledger by the program as it runs (the S-shaped
sources' bounds narrowed where the Lagrangian bound proves no better plan lies beyond,
``procure.program.solve.hill_range``) and by the program with no narrowing and no guide (the
spread first cuts): their values and bounds, each certified, so each within the other's bound,
and their times. Goal: the S-shaped ledger at most 3× the log one, certified.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
from time_limit import hill_ledger
from timing import interleaved, machine, ratio

from procure.ledger import load_ledger
from procure.program import from_ledger
from procure.program.solve.program import Program

CLI = [sys.executable, "-c", "import sys; from procure.interfaces.cli import main; sys.exit(main(sys.argv[1:]))"]
BUDGET = 200_000.0


def log_twin(hills: Path, folder: Path) -> Path:
    """The ledger at ``hills`` with every hill curve made log, in ``folder``."""
    s = pd.read_csv(hills / "sources.csv")
    s.loc[s["curve"] == "hill", "curve"] = "log"
    s.loc[s["curve"] == "log", "curve_shape"] = float("nan")
    folder.mkdir()
    s.to_csv(folder / "sources.csv", index=False)
    (folder / "cluster.toml").write_text((hills / "cluster.toml").read_text())
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    a = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="procure-hills-") as tmp:
        hills = hill_ledger(Path(tmp) / "hills")
        logs = log_twin(hills, Path(tmp) / "logs")
        out: dict[str, dict] = {}

        def solve(folder: Path, key: str):
            def run() -> None:
                argv = [*CLI, "solve", "--ledger", str(folder), "--budget", f"{BUDGET:g}", "--json", "-"]
                done = subprocess.run(argv, capture_output=True, text=True, check=True)
                out[key] = json.loads(done.stdout)

            return run

        times = interleaved({"S-shaped": solve(hills, "hills"), "log": solve(logs, "logs")}, a.repeat)
        problem = from_ledger(load_ledger(hills), budget=BUDGET)
        t0 = time.perf_counter()
        narrowed = Program(problem).solve()
        t1 = time.perf_counter()
        wide = Program(problem, dual_guide=False).solve()
        t2 = time.perf_counter()
    print(machine())
    for name, t in times.items():
        print(f"  {name}: median {statistics.median(t):.2f} s (min {min(t):.2f}, max {max(t):.2f})")
    h = out["hills"]
    print("  " + ratio("S-shaped / log, as commands", times["S-shaped"], times["log"], "<= 3x"))
    print(f"  S-shaped ledger: {h['status']}, value {h['value']:,.4f}, bound {h['value_upper_bound']:,.4f}, "
          f"{h['rounds']} rounds")  # fmt: skip
    print(f"  narrowed, in the process: {t1 - t0:.2f} s, value {narrowed.value:,.4f}, bound "
          f"{narrowed.value_upper_bound:,.4f}, {narrowed.rounds} rounds")  # fmt: skip
    print(f"  no narrowing, no guide:   {t2 - t1:.2f} s, value {wide.value:,.4f}, bound "
          f"{wide.value_upper_bound:,.4f}, {wide.rounds} rounds")  # fmt: skip
    within = narrowed.value <= wide.value_upper_bound * (1 + 1e-9) and wide.value <= narrowed.value_upper_bound * (
        1 + 1e-9
    )
    print(f"  each plan's value within the other's bound: {within}")


if __name__ == "__main__":
    main()
