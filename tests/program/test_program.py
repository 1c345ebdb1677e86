"""The procurement program: certified optimum, equal marginal value per dollar,
independent cross-checks (SciPy, water-filling, brute force), properties and errors."""

from __future__ import annotations

import math
import warnings
from dataclasses import replace

import numpy as np
import pytest
from conftest import DEFAULT_LEDGER
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import BFGS, Bounds, LinearConstraint, linprog, minimize

from procure import InputError, SolveError
from procure.ledger import Ledger
from procure.ledger.synthetic import random_ledger
from procure.program.numbers import value
from procure.program.numbers.problem import CAPACITIES, Problem, from_ledger
from procure.program.solve.program import Program
from procure.program.solve.program import solve_problem as solve

TIGHT = 1e-7


def check_feasible(problem: Problem, plan, rel: float = 1e-7) -> None:
    """Every constraint of the program holds for the plan."""
    s = problem.sources
    x = plan.sources["hours"].to_numpy()
    held = s["held_hours"].to_numpy()
    assert (x >= -1e-9).all()
    assert (x <= s["available_hours"].to_numpy() * (1 + rel) + 1e-9).all()
    if problem.budget is not None:
        assert plan.spent_usd <= problem.budget * (1 + rel) + 1e-6
    for name in CAPACITIES:
        limit = problem.capacity[name]
        if math.isfinite(limit):
            assert problem.usage(name) @ (held + x) <= limit * (1 + rel) + 1e-6, name
    e = s["rate"].to_numpy() * (held + x)
    assert plan.sources["effective_hours"].to_numpy() == pytest.approx(e)
    v = value.value(e, s["curve"].to_numpy(), s["saturation_hours"].to_numpy(), s["curve_shape"].to_numpy())
    assert plan.value == pytest.approx(float(np.sum(v)), rel=1e-12)
    lots = s["lot_hours"].to_numpy()
    for i in np.flatnonzero(lots > 0):
        assert x[i] / lots[i] == pytest.approx(round(x[i] / lots[i]), abs=1e-6)
    mins = s["min_order_hours"].to_numpy()
    for i in np.flatnonzero(mins > 0):
        assert x[i] <= 1e-7 or x[i] >= mins[i] * (1 - 1e-9)


def check_equal_marginal(plan, rel: float) -> None:
    """Sources between their bounds share λ; those at zero have no more, those at their cap no less."""
    lam = plan.lambda_
    assert lam > 0
    s = plan.sources
    mv = s["marginal_value_per_usd"].to_numpy()
    pos = s["position"].to_numpy()
    between = pos == "between"
    assert np.abs(mv[between] / lam - 1).max(initial=0) <= rel
    assert (mv[pos == "zero"] <= lam * (1 + rel)).all()
    assert (mv[pos == "cap"] >= lam * (1 - rel)).all()


# ----------------------------------------------------------------------------- default ledger


def test_default_ledger_plan():
    problem = from_ledger(DEFAULT_LEDGER, budget=100_000)
    plan = solve(problem)
    assert plan.status == "optimal"
    assert plan.gap <= 1e-4 and plan.value <= plan.value_upper_bound * (1 + 1e-12)
    check_feasible(problem, plan)
    assert plan.spent_usd == pytest.approx(100_000, rel=1e-6)  # every dollar is worth spending
    assert plan.binding == ["accelerator_hours"]
    assert plan.shadow_prices["accelerator_hours"] > 0
    assert plan.shadow_prices["core_hours"] == 0 and plan.shadow_prices["storage_gb"] == 0
    assert set(plan.shadow_prices) == set(CAPACITIES)


def test_default_ledger_equal_marginal_value():
    plan = solve(from_ledger(DEFAULT_LEDGER, budget=100_000), tolerance=TIGHT)
    check_equal_marginal(plan, rel=1e-3)
    assert (plan.sources["position"] == "between").sum() >= 2


