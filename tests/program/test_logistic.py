"""Plans with logistic sources against an optimiser written apart from procure's.

The oracle: PyMC-Marketing's ``LogisticSaturation``, ``β (1 − exp(−λx)) / (1 + exp(−λx))``
with ``λ = 1/k`` and ``β = 2k``, and the log and exp curves, each written out here with its
slope by hand; the budget split by equal marginal value per dollar, a bisection on the price
of a dollar λ outside and one on each source's hours inside (its slope falls, so the hours at a
price are one root). Nothing of procure's curves or solver is used: only the problem's costs,
rates, hours held and availabilities, which the pipeline's tests check.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from scipy.optimize import minimize

from procure.ledger import Ledger
from procure.ledger.synthetic import random_ledger
from procure.program import DEFAULT_TOLERANCE
from procure.program.numbers.problem import CAPACITIES, Problem, from_ledger
from procure.program.solve.program import Program
from procure.program.solve.program import solve_problem as solve

#: Bisection steps of the oracle, on λ (over a bracket of 30 decades) and on hours: each
#: halves its bracket, 200 reach the last bit of a double [1].
STEPS = 200
#: The oracle's bracket of λ, value per dollar [own-hour equivalents per $].
LAMBDA_BRACKET = (1e-15, 1e15)
#: λ and the hours of a source bought in part agree with the oracle's to this share [1]: the
#: dual gives them exactly (to its Newton steps), not to the value's tolerance.
EXACT = 1e-6
#: SLSQP's stopping tolerance on the objective, scaled to 1 [1], and the share by which its
#: answer may break a row or fall short of the optimum [1].
SLSQP_FTOL = 1e-13
SLSQP_SLACK = 1e-7


def pymc_logistic(x: np.ndarray, lam: float, beta: float) -> np.ndarray:
    """PyMC-Marketing's ``LogisticSaturation`` [the value's unit]."""
    return beta * (1 - np.exp(-lam * x)) / (1 + np.exp(-lam * x))


def pymc_logistic_slope(x: np.ndarray, lam: float, beta: float) -> np.ndarray:
    """Its derivative: with q = exp(−λx), d/dx = β · 2λq / (1 + q)² [value per unit of x]."""
    q = np.exp(-lam * x)
    return beta * 2 * lam * q / (1 + q) ** 2


@dataclass
class Sources:
    """The sources as the oracle sees them: the value of the hours bought and its slope per hour,
    each curve written out here (arrays of one entry per source)."""

    curve: np.ndarray
    k: np.ndarray
    rate: np.ndarray
    held: np.ndarray
    cost: np.ndarray
    room: np.ndarray

    def value(self, x: np.ndarray) -> np.ndarray:
        e, k = self.rate * (self.held + x), self.k
        with np.errstate(all="ignore"):
            logistic = pymc_logistic(e, 1 / k, 2 * k)
            return np.select([self.curve == "logistic", self.curve == "log"],
                             [logistic, k * np.log(1 + e / k)], k * (1 - np.exp(-e / k)))  # fmt: skip

    def slope(self, x: np.ndarray) -> np.ndarray:
        e, k = self.rate * (self.held + x), self.k
        with np.errstate(all="ignore"):
            logistic = pymc_logistic_slope(e, 1 / k, 2 * k)
            per_e = np.select(
                [self.curve == "logistic", self.curve == "log"], [logistic, 1 / (1 + e / k)], np.exp(-e / k)
            )
        return per_e * self.rate

    def hours_at(self, lam: float) -> np.ndarray:
        """Hours in [0, room] where the value of a dollar's worth, slope / cost, falls to λ."""
        price = lam * self.cost
        top = np.where(np.isfinite(self.room), self.room, self.k / self.rate * 1e3)
        lo, hi = np.zeros_like(top), top.copy()
        for _ in range(STEPS):
            mid = (lo + hi) / 2
            right = self.slope(mid) > price
            lo, hi = np.where(right, mid, lo), np.where(right, hi, mid)
        x = (lo + hi) / 2
        return np.where(self.slope(np.zeros_like(top)) <= price, 0.0, np.where(self.slope(top) >= price, top, x))


