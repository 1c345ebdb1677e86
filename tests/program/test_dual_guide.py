"""The dual-guided solve (cuts placed at the optimum the dual gives, one solve) and the spread
refinement agree, and the guided certificate holds against an independent bound.

The independent bound: an LP for SciPy's ``linprog`` with each curve replaced by the lower
envelope of its tangents on a fine grid (an outer approximation: its optimum is at least the
true optimum), written here from the ledger's numbers, with the budget, capacity and mix rows.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import linprog

from procure.errors import SolveError
from procure.ledger import Ledger
from procure.ledger.synthetic import random_ledger
from procure.program import CAPACITIES, from_ledger, price_ledger
from procure.program.numbers import value
from procure.program.solve.program import Program

GRID = 300
TOL = 1e-4


def tangent_grid_bound(problem) -> tuple[float, float]:
    """(lower, upper): the grid LP's plan valued on the true curves (feasible, so a lower bound
    on the optimum) and the grid LP's optimum (an upper bound)."""
    s = problem.sources
    n = problem.n
    room = s["available_hours"].to_numpy()
    top = np.where(np.isfinite(room), room, problem.budget / np.maximum(problem.cost, 1e-9))
    rows, rhs = [], []
    for i in range(n):
        a, h0 = problem.rate[i], problem.held[i]
        xs = np.unique(np.concatenate([np.linspace(0, top[i], GRID), top[i] * np.geomspace(1e-8, 1, GRID)]))
        e = a * (h0 + xs)
        args = (s["curve"].iloc[i], s["saturation_hours"].iloc[i], s["curve_shape"].iloc[i])
        slope = np.asarray(value.derivative(e, *args), dtype=float) * a
        level = np.asarray(value.value(e, *args), dtype=float)
        block = np.zeros((len(xs), 2 * n))
        block[:, n + i] = 1.0
        block[:, i] = -slope
        rows.append(block)
        rhs.append(level - slope * xs)
    lin = [problem.cost]
    b = [problem.budget]
    for name in CAPACITIES:
        if math.isfinite(problem.capacity[name]):
            lin.append(problem.usage(name))
            b.append(problem.capacity[name] - problem.usage(name) @ problem.held)
    for key, share in problem.max_share.items():
        coef = problem.rate * (problem.members(key).astype(float) - share)
        lin.append(coef)
        b.append(-(coef @ problem.held))
    rows.append(np.hstack([np.array(lin), np.zeros((len(lin), n))]))
    rhs.append(np.array(b))
    c = np.concatenate([np.zeros(n), -np.ones(n)])
    res = linprog(c, A_ub=np.vstack(rows), b_ub=np.concatenate(rhs),
                  bounds=[(0, t) for t in top] + [(None, None)] * n, method="highs")  # fmt: skip
    assert res.status == 0, res.message
    x = np.clip(res.x[:n], 0, top)
    e = problem.rate * (problem.held + x)
    lower = float(np.sum(value.value(e, s["curve"].to_numpy(), s["saturation_hours"].to_numpy(),
                                     s["curve_shape"].to_numpy())))  # fmt: skip
    return lower, -float(res.fun)


def _ledger(seed: int):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 9))
    ledger = random_ledger(n, seed=2000 + seed, curves=("log", "exp", "power", "linear"))
    c = ledger.cluster
    held = price_ledger(ledger)
    need = {name: float(held.usage(name) @ held.held) for name in CAPACITIES}
    count = max(c.count * float(rng.choice([0.05, 0.3, 1.0, 10.0])), 1.5 * need["accelerator_hours"] / c.window_hours)
    storage = max(c.storage_gb * float(rng.choice([0.01, 0.1, 1.0])), 1.5 * need["storage_gb"])
    return Ledger(ledger.sources, c.replace(count=count, storage_gb=storage), ledger.path), rng


#: Random concave ledgers of each mode: 200 in all, each solved by both paths.
BUDGET_LEDGERS, TARGET_LEDGERS = 150, 50


