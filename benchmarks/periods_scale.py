"""Plans over periods at scale: 1,000 sources × 12 periods, certified.

    python benchmarks/periods_scale.py [--sources 1000] [--periods 12] [--repeat 5]

A random ledger of 1,000 sources (``procure.ledger.synthetic.random_ledger``) over 12 monthly
periods with equal money, certified within 1e-4 (build and solve), against a one-period
certified solve of a random ledger with as many curves (12,000 sources: the structure's limit
where every curve is its own source and the dual places the cuts), interleaved and repeated.
Prints each median (min–max) and the ratio.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
from timing import interleaved, machine, ratio

from procure.ledger.periods import Periods
from procure.ledger.synthetic import random_ledger
from procure.program import from_ledger
from procure.program.numbers.periods import period_problem
from procure.program.solve.program import Program

#: Money of the whole plan per source [$].
MONEY_PER_SOURCE = 2_000.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=1000)
    parser.add_argument("--periods", type=int, default=12)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    n, T = args.sources, args.periods
    ledger = random_ledger(n, 0)
    money = np.full(T, MONEY_PER_SOURCE * n / T)
    periods = Periods(tuple(f"M{t + 1}" for t in range(T)), np.ones(T), money, None, {},
                      np.full((T, n), np.nan), np.full((T, n), np.inf), "benchmark")  # fmt: skip
    flat = random_ledger(n * T, 1)
    found: dict[str, Any] = {}

    def over_periods() -> None:
        plan = Program(period_problem(from_ledger(ledger, budget=float(money.sum())), periods)).solve()
        found["periods"] = plan

    def one_period() -> None:
        found["flat"] = Program(from_ledger(flat, budget=MONEY_PER_SOURCE * n * T)).solve()

    print(machine())
    times = interleaved({"periods": over_periods, "flat": one_period}, args.repeat)
    plan = found["periods"]
    print(f"{n:,} sources × {T} periods: value {plan.value:,.2f}, gap {plan.gap:.1e}, {plan.rounds} rounds, "
          f"{plan.cuts:,} cuts")  # fmt: skip
    print(ratio(f"{n:,} × {T} periods against one period of {n * T:,} sources", times["periods"], times["flat"]))


if __name__ == "__main__":
    main()
