"""The dual of a program whose sources are all linear: its minimum at a vertex of kinks.

With every curve linear, g(μ) is piecewise linear and its minimum is a vertex where as many
sources sit on their kinks as rows bind. The step along the kinks' hyperplanes has no way down
there (the hyperplanes meet in a point), so the dual steps along g's steepest descent over all
its subgradients instead, choosing the kinked sources' hours by least squares in their boxes
(``procure.program.kinks.box_least_squares``): one source leaves its kink and another reaches
its own, as the dual simplex method pivots.

Oracles written apart from the code: SciPy's ``lsq_linear`` for the bounded least squares, and
SciPy's ``linprog`` for the program itself (an LP when every curve is linear): its optimum is
the dual's minimum by LP duality, and the wait-and-see values EVPI averages.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from scipy.optimize import linprog, lsq_linear

from procure import from_ledger
from procure.ledger import load_ledger
from procure.ledger.scenarios import ledger_scenarios
from procure.program.dual import solve_dual
from procure.program.dual.least_squares import box_least_squares
from procure.program.numbers.bounds import CurveArrays, source_arrays
from procure.program.numbers.scenarios import scenario_problem
from procure.program.rows import CouplingRows, capacity_rows_of, coupling_rows
from procure.program.solve.wait_and_see import wait_and_see_values

TOLERANCE = 1e-4


@pytest.mark.parametrize("seed", range(40))
def test_box_least_squares_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    m, k = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    N = rng.uniform(-1, 3, (m, k)) * 10 ** rng.uniform(-1, 2, k)
    r = rng.normal(0, 100, m)
    upper = np.where(rng.random(k) < 0.2, np.inf, rng.uniform(1, 200, k))
    y = box_least_squares(N, r, upper)
    assert y is not None
    assert np.all(y >= 0) and np.all(y <= upper)
    oracle = lsq_linear(N, r, bounds=(np.zeros(k), upper), method="bvls", tol=1e-14).x
    best = float(np.linalg.norm(r - N @ oracle))
    assert float(np.linalg.norm(r - N @ y)) <= best * (1 + 1e-9) + 1e-9 * float(np.linalg.norm(r))


def test_box_least_squares_matches_scipy_on_columns_of_very_different_sizes():
    """Columns whose norms span thirteen orders of magnitude: each variable's release is judged
    against its own column's size (against the largest, a small column was never freed and the
    residual stayed above SciPy's), and a variable freed and held straight back is not freed
    again until y moves (it was, to the cap of changes)."""
    rng = np.random.default_rng(7)
    for _case in range(300):
        m, k = int(rng.integers(2, 6)), int(rng.integers(2, 6))
        N = rng.normal(0, 1, (m, k)) * 10 ** rng.uniform(-6, 7, k)
        r = rng.normal(0, 1, m) * 10 ** rng.uniform(-2, 6)
        upper = np.where(rng.random(k) < 0.2, np.inf, 10 ** rng.uniform(-3, 4, k))
        y = box_least_squares(N, r, upper)
        assert y is not None
        oracle = lsq_linear(N, r, bounds=(np.zeros(k), upper), method="bvls", tol=1e-14).x
        best = float(np.linalg.norm(r - N @ oracle))
        assert float(np.linalg.norm(r - N @ y)) <= best * (1 + 1e-9) + 1e-12 * float(np.linalg.norm(r))


def _linear(rate, room) -> CurveArrays:
    n = len(rate)
    return CurveArrays(
        rate=np.array(rate, float), held=np.zeros(n), room=np.array(room, float), upper=np.array(room, float),
        budget_bounded=np.zeros(n, bool), curve=np.array(["linear"] * n), k=np.full(n, np.nan),
        shape=np.full(n, np.nan), concave=np.ones(n, bool), binary=np.zeros(n, bool), lots=np.zeros(n), bound=np.array(room, float),
    )  # fmt: skip


def _lp_optimum(a: CurveArrays, rows: CouplingRows) -> float:
    """max ρ·x subject to A x ≤ b and 0 ≤ x ≤ room, by SciPy's linprog."""
    res = linprog(-a.rate, A_ub=rows.A, b_ub=rows.b, bounds=list(zip(np.zeros_like(a.room), a.room, strict=True)),
                  method="highs")  # fmt: skip
    assert res.status == 0
    return float(-res.fun)


