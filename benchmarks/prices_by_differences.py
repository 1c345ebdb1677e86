"""λ and the shadow prices of random ledgers against the value's slopes, by fresh solves.

    python benchmarks/prices_by_differences.py [--ledgers 100] [--family NAME] [--workers 1]

For each ledger the plan is solved at the default tolerance; then the plan's value is solved
again (at tolerance 1e-8) at the budget, or a capacity, moved by a relative step of 1e-4 and
1e-5 either way. A price counts as right where it lies between the one-sided slopes at one of
the steps, within 1e-4 relative (at a kink the slopes differ; elsewhere they agree). Nothing
here reads a dual. Families:

* ``linear``: the default ledger, two in five sources linear (half of them without end), a
  budget from $20,000 to $400,000: λ and every finite capacity's price;
* ``integer``: two to four sources with S-shaped hill curves, lots, minimum orders and fees, a
  mix bound on the first at half its share, on a cluster of 0.3 accelerators: λ and the
  accelerators' price;
* ``scenarios``: the default ledger with 10 scenarios of the exchange rate and scale, with
  recourse at 1.3 × or a CVaR weight of 0.5: λ (the slope of the plan's own objective);
* ``periods``: the default ledger over four to six periods of $5,000–40,000 each with a mix
  bound on the simulated hours: each period's λ_t (the value of one more dollar arriving then);
* ``formats``: the default ledger offered ``recorded,model_side`` formats: λ.

Prints, per family, how many prices of how many lay within, and each that did not.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

import procure

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "program"))
from differences import FINE, between, slopes  # the tests' oracle

from procure.errors import ProcureError
from procure.ledger import load_ledger
from procure.ledger.synthetic import linear_variant, random_integer_ledger
from procure.program import from_ledger
from procure.program.solve.program import solve_problem


def linear(seed: int):
    ledger, budget = linear_variant(seed)
    return from_ledger(ledger, budget=budget), None


def integer(seed: int):
    rng = np.random.default_rng(1_000 + seed)
    budget = float(rng.uniform(3e3, 8e4))
    return from_ledger(random_integer_ledger(seed), budget=budget, max_share={"s0": 0.5}), None


def scenarios(seed: int):
    from procure.ledger.load import UNCERTAIN_COLUMNS
    from procure.ledger.scenarios import Scenarios
    from procure.program.numbers.scenarios import scenario_problem

    default = load_ledger()
    rng = np.random.default_rng(2_000 + seed)
    s = default.sources
    count = 10
    values = {c: np.tile(s[c].to_numpy(float), (count, 1)) for c in UNCERTAIN_COLUMNS}
    for c in ("exchange_rate", "saturation_hours"):
        values[c] = values[c] * rng.uniform(0.4, 1.6, values[c].shape)
    sc = Scenarios(tuple(f"w{k}" for k in range(count)), np.full(count, 0.1), values, "bench")
    options = {"recourse_price_x": 1.3} if seed % 2 == 0 else {"risk_weight": 0.5, "risk_alpha": 0.2}
    base = from_ledger(default, budget=float(rng.uniform(3e4, 2e5)))
    return scenario_problem(base, sc, **options), None


def periods(seed: int):
    """Four to six periods of the default ledger's sources with their money and a mix bound on
    the simulated hours at half their share without it: the Periods and the bound."""
    from procure.ledger.periods import Periods

    default = load_ledger()
    rng = np.random.default_rng(4_000 + seed)
    count, n = int(rng.integers(4, 7)), len(default.sources)
    months = rng.choice([1.0, 2.0, 3.0], count)
    money = rng.uniform(5_000, 40_000, count)
    spec = Periods(tuple(f"P{t + 1}" for t in range(count)), months, money, None, {}, np.full((count, n), np.nan),
                   np.full((count, n), np.inf), "bench")  # fmt: skip
    return spec, {"sim": float(rng.uniform(0.2, 0.5))}


def check_periods(seed: int) -> tuple[int, int, list[str]]:
    """λ_t of each period against the slope of the value in that period's money."""
    spec, shares = periods(seed)
    plan = procure.solve(periods=spec, max_share=shares)
    good, bad = 0, []
    for t, name in enumerate(spec.names):

        def value_at(m: float, t: int = t) -> float:
            money = spec.money.copy()
            money[t] = m
            return procure.solve(periods=replace(spec, money=money), max_share=shares, tolerance=FINE).value

        found = slopes(value_at, float(spec.money[t]))
        price = plan.lambda_by_period[name]
        if between(price, found):
            good += 1
        else:
            bad.append(f"λ_{name} {price:.6g} vs {[(round(a, 8), round(b, 8)) for a, b, _n in found]}")
    return good, len(spec.names), bad


def formats(seed: int):
    rng = np.random.default_rng(3_000 + seed)
    return None, float(rng.uniform(3e4, 3e5))


def check(family: str, seed: int) -> tuple[int, int, list[str]]:
    """(prices within, prices checked, what did not hold) for one ledger."""
    if family == "periods":
        return check_periods(seed)
    if family == "formats":
        _none, budget = formats(seed)

        def value_at(b: float, tolerance: float = FINE) -> float:
            return procure.solve(budget=b, formats=["recorded", "model_side"], tolerance=tolerance).value

        plan = procure.solve(budget=budget, formats=["recorded", "model_side"])
        found = slopes(value_at, budget)
        ok = between(plan.lambda_, found)
        return int(ok), 1, [] if ok else [f"λ {plan.lambda_:.6g} vs {found}"]
    problem, _ = {"linear": linear, "integer": integer, "scenarios": scenarios}[family](seed)
    plan = solve_problem(problem)
    if family == "scenarios":
        budget = float(problem.base.budget)

        def at_budget(b: float):
            return replace(problem, base=problem.base.asking(budget=b))

        prices = [("λ", plan.lambda_, at_budget, budget)]
    else:
        prices = [("λ", plan.lambda_, lambda b: problem.asking(budget=b), float(problem.budget))]
        for name, price in plan.shadow_prices.items():
            limit = float(problem.capacity.get(name, math.inf))
            if name.startswith("max_share") or not math.isfinite(limit):
                continue
            if family == "integer" and name != "accelerator_hours":
                continue
            prices.append((name, price, lambda c, n=name: problem.asking(capacity={**problem.capacity, n: c}), limit))
    good, bad = 0, []
    for name, price, moved, at in prices:
        found = slopes(lambda v, moved=moved: solve_problem(moved(v), tolerance=FINE).value, at)
        if between(price, found):
            good += 1
        else:
            bad.append(f"{name} {price:.6g} vs {[(round(a, 8), round(b, 8)) for a, b, _n in found]}")
    return good, len(prices), bad


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ledgers", type=int, default=100)
    parser.add_argument("--family", nargs="+", default=["linear", "integer", "scenarios", "periods", "formats"])
    args = parser.parse_args()
    for family in args.family:
        t0 = time.perf_counter()
        good = total = ledgers = 0
        for seed in range(args.ledgers):
            try:
                g, n, bad = check(family, seed)
            except ProcureError as exc:  # a ledger with no plan: not counted
                print(f"  {family} {seed}: {exc}")
                continue
            ledgers += 1
            good, total = good + g, total + n
            for line in bad:
                print(f"  {family} {seed}: {line}", flush=True)
        print(f"{family}: {good} of {total} prices within 1e-4 of the slopes, on {ledgers} ledgers "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
