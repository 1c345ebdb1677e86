"""The program under uncertainty against independent solutions.

* one scenario: today's deterministic plan;
* scenarios that only scale one source's value (its ρ and k by the same factor c, which
  multiplies ``k ln(1 + ρσφh/k)`` by c): the deterministic plan on the probability-weighted curve;
* small random ledgers (3–5 sources, 10–30 scenarios): expected value, CVaR and recourse plans
  against one LP on a fixed tangent grid (``scenario_oracle``), within 1e-4 relative;
* EVPI ≥ 0, VSS ≥ 0; CVaR with W = 1 never has a worse worst-share mean than another W.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import scenario_oracle

from procure.analyses.uncertainty import solve_uncertain
from procure.ledger import load_ledger
from procure.ledger.load import UNCERTAIN_COLUMNS
from procure.ledger.scenarios import Scenarios
from procure.ledger.synthetic import random_ledger
from procure.program import from_ledger
from procure.program.numbers.scenarios import cvar, one_scenario, scenario_problem
from procure.program.solve.program import solve_problem
from procure.program.solve.stochastic import solve_scenarios

TOL = 1e-4


def ledger_scenarios(sources, count, seed, *, columns=UNCERTAIN_COLUMNS, spread=0.6, probability=None):
    """``count`` scenarios that multiply each uncertain column of each source by a random factor."""
    rng = np.random.default_rng(seed)
    values = {c: np.tile(sources[c].to_numpy(float), (count, 1)) for c in UNCERTAIN_COLUMNS}
    for c in columns:
        values[c] = values[c] * rng.uniform(1 - spread, 1 + spread, values[c].shape)
    values["survival"] = np.minimum(values["survival"], 1.0)
    prob = np.full(count, 1 / count) if probability is None else probability
    return Scenarios(tuple(f"w{k}" for k in range(count)), prob, values, "test")


def test_one_scenario_is_the_deterministic_plan():
    ledger = load_ledger()
    problem = from_ledger(ledger, budget=100_000)
    one = ledger_scenarios(ledger.sources, 1, 0, columns=())
    plan = solve_scenarios(scenario_problem(problem, one), tolerance=1e-7)
    today = solve_problem(problem, tolerance=1e-7)
    assert plan.value == pytest.approx(today.value, rel=2e-7)
    assert plan.expected_value == pytest.approx(today.value, rel=2e-7)
    np.testing.assert_allclose(plan.plan.sources["hours"], today.sources["hours"], rtol=1e-3, atol=0.5)


@pytest.mark.parametrize("weights", [(0.5, 1.0, 1.5), (0.2, 0.3, 2.5)])
def test_scaling_one_source_is_the_weighted_curve(weights):
    ledger = load_ledger()
    problem = from_ledger(ledger, budget=100_000)
    count = len(weights)
    prob = np.array([0.2, 0.5, 0.3])
    sc = ledger_scenarios(ledger.sources, count, 0, columns=(), probability=prob)
    twin = 1
    for k, c in enumerate(weights):
        sc.values["exchange_rate"][k, twin] *= c
        sc.values["saturation_hours"][k, twin] *= c
    plan = solve_scenarios(scenario_problem(problem, sc), tolerance=1e-7)
    mean = float(prob @ np.array(weights))
    s = problem.sources.copy()
    s.loc[twin, "rate"] *= mean
    s.loc[twin, "saturation_hours"] *= mean

    weighted = solve_problem(replace(problem, sources=s), tolerance=1e-7)
    assert plan.expected_value == pytest.approx(weighted.value, rel=2e-7)
    np.testing.assert_allclose(plan.plan.sources["hours"], weighted.sources["hours"], rtol=1e-3, atol=0.5)


CASES = [(n, count, seed) for seed, (n, count) in enumerate([(3, 10), (4, 20), (5, 30), (3, 25), (5, 12)])]


def _random_problem(n, count, seed, budget_share=0.3):
    ledger = random_ledger(n, seed)
    probe = from_ledger(ledger, budget=1.0)
    budget = budget_share * float(probe.cost @ probe.column("available_hours"))
    problem = from_ledger(ledger, budget=budget)
    rng = np.random.default_rng(seed + 100)
    prob = rng.dirichlet(np.ones(count))
    sc = ledger_scenarios(ledger.sources, count, seed, probability=prob)
    return problem, sc


def _check_against_oracle(sp):
    got = solve_scenarios(sp, tolerance=TOL / 10)
    want = scenario_oracle.solve(sp)
    scale = abs(want.upper)
    # Each is a certified lower bound of the other's upper bound, and they agree within 1e-4.
    assert got.value <= want.upper * (1 + 1e-9) + 1e-9
    assert want.value <= got.plan.value_upper_bound * (1 + 1e-9) + 1e-9
    assert abs(got.value - want.value) <= TOL * scale
    return got, want


@pytest.mark.parametrize(("n", "count", "seed"), CASES)
def test_expected_value_plan_matches_an_independent_lp(n, count, seed):
    problem, sc = _random_problem(n, count, seed)
    got, _want = _check_against_oracle(scenario_problem(problem, sc))
    assert got.expected_value == pytest.approx(got.value)


@pytest.mark.parametrize(("n", "count", "seed"), CASES[:4])
def test_cvar_plan_matches_an_independent_lp(n, count, seed):
    problem, sc = _random_problem(n, count, seed)
    sp = scenario_problem(problem, sc, risk_alpha=0.2, risk_weight=0.7)
    got, _want = _check_against_oracle(sp)
    assert got.value == pytest.approx(0.3 * got.expected_value + 0.7 * got.cvar, rel=1e-12)


@pytest.mark.parametrize(("n", "count", "seed"), CASES[:4])
def test_recourse_plan_matches_an_independent_lp(n, count, seed):
    problem, sc = _random_problem(n, count, seed)
    sp = scenario_problem(problem, sc, recourse_price_x=1.15)
    got, _want = _check_against_oracle(sp)
    # What each scenario adds later is priced at M times its own price.
    r = got.recourse
    if len(r):
        k = [sp.names.index(name) for name in r["scenario"]]
        i = [list(problem.sources["source"]).index(name) for name in r["source"]]
        np.testing.assert_allclose(r["usd"], 1.15 * sp.later_cost[k, i] * r["hours"], rtol=1e-12)


def test_recourse_with_a_mean_plan_at_its_budget_to_the_last_cent_is_not_infeasible():
    """The plan made for the mean scenario spends its budget to float noise (here $1e-7 over
    $100,000) and fills the accelerators as closely: valued in every scenario with its hours
    fixed, that noise must not leave the recourse program without a plan (it did: "infeasible:
    no plan meets the budget, the capacities and the mix bounds in every scenario"). The plan,
    its EVPI and VSS, against an independent LP."""
    ledger = load_ledger()
    s = ledger.sources[ledger.sources["source"].isin(["own", "twin", "force", "sim"])].reset_index(drop=True)
    sc = ledger_scenarios(s, 10, 2, columns=("exchange_rate", "saturation_hours"), spread=0.9)
    sp = scenario_problem(from_ledger(replace(ledger, sources=s), budget=100_000), sc, recourse_price_x=1.3)
    got = solve_uncertain(sp, tolerance=TOL, workers=1)
    want = scenario_oracle.solve(sp)
    assert abs(got.value - want.value) <= TOL * abs(want.upper)
    assert got.vss >= 0 and got.evpi >= 0
    assert got.mean_plan_objective <= got.value * (1 + TOL)
    # the mean plan's hours, as valued, meet every row of the program
    hours = got.mean_plan_hours
    assert sp.base.spend(hours) <= 100_000
    for name, limit in sp.base.capacity.items():
        assert sp.base.usage(name) @ (sp.base.held + hours) <= limit


def test_recourse_at_todays_price_leaves_nothing_to_learn():
    """With later hours at today's price (M = 1) and prices that do not move, waiting costs
    nothing: the plan reaches the wait-and-see value and the EVPI is 0 within the tolerance."""
    problem, sc = _random_problem(4, 12, 7)
    sc.values["price_usd_per_hour"][:] = problem.sources["price_usd_per_hour"].to_numpy()[None, :]
    result = solve_uncertain(scenario_problem(problem, sc, recourse_price_x=1.0), tolerance=1e-6)
    assert result.evpi <= 3e-6 * result.value


@pytest.mark.parametrize("seed", range(3))
def test_a_plan_for_the_mean_scenario_waits_where_waiting_is_cheaper(seed):
    """Later hours cheaper than today's in every scenario (M times a lower price): the plan
    made for the mean scenario, with the same recourse, buys nothing now, as the stochastic
    plan does (an hour bought later is bought knowing the scenario, and for less), so the VSS
    is 0. Made without recourse, that plan would buy everything now and overstate the VSS."""
    problem, sc = _random_problem(4, 12, seed)
    m = 1.05
    today = problem.sources["price_usd_per_hour"].to_numpy()
    sc.values["price_usd_per_hour"][:] = (0.8 * today)[None, :] - (0.9 * problem.column("transport_usd_per_hour") / m)
    sc.values["price_usd_per_hour"][:] = np.maximum(sc.values["price_usd_per_hour"], 0.0)
    sp = scenario_problem(problem, sc, recourse_price_x=m)
    assert np.all(m * sp.later_cost < problem.cost)  # waiting is cheaper in every scenario
    result = solve_uncertain(sp, tolerance=1e-6)
    assert np.all(result.plan.sources["hours"].to_numpy() == 0)
    assert np.all(result.mean_plan_hours == 0)
    assert result.vss <= 2e-6 * result.value


@pytest.mark.parametrize(("n", "count", "seed"), CASES)
@pytest.mark.parametrize("options", [{}, {"risk_weight": 0.5, "risk_alpha": 0.25}, {"recourse_price_x": 1.3}])
def test_evpi_and_vss_are_not_negative(n, count, seed, options):
    problem, sc = _random_problem(n, count, seed)
    result = solve_uncertain(scenario_problem(problem, sc, **options))
    assert result.evpi >= 0
    assert result.vss >= 0
    # The raw differences, before the tolerance band is read as 0, are within it.
    assert result.wait_and_see - result.value >= -2 * TOL * result.value
    assert result.value - result.mean_plan_objective >= -2 * TOL * result.value


def _exact_hours(problem):
    """The deterministic concave plan by SciPy's trust-region interior point on the true curves
    (no procure solver): the exact mean-scenario plan."""
    from scipy.optimize import BFGS, Bounds, LinearConstraint, minimize

    from procure.program import CAPACITIES
    from procure.program.numbers import value

    s = problem.sources
    a, h0 = problem.rate, problem.held
    curve, k, shape = s["curve"].to_numpy(), s["saturation_hours"].to_numpy(), s["curve_shape"].to_numpy()
    scale = np.maximum(1.0, np.minimum(s["available_hours"].to_numpy(), 1e5))
    rows, ub = [problem.cost * scale], [problem.budget]
    for name in CAPACITIES:
        if np.isfinite(problem.capacity[name]):
            rows.append(problem.usage(name) * scale)
            ub.append(problem.capacity[name] - problem.usage(name) @ h0)
    res = minimize(
        lambda y: -float(np.sum(value.value(a * (h0 + y * scale), curve, k, shape))),
        np.full(problem.n, 1e-6),
        jac=lambda y: -value.derivative(a * (h0 + y * scale), curve, k, shape) * a * scale,
        hess=BFGS(),
        method="trust-constr",
        bounds=Bounds(np.zeros(problem.n), s["available_hours"].to_numpy() / scale),
        constraints=[LinearConstraint(np.array(rows), -np.inf, np.array(ub))],
        options={"gtol": 1e-12, "xtol": 1e-14, "maxiter": 5000},
    )
    return np.clip(res.x * scale, 0.0, s["available_hours"].to_numpy())


def _mean_scenario_hours(sp):
    """The hours bought now of the exact plan made for the mean scenario. Without recourse, the
    deterministic plan at the mean numbers; with it, an hour is bought at the cheaper of today's
    all-in price and M times the mean later one (one scenario: nothing is learnt by waiting),
    so the plan at those prices, kept only where today's is the cheaper, is what it buys now."""
    mean = sp.mean()
    if sp.recourse_price_x is None:
        return _exact_hours(mean)
    later = sp.recourse_price_x * (sp.probability @ sp.later_cost)
    now = mean.cost <= later
    return np.where(now, _exact_hours(mean.with_cost(np.minimum(mean.cost, later))), 0.0)


def _reference_information(sp):
    """EVPI and VSS from the independent LP, as intervals: the plan's objective of the
    wait-and-see values less the stochastic optimum; the stochastic optimum less the
    objective of the exact mean-scenario plan. Each LP gives a lower (its plan's true value)
    and an upper bound (its optimum)."""
    stochastic = scenario_oracle.solve(sp)
    best = [scenario_oracle.solve(one_scenario(sp.scenario(k))) for k in range(sp.count)]
    ws_lo = sp.objective(np.array([b.value for b in best]))
    ws_hi = sp.objective(np.array([b.upper for b in best]))
    mean = scenario_oracle.solve(sp, fixed_hours=_mean_scenario_hours(sp))
    evpi = (ws_lo - stochastic.upper, ws_hi - stochastic.value)
    vss = (stochastic.value - mean.upper, stochastic.upper - mean.value)
    return evpi, vss


@pytest.mark.parametrize(("n", "count", "seed"), CASES[:3])
@pytest.mark.parametrize(
    "options", [{}, {"risk_weight": 0.6, "risk_alpha": 0.2}, {"recourse_price_x": 1.2}], ids=["ev", "risk", "recourse"]
)
def test_evpi_and_vss_match_an_independent_lp(n, count, seed, options):
    problem, sc = _random_problem(n, count, seed)
    sp = scenario_problem(problem, sc, **options)
    tolerance = 1e-6
    got = solve_uncertain(sp, tolerance=tolerance)
    (evpi_lo, evpi_hi), (vss_lo, vss_hi) = _reference_information(sp)
    slack = 2 * tolerance * abs(got.value)  # twice the tolerance of the objective
    assert max(evpi_lo, 0.0) - slack <= got.evpi <= max(evpi_hi, 0.0) + slack
    assert max(vss_lo, 0.0) - slack <= got.vss <= max(vss_hi, 0.0) + slack


@pytest.mark.parametrize(("n", "count", "seed"), CASES[:3])
def test_full_cvar_weight_has_the_best_worst_share(n, count, seed):
    problem, sc = _random_problem(n, count, seed)
    alpha = 0.2
    tails = {}
    for weight in (0.0, 0.25, 0.5, 0.75, 1.0):
        plan = solve_scenarios(scenario_problem(problem, sc, risk_alpha=alpha, risk_weight=weight), tolerance=1e-6)
        tails[weight] = plan.cvar
    assert all(tails[1.0] >= t - 2e-6 * abs(t) for t in tails.values())


def test_cvar_is_the_mean_of_the_worst_share():
    v = np.array([5.0, 1.0, 3.0, 2.0])
    p = np.array([0.1, 0.2, 0.3, 0.4])
    # The worst 0.5: all of 1.0 (0.2) and 0.3 of 2.0 (0.4).
    assert cvar(v, p, 0.5) == pytest.approx((0.2 * 1.0 + 0.3 * 2.0) / 0.5)
    assert cvar(v, p, 1.0) == pytest.approx(p @ v)
    assert cvar(v, p, 0.1) == pytest.approx(1.0)


def test_scenarios_ask_for_a_budget():
    ledger = load_ledger()
    sc = ledger_scenarios(ledger.sources, 2, 0)
    with pytest.raises(Exception, match="scenarios are solved for a budget"):
        scenario_problem(from_ledger(ledger, target=500), sc)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"risk_alpha": 0.0}, "risk_alpha = 0.0 is invalid"),
        ({"risk_alpha": 1.5}, "risk_alpha = 1.5 is invalid"),
        ({"risk_weight": -0.1}, "risk_weight = -0.1 is invalid"),
        ({"recourse_price_x": 0.9}, "recourse_price_x = 0.9 is invalid"),
    ],
)
def test_bad_risk_options_are_named(options, message):
    ledger = load_ledger()
    sc = ledger_scenarios(ledger.sources, 2, 0)
    with pytest.raises(Exception, match=message):
        scenario_problem(from_ledger(ledger, budget=1000), sc, **options)