def _random_lp(seed: int) -> tuple[CurveArrays, CouplingRows]:
    """Linear sources under a budget and one to three capacities, each binding somewhere."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(3, 8)), int(rng.integers(2, 5))
    rate = rng.uniform(0.05, 2.0, n)
    room = rng.uniform(100, 5000, n)
    A = rng.uniform(0.1, 3.0, (m, n)) * np.where(rng.random((m, n)) < 0.2, 0.0, 1.0)
    A[0] = rng.uniform(5, 200, n)  # the budget row: $ per hour
    b = 0.3 * (A @ room) * rng.uniform(0.3, 1.0, m)  # every row binds somewhere below the boxes
    return _linear(rate, room), CouplingRows(["budget", *(f"c{j}" for j in range(1, m))], A, b)


def test_the_dual_of_an_lp_by_hand_pivots_off_a_vertex():
    # Three linear sources of 100 h each: A (rate 1, $1/h, 1 unit/h), B (rate 0.9, $1/h, no
    # capacity), C (rate 0.5, $0.1/h, 1 unit/h); budget $150, capacity 100 units. B is bought
    # whole; A and C share the rest, both in part: x_A + 0.1 x_C = 50 and x_A + x_C = 100 give
    # x_C = 500/9, x_A = 400/9; their kinks 1 = λ + ν and 0.5 = 0.1 λ + ν give λ = 5/9 and
    # ν = 4/9 (B's 0.9 > λ: whole, as said). Value 400/9 + 90 + 250/9 = 1460/9.
    a = _linear([1.0, 0.9, 0.5], [100.0, 100.0, 100.0])
    rows = CouplingRows(["budget", "capacity"], np.array([[1.0, 1.0, 0.1], [1.0, 0.0, 1.0]]),
                        np.array([150.0, 100.0]))  # fmt: skip
    dual = solve_dual(a, rows)
    assert dual.converged
    assert dual.bound == pytest.approx(1460 / 9, rel=1e-9) == _lp_optimum(a, rows)
    assert dual.mu == pytest.approx([5 / 9, 4 / 9], rel=1e-9)
    assert dual.x == pytest.approx([400 / 9, 100.0, 500 / 9], rel=1e-7)
    assert np.all(rows.A @ dual.x <= rows.b * (1 + 1e-9))
    assert float(a.rate @ dual.x) == pytest.approx(dual.bound, rel=1e-9)


@pytest.mark.parametrize("seed", range(30))
def test_the_dual_of_a_random_lp_reaches_the_lp_optimum(seed):
    a, rows = _random_lp(seed)
    dual = solve_dual(a, rows)
    optimum = _lp_optimum(a, rows)
    assert dual.bound >= optimum * (1 - 1e-9)  # weak duality: any μ ≥ 0 bounds from above
    assert dual.converged
    assert dual.bound == pytest.approx(optimum, rel=1e-7)
    x = np.clip(dual.x, 0.0, a.room)
    assert np.all(rows.A @ x <= rows.b + 1e-7 * np.maximum(1.0, rows.b))
    assert float(a.rate @ x) == pytest.approx(optimum, rel=1e-7)


@pytest.mark.parametrize("budget", [100_000, 200_000])
def test_every_scenario_of_an_all_linear_ledger_certifies_in_the_batch(budget):
    """The default ledger with all five curves linear, 200 scenarios: every wait-and-see value
    certified by the batched dual, each equal to the scenario's LP optimum. Before the vertex
    step, 36 of 200 left the batch at $100,000; at $200,000, 148 did with it, while a pivot left
    a multiplier on float residue above 0 and a kink step within float noise of μ counted as
    taken (so the vertex step was never offered)."""
    ledger = load_ledger()
    s = ledger.sources.copy()
    s["curve"] = "linear"
    linear = replace(ledger, sources=s)
    problem = from_ledger(linear, budget=budget)
    sp = scenario_problem(problem, ledger_scenarios(linear, samples=200, seed=0))
    got = wait_and_see_values(sp, TOLERANCE)
    assert sum(v is not None for v in got) == sp.count
    for k in range(0, sp.count, 10):
        q = sp.scenario(k)
        a = source_arrays(q)
        optimum = _lp_optimum(a, coupling_rows(q, float(q.budget), capacity_rows_of(q)))
        optimum += float(a.rate @ a.held)
        value = got[k]
        assert value is not None and math.isfinite(value)
        assert value == pytest.approx(optimum, rel=TOLERANCE)
