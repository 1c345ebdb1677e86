"""EVPPI's groups: each certified by its expected-value dual alone against each solved by its
Pyomo program.

    python benchmarks/evppi_groups.py [--samples 200] [--groups 10] [--repeat 5]

The default ledger at $100,000 with ``--samples`` draws of its ranged numbers; the draws sorted
by each of its 10 numbers (each source's exchange rate and saturation) and cut into ``--groups``
groups, as ``procure fit --next`` cuts the posterior's draws: one expected-value program per
group. Each group's certified optimum is found both ways, interleaved and repeated; prints the
largest difference between the two (both are certified within the tolerance 1e-4), the median
seconds of each and the median ratio with its min–max.
"""

from __future__ import annotations

import argparse

import numpy as np
from timing import interleaved, machine, ratio

from procure.analyses.fit.evppi import group_values, groups_of, subset
from procure.analyses.scale import Deadline
from procure.analyses.uncertainty import solve_by
from procure.ledger import load_ledger
from procure.ledger.scenarios import ledger_scenarios
from procure.program import from_ledger
from procure.program.numbers.scenarios import scenario_problem

TOLERANCE = 1e-4


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--groups", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    ledger = load_ledger()
    sp = scenario_problem(from_ledger(ledger, budget=1e5), ledger_scenarios(ledger, samples=args.samples, seed=0))
    numbers = [sp.rate[:, j] for j in range(sp.n)] + [sp.saturation_hours[:, j] for j in range(sp.n)]
    parts = [subset(sp, g) for values in numbers for g in groups_of(values, args.groups)]
    found: dict[str, list[float]] = {}

    def by_dual() -> None:
        found["dual"] = group_values({"tolerance": TOLERANCE, "deadline": Deadline.after(3600)}, parts)

    def by_program() -> None:
        deadline = Deadline.after(3600)
        found["program"] = [solve_by(p, deadline, tolerance=TOLERANCE)[1].value for p in parts]

    print(machine())
    times = interleaved({"dual": by_dual, "program": by_program}, args.repeat)
    a, b = np.array(found["dual"]), np.array(found["program"])
    print(f"{len(parts)} groups of {args.samples} draws: largest relative difference "
          f"{float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b)))):.1e} (both within {TOLERANCE:g})")  # fmt: skip
    print(ratio("groups by their dual alone / by their Pyomo programs", times["dual"], times["program"]))


if __name__ == "__main__":
    main()
