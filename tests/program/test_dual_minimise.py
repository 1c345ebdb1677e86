"""The dual's projected Newton method ends where g cannot show a decrease in floats.

Near the optimum the decrease Armijo asks of a step falls below g's float resolution; the
step is then taken where g does not rise beyond that resolution, so the method reaches the
gradient tolerance instead of halving at float noise. Checked on random ledgers with binding
capacities at three byte prices: every minimisation converges, a restart from the optimum
found converges at once with the same bound, and the bound is at least the value of the plan
the program certifies (weak duality). With linear sources at the margin (g has a kink there
and the method may not converge), the rule must not fire on a step the line search has merely
halved: a restart from the μ found then takes no more evaluations than the first run did.
"""

from __future__ import annotations

import numpy as np
import pytest

from procure import from_ledger
from procure.ledger.synthetic import random_ledger
from procure.program.dual import solve_dual
from procure.program.numbers.bounds import source_arrays
from procure.program.rows import capacity_rows_of, coupling_rows
from procure.program.solve.program import Program

CASES = [(seed, m) for seed in range(24) for m in (0.3, 1.0, 3.0)]
LINEAR_CASES = [(seed, m) for seed in range(8) for m in (0.3, 1.0, 3.0)]


def _dual_of(seed: int, m: float):
    problem = from_ledger(random_ledger(200, seed=seed), budget=200.0 * 200).with_byte_price_x(m)
    a = source_arrays(problem)
    rows = coupling_rows(problem, problem.budget, capacity_rows_of(problem))
    return problem, a, rows


@pytest.mark.parametrize(("seed", "m"), CASES)
def test_the_dual_converges_and_a_restart_from_its_optimum_stops_at_once(seed, m):
    _problem, a, rows = _dual_of(seed, m)
    first = solve_dual(a, rows)
    assert first.converged
    again = solve_dual(a, rows, first.mu)
    assert again.converged
    assert again.evaluations <= 2
    assert again.bound == pytest.approx(first.bound, rel=1e-12)


@pytest.mark.parametrize(("seed", "m"), CASES[::6])
def test_the_dual_bound_lies_above_the_certified_plan(seed, m):
    problem, a, rows = _dual_of(seed, m)
    dual = solve_dual(a, rows)
    plan = Program(problem, tolerance=1e-6, dual_guide=False).solve()
    assert dual.bound >= plan.value * (1 - 1e-9)
    assert dual.bound <= plan.value_upper_bound * (1 + 1e-6) + 1e-9
    assert np.all(np.isfinite(dual.x))


@pytest.mark.parametrize(("seed", "m"), LINEAR_CASES)
def test_with_linear_sources_a_restart_takes_no_more_evaluations_than_the_first_run(seed, m):
    ledger = random_ledger(60, seed=seed, curves=("log", "exp", "power", "linear"))
    problem = from_ledger(ledger, budget=200.0 * 60).with_byte_price_x(m)
    a = source_arrays(problem)
    rows = coupling_rows(problem, problem.budget, capacity_rows_of(problem))
    first = solve_dual(a, rows)
    again = solve_dual(a, rows, first.mu)
    assert again.evaluations <= first.evaluations
    assert again.bound <= first.bound * (1 + 1e-12)


@pytest.mark.parametrize("budget", [1e6, 1e7])
def test_a_slack_budget_starts_from_the_binding_capacity(budget):
    """The default ledger at a budget it cannot spend: pricing the budget alone leaves its
    multiplier at about 1e-27 and every box bought, which breaks the accelerator row; the method
    then doubled its way up from there (196 evaluations). It starts instead from the least g of
    that and each broken row priced alone, and converges in a few evaluations to the plan the
    Pyomo program certifies without the dual."""
    from procure.ledger import load_ledger

    problem = from_ledger(load_ledger(), budget=budget)
    a = source_arrays(problem)
    dual = solve_dual(a, coupling_rows(problem, budget, capacity_rows_of(problem)))
    assert dual.converged
    assert dual.evaluations <= 20
    assert dual.mu[0] == 0.0
    plan = Program(problem, tolerance=1e-6, dual_guide=False).solve()
    assert dual.bound == pytest.approx(plan.value, rel=1e-6)