def oracle(problem: Problem) -> tuple[float, float, np.ndarray]:
    """Best value, λ and hours of a budget-only problem by equal marginal value per dollar."""
    s = problem.sources
    sources = Sources(s["curve"].to_numpy(str), s["saturation_hours"].to_numpy(float), problem.rate, problem.held,
                      problem.cost, s["available_hours"].to_numpy(float))  # fmt: skip
    lo, hi = LAMBDA_BRACKET
    for _ in range(STEPS):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if problem.cost @ sources.hours_at(mid) > problem.budget else (lo, mid)
    x = sources.hours_at(hi)
    return float(np.sum(sources.value(x))), hi, x


def _problem(seed: int, curves: tuple[str, ...], n: int, budget: float) -> Problem:
    """``n`` random sources of ``curves`` with only the budget binding (the cluster unlimited)."""
    ledger = random_ledger(n, seed=seed, curves=curves)
    unlimited = ledger.cluster.replace(count=1e9, storage_gb=math.inf)
    return from_ledger(Ledger(ledger.sources, unlimited, ledger.path), budget=budget)


CASES = [
    (seed, curves, n, budget)
    for seed, (curves, n, budget) in enumerate(
        [
            (("logistic",), 3, 2_000.0),
            (("logistic",), 8, 50_000.0),
            (("logistic",), 20, 300_000.0),
            (("logistic", "log"), 6, 20_000.0),
            (("logistic", "exp"), 10, 80_000.0),
            (("logistic", "log", "exp"), 30, 150_000.0),
            (("logistic",), 100, 1_000_000.0),
        ]
    )
]


@pytest.mark.parametrize(("seed", "curves", "n", "budget"), CASES)
def test_logistic_plans_are_the_oracles_and_certified(seed, curves, n, budget):
    """The certified interval [value, bound] holds the oracle's optimum and is within the
    tolerance; each source's value is PyMC-Marketing's formula at the plan's hours."""
    problem = _problem(seed, curves, n, budget)
    plan = solve(problem)
    best, _lam, _x = oracle(problem)
    assert plan.status == "optimal" and plan.binding == []
    assert plan.value_upper_bound - plan.value <= DEFAULT_TOLERANCE * plan.value_upper_bound
    assert plan.value <= best * (1 + 1e-12)  # a plan: no more than the optimum
    assert plan.value_upper_bound >= best * (1 - 1e-12)  # a bound: no less
    assert plan.value == pytest.approx(best, rel=DEFAULT_TOLERANCE)
    s = problem.sources
    logistic = (s["curve"] == "logistic").to_numpy()
    assert logistic.any()
    e = plan.sources["effective_hours"].to_numpy()[logistic]
    k = s["saturation_hours"].to_numpy()[logistic]
    assert np.allclose(plan.sources["value"].to_numpy()[logistic], pymc_logistic(e, 1 / k, 2 * k), rtol=1e-12)


@pytest.mark.parametrize(("seed", "curves", "n", "budget"), CASES)
def test_logistic_hours_and_lambda_do_not_wait_for_the_tolerance(seed, curves, n, budget):
    """At the default tolerance λ and the hours of every source are the oracle's to
    :data:`EXACT`, as for log and exp curves: the logistic curve takes the dual's exact path."""
    problem = _problem(seed, curves, n, budget)
    plan = solve(problem)
    _best, lam, x = oracle(problem)
    assert plan.lambda_ == pytest.approx(lam, rel=EXACT)
    hours = plan.sources["hours"].to_numpy()
    assert np.allclose(hours, x, rtol=EXACT, atol=EXACT * np.maximum(1.0, x.max()))