def test_lambda_of_scenarios_is_the_value_of_a_dollar_where_only_the_budget_bounds_a_source():
    """Eight scenarios with a CVaR weight on the default ledger with every source unlimited on
    an unlimited cluster: the money goes to one source that only the budget bounds, and λ is the
    slope of the objective in the budget (a central difference of fresh solves), fresh or after
    a repricing."""
    import math

    from procure.ledger import Ledger
    from procure.ledger.scenarios import sample_scenarios
    from procure.program.solve.program import Program

    base = load_ledger()
    rows = base.sources.assign(available_hours=math.inf)
    ledger = Ledger(rows, base.cluster.replace(count=math.inf, storage_gb=math.inf), base.path)
    sc = sample_scenarios(ledger.sources, 8, seed=3)
    budget, step = 20_000.0, 50.0
    dearer = ledger.cluster.replace(byte_usd_per_gb=3 * ledger.cluster.byte_usd_per_gb)

    def program_at(b: float, cluster) -> Program:
        return Program(scenario_problem(from_ledger(ledger, budget=b, cluster=cluster), sc, risk_weight=0.3),
                       tolerance=1e-9)  # fmt: skip

    slope = (program_at(budget + step, dearer).solve().value - program_at(budget - step, dearer).solve().value) / (
        2 * step
    )
    fresh = program_at(budget, dearer).solve()
    program = program_at(budget, ledger.cluster)
    program.solve()
    program.reprice(from_ledger(ledger, budget=budget).with_byte_price_x(3.0))
    reused = program.solve()
    assert slope > 0
    for plan in (fresh, reused):
        assert plan.lambda_ == pytest.approx(slope, rel=1e-3)


