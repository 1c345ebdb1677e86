"""EVPPI from posterior draws: between 0 and EVPI, and equal to a brute-force nested Monte Carlo.

The brute force is written here from the formulas alone: two sources (own and twin) whose value
is k ln(1 + ρσφ x / k), a budget too small for any capacity to bind, so the best plan spends it
all and is found by a grid over the share that goes to the twin.
"""

from __future__ import annotations

import math
import shutil

import numpy as np
import pandas as pd
import pytest

from procure import load_ledger
from procure.analyses.fit.evppi import evppi, groups_of
from procure.analyses.solving import prepare
from procure.ledger.scenarios import Scenarios

from .conftest import DEFAULT

BUDGET = 20_000.0
#: The twin's exchange rate and saturation scale: independent log-normals (median, sd of the log).
RHO = (0.4, 0.5)
SCALE = (300.0, 0.7)
#: Grid of the share of the budget spent on the twin.
SHARES = np.linspace(0.0, 1.0, 20_001)


@pytest.fixture(scope="module")
def two_sources(tmp_path_factory):
    dest = tmp_path_factory.mktemp("two") / "ledger"
    shutil.copytree(DEFAULT.path, dest)
    s = pd.read_csv(dest / "sources.csv", dtype=str, keep_default_na=False)
    s = s[s["source"].isin(["own", "twin"])].copy()
    s["held_hours"] = "0"
    s.to_csv(dest / "sources.csv", index=False)
    return load_ledger(dest)


def _phi(months: float, horizon: float) -> float:
    return months / (horizon * math.log(2)) * (1 - 2 ** (-horizon / months))


def _brute(ledger, cost, rho, k, shares=SHARES):
    """The value of spending the budget at each grid share, for each (ρ, k) draw (shares × draws)."""
    s = ledger.sources.set_index("source")
    h = ledger.cluster.horizon_months
    r_own = s.loc["own", "exchange_rate"] * s.loc["own", "survival"] * _phi(s.loc["own", "shelf_life_months"], h)
    r_twin = s.loc["twin", "survival"] * _phi(s.loc["twin", "shelf_life_months"], h)
    k_own = s.loc["own", "saturation_hours"]
    x_twin = shares[:, None] * BUDGET / cost[1]
    x_own = (1 - shares[:, None]) * BUDGET / cost[0]
    e = r_twin * rho[None, :] * x_twin
    return k_own * np.log1p(r_own * x_own / k_own) + k[None, :] * np.log1p(e / k[None, :])


def _problem(ledger, rho, k):
    n = len(rho)
    values = {c: np.tile(ledger.sources[c].to_numpy(dtype=float), (n, 1))
              for c in ("exchange_rate", "survival", "saturation_hours", "price_usd_per_hour")}  # fmt: skip
    values["exchange_rate"][:, 1] = rho
    values["saturation_hours"][:, 1] = k
    scenarios = Scenarios(tuple(f"d{i}" for i in range(n)), np.full(n, 1 / n), values, "test draws")
    request = prepare(ledger, budget=BUDGET, scenarios=scenarios, tolerance=1e-7)
    return request.scenarios


def _design(groups, inner, seed):
    """The twin's ρ at ``groups`` stratified quantiles, each with ``inner`` draws of k."""
    from scipy.stats import norm

    rng = np.random.default_rng(seed)
    z = norm.ppf((np.arange(groups) + 0.5) / groups)
    rho = np.repeat(RHO[0] * np.exp(RHO[1] * z), inner)
    k = SCALE[0] * np.exp(SCALE[1] * rng.standard_normal(groups * inner))
    return rho, k


def test_evppi_is_the_nested_formula_and_bounded_by_evpi(two_sources):
    rho, k = _design(4, 8, seed=0)
    problem = _problem(two_sources, rho, k)
    assert problem.base.capacity  # the capacities exist but do not bind at this budget:
    names = pd.DataFrame({"source": ["twin", "twin"], "parameter": ["exchange_rate", "saturation_hours"]})
    info = evppi(problem, names, np.column_stack([rho, k]), groups=4, tolerance=1e-7, workers=1)
    assert all(v == 0 for v in info.plan.plan.shadow_prices.values())
    by = {r.parameter: r.evppi for r in info.table.itertuples()}
    # The same draws, brute force: each group's best plan against its mean, less the one plan's.
    value = _brute(two_sources, problem.base.cost, rho, k)
    best_all = value.mean(axis=1).max()
    for j, name in enumerate(("exchange_rate", "saturation_hours")):
        groups = groups_of(np.column_stack([rho, k])[:, j], 4)
        nested = np.mean([value[:, g].mean(axis=1).max() for g in groups]) - best_all
        assert by[name] == pytest.approx(nested, rel=1e-3, abs=1e-3)
    evpi = value.max(axis=0).mean() - best_all
    assert info.plan.evpi == pytest.approx(evpi, rel=1e-3)
    assert info.plan.expected_value == pytest.approx(best_all, rel=1e-6)
    for v in by.values():
        assert -1e-9 <= v <= info.plan.evpi + 1e-6
    assert by["exchange_rate"] > 0 and info.table["rank"].tolist() == [1, 2]
    assert info.table["evppi_usd"].iloc[0] == pytest.approx(info.table["evppi"].iloc[0] / info.plan.plan.lambda_)