def test_lambda_is_the_value_of_the_next_dollar():
    """λ from the budget row's dual against a finite difference of the optimal value."""
    base = solve(from_ledger(DEFAULT_LEDGER, budget=100_000), tolerance=TIGHT)
    more = solve(from_ledger(DEFAULT_LEDGER, budget=101_000), tolerance=TIGHT)
    less = solve(from_ledger(DEFAULT_LEDGER, budget=99_000), tolerance=TIGHT)
    assert (more.value - less.value) / 2_000 == pytest.approx(base.lambda_, rel=2e-2)


def test_shadow_price_is_the_value_of_one_more_unit():
    """The accelerator row's dual against a finite difference in the number of accelerators."""
    c = DEFAULT_LEDGER.cluster
    solve_with = lambda count: solve(  # noqa: E731
        from_ledger(DEFAULT_LEDGER, budget=100_000, cluster=c.replace(count=count)), tolerance=TIGHT
    )
    base, more, less = solve_with(8), solve_with(8.1), solve_with(7.9)
    per_hour = (more.value - less.value) / (0.2 * c.window_hours)
    assert per_hour == pytest.approx(base.shadow_prices["accelerator_hours"], rel=2e-2)


# ----------------------------------------------------------------------------- cross-checks


def scipy_optimum(problem: Problem) -> float:
    """The concave program solved by SciPy's trust-region interior point on the true curves."""
    s = problem.sources
    a, h0 = s["rate"].to_numpy(), s["held_hours"].to_numpy()
    curve, k, shape = s["curve"].to_numpy(), s["saturation_hours"].to_numpy(), s["curve_shape"].to_numpy()
    scale = np.maximum(1.0, np.minimum(s["available_hours"].to_numpy(), 1e5))

    def neg(y):
        return -float(np.sum(value.value(a * (h0 + y * scale), curve, k, shape)))

    def grad(y):
        return -value.derivative(a * (h0 + y * scale), curve, k, shape) * a * scale

    rows, ub = [], []
    if problem.budget is not None:
        rows.append(problem.cost * scale)
        ub.append(problem.budget)
    for name in CAPACITIES:
        limit = problem.capacity[name]
        if math.isfinite(limit):
            rows.append(problem.usage(name) * scale)
            ub.append(limit - problem.usage(name) @ h0)
    upper = s["available_hours"].to_numpy() / scale
    with warnings.catch_warnings():  # BFGS notes flat stretches of linear-like curves; harmless here
        warnings.simplefilter("ignore", UserWarning)
        res = minimize(
            neg,
            np.full(problem.n, 1e-6),
            jac=grad,
            hess=BFGS(),
            method="trust-constr",
            bounds=Bounds(np.zeros(problem.n), upper),
            constraints=[LinearConstraint(np.array(rows), -np.inf, np.array(ub))],
            options={"gtol": 1e-12, "xtol": 1e-14, "maxiter": 5000},
        )
    assert res.status in (1, 2), res.message
    return -res.fun


@pytest.mark.parametrize("seed", range(8))
def test_matches_scipy_on_random_ledgers(seed):
    ledger = random_ledger(6, seed=seed)
    budget = [5_000, 20_000, 80_000, 300_000][seed % 4]
    problem = from_ledger(ledger, budget=budget)
    plan = solve(problem, tolerance=1e-6)
    check_feasible(problem, plan)
    assert plan.value == pytest.approx(scipy_optimum(problem), rel=1e-4)
    check_equal_marginal(solve(problem, tolerance=TIGHT), rel=2e-3)