def test_lambda_with_fixed_hours_is_the_slope_of_the_value_of_the_rest():
    """Hours bought now fixed (how VSS values a plan): fixed hours are no limit's bound, so λ of
    the program that chooses only the later hours is the slope of its value in the budget."""
    import math

    from procure.ledger import Ledger
    from procure.ledger.scenarios import sample_scenarios
    from procure.program.solve.program import Program

    base = load_ledger()
    rows = base.sources.assign(available_hours=math.inf)
    ledger = Ledger(rows, base.cluster.replace(count=math.inf, storage_gb=math.inf), base.path)
    sc = sample_scenarios(ledger.sources, 4, seed=1)
    budget, step = 20_000.0, 2.0
    problem = from_ledger(ledger, budget=budget)
    free = solve_problem(scenario_problem(problem, sc, recourse_price_x=1.5), tolerance=1e-9)
    fixed = free.sources["hours"].to_numpy(dtype=float) * 0.5

    def plan_at(b: float):
        sp = scenario_problem(problem.asking(budget=b), sc, recourse_price_x=1.5)
        return Program(sp, tolerance=1e-9, fixed_hours=fixed).solve()

    now = plan_at(budget)
    right, left = (plan_at(budget + step).value - now.value) / step, (now.value - plan_at(budget - step).value) / step
    assert right * (1 - 1e-4) <= now.lambda_ <= left * (1 + 1e-4)