def slsqp_optimum(problem: Problem) -> float:
    """The best value of a logistic ledger with its budget, capacity and mix rows, by SciPy's
    SLSQP on PyMC-Marketing's formula (concave: its local optimum is the optimum)."""
    s = problem.sources
    k = s["saturation_hours"].to_numpy(float)
    a, h0, n = problem.rate, problem.held, problem.n
    room = s["available_hours"].to_numpy(float)
    top = np.where(np.isfinite(room), room, problem.budget / np.maximum(problem.cost, 1e-9))
    rows, rhs = [problem.cost * top], [float(problem.budget)]
    for name in CAPACITIES:
        if math.isfinite(problem.capacity[name]):
            rows.append(problem.usage(name) * top)
            rhs.append(float(problem.capacity[name] - problem.usage(name) @ h0))
    for key, share in problem.max_share.items():
        coef = a * (problem.members(key).astype(float) - share)
        rows.append(coef * top)
        rhs.append(float(-(coef @ h0)))
    A, b = np.array(rows), np.array(rhs)
    scale = np.maximum(np.abs(b), 1.0)

    def total(y: np.ndarray) -> float:
        return float(np.sum(pymc_logistic(a * (h0 + y * top), 1 / k, 2 * k)))

    def slope(y: np.ndarray) -> np.ndarray:
        return pymc_logistic_slope(a * (h0 + y * top), 1 / k, 2 * k) * a * top

    best = -math.inf
    for start in (np.zeros(n), np.full(n, 0.5 / n), np.full(n, 1e-3)):
        res = minimize(
            lambda y: -total(y) / 2 / k.sum(), start, jac=lambda y: -slope(y) / 2 / k.sum(), method="SLSQP",
            bounds=[(0.0, 1.0)] * n,
            constraints=[{"type": "ineq", "fun": lambda y: (b - A @ y) / scale, "jac": lambda y: -A / scale[:, None]}],
            options={"ftol": SLSQP_FTOL, "maxiter": 2000},
        )  # fmt: skip
        y = np.clip(res.x, 0.0, 1.0)
        if np.all(A @ y <= b + SLSQP_SLACK * scale):
            best = max(best, total(y))
    assert math.isfinite(best)
    return best


def _coupled(seed: int) -> Problem:
    """Logistic sources whose accelerators bind and, for odd seeds, a mix bound on a kind."""
    rng = np.random.default_rng(seed)
    ledger = random_ledger(int(rng.integers(3, 9)), seed=700 + seed, curves=("logistic",))
    c = ledger.cluster
    tight = Ledger(ledger.sources, c.replace(count=c.count * float(rng.choice([0.05, 0.2]))), ledger.path)
    kinds = sorted(set(ledger.sources["kind"]))
    share = {str(rng.choice(kinds)): float(rng.uniform(0.3, 0.7))} if seed % 2 else {}
    return from_ledger(tight, budget=float(rng.choice([2e4, 1e5, 5e5])), max_share=share)


@pytest.mark.parametrize("seed", range(8))
def test_logistic_plans_with_capacities_and_mix_bounds_match_slsqp(seed):
    """With the budget, a capacity and mix bounds coupling the sources, SLSQP's optimum lies in
    the certified interval (to SLSQP's own slack), and the dual-guided solve agrees with the
    plain cutting-plane refinement."""
    problem = _coupled(seed)
    plan = Program(problem).solve()
    best = slsqp_optimum(problem)
    assert plan.status == "optimal"
    assert plan.value_upper_bound - plan.value <= DEFAULT_TOLERANCE * plan.value_upper_bound
    assert plan.value_upper_bound >= best * (1 - SLSQP_SLACK)
    assert plan.value >= best * (1 - DEFAULT_TOLERANCE)
    spread = Program(problem, dual_guide=False).solve()
    assert spread.value == pytest.approx(plan.value, rel=DEFAULT_TOLERANCE)