def chord_grid_optimum(problem: Problem, segments: int = 2_000) -> float:
    """The program on a fine chord grid: one column per segment of each curve, filled in order
    (concavity), solved by SciPy's linprog. Chords lie under a concave curve: a lower bound."""
    s = problem.sources
    a, h0 = s["rate"].to_numpy(), s["held_hours"].to_numpy()
    curve, k, shape = s["curve"].to_numpy(), s["saturation_hours"].to_numpy(), s["curve_shape"].to_numpy()
    ub = s["available_hours"].to_numpy().copy()
    if problem.budget is not None:
        ub = np.minimum(ub, problem.budget / problem.cost)
    for name in CAPACITIES:
        use = problem.usage(name)
        with np.errstate(divide="ignore"):
            ub = np.minimum(ub, np.where(use > 0, (problem.capacity[name] - use @ h0) / use, np.inf))
    grid = ub[:, None] * (np.linspace(0, 1, segments + 1) ** 3)[None, :]  # dense near 0
    vals = value.value(a[:, None] * (h0[:, None] + grid), curve[:, None], k[:, None], shape[:, None])
    width = np.diff(grid, axis=1)
    gain = np.diff(vals, axis=1)
    owner = np.repeat(np.arange(problem.n), segments)
    rows, rhs = [], []
    if problem.budget is not None:
        rows.append(problem.cost[owner])
        rhs.append(problem.budget)
    for name in CAPACITIES:
        if math.isfinite(problem.capacity[name]):
            rows.append(problem.usage(name)[owner])
            rhs.append(problem.capacity[name] - problem.usage(name) @ h0)
    # Columns are fractions of each segment, so that every coefficient is of order one.
    res = linprog(
        -gain.ravel(), A_ub=np.array(rows) * width.ravel()[None, :], b_ub=np.array(rhs), bounds=(0, 1), method="highs"
    )
    assert res.status == 0, res.message
    return float(vals[:, 0].sum() - res.fun)


@pytest.mark.parametrize("seed", range(4))
def test_matches_a_chord_grid_with_concave_hill_and_linear_curves(seed):
    ledger = random_ledger(5, seed=50 + seed, curves=("hill", "linear", "log"))
    problem = from_ledger(ledger, budget=[10_000, 60_000][seed % 2])
    plan = solve(problem, tolerance=1e-6)
    check_feasible(problem, plan)
    reference = chord_grid_optimum(problem)
    assert reference <= plan.value_upper_bound * (1 + 1e-9)  # a lower bound cannot beat the upper bound
    assert plan.value == pytest.approx(reference, rel=1e-4)


def test_out_of_time():
    with pytest.raises(SolveError, match=r"out of time: the time limit of 1e-09 s was reached"):
        Program(from_ledger(DEFAULT_LEDGER, budget=100_000), time_limit=1e-9).solve()


def water_filling(problem: Problem) -> float:
    """Budget only: bisection on λ, each source filled until a v'(e)/c = λ (closed-form inverses)."""
    s = problem.sources
    a, h0, c = s["rate"].to_numpy(), s["held_hours"].to_numpy(), problem.cost
    k, curve, beta = s["saturation_hours"].to_numpy(), s["curve"].to_numpy(), s["curve_shape"].to_numpy()
    cap = s["available_hours"].to_numpy()

    def hours(lam):
        y = lam * c / a  # the v' at which a source stops
        with np.errstate(all="ignore"):
            e = np.select(
                [curve == "log", curve == "exp", curve == "power"],
                [k * (1 / y - 1), -k * np.log(y), k * (y ** (1 / (beta - 1)) - 1)],
            )
        return np.clip(e / a - h0, 0, cap)

    lo, hi = 1e-12, 1e3
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if c @ hours(mid) > problem.budget else (lo, mid)
    x = hours(hi)
    return float(np.sum(value.value(a * (h0 + x), curve, k, beta)))


@pytest.mark.parametrize("seed", range(6))
def test_matches_water_filling_when_only_the_budget_binds(seed):
    ledger = random_ledger(40, seed=100 + seed)
    unlimited = ledger.cluster.replace(count=1e9, storage_gb=math.inf)
    problem = from_ledger(Ledger(ledger.sources, unlimited, ledger.path), budget=50_000)
    plan = solve(problem, tolerance=1e-6)
    assert plan.binding == []
    assert plan.value == pytest.approx(water_filling(problem), rel=1e-4)


