"""λ and the shadow prices against the slopes of the value, by differences of fresh solves.

The oracle is written apart from the readout of duals: the plan's value is solved again at a
budget or a capacity moved by a small step either way (at a tight tolerance), and the reported
price must lie between the one-sided slopes (a kink) or on them (a smooth point), at one of two
shrinking steps, within 1e-4 relative. Nothing here reads a dual, a multiplier or a row.

* an S-shaped source (hill) that fills the decode cores while a mix bound on another source
  binds: the cores' shadow price carries the mix row's price of that source's hours;
* the default ledger with some sources linear, at the default tolerance: λ and the
  accelerators' shadow price are exact, not the certified plan's loose hours' (a linear source
  bought in part sits at a kink of the dual: its hours are where the rows put them).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from procure.ledger import Ledger, load_ledger
from procure.program import from_ledger
from procure.program.solve import solve_problem

STEPS = (1e-4, 1e-5)  # relative steps of the differences [1]
REL = 1e-4  # how far outside the one-sided slopes a price may lie [1]
FINE = 1e-8  # the tolerance of the solves the differences take [1]


def slopes(value_at, at: float) -> list[tuple[float, float]]:
    """The left and right slopes of ``value_at`` at ``at``, at each relative step of STEPS."""
    now = value_at(at)
    out = []
    for rel in STEPS:
        step = rel * max(abs(at), 1.0)
        out.append(((now - value_at(at - step)) / step, (value_at(at + step) - now) / step))
    return out


def between(price: float, found: list[tuple[float, float]]) -> bool:
    """Whether ``price`` lies between the one-sided slopes at one of the steps, within REL."""
    return any(
        min(left, right) * (1 - REL) - 1e-12 <= price <= max(left, right) * (1 + REL) + 1e-12 for left, right in found
    )


def capacity_slopes(base, name: str) -> list[tuple[float, float]]:
    def value_at(c: float) -> float:
        return solve_problem(base.asking(capacity={**base.capacity, name: c}), tolerance=FINE).value

    return slopes(value_at, float(base.capacity[name]))


def budget_slopes(base) -> list[tuple[float, float]]:
    return slopes(lambda b: solve_problem(base.asking(budget=b), tolerance=FINE).value, float(base.budget))


@pytest.mark.parametrize(("shape", "scale", "cores", "share"), [(3.0, 100.0, 2_000.0, 0.5), (2.0, 200.0, 2_000.0, 0.3)])
def test_an_s_shaped_source_filling_the_cores_under_a_mix_bound_has_the_slope_as_its_price(shape, scale, cores, share):
    # before: 0.01656 where the slope is 0.06535, and 0.04988 where it is 0.07887
    default = load_ledger()
    rows = default.sources.iloc[[0, 4]].reset_index(drop=True).copy()  # own (decoded on cores), sim (rendered)
    rows["curve"] = ["hill", "log"]
    rows["curve_shape"] = [shape, math.nan]
    rows["saturation_hours"] = [scale, 200.0]
    rows["held_hours"] = [0.0, 0.0]
    rows["available_hours"] = [5_000.0, math.inf]
    cluster = default.cluster.replace(storage_gb=math.inf, decode_core_hours=cores)
    base = from_ledger(Ledger(rows, cluster, default.path), budget=1e6, max_share={"sim": share})
    plan = solve_problem(base)
    assert plan.sources["position"].iloc[0] == "cap"  # own fills the cores
    assert plan.shadow_prices["max_share:sim"] > 0  # while the mix bound binds
    found = capacity_slopes(base, "core_hours")
    assert found[0][1] > 0
    assert between(plan.shadow_prices["core_hours"], found), (plan.shadow_prices["core_hours"], found)


def _linear_ledger(seed: int):
    """The default ledger with a random two in five of its sources linear, half the time with
    no end to their availability, and a random budget (as the audit's ledgers were drawn)."""
    default = load_ledger()
    rng = np.random.default_rng(seed)
    s = default.sources.copy()
    chosen = rng.random(len(s)) < 0.4
    if not chosen.any():
        chosen[rng.integers(len(s))] = True
    s.loc[chosen, "curve"] = "linear"
    if rng.random() < 0.5:
        s.loc[chosen, "available_hours"] = math.inf
    return from_ledger(replace(default, sources=s), budget=float(rng.uniform(2e4, 4e5)))


@pytest.mark.parametrize("seed", [0, 11, 26])
def test_with_linear_sources_lambda_and_shadow_prices_are_the_slopes_at_the_default_tolerance(seed):
    # before (λ; the accelerators' shadow price): 0.003816 where the slope is 0.003744, 0.1729
    # where it is 0.1829; 0.005120 for 0.005212, 0.06354 for 0.06024; 0.002593 for 0.002790,
    # 0.2351 for 0.2048
    base = _linear_ledger(seed)
    plan = solve_problem(base)
    assert between(plan.lambda_, budget_slopes(base)), plan.lambda_
    price = plan.shadow_prices["accelerator_hours"]
    assert between(price, capacity_slopes(base, "accelerator_hours")), price
