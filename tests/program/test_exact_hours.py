"""The hours of a concave plan are determined: every source strictly between its bounds has the
same marginal value per dollar, within 1e-6, once capacity and mix charges are counted.

The oracle is written apart from the code it checks: its own closed forms of v'(e), and the
Karush–Kuhn–Tucker conditions of the concave program, which a plan satisfies only if it is the
optimum (they are sufficient for a concave maximisation with linear rows):

* primal feasibility: budget, capacities, mix bounds, 0 ≤ x ≤ room;
* stationarity: ρσφ v'(e_s) = λ c_s + Σ_r μ_r A_rs for a source between its bounds,
  ≤ at zero, ≥ at its cap, with λ, μ ≥ 0 the plan's λ and shadow prices;
* complementary slackness: a row with a positive multiplier is tight.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from procure.ledger import load_ledger
from procure.ledger.synthetic import random_ledger
from procure.program import CAPACITIES, from_ledger, price_ledger
from procure.program.solve.program import solve_problem

EQUAL = 1e-6


def slope(curve: str, e: float, k: float, shape: float) -> float:
    """v'(e), written here from the curves' definitions."""
    if curve == "log":
        return 1.0 / (1.0 + e / k)
    if curve == "exp":
        return math.exp(-e / k)
    if curve == "power":
        return (1.0 + e / k) ** (shape - 1.0)
    if curve == "linear":
        return 1.0
    raise AssertionError(curve)


def rows_of(problem):
    """The coupling rows A x ≤ b of the program and their names, from the problem's numbers."""
    held = problem.held
    names, A, b = ["budget"], [problem.cost], [problem.budget]
    for name in CAPACITIES:
        limit = problem.capacity[name]
        if math.isfinite(limit):
            use = problem.usage(name)
            names.append(name)
            A.append(use)
            b.append(limit - use @ held)
    for key, share in problem.max_share.items():
        coef = problem.rate * (problem.members(key).astype(float) - share)
        names.append(f"max_share:{key}")
        A.append(coef)
        b.append(-(coef @ held))
    return names, np.array(A), np.array(b)


def check_kkt(problem, plan) -> float:
    """Assert the KKT conditions; returns the worst relative stationarity error of a between source."""
    s = problem.sources
    x = plan.sources["hours"].to_numpy()
    room = np.minimum(s["available_hours"].to_numpy(), np.inf)
    names, A, b = rows_of(problem)
    scale = np.maximum(1.0, np.abs(b) + np.abs(A) @ np.abs(x))
    assert np.all(A @ x <= b + 1e-9 * scale), dict(zip(names, A @ x - b, strict=True))
    assert np.all(x >= -1e-12) and np.all(x <= room * (1 + 1e-12))
    lam = plan.lambda_
    mu = np.array([lam] + [plan.shadow_prices.get(n, 0.0) for n in names[1:]])
    assert np.all(mu >= 0)
    tight = A @ x >= b - 1e-7 * scale
    assert np.all(tight | (mu <= 1e-12)), "a row with a positive multiplier has slack"
    e = problem.rate * (problem.held + x)
    marginal = np.array(
        [
            problem.rate[i] * slope(s["curve"].iloc[i], e[i], s["saturation_hours"].iloc[i], s["curve_shape"].iloc[i])
            for i in range(problem.n)
        ]
    )
    price = A.T @ mu
    pos = plan.sources["position"].to_numpy()
    between = pos == "between"
    worst = float(np.max(np.abs(marginal[between] / price[between] - 1), initial=0.0))
    assert worst <= EQUAL, worst
    assert np.all(marginal[pos == "zero"] <= price[pos == "zero"] * (1 + EQUAL))
    assert np.all(marginal[pos == "cap"] >= price[pos == "cap"] * (1 - EQUAL))
    return worst


def _ledger(seed: int):
    """A random concave ledger whose accelerators and storage are tightened so that capacities
    bind in some cases (never below what the hours held already use)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 13))
    ledger = random_ledger(n, seed=1000 + seed, curves=("log", "exp", "power"))
    c = ledger.cluster
    held = price_ledger(ledger)
    need = {name: float(held.usage(name) @ held.held) for name in CAPACITIES}
    count = c.count * float(rng.choice([0.05, 0.2, 1.0, 10.0]))
    count = max(count, 1.5 * need["accelerator_hours"] / c.window_hours)
    storage = max(c.storage_gb * float(rng.choice([0.01, 0.1, 1.0])), 1.5 * need["storage_gb"])
    return type(ledger)(ledger.sources, c.replace(count=count, storage_gb=storage), ledger.path), rng


@pytest.mark.parametrize("seed", range(24))
def test_equal_marginal_value_per_dollar_on_random_concave_ledgers(seed):
    ledger, rng = _ledger(seed)
    kinds = sorted(set(ledger.sources["kind"]))
    share = {str(rng.choice(kinds)): float(rng.uniform(0.1, 0.6))} if seed % 2 else {}
    budget = float(rng.choice([5e3, 3e4, 2e5, 1e6]))
    problem = from_ledger(ledger, budget=budget, max_share=share)
    plan = solve_problem(problem)
    check_kkt(problem, plan)
    assert plan.marginal_value_spread <= EQUAL


def test_default_ledger_hours_are_exact():
    problem = from_ledger(load_ledger(), budget=100_000)
    loose = solve_problem(problem, tolerance=1e-2)
    tight = solve_problem(problem, tolerance=1e-8)
    check_kkt(problem, loose)
    # The hours do not depend on the tolerance: they are the optimum's.
    assert loose.sources["hours"].to_numpy() == pytest.approx(tight.sources["hours"].to_numpy(), rel=1e-7)
    assert loose.value == pytest.approx(tight.value, rel=1e-10)