def test_hill_curve_is_solved_globally():
    """An S-shaped hill source beside a linear one: against a brute-force search of the split."""
    rows = DEFAULT_LEDGER.sources.iloc[[0, 1]].copy().reset_index(drop=True)
    rows.loc[0, ["curve", "curve_shape", "saturation_hours", "held_hours", "available_hours"]] = [
        "hill",
        3.0,
        150.0,
        0,
        600,
    ]
    rows.loc[1, ["curve", "held_hours", "available_hours", "exchange_rate"]] = ["linear", 0, 5000, 0.05]
    unlimited = DEFAULT_LEDGER.cluster.replace(count=1e9, storage_gb=math.inf)
    for budget in (5_000, 20_000, 40_000, 80_000):
        problem = from_ledger(Ledger(rows, unlimited, DEFAULT_LEDGER.path), budget=budget)
        plan = solve(problem, tolerance=1e-5)
        s = problem.sources
        c, a = problem.cost, s["rate"].to_numpy()
        x0 = np.linspace(0, min(600, budget / c[0]), 400_001)
        x1 = np.minimum(5000, (budget - c[0] * x0) / c[1])
        best = np.max(value.value(a[0] * x0, "hill", 150.0, 3.0) + a[1] * x1)
        assert plan.value == pytest.approx(best, rel=1e-4), budget
        assert plan.value_upper_bound >= best * (1 - 1e-9)


def test_lots_minimum_orders_and_fees():
    rows = DEFAULT_LEDGER.sources.copy()
    rows.loc[rows["source"] == "own", "lot_hours"] = 25.0
    rows.loc[rows["source"] == "twin", ["min_order_hours", "fixed_fee_usd"]] = [500.0, 2_000.0]
    rows.loc[rows["source"] == "force", "fixed_fee_usd"] = 10_000.0
    problem = from_ledger(Ledger(rows, DEFAULT_LEDGER.cluster, DEFAULT_LEDGER.path), budget=100_000)
    plan = solve(problem, tolerance=1e-5)
    check_feasible(problem, plan)
    s = plan.sources.set_index("source")
    twin = s.loc["twin"]
    if twin["hours"] > 0:
        assert twin["purchase_usd"] == pytest.approx(15.0 * twin["hours"] + 2_000.0)
    assert plan.lambda_ > 0
    # Dropping the MIP terms can only help: the continuous plan is worth at least as much.
    free = solve(from_ledger(DEFAULT_LEDGER, budget=100_000), tolerance=1e-5)
    assert free.value >= plan.value * (1 - 1e-5)


def test_mix_bound():
    problem = from_ledger(DEFAULT_LEDGER, budget=100_000, max_share={"sim": 0.05})
    plan = solve(problem, tolerance=1e-6)
    e = plan.sources.set_index("source")["effective_hours"]
    assert e["sim"] <= 0.05 * e.sum() * (1 + 1e-7)
    assert "max_share:sim" in plan.shadow_prices and plan.shadow_prices["max_share:sim"] > 0


def test_target_mode_inverts_budget_mode():
    budget_plan = solve(from_ledger(DEFAULT_LEDGER, budget=60_000), tolerance=1e-6)
    target_plan = solve(from_ledger(DEFAULT_LEDGER, target=budget_plan.value), tolerance=1e-6)
    assert target_plan.value >= budget_plan.value * (1 - 1e-6)
    assert target_plan.spent_usd <= 60_000 * (1 + 1e-4)
    assert target_plan.spent_usd >= 60_000 * (1 - 1e-3)  # and not much less: the budget was spent well