@pytest.mark.parametrize("seed", range(BUDGET_LEDGERS))
def test_guided_and_spread_refinement_agree_in_budget_mode(seed):
    ledger, rng = _ledger(seed)
    kinds = sorted(set(ledger.sources["kind"]))
    share = {str(rng.choice(kinds)): float(rng.uniform(0.3, 0.8))} if seed % 3 == 0 else {}
    problem = from_ledger(ledger, budget=float(rng.choice([2e3, 2e4, 2e5, 2e6])), max_share=share)
    try:
        guided = Program(problem, tolerance=TOL).solve()
    except Exception as err:  # the same refusal from both paths
        with pytest.raises(type(err)):
            Program(problem, tolerance=TOL, dual_guide=False).solve()
        return
    spread = Program(problem, tolerance=TOL, dual_guide=False).solve()
    assert guided.value == pytest.approx(spread.value, rel=TOL)
    assert guided.value <= spread.value_upper_bound * (1 + 1e-9) + 1e-9
    assert spread.value <= guided.value_upper_bound * (1 + 1e-9) + 1e-9
    lower, upper = tangent_grid_bound(problem)
    assert guided.value <= upper * (1 + 1e-9) + 1e-9  # the plan is feasible and truly worth its value
    assert guided.value_upper_bound >= lower * (1 - 1e-9) - 1e-9  # the bound is never below a feasible plan
    assert guided.value >= lower * (1 - TOL) - 1e-9  # and the plan is within the tolerance of it


@pytest.mark.parametrize("seed", range(TARGET_LEDGERS))
def test_guided_and_spread_refinement_agree_in_target_mode(seed):
    ledger, rng = _ledger(500 + seed)
    kinds = sorted(set(ledger.sources["kind"]))
    share = {str(rng.choice(kinds)): float(rng.uniform(0.3, 0.8))} if seed % 3 == 0 else {}
    try:
        probe = Program(from_ledger(ledger, budget=float(rng.choice([2e3, 2e4, 2e5])), max_share=share)).solve()
    except SolveError:  # the hours held already break the mix bound: no plan to aim at
        return
    target = probe.value * float(rng.uniform(0.5, 0.99))
    if target <= 0:
        return
    problem = from_ledger(ledger, target=target, max_share=share)
    guided = Program(problem, tolerance=TOL).solve()
    spread = Program(problem, tolerance=TOL, dual_guide=False).solve()
    assert guided.value >= target * (1 - 1e-9) and spread.value >= target * (1 - 1e-9)
    assert guided.spent_usd == pytest.approx(spread.spent_usd, rel=2 * TOL)
    assert guided.money_lower_bound <= spread.spent_usd * (1 + 1e-9)
    assert spread.money_lower_bound <= guided.spent_usd * (1 + 1e-9)


@pytest.mark.parametrize("count", [0.02, 0.05])
def test_a_capacity_one_source_fills_is_priced_at_that_sources_value(count):
    """On a cluster so small that the accelerators fill with one source's hours (its box is its
    room in them), the guide's dual is flat between the next source's price and the filling
    source's value per accelerator-hour; the shadow price is the slope of the value in the
    capacity (one-sided differences of fresh solves), as the refinement without the guide gives."""
    from procure.ledger import load_ledger
    from procure.program.solve.program import solve_problem

    ledger = load_ledger()
    rows = ledger.sources.assign(held_hours=0.0)
    cluster = ledger.cluster.replace(count=count, storage_gb=math.inf, cores_per_accelerator=1000.0)
    problem = from_ledger(Ledger(rows, cluster, ledger.path), budget=1e6)
    limit = problem.capacity["accelerator_hours"]
    step = 1e-4 * limit

    def value_at(c: float) -> float:
        return solve_problem(
            problem.asking(capacity={**problem.capacity, "accelerator_hours": c}), tolerance=1e-9
        ).value

    now = value_at(limit)
    right, left = (value_at(limit + step) - now) / step, (now - value_at(limit - step)) / step
    guided = Program(problem).solve()
    assert guided.rounds == 1
    spread = Program(problem, dual_guide=False).solve()
    for plan in (guided, spread):
        assert right * (1 - 1e-4) <= plan.shadow_prices["accelerator_hours"] <= left * (1 + 1e-4)
