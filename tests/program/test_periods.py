"""Plans over periods: one period is today's program; several agree with an independent bracket."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from period_oracle import PeriodCase, ageing, bracket

import procure
from procure.ledger import load_ledger
from procure.ledger.periods import Periods
from procure.ledger.synthetic import random_ledger
from procure.program.numbers.periods import age_factors, period_problem
from procure.program.numbers.problem import CAPACITIES, from_ledger
from procure.program.numbers.value import shelf_life_factor
from procure.program.solve.program import Program, solve_problem

TOL = 1e-4


def periods_of(n: int, months, money, *, price=None, available=None, capacity=None, weight=None) -> Periods:
    T = len(months)
    return Periods(
        names=tuple(f"P{t + 1}" for t in range(T)),
        months=np.asarray(months, dtype=float),
        money=np.asarray(money, dtype=float),
        weight=None if weight is None else np.asarray(weight, dtype=float),
        capacity=capacity or {},
        price=np.full((T, n), np.nan) if price is None else np.asarray(price, dtype=float),
        available=np.full((T, n), np.inf) if available is None else np.asarray(available, dtype=float),
        origin="test",
    )


def case_of(problem, periods: Periods, carry: bool) -> PeriodCase:
    pp = period_problem(problem, periods, carry=carry)
    return PeriodCase(
        price=pp.price,
        bill=problem.column("transport_usd_per_hour"),
        quality=problem.column("exchange_rate") * problem.column("survival"),
        shelf_life=problem.column("shelf_life_months"),
        held=problem.held,
        available=problem.column("available_hours"),
        available_t=periods.available,
        curve=problem.sources["curve"].to_numpy(str),
        k=problem.column("saturation_hours"),
        shape=problem.column("curve_shape"),
        usage={name: problem.usage(name) for name in CAPACITIES},
        capacity=pp.capacity,
        months=periods.months,
        money=pp.money,
        weight=periods.value_weight,
        carry=carry,
    )


def test_age_factors_match_the_closed_form_written_apart():
    L = np.array([6.0, 12.0, math.inf, 36.0])
    months = np.array([3.0, 2.0, 6.0, 1.0])
    np.testing.assert_allclose(age_factors(L, months), ageing(L, months), rtol=1e-12, atol=0)


def test_one_period_of_the_horizon_is_the_shelf_life_factor():
    L = np.array([6.0, 18.0, math.inf])
    np.testing.assert_allclose(age_factors(L, np.array([12.0]))[0, 0], shelf_life_factor(L, 12.0), rtol=1e-14)


def test_one_period_is_todays_plan_on_the_default_ledger():
    ledger = load_ledger()
    today = procure.solve(budget=100_000)
    one = periods_of(len(ledger.sources), [ledger.cluster.horizon_months], [100_000])
    plan = procure.solve(periods=one)
    assert plan.value == pytest.approx(today.value, rel=1e-12)
    assert plan.value == pytest.approx(973.80, abs=0.005)  # the default ledger's reference figure
    assert plan.lambda_ == pytest.approx(today.lambda_, rel=1e-12)
    np.testing.assert_allclose(plan.sources["hours"], today.sources["hours"], rtol=1e-12)
    assert plan.shadow_prices == pytest.approx(today.shadow_prices)
    assert plan.schedule is not None and plan.periods is not None
    np.testing.assert_allclose(plan.schedule["hours"], today.sources["hours"], rtol=1e-12)
    assert plan.lambda_by_period == {"P1": pytest.approx(today.lambda_)}


def test_a_one_period_program_refuses_a_new_price_as_several_periods_do():
    """Its period read-out is priced by the periods file: repriced in place it would report the
    old bills beside the new hours, so it is refused, as a program over several periods is."""
    ledger = load_ledger()
    one = periods_of(len(ledger.sources), [ledger.cluster.horizon_months], [20_000])
    program = Program(period_problem(from_ledger(ledger, budget=20_000), one))
    assert program.single is not None
    before = program.solve()
    with pytest.raises(procure.InputError, match="periods file"):
        program.reprice(program.problem.with_byte_price_x(5.0))
    after = program.solve()
    assert after.value == pytest.approx(before.value, rel=1e-12)
    assert after.transport_usd == pytest.approx(before.transport_usd, rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_one_period_is_todays_plan_on_random_ledgers(seed):
    ledger = random_ledger(12, seed)
    budget = 30_000.0 + 10_000 * seed
    today = procure.solve(ledger, budget=budget)
    plan = procure.solve(ledger, periods=periods_of(12, [ledger.cluster.horizon_months], [budget]))
    assert plan.value == pytest.approx(today.value, rel=1e-12)
    assert plan.lambda_ == pytest.approx(today.lambda_, rel=1e-12)
    np.testing.assert_allclose(plan.sources["hours"], today.sources["hours"], rtol=1e-10, atol=1e-9)


def _random_case(seed: int):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 31))
    T = int(rng.integers(2, 9))
    ledger = random_ledger(n, seed + 100)
    months = rng.choice([1.0, 2.0, 3.0, 6.0], T)
    money = rng.uniform(2_000, 20_000, T) * (rng.random(T) < 0.8)
    if money.sum() == 0:
        money[0] = 10_000.0
    problem = from_ledger(ledger, budget=float(money.sum()))
    moved = problem.column("price_usd_per_hour")[None, :] * rng.uniform(0.5, 1.5, (T, n))
    price = np.where(rng.random((T, n)) < 0.4, moved, np.nan)
    available = np.where(rng.random((T, n)) < 0.3, rng.uniform(10, 500, (T, n)), np.inf)
    used = problem.usage("accelerator_hours") @ problem.held
    capacity = {"accelerator_hours": np.where(rng.random(T) < 0.5, used + rng.uniform(50, 800, T), np.nan)}
    periods = periods_of(n, months, money, price=price, available=available, capacity=capacity)
    carry = bool(rng.random() < 0.6)
    return ledger, problem, periods, carry


def _check_rows(problem, pp, plan):
    """Every money and capacity row holds when recomputed from the schedule."""
    T, n = pp.count, pp.n
    y = plan.schedule["hours"].to_numpy().reshape(T, n)
    assert (y >= -1e-9).all()
    held_by = np.cumsum(y, axis=0)
    fee = problem.column("fixed_fee_usd")
    spend = (pp.price * y).sum(axis=1) + held_by @ problem.column("transport_usd_per_hour")
    spend[0] += fee @ (y.sum(axis=0) > 1e-6)
    money = pp.money
    left = np.cumsum(money) - np.cumsum(spend) if pp.carry else money - spend
    assert (left >= -1e-6 * max(1.0, money.sum())).all()
    for name in CAPACITIES:
        use = (held_by + problem.held[None, :]) @ problem.usage(name)
        limit = pp.capacity[name]
        assert (use <= limit * (1 + 1e-7) + 1e-6).all()
    assert (y <= pp.available + 1e-6).all()
    assert (y.sum(axis=0) <= problem.column("available_hours") + 1e-6).all()


@pytest.mark.parametrize("seed", range(10))
def test_several_periods_agree_with_an_independent_bracket(seed):
    ledger, problem, periods, carry = _random_case(seed)
    plan = procure.solve(ledger, periods=periods, carry=carry)
    lower, upper, _y = bracket(case_of(problem, periods, carry))
    assert lower <= upper * (1 + 1e-9) + 1e-9
    assert plan.value <= upper * (1 + 1e-9) + 1e-9  # a feasible schedule is worth at most the optimum
    assert plan.value >= lower * (1 - 2 * TOL) - 1e-9  # and within the tolerance of it
    assert plan.value_upper_bound >= lower * (1 - 1e-9) - 1e-9  # procure's bound bounds
    _check_rows(problem, period_problem(problem, periods, carry=carry), plan)


def test_more_money_earlier_is_never_worth_less():
    ledger = load_ledger()
    n = len(ledger.sources)
    late = procure.solve(periods=periods_of(n, [3, 3, 3, 3], [10_000, 20_000, 30_000, 40_000]))
    early = procure.solve(periods=periods_of(n, [3, 3, 3, 3], [40_000, 30_000, 20_000, 10_000]))
    assert early.value >= late.value * (1 - TOL)
    assert early.value > late.value  # strictly here: early hours also count at more runs


def test_carry_over_is_never_worth_less_than_without():
    ledger = load_ledger()
    n = len(ledger.sources)
    spec = periods_of(n, [3, 3, 3, 3], [50_000, 0, 0, 50_000])
    carry = procure.solve(periods=spec)
    lose = procure.solve(periods=spec, carry=False)
    assert carry.value >= lose.value * (1 - TOL)
    # Without carry-over, a period with no money buys nothing and pays no bill.
    spent = lose.periods["spent_usd"].to_numpy()
    assert spent[1] == pytest.approx(0, abs=1e-3) and spent[2] == pytest.approx(0, abs=1e-3)


def test_a_falling_price_is_bought_last_when_only_the_last_run_counts():
    ledger = load_ledger()
    sources = ledger.sources.copy()
    sources["shelf_life_months"] = math.inf
    ledger = type(ledger)(sources, ledger.cluster, ledger.path)
    n = len(sources)
    sim = int(np.flatnonzero(sources["source"] == "twin")[0])
    price = np.full((4, n), np.nan)
    price[:, sim] = sources["price_usd_per_hour"].iloc[sim] * 0.9 ** np.arange(4)
    spec = periods_of(n, [3, 3, 3, 3], [100_000, 0, 0, 0], price=price, weight=[0, 0, 0, 1])
    plan = procure.solve(ledger, periods=spec)
    y = plan.schedule["hours"].to_numpy().reshape(4, n)
    assert y[3, sim] > 1.0
    assert y[:3, sim].sum() <= 1e-6 * max(1.0, y[3, sim])


def test_target_mode_over_periods_is_the_least_money():
    ledger = load_ledger()
    n = len(ledger.sources)
    spec = periods_of(n, [3, 3, 3, 3], [25_000] * 4)
    plan = procure.solve(target=700, periods=spec)
    assert plan.value >= 700 * (1 - 1e-9)
    assert plan.gap <= TOL
    below = procure.solve(budget=plan.money_lower_bound * (1 - 2 * TOL), periods=spec)
    assert below.value_upper_bound < 700


def test_the_program_is_one_model_with_a_period_axis():
    ledger = load_ledger()
    spec = periods_of(len(ledger.sources), [6, 6], [50_000, 50_000])
    program = Program(period_problem(from_ledger(ledger, budget=100_000), spec))
    program.solve()
    m = program.model
    assert len(m.T) == 2 and len(m.budget_row) == 2 and len(m.y) == 2 * len(ledger.sources)
    assert solve_problem(period_problem(from_ledger(ledger, budget=100_000), spec)).value == pytest.approx(
        program.last.refined.value if program.last else math.nan, rel=1e-9
    )


def _scenarios(ledger, K: int, seed: int):
    from procure.ledger.scenarios import Scenarios

    rng = np.random.default_rng(seed)
    s = ledger.sources
    n = len(s)
    values = {
        "exchange_rate": s["exchange_rate"].to_numpy(float)[None, :] * rng.uniform(0.5, 1.5, (K, n)),
        "survival": np.minimum(1.0, s["survival"].to_numpy(float)[None, :] * rng.uniform(0.7, 1.2, (K, n))),
        "saturation_hours": s["saturation_hours"].to_numpy(float)[None, :] * rng.uniform(0.5, 2.0, (K, n)),
        "price_usd_per_hour": s["price_usd_per_hour"].to_numpy(float)[None, :] * rng.uniform(0.7, 1.3, (K, n)),
    }
    prob = rng.dirichlet(np.ones(K))
    return Scenarios(tuple(f"w{k}" for k in range(K)), prob, values, "test")


@pytest.mark.parametrize("seed", range(4))
def test_periods_under_scenarios_agree_with_an_independent_bracket(seed):
    from period_oracle import bracket_scenarios

    from procure.program.numbers.periods import with_scenarios
    from procure.program.numbers.scenarios import scenario_problem

    ledger, problem, periods, carry = _random_case(seed)
    K = 2 + seed % 3
    found = _scenarios(ledger, K, seed)
    plan = procure.solve(ledger, periods=periods, carry=carry, scenarios=found)
    pp = with_scenarios(period_problem(problem, periods, carry=carry), scenario_problem(problem, found))
    cases = []
    for k in range(K):
        c = case_of(problem, periods, carry)
        c.quality, c.k, c.price = pp.qualities[k], pp.scales[k], pp.prices[k]
        cases.append(c)
    lower, upper, _y = bracket_scenarios(cases, pp.chance)
    assert plan.value <= upper * (1 + 1e-9) + 1e-9
    assert plan.value >= lower * (1 - 2 * TOL) - 1e-9
    # The first period is one decision; the later ones may differ by scenario.
    sch = plan.schedule
    T, n = periods.count, len(ledger.sources)
    y = sch["hours"].to_numpy().reshape(K, T, n)
    np.testing.assert_allclose(y[:, 0, :], np.broadcast_to(y[0, 0, :], (K, n)), rtol=1e-9, atol=1e-7)
    assert list(sch["scenario"].unique()) == list(found.names)
    # Each scenario's money and capacity rows hold.
    for k in range(K):
        money = pp.money
        spend = (pp.prices[k] * y[k]).sum(axis=1) + np.cumsum(y[k], axis=0) @ pp.bill
        spend[0] += problem.column("fixed_fee_usd") @ (y[k].sum(axis=0) > 1e-6)
        left = np.cumsum(money) - np.cumsum(spend) if carry else money - spend
        assert (left >= -1e-6 * max(1.0, money.sum())).all()


def test_one_scenario_of_the_ledger_is_the_plan_without_scenarios():
    from procure.ledger.scenarios import UNCERTAIN_COLUMNS, Scenarios

    ledger = load_ledger()
    n = len(ledger.sources)
    spec = periods_of(n, [3, 3, 3, 3], [25_000] * 4)
    values = {c: ledger.sources[c].to_numpy(float)[None, :] for c in UNCERTAIN_COLUMNS}
    same = Scenarios(("ledger",), np.ones(1), values, "test")
    plain = procure.solve(periods=spec)
    under = procure.solve(periods=spec, scenarios=same)
    assert under.value == pytest.approx(plain.value, rel=2 * TOL)
    np.testing.assert_allclose(under.sources["hours"], plain.sources["hours"], rtol=0.05, atol=1.0)


def test_knowing_the_scenario_is_worth_at_least_as_much():
    """The plan that buys the first period for all scenarios is worth no more than each
    scenario planned alone, weighed by its probability (wait and see)."""
    from procure.ledger.scenarios import Scenarios

    ledger = load_ledger()
    n = len(ledger.sources)
    spec = periods_of(n, [3, 3, 3, 3], [25_000] * 4)
    found = _scenarios(ledger, 3, 7)
    together = procure.solve(periods=spec, scenarios=found)
    alone = 0.0
    for k in range(3):
        one = Scenarios((found.names[k],), np.ones(1), {c: v[k : k + 1] for c, v in found.values.items()}, "test")
        alone += found.probability[k] * procure.solve(periods=spec, scenarios=one).value_upper_bound
    assert together.value <= alone * (1 + 1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_periods_with_a_binding_mix_bound_agree_with_an_independent_bracket(seed):
    """A mix bound holds at every run of a schedule: the source bought most without it (of those
    with no hours held) is held
    to half its share of the last run's effective hours, and the plan is the oracle's, whose
    mix rows are written here from the formulas (the aged effective hours of each run)."""
    ledger, problem, periods, carry = _random_case(seed)
    free = procure.solve(ledger, periods=periods, carry=carry)
    pp = period_problem(problem, periods, carry=carry)
    T, n = pp.count, pp.n
    y = free.schedule["hours"].to_numpy().reshape(T, n)
    quality = problem.column("exchange_rate") * problem.column("survival")
    age = ageing(problem.column("shelf_life_months"), periods.months)

    def effective(y):  # [t, s]
        return quality[None, :] * (np.einsum("uts,us->ts", age, y) + age[0] * problem.held[None, :])

    e = effective(y)
    top = int(np.argmax(np.where(problem.held > 0, -np.inf, e[-1])))  # none held: the bound can hold at every run
    share = 0.5 * float(e[-1, top] / e[-1].sum())
    name = problem.sources["source"].iloc[top]
    plan = procure.solve(ledger, periods=periods, carry=carry, max_share={name: share})
    members = np.zeros(n, dtype=bool)
    members[top] = True
    case = replace(case_of(problem, periods, carry), mix=((members, share),))
    lower, upper, _y = bracket(case)
    assert plan.value <= upper * (1 + 1e-9) + 1e-9
    assert plan.value >= lower * (1 - 2 * TOL) - 1e-9
    assert plan.value < free.value * (1 - TOL)  # the bound binds
    got = effective(plan.schedule["hours"].to_numpy().reshape(T, n))
    held_at_runs = got.sum(axis=1) > 0
    assert (got[held_at_runs, top] <= share * got[held_at_runs].sum(axis=1) * (1 + 1e-7) + 1e-9).all()