# ----------------------------------------------------------------------------- properties


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 12), st.floats(0, 200_000), st.floats(1.01, 3))
def test_properties(seed, n, budget, factor):
    """A plan never breaks a constraint; more budget never lowers value; the inverse mode's cost
    for the value of a budget's plan is at most that budget."""
    ledger = random_ledger(n, seed=seed)
    problem = from_ledger(ledger, budget=budget)
    plan = solve(problem, tolerance=1e-6)
    check_feasible(problem, plan)
    richer = solve(replace(problem, budget=budget * factor), tolerance=1e-6)
    assert richer.value >= plan.value * (1 - 2e-6)
    held_value = solve(replace(problem, budget=0.0)).value
    if plan.value > held_value * (1 + 1e-6):
        inverse = solve(replace(problem, budget=None, target=plan.value), tolerance=1e-6)
        assert inverse.spent_usd <= budget * (1 + 1e-4) + 1e-6


def test_zero_budget_buys_nothing():
    plan = solve(from_ledger(DEFAULT_LEDGER, budget=0.0))
    assert (plan.sources["hours"] == 0).all() and plan.spent_usd == 0
    held = plan.sources.set_index("source").loc["own", "effective_hours"]
    assert held > 0 and plan.value > 0  # the 200 own hours held keep their value


def test_reuse_after_a_cost_change():
    """A built program re-solved at new costs gives what a fresh build gives."""
    problem = from_ledger(DEFAULT_LEDGER, budget=100_000)
    program = Program(problem, tolerance=1e-6)
    program.solve()
    dearer = problem.with_byte_price_x(10)
    program.set_costs(dearer.cost)
    again = program.solve()
    fresh = solve(dearer, tolerance=1e-6)
    assert again.value == pytest.approx(fresh.value, rel=2e-6)


@pytest.mark.parametrize("multiplier", [0.1, 3.0])
def test_a_repriced_problem_reads_as_one_priced_afresh(multiplier):
    """Every column a problem has read so far is kept by its repriced and re-asked variants
    where the byte price leaves it alone; each must still read as the ledger priced afresh at
    the scaled byte price (the pipeline's own pricing, not the repricing shortcut)."""
    ledger = random_ledger(30, seed=4)
    problem = from_ledger(ledger, budget=5_000.0)
    names = [c for c in problem.sources.columns if problem.sources[c].dtype.kind == "f"]
    for name in names:  # fill the problem's columns read so far
        problem.column(name)
    assert problem.curves.flags.writeable is False
    cl = ledger.cluster
    fresh = from_ledger(ledger, budget=5_000.0, cluster=cl.replace(byte_usd_per_gb=cl.byte_usd_per_gb * multiplier))
    for variant in (
        problem.with_byte_price_x(multiplier),
        problem.with_byte_price_x(multiplier).asking(budget=5_000.0),
    ):
        for name in names:
            assert variant.column(name) == pytest.approx(fresh.column(name), rel=1e-12, nan_ok=True), name
            assert variant.column(name) == pytest.approx(variant.sources[name].to_numpy(float), nan_ok=True), name
        assert variant.cost == pytest.approx(fresh.cost, rel=1e-12)
        assert np.array_equal(variant.curves, fresh.curves)
    asked = problem.asking(budget=1.0, max_share={"twin": 0.5})
    assert asked.budget == 1.0 and asked.max_share == {"twin": 0.5}
    assert asked.column("rate") is problem.column("rate")  # the same sources: read once
    with pytest.raises(InputError, match="sources"):
        problem.asking(sources=problem.sources)


@pytest.mark.parametrize(
    ("question", "field"),
    [
        ({"budget": math.nan}, "budget"),
        ({"budget": -1.0}, "budget"),
        ({"target": 0.0}, "target"),
        ({"max_share": {"twin": 1.5}}, "max_share twin"),
        ({"max_share": {"no such source": 0.5}}, "max_share"),
        ({"capacity": {"core_hours": -1.0}}, "capacity core_hours"),
        ({"capacity": {"core_hours": math.nan}}, "capacity core_hours"),
        ({"capacity": {"gpu_hours": 1.0}}, "capacity"),
        ({"tolerance": 0.1}, "question"),
    ],
)
def test_a_problem_asked_again_checks_its_question_as_the_ledger_does(question, field):
    """``asking`` takes the ranges ``from_ledger`` takes: a bad value is one InputError naming it."""
    problem = from_ledger(DEFAULT_LEDGER, budget=5_000.0)
    with pytest.raises(InputError, match=f"^{field} = "):
        problem.asking(**question)