@pytest.mark.parametrize("options", [{}, {"risk_weight": 0.5, "risk_alpha": 0.2}, {"recourse_price_x": 1.2}],
                         ids=["ev", "cvar", "recourse"])  # fmt: skip
def test_a_mix_bound_holds_in_every_scenario_as_an_independent_lp_has_it(options):
    """A mix bound on the source bought most without it, at half its share: each scenario's mix
    row is on that scenario's own effective hours (a row written for one scenario's rates alone
    passed every other test)."""
    problem, sc = _random_problem(4, 12, 5)
    free = solve_scenarios(scenario_problem(problem, sc, **options), tolerance=TOL / 10)
    e = free.plan.sources["effective_hours"].to_numpy(float)
    top = int(np.argmax(np.where(problem.held > 0, -np.inf, e)))
    share = 0.5 * float(e[top] / e.sum())
    bound = replace(problem, max_share={problem.sources["source"].iloc[top]: share})
    got, _want = _check_against_oracle(scenario_problem(bound, sc, **options))
    assert got.value < free.value * (1 - TOL)  # the bound binds


@pytest.mark.parametrize(("n", "count", "seed"), CASES)
def test_an_expected_value_certified_by_its_dual_alone_is_within_the_independent_lps_bounds(n, count, seed):
    # the value EVPPI's groups take from the dual alone: where it certifies, it lies between the
    # oracle's plan value and its LP bound (within the tolerance), started cold or from another
    # problem's multipliers
    from procure.program.solve.certify import expected_certified_value

    problem, sc = _random_problem(n, count, seed)
    sp = scenario_problem(problem, sc)
    want = scenario_oracle.solve(sp)
    cold, mu = expected_certified_value(sp, TOL / 10)
    assert cold is not None and mu is not None
    warm, _ = expected_certified_value(sp, TOL / 10, mu * 1.5)
    for got in (cold, warm):
        assert got is not None
        assert want.value - TOL * abs(want.upper) <= got <= want.upper * (1 + 1e-9) + 1e-9
