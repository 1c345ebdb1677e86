"""λ and shadow prices where one source meets a limit's row, against the slopes of fresh solves.

The model bounds a source's hours beyond the range its budget or capacity row allows, so the
row binds first and its dual is the limit's price. These cases put one source on that row in
the formulations where something besides the hours' bound reads the range: an on/off
choice's credit row, an S-shaped form over scenarios, a choice of formats, periods under
scenarios whose later prices undercut every period's. The oracle (``differences.py``) reads
no dual: the value is solved again at the limit moved a small step either way.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from conftest import DEFAULT_LEDGER
from differences import FINE, between, slopes

from procure.ledger import Ledger
from procure.ledger.load import UNCERTAIN_COLUMNS
from procure.ledger.periods import Periods
from procure.ledger.scenarios import Scenarios
from procure.program import from_ledger
from procure.program.numbers.infrastructure import infrastructure
from procure.program.numbers.periods import period_problem, with_scenarios
from procure.program.numbers.scenarios import scenario_problem
from procure.program.solve.program import Program, solve_problem

SIM = 4  # the default ledger's simulated source: decoded on no cores, priced per hour
TWIN = 1


def _rows(i: int, **columns: object):
    rows = DEFAULT_LEDGER.sources.iloc[[i]].reset_index(drop=True).copy()
    for name, value in columns.items():
        rows[name] = value
    return rows


def _problem(rows, cluster=None, **asked):
    return from_ledger(Ledger(rows, cluster or DEFAULT_LEDGER.cluster, DEFAULT_LEDGER.path), **asked)


def _budget_slopes(base, solve=solve_problem):
    return slopes(lambda b: solve(base.asking(budget=b), tolerance=FINE).value, float(base.budget))


def _capacity_slopes(base, name: str):
    def value_at(c: float) -> float:
        return solve_problem(base.asking(capacity={**base.capacity, name: c}), tolerance=FINE).value

    return slopes(value_at, float(base.capacity[name]))


@pytest.mark.parametrize("term", ["min_order_hours", "fixed_fee_usd"])
def test_an_on_off_source_that_takes_the_whole_budget_gives_it_its_slope(term):
    """A concave hill curve (s = 0.5) with no hours held and a minimum order or a fee takes the
    whole budget: λ is its slope per dollar."""
    rows = _rows(
        SIM, curve="hill", curve_shape=0.5, held_hours=0.0, **{term: 100.0 if term == "min_order_hours" else 50.0}
    )
    base = _problem(rows, DEFAULT_LEDGER.cluster.replace(count=1e9), budget=1_000.0)
    plan = solve_problem(base)
    found = _budget_slopes(base)
    assert found[0][1] > 0 and plan.sources["hours"].iloc[0] > 0
    assert between(plan.lambda_, found), (plan.lambda_, found)


def test_an_on_off_source_that_fills_the_accelerators_gives_them_its_slope():
    rows = _rows(SIM, curve="hill", curve_shape=0.5, held_hours=0.0, fixed_fee_usd=50.0)
    base = _problem(rows, budget=10_000.0)
    plan = solve_problem(base)
    assert plan.sources["position"].iloc[0] == "cap"
    found = _capacity_slopes(base, "accelerator_hours")
    assert found[0][1] > 0
    assert between(plan.shadow_prices["accelerator_hours"], found), (plan.shadow_prices, found)


def _scenarios(base, count: int = 3, seed: int = 5, **options):
    rng = np.random.default_rng(seed)
    s = base.sources
    values = {c: np.tile(s[c].to_numpy(float), (count, 1)) for c in UNCERTAIN_COLUMNS}
    for c in ("exchange_rate", "saturation_hours"):
        values[c] = values[c] * rng.uniform(0.6, 1.4, values[c].shape)
    sc = Scenarios(tuple(f"w{k}" for k in range(count)), np.full(count, 1 / count), values, "test")
    return scenario_problem(base, sc, **options)


@pytest.mark.parametrize("options", [{"recourse_price_x": 1.3}, {"risk_weight": 0.5, "risk_alpha": 0.2}],
                         ids=["recourse", "cvar"])  # fmt: skip
def test_an_s_shaped_source_filling_the_accelerators_over_scenarios_gives_them_its_slope(options):
    """Over scenarios there are no exact hours: the price is read with a tangent at the source's
    hours (1.5 % low at its form's chord slope before)."""
    rows = _rows(SIM, curve="hill", curve_shape=3.0, saturation_hours=200.0)
    sp = _scenarios(_problem(rows, budget=10_000.0), **options)
    plan = solve_problem(sp)

    def value_at(c: float) -> float:
        asked = sp.base.asking(capacity={**sp.base.capacity, "accelerator_hours": c})
        return solve_problem(replace(sp, base=asked), tolerance=FINE).value

    found = slopes(value_at, float(sp.base.capacity["accelerator_hours"]))
    assert found[0][1] > 0
    assert between(plan.shadow_prices["accelerator_hours"], found), (plan.shadow_prices, found)


def test_an_s_shaped_source_stopped_by_the_budget_before_its_inflection_with_formats():
    """A choice of formats has no exact hours; the budget stops the S-shaped source where its
    curve is still convex (131 h, its inflection at 315 h): λ is its own slope per dollar."""
    rows = _rows(TWIN, available_hours=math.inf, held_hours=0.0, curve="hill", curve_shape=3.0, saturation_hours=100.0)
    cluster = DEFAULT_LEDGER.cluster.replace(storage_gb=math.inf, count=1e6)
    base = _problem(rows, cluster, budget=2_000.0)

    def asked(b: float):
        return infrastructure(base.asking(budget=b), rows, cluster, formats=["recorded", "model_side"])

    plan = solve_problem(asked(2_000.0))
    found = slopes(lambda b: solve_problem(asked(b), tolerance=FINE).value, 2_000.0)
    assert found[0][1] > 0
    assert between(plan.lambda_, found), (plan.lambda_, found)


def test_periods_under_scenarios_whose_later_prices_undercut_are_worth_what_the_same_prices_stated_directly_are():
    """Later hours at a quarter of the price in one scenario. The same program stated with the
    ledger at that quarter price, the first period's price given in the periods and the other
    scenario's later price at four times the ledger's, has the cheapest price in its periods
    already; a range taken at the periods' prices alone cut the first statement's plan short
    (64.67 against 90.22)."""
    price = float(_rows(SIM)["price_usd_per_hour"].iloc[0])

    def plan(ledger_price: float, first_price: float, scales: tuple[float, float]):
        base = _problem(_rows(SIM, price_usd_per_hour=ledger_price), budget=1_000.0)
        base = base.asking(capacity={**base.capacity, "accelerator_hours": math.inf})
        first = np.array([[first_price], [np.nan]])
        periods = Periods(("p0", "p1"), np.full(2, 6.0), np.array([100.0, 900.0]), None, {}, first,
                          np.full((2, 1), np.inf), "test")  # fmt: skip
        s = base.sources
        values = {c: np.tile(s[c].to_numpy(float), (2, 1)) for c in UNCERTAIN_COLUMNS}
        values["price_usd_per_hour"] = values["price_usd_per_hour"] * np.array([[scales[0]], [scales[1]]])
        sp = scenario_problem(base, Scenarios(("same", "cheap"), np.array([0.5, 0.5]), values, "test"))
        return solve_problem(with_scenarios(period_problem(base, periods), sp), tolerance=1e-7)

    stated = plan(price, np.nan, (1.0, 0.25))
    direct = plan(0.25 * price, price, (4.0, 1.0))
    assert stated.value == pytest.approx(direct.value, rel=1e-6)
    later = stated.schedule.set_index(["scenario", "period"])["hours"]
    assert later[("cheap", "p1")] > 1_000.0 / price  # more than the money buys at any period's own price


def test_a_model_kept_at_a_smaller_budget_prices_an_s_shaped_source_the_budget_stops():
    """Built at $1,000 and put at $500, an S-shaped source the budget bounds: its breakpoints
    are placed anew, so the budget row does not stop it on one of the old ones (at $500 it
    stopped on the eighth of sixteen, and λ read 0)."""
    rows = _rows(SIM, curve="hill", curve_shape=3.0, saturation_hours=200.0, held_hours=0.0)
    base = _problem(rows, budget=1_000.0)
    base = base.asking(capacity={**base.capacity, "accelerator_hours": math.inf})
    program = Program(base)
    program.solve()
    program.set_budget(500.0)
    kept = program.solve()
    found = _budget_slopes(base.asking(budget=500.0))
    assert found[0][1] > 0
    assert between(kept.lambda_, found), (kept.lambda_, found)