def test_a_program_is_repriced_only_by_prices_and_bills():
    """A problem with other held hours, availabilities or capacities is refused by ``reprice``
    (the model keeps its own), and the program still solves as before; one repriced at a
    byte price or at the cluster's core-hour price is taken, and matches a fresh solve."""
    problem = from_ledger(DEFAULT_LEDGER, budget=20_000.0)
    program = Program(problem)
    before = program.solve()
    held = problem.sources.assign(held_hours=problem.sources["held_hours"] + 1.0)
    limited = problem.sources.assign(available_hours=problem.sources["available_hours"].clip(upper=10.0))
    for other, what in (
        (replace(problem, sources=held), "held_hours"),
        (replace(problem, sources=limited), "available_hours"),
        (problem.asking(capacity={**problem.capacity, "core_hours": 1.0}), "capacities"),
    ):
        with pytest.raises(InputError, match=what):
            program.reprice(other)
    assert program.solve().value == pytest.approx(before.value, rel=1e-12)
    cl = DEFAULT_LEDGER.cluster
    for repriced in (
        problem.with_byte_price_x(4.0),
        from_ledger(DEFAULT_LEDGER, budget=20_000.0, cluster=cl.replace(core_usd_per_hour=3 * cl.core_usd_per_hour)),
    ):
        program.reprice(repriced)
        assert program.solve().value == pytest.approx(solve(repriced).value, rel=1e-6)


def test_reuse_where_only_the_budget_bounds_a_source():
    """An unlimited source on an unlimited cluster is bounded by the budget alone: a larger
    budget or a lower cost rebuilds the model, and the plans match fresh solves."""
    unlimited = DEFAULT_LEDGER.cluster.replace(count=math.inf, storage_gb=math.inf)
    rows = DEFAULT_LEDGER.sources.copy()
    rows["available_hours"] = math.inf
    problem = from_ledger(Ledger(rows, unlimited, DEFAULT_LEDGER.path), budget=20_000)
    program = Program(problem, tolerance=1e-6)
    program.solve()
    program.set_budget(80_000)
    assert program.solve().value == pytest.approx(
        solve(replace(problem, budget=80_000), tolerance=1e-6).value, rel=2e-6
    )
    cheaper = problem.with_byte_price_x(0.1)
    program.set_budget(20_000)
    program.set_costs(cheaper.cost)
    assert program.solve().value == pytest.approx(solve(cheaper, tolerance=1e-6).value, rel=2e-6)


# ----------------------------------------------------------------------------- errors


def test_infeasible_holdings():
    small = DEFAULT_LEDGER.cluster.replace(storage_gb=1_000.0)
    with pytest.raises(
        SolveError,
        match=r"infeasible: the hours already held need 2,160\.0 GB of storage_gb, the capacity is 1,000\.0 GB \(over by 1,160\.0 GB\)",
    ):
        solve(from_ledger(DEFAULT_LEDGER, budget=1_000, cluster=small))


def test_a_budget_below_every_minimum_order_is_the_empty_plan_with_a_note():
    # before: an error ("budget = 10.00 buys nothing: it is below every source's minimum order")
    # where a budget of 0 gave the empty plan; buying nothing is the optimal plan of both
    rows = DEFAULT_LEDGER.sources.copy()
    rows["min_order_hours"] = 100.0
    ledger = Ledger(rows, DEFAULT_LEDGER.cluster, DEFAULT_LEDGER.path)
    plan = solve(from_ledger(ledger, budget=10.0))
    nothing = solve(from_ledger(ledger, budget=0.0))
    assert plan.sources["hours"].tolist() == [0.0] * len(rows)
    assert plan.value == pytest.approx(nothing.value, rel=1e-12)
    assert plan.value == pytest.approx(float(plan.sources["value"].sum()), rel=1e-12)  # the hours held alone
    assert plan.value_upper_bound <= plan.value * (1 + 1e-4)
    assert plan.notes[0] == (
        "the budget $10.00 buys nothing: it is below every source's least order, so the plan is the hours held "
        "(the least order is 'sim': 100 h × $0.19 = $19.00)"
    )
    assert not any("more than anything can use" in note for note in plan.notes)