def test_evppi_agrees_with_a_brute_force_nested_monte_carlo(two_sources):
    """ρ takes 5 equally likely values and k is continuous. The brute force draws, for each value
    of ρ, 2,000 fresh k (its standard error from 10 batches); the library's estimate, from 12 k
    draws a value, has its own error (by bootstrap of its draws, valued by the grid here). The
    two agree within three of their combined standard errors."""
    rng = np.random.default_rng(7)
    rho, k = _design(5, 12, seed=1)
    info = evppi(_problem(two_sources, rho, k), pd.DataFrame({"source": ["twin"], "parameter": ["exchange_rate"]}),
                 rho[:, None], groups=5, tolerance=1e-7, workers=1)  # fmt: skip
    library = float(info.table["evppi"].iloc[0])
    cost = _problem(two_sources, rho[:1], k[:1]).base.cost
    shares = np.linspace(0.0, 1.0, 2001)
    values = np.unique(rho)
    inner, batches = 2000, 10

    def estimate(groups_k):
        means = np.stack(
            [
                _brute(two_sources, cost, np.full(len(g), r), g, shares).mean(axis=1)
                for r, g in zip(values, groups_k, strict=True)
            ]
        )  # values × shares
        return means.max(axis=1).mean() - means.mean(axis=0).max()

    fresh = SCALE[0] * np.exp(SCALE[1] * rng.standard_normal((len(values), inner)))
    parts = [estimate(list(fresh[:, b::batches])) for b in range(batches)]
    brute = estimate(list(fresh))
    se_brute = float(np.std(parts, ddof=1) / math.sqrt(batches))
    own = k.reshape(len(values), -1)
    boot = [estimate([g[rng.integers(0, len(g), len(g))] for g in own]) for _ in range(50)]
    se_library = float(np.std(boot, ddof=1))
    assert abs(library - brute) <= 3 * math.hypot(se_brute, se_library), (library, brute, se_brute, se_library)
    assert 0 <= library <= info.plan.evpi + 1e-6


def test_with_a_group_per_draw_evppi_is_evpi_as_the_brute_force_gives_it(two_sources):
    # before: each group of one draw was solved at the ledger's numbers, not the draw's, and
    # every EVPPI read 155.59 against an EVPI of 46.90 (draws 10, groups 10)
    rho, k = _design(10, 1, seed=3)
    problem = _problem(two_sources, rho, k)
    names = pd.DataFrame({"source": ["twin", "twin"], "parameter": ["exchange_rate", "saturation_hours"]})
    info = evppi(problem, names, np.column_stack([rho, k]), groups=10, tolerance=1e-7, workers=1)
    value = _brute(two_sources, problem.base.cost, rho, k)
    evpi = value.max(axis=0).mean() - value.mean(axis=1).max()
    assert info.plan.evpi == pytest.approx(evpi, rel=1e-3)
    for v in info.table["evppi"]:
        assert v == pytest.approx(evpi, rel=1e-3)
        assert 0 <= v <= info.plan.evpi


def test_a_scenario_program_of_one_scenario_is_solved_at_that_scenarios_numbers(two_sources):
    from procure.program.solve.program import solve_problem

    rho, k = np.array([0.9]), np.array([50.0])
    problem = _problem(two_sources, rho, k)
    got = solve_problem(problem, tolerance=1e-7).value
    assert got == pytest.approx(_brute(two_sources, problem.base.cost, rho, k).max(), rel=1e-6)


def test_more_groups_than_draws_is_refused_before_any_work():
    from procure.analyses.fit.evppi import draws_and_groups
    from procure.errors import InputError

    with pytest.raises(InputError, match=r"^groups = 11 is invalid: must be at most the draws \(10\)"):
        draws_and_groups({"draws": 400, "groups": 10}, 10, 11)
    assert draws_and_groups({"draws": 400, "groups": 10}, None, None) == (400, 10)


def test_the_groups_solved_are_reported_as_they_end(two_sources):
    rho, k = _design(4, 8, seed=0)
    problem = _problem(two_sources, rho, k)
    names = pd.DataFrame({"source": ["twin", "twin"], "parameter": ["exchange_rate", "saturation_hours"]})
    seen: list[tuple[int, int]] = []
    evppi(problem, names, np.column_stack([rho, k]), groups=4, workers=1, progress=lambda d, t: seen.append((d, t)))
    assert seen and seen[-1] == (8, 8) and all(t == 8 for _d, t in seen)
    assert [d for d, _t in seen] == sorted(d for d, _t in seen)
