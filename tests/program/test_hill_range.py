"""The S-shaped sources' bounds proven by the Lagrangian bound (procure.program.solve.hill_range).

Its maxima are checked against a dense grid of each curve written here; its plans against the
same programs solved without narrowing (the spread first cuts, no proof), each plan's value
within the other's certified bound; a new budget or price proves the bounds again; a plan that
sits on a narrowed bound is solved again with the sources' own.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from procure.ledger.synthetic import random_ledger
from procure.program import from_ledger
from procure.program.numbers.bounds import source_arrays
from procure.program.solve import hill_range
from procure.program.solve.hill_range import HillGain, convex_reach
from procure.program.solve.program import Program

#: Relative slack of one plan's value over another's certified bound: float noise [1].
NOISE = 1e-9


def hill_value(e: np.ndarray, k: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The hill curve k u / (1 + u), u = (e/k)^s, written from its definition."""
    u = (e / k) ** s
    return k * u / (1.0 + u)


def s_shaped(n: int, seed: int, *, budget: float, share: dict[str, float] | None = None):
    """A random ledger of ``n`` sources, about half of them S-shaped (hill, shape 1.5–3)."""
    ledger = random_ledger(n, seed, curves=("hill", "log"))
    s = ledger.sources.copy()
    hill = s["curve"] == "hill"
    s.loc[hill, "curve_shape"] = np.random.default_rng(seed).uniform(1.5, 3.0, int(hill.sum()))
    problem = from_ledger(replace(ledger, sources=s), budget=budget)
    return problem.asking(max_share=share) if share else problem


@pytest.mark.parametrize("seed", range(4))
def test_the_most_gain_is_at_least_the_grids_and_barely_more(seed):
    problem = s_shaped(60, seed, budget=12_000.0)
    a = source_arrays(problem)
    hill = np.flatnonzero(~a.concave)
    assert len(hill) > 5
    rng = np.random.default_rng(seed)
    top = a.upper[hill]
    price = rng.uniform(0.0, 2.0, len(hill)) * a.rate[hill]
    gains = HillGain(a, hill, price, top)
    x = np.linspace(0.0, 1.0, 20_001)[None, :] * top[:, None]
    grid = hill_value(a.rate[hill, None] * (a.held[hill, None] + x), a.k[hill, None], a.shape[hill, None])
    grid = grid - price[:, None] * x
    for t in (np.zeros(len(hill)), rng.uniform(0, 1, len(hill)) * top, top):
        most = np.where(x >= t[:, None], grid, -np.inf).max(axis=1)
        bound = gains.over(t)
        scale = np.abs(grid).max(axis=1) + 1.0
        assert np.all(bound >= most - 1e-12 * scale)  # the grid's points are inside: never above the bound
        assert np.all(bound <= most + 1e-3 * scale)  # and the grid is fine enough to come close


def test_the_convex_reach_is_the_inflection():
    a = source_arrays(s_shaped(40, 1, budget=8_000.0))
    hill = ~a.concave
    reach = convex_reach(a)
    assert np.all(np.isnan(reach[~hill]))
    i = np.flatnonzero(hill & (a.held == 0))[0]
    k, s, r = a.k[i], a.shape[i], a.rate[i]
    h = 1e-4 * k / r
    second = lambda x: (  # noqa: E731  # the curve's second derivative in hours, by differences
        hill_value(r * (x + h), k, s) - 2 * hill_value(r * x, k, s) + hill_value(r * max(x - h, 0.0), k, s)
    )
    assert second(0.9 * reach[i]) > 0 > second(1.1 * reach[i])


@pytest.mark.parametrize(("seed", "share"), [(0, None), (1, None), (2, {"twin": 0.3}), (3, None)])
def test_a_narrowed_plan_agrees_with_the_plan_without_narrowing(seed, share):
    problem = s_shaped(80, seed, budget=20_000.0, share=share)
    narrowed = Program(problem)
    plan = narrowed.solve()
    assert narrowed.narrowed is not None  # the proof narrowed some source
    wide = Program(problem, dual_guide=False)  # no proof: the spread first cuts, the sources' own bounds
    other = wide.solve()
    assert wide.narrowed is None
    assert plan.value <= other.value_upper_bound * (1 + NOISE)
    assert other.value <= plan.value_upper_bound * (1 + NOISE)
    assert plan.value_upper_bound >= narrowed.narrowed_value  # the bound covers what was cut away