def test_a_budget_below_every_fee_names_the_least_fee():
    rows = DEFAULT_LEDGER.sources.copy()
    rows["fixed_fee_usd"] = [300.0, 50.0, 80.0, 500.0, 90.0]
    plan = solve(from_ledger(Ledger(rows, DEFAULT_LEDGER.cluster, DEFAULT_LEDGER.path), budget=40.0))
    assert plan.sources["hours"].sum() == 0.0
    assert "(the least order is 'twin': its fee $50.00 = $50.00)" in plan.notes[0]


def test_hill_shape_must_be_positive():
    rows = DEFAULT_LEDGER.sources.copy()
    rows.loc[0, ["curve", "curve_shape"]] = ["hill", 0.0]
    with pytest.raises(InputError, match=r"curve_shape of 'own' = 0\.0 is invalid: a hill curve needs a shape > 0"):
        solve(from_ledger(Ledger(rows, DEFAULT_LEDGER.cluster, DEFAULT_LEDGER.path), budget=1_000))


def test_empty_ledger():
    empty = Ledger(DEFAULT_LEDGER.sources.iloc[0:0], DEFAULT_LEDGER.cluster, DEFAULT_LEDGER.path)
    with pytest.raises(SolveError, match="the ledger has no sources: nothing to buy"):
        solve(from_ledger(empty, budget=1_000))


def test_unbounded_free_source():
    rows = DEFAULT_LEDGER.sources.copy()
    rows.loc[rows["source"] == "sim", "price_usd_per_hour"] = 0.0
    unlimited = DEFAULT_LEDGER.cluster.replace(count=math.inf)
    with pytest.raises(SolveError, match="unbounded: sim costs nothing, is unlimited and uses no limited capacity"):
        solve(from_ledger(Ledger(rows, unlimited, DEFAULT_LEDGER.path), budget=1_000))


def test_unreachable_target():
    with pytest.raises(SolveError, match=r"infeasible: target = 1e\+06 is out of reach"):
        solve(from_ledger(DEFAULT_LEDGER, target=1e6))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "budget and target: give exactly one"),
        ({"budget": 1.0, "target": 1.0}, "budget and target: give exactly one"),
        ({"budget": -1.0}, "budget = -1.0 is invalid: must be a number ≥ 0"),
        ({"target": 0.0}, "target = 0.0 is invalid: must be a number ≥ 1e-06"),
        ({"budget": 1.0, "held": {"nope": 1.0}}, "held = 'nope' is invalid: not a source of the ledger"),
        ({"budget": 1.0, "held": {"own": -1.0}}, "held own = -1.0 is invalid: must be 0 or a number ≥ 1e-06"),
        (
            {"budget": 1.0, "max_share": {"sim": 1.5}},
            "max_share sim = 1.5 is invalid: must be 0 or a number ≥ 1e-06 and ≤ 1",
        ),
        ({"budget": 1.0, "max_share": {"robots": 0.5}}, "max_share = 'robots' is invalid: names no source or kind"),
    ],
)
def test_bad_problem(kwargs, message):
    with pytest.raises(InputError) as info:
        from_ledger(DEFAULT_LEDGER, **kwargs)
    assert message in str(info.value)


