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
from differences import FINE, between, slopes  # the oracle beside this file

from procure.ledger import Ledger, load_ledger
from procure.ledger.synthetic import linear_variant, random_integer_ledger
from procure.program import from_ledger
from procure.program.solve.program import solve_problem


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
    """The default ledger with some sources linear, as the audit's ledgers were drawn."""
    ledger, budget = linear_variant(seed)
    return from_ledger(ledger, budget=budget)


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


@pytest.mark.parametrize("seed", [0, 3])
def test_an_s_shaped_source_bought_past_its_steepest_point_gives_lambda_its_slope(seed):
    # before (seed 0): 0.0020649 where the slope is 0.0020705: the S-shaped source's hours were
    # the certified plan's, loose by the tolerance; on its concave side they are now polished
    rng = np.random.default_rng(1_000 + seed)
    base = from_ledger(random_integer_ledger(seed), budget=float(rng.uniform(3e3, 8e4)), max_share={"s0": 0.5})
    plan = solve_problem(base)
    assert between(plan.lambda_, budget_slopes(base)), plan.lambda_
    price = plan.shadow_prices["accelerator_hours"]
    assert between(price, capacity_slopes(base, "accelerator_hours")), price


@pytest.mark.parametrize("options", [{"recourse_price_x": 1.3}, {"risk_weight": 0.5, "risk_alpha": 0.2}])
def test_over_scenarios_lambda_is_the_slope_of_the_plans_objective(options):
    # before: 0.0045755 where the slope is 0.0045851 (recourse); 0.0038968 for 0.0038897 (CVaR):
    # the duals of the tangent envelope, which prices a curve between two tangents at either's slope
    from procure.ledger.load import UNCERTAIN_COLUMNS
    from procure.ledger.scenarios import Scenarios
    from procure.program.numbers.scenarios import scenario_problem

    default = load_ledger()
    rng = np.random.default_rng(2_000)
    count, s = 10, default.sources
    values = {c: np.tile(s[c].to_numpy(float), (count, 1)) for c in UNCERTAIN_COLUMNS}
    for c in ("exchange_rate", "saturation_hours"):
        values[c] = values[c] * rng.uniform(0.4, 1.6, values[c].shape)
    scenarios = Scenarios(tuple(f"w{k}" for k in range(count)), np.full(count, 0.1), values, "test")
    sp = scenario_problem(from_ledger(default, budget=float(rng.uniform(3e4, 2e5))), scenarios, **options)
    plan = solve_problem(sp)

    def value_at(budget: float) -> float:
        return solve_problem(replace(sp, base=sp.base.asking(budget=budget)), tolerance=FINE).value

    found = slopes(value_at, float(sp.base.budget))
    assert between(plan.lambda_, found), (plan.lambda_, found)