def test_a_new_budget_or_new_prices_prove_the_bounds_again():
    problem = s_shaped(80, 4, budget=20_000.0)
    program = Program(problem)
    program.solve()
    first = program.narrowed.copy()
    program.set_budget(35_000.0)
    moved = program.solve()
    fresh = Program(problem.asking(budget=35_000.0)).solve()
    assert moved.value <= fresh.value_upper_bound * (1 + NOISE)
    assert fresh.value <= moved.value_upper_bound * (1 + NOISE)
    assert program.narrowed is None or not np.array_equal(program.narrowed, first, equal_nan=True)
    program.set_costs(problem.cost * 0.5)
    cheaper = program.solve()
    again = Program(problem.asking(budget=35_000.0).with_cost(problem.cost * 0.5)).solve()
    assert cheaper.value <= again.value_upper_bound * (1 + NOISE)
    assert again.value <= cheaper.value_upper_bound * (1 + NOISE)


def test_a_plan_on_a_narrowed_bound_is_solved_again_with_the_sources_own(monkeypatch):
    problem = s_shaped(40, 5, budget=30_000.0)
    plain = Program(problem, dual_guide=False).solve()
    a = source_arrays(problem)
    bought = np.flatnonzero(~a.concave & (plain.sources["hours"].to_numpy() > 1.0))
    assert len(bought)
    # a bound below an S-shaped source's hours in the plan, claimed for no plan at all: the plan
    # is then on it, and the program must drop it rather than price it
    claimed = np.full(problem.n, np.nan)
    claimed[bought[0]] = 0.5 * plain.sources["hours"].iloc[bought[0]]
    monkeypatch.setattr(hill_range, "narrow_hills", lambda *_given: (claimed, -np.inf))
    program = Program(problem)
    plan = program.solve()
    assert program.narrowed is None and not program.narrowing
    assert plan.value <= plain.value_upper_bound * (1 + NOISE)
    assert plain.value <= plan.value_upper_bound * (1 + NOISE)


def edge_ledger(seed: int):
    """Two to six sources, S-shaped (shape 1.01–8) among log, exp and linear ones, at scales
    from 0.01 to 10,000, some unlimited, some holding hours, no capacity binding."""
    import math

    rng = np.random.default_rng(seed + 777)
    n = int(rng.integers(2, 7))
    curves = ("hill", "log", "exp", "linear") if rng.uniform() < 0.3 else ("hill", "log")
    ledger = random_ledger(n, seed, curves=curves)
    s = ledger.sources.copy()
    hill = (s["curve"] == "hill").to_numpy().copy()
    s.loc[hill, "curve_shape"] = rng.uniform(1.01, 8.0, int(hill.sum()))
    scale = float(10 ** rng.uniform(-2, 4))
    s["saturation_hours"] *= scale
    s["available_hours"] *= scale
    if rng.uniform() < 0.3:
        s["available_hours"] = np.where(rng.uniform(size=n) < 0.5, math.inf, s["available_hours"])
    if rng.uniform() < 0.4:
        held = rng.uniform(0, 2, n) * s["saturation_hours"] / s["exchange_rate"].clip(lower=0.05) / s["survival"]
        s["held_hours"] = np.where(rng.uniform(size=n) < 0.5, held, 0.0)
    wide = replace(ledger, sources=s, cluster=ledger.cluster.replace(count=1e9, storage_gb=1e15))
    problem = from_ledger(wide, budget=float(scale * 10 ** rng.uniform(3, 5.5)))
    if rng.uniform() < 0.3:
        problem = problem.asking(max_share={str(rng.choice(s["kind"].unique())): float(rng.uniform(0.05, 0.9))})
    return problem


@pytest.mark.parametrize(("seed", "tolerance"), [(578, 1e-5), (278, 1e-7)])
def test_narrowed_forms_refine_at_tight_tolerances(seed, tolerance):
    # a chord form (a range narrowed inside the convex part) is split where a plan leans on it,
    # and a narrowing dropped leaves forms over the sources' whole ranges: both certify
    problem = edge_ledger(seed)
    plan = Program(problem, tolerance=tolerance).solve()
    other = Program(problem, tolerance=tolerance, dual_guide=False).solve()
    assert plan.gap <= tolerance and other.gap <= tolerance
    assert plan.value <= other.value_upper_bound * (1 + NOISE)
    assert other.value <= plan.value_upper_bound * (1 + NOISE)