def test_plan_frames_document_their_columns():
    from procure.program.readout.plan import CAPACITY_COLUMNS, PLAN_COLUMNS

    plan = solve(from_ledger(DEFAULT_LEDGER, budget=10_000))
    assert list(plan.sources.columns) == list(PLAN_COLUMNS)
    assert list(plan.capacities.columns) == list(CAPACITY_COLUMNS)
    assert list(plan.sources["source"]) == list(DEFAULT_LEDGER.sources["source"])
    assert list(plan.capacities["capacity"]) == ["accelerator_hours", "core_hours", "storage_gb"]


def test_build_model_structure():
    """build_model returns a ConcreteModel with a named component per constraint family."""
    import pyomo.environ as pyo

    from procure.program.model.build import build, build_model

    problem = from_ledger(DEFAULT_LEDGER, budget=100_000, max_share={"sim": 0.5})
    # A model the dual guides starts with no cuts: its solve gives every curve one at the optimum.
    assert len(build_model(problem).cuts) == 0
    m = build(problem, dual_guide=False).model
    assert m.name == "procure"
    assert len(m.x) == len(m.z) == len(DEFAULT_LEDGER.sources)
    for name in ("x", "z", "cost", "budget", "budget_row", "capacity", "mix", "cuts", "objective"):
        assert m.find_component(name) is not None, name
    assert set(m.capacity) == {("accelerator_hours", 0), ("core_hours", 0), ("storage_gb", 0)}
    assert list(m.K) == [0] and list(m.Kb) == [0] and len(m.w) == 0  # one scenario, curves read at x
    cuts = [c for r in m.cuts for c in m.cuts[r].rows.values()]
    assert len(cuts) >= DEFAULT_LEDGER.sources.shape[0]
    assert m.objective.sense == pyo.maximize
    # Every first cut is a tangent: at its own point it equals the curve, elsewhere it lies above.
    s = from_ledger(DEFAULT_LEDGER, budget=1).sources
    for c in cuts:
        i = next(v.index() for v in pyo.expr.identify_variables(c.body) if v.parent_component() is m.x)
        for hours in (0.0, 100.0, 1_000.0):
            m.x[i].value = hours
            e = s["rate"].iloc[i] * (s["held_hours"].iloc[i] + hours)
            m.z[i].value = float(
                value.value(e, s["curve"].iloc[i], s["saturation_hours"].iloc[i], s["curve_shape"].iloc[i])
            )
            assert pyo.value(c.body) <= c.upper + 1e-9


def test_a_pickled_problem_carries_its_numbers_not_its_read_columns():
    """A problem's columns read so far are a cache of its sources: a pickle leaves them out (the
    app sends plans between processes), and the columns it reads again are read-only."""
    import pickle

    problem = from_ledger(random_ledger(200, seed=5), budget=40_000.0)
    size = len(pickle.dumps(problem))
    for name in [c for c in problem.sources.columns if problem.sources[c].dtype.kind == "f"]:
        problem.column(name)
    cost = problem.cost.copy()
    assert len(pickle.dumps(problem)) == size
    back = pickle.loads(pickle.dumps(problem.asking(budget=1.0)))
    assert back.budget == 1.0
    assert back.column("rate").flags.writeable is False
    assert back.cost.flags.writeable is False
    np.testing.assert_array_equal(back.cost, cost)
    np.testing.assert_array_equal(back.column("held_hours"), problem.column("held_hours"))


def test_a_solved_program_leaves_none_of_its_variables_alive_once_dropped():
    """The plan holds numbers, not the model: once the program is dropped, none of its Pyomo
    variables stays alive (Pyomo's expression cache among what could hold them)."""
    import gc

    from pyomo.core.base.var import VarData

    def alive() -> int:
        gc.collect()
        return sum(1 for o in gc.get_objects() if isinstance(o, VarData))

    before = alive()
    program = Program(from_ledger(random_ledger(2_000, seed=3, curves=("log", "exp")), budget=400_000.0))
    plan = program.solve()
    assert alive() >= before + 2_000
    del program
    assert alive() == before
    assert plan.value > 0
