"""The matrix HiGHS is handed is the Pyomo model's, row for row: every active constraint, the
objective and every variable's bounds read here through Pyomo's own ``generate_standard_repn``
(no procure code in between), against the LP the hand-over passed, for every kind of model
(plain with fees, lots and mix bounds; scenarios with risk and recourse; periods; purchase
options) and again after the costs and the budget change."""

from __future__ import annotations

import highspy
import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.repn.standard_repn import generate_standard_repn

from procure.ledger import load_ledger
from procure.ledger.scenarios import sample_scenarios
from procure.ledger.synthetic import random_integer_ledger, random_ledger
from procure.program.numbers.infrastructure import infrastructure
from procure.program.numbers.periods import period_problem
from procure.program.numbers.problem import from_ledger
from procure.program.numbers.scenarios import scenario_problem
from procure.program.solve.program import Program

LEDGER = load_ledger()


def _oracle(m: pyo.ConcreteModel):
    """The model's LP as Pyomo states it: columns in Pyomo's order of the variables, each row
    as {column: coefficient} with its bounds (the rows of the cut blocks last, as they are
    appended), the objective's coefficients and the columns' bounds."""
    columns = list(m.component_data_objects(pyo.Var, active=True, descend_into=True))
    col = {id(v): j for j, v in enumerate(columns)}

    def row_of(expr):
        repn = generate_standard_repn(expr, compute_values=True, quadratic=False)
        assert repn.nonlinear_expr is None and not repn.quadratic_vars
        terms: dict[int, float] = {}
        for v, c in zip(repn.linear_vars, repn.linear_coefs, strict=True):
            terms[col[id(v)]] = terms.get(col[id(v)], 0.0) + float(c)
        return {j: c for j, c in terms.items() if c != 0.0}, float(repn.constant)

    plain, cuts = [], []
    for block in m.block_data_objects(active=True, descend_into=True):
        is_cut = block.parent_component() is m.cuts
        for con in block.component_data_objects(pyo.Constraint, active=True, descend_into=False):
            terms, constant = row_of(con.body)
            lo = -np.inf if con.lower is None else pyo.value(con.lower) - constant
            hi = np.inf if con.upper is None else pyo.value(con.upper) - constant
            (cuts if is_cut else plain).append((terms, lo, hi))
    objective, _constant = row_of(m.objective.expr)
    lower = [-np.inf if v.lb is None else v.lb for v in columns]
    upper = [np.inf if v.ub is None else v.ub for v in columns]
    return plain + cuts, objective, np.array(lower, dtype=float), np.array(upper, dtype=float)


def _assert_same(program: Program) -> None:
    rows, objective, lower, upper = _oracle(program.model)
    lp = program.highs.h.getLp()
    assert lp.num_col_ == len(lower) and lp.num_row_ == len(rows)
    np.testing.assert_array_equal(np.asarray(lp.col_lower_), lower)
    np.testing.assert_array_equal(np.asarray(lp.col_upper_), upper)
    cost = np.zeros(len(lower))
    for j, c in objective.items():
        cost[j] = c
    np.testing.assert_allclose(np.asarray(lp.col_cost_), cost, rtol=1e-15, atol=0.0)
    a = lp.a_matrix_
    start, index, value = np.asarray(a.start_), np.asarray(a.index_), np.asarray(a.value_)
    got: list[dict[int, float]] = [{} for _ in rows]
    for outer in range(len(start) - 1):
        for q in range(start[outer], start[outer + 1]):
            r, j = (outer, int(index[q])) if a.format_ == highspy.MatrixFormat.kRowwise else (int(index[q]), outer)
            if value[q] != 0.0:
                got[r][j] = float(value[q])
    for r, (terms, lo, hi) in enumerate(rows):
        assert lp.row_lower_[r] == pytest.approx(lo, rel=1e-12, abs=1e-9), f"row {r}"
        assert lp.row_upper_[r] == pytest.approx(hi, rel=1e-12, abs=1e-9), f"row {r}"
        assert got[r].keys() == terms.keys(), f"row {r}"
        np.testing.assert_allclose([got[r][j] for j in terms], list(terms.values()), rtol=1e-13, atol=0.0)


def _mixed_ledger(seed: int):
    """A random ledger with fees, lots and minimum orders on some sources."""
    ledger = random_ledger(12, seed=seed, curves=("log", "exp", "power"))
    s = ledger.sources.copy()
    rng = np.random.default_rng(seed)
    s.loc[rng.random(12) < 0.3, "fixed_fee_usd"] = 500.0
    s.loc[rng.random(12) < 0.3, "lot_hours"] = 25.0
    return type(ledger)(s, ledger.cluster, ledger.path)


@pytest.mark.parametrize("seed", range(3))
def test_a_plain_program_with_integer_terms_and_mix_bounds(seed):
    ledger = _mixed_ledger(seed)
    kinds = sorted(set(ledger.sources["kind"])) if "kind" in ledger.sources else []
    share = {kinds[0]: 0.4} if kinds else {}
    program = Program(from_ledger(ledger, budget=30_000.0, max_share=share))
    _assert_same(program)
    program.solve()
    _assert_same(program)  # the cuts the solve placed are the model's too


def test_the_default_ledger_after_new_costs_and_budget():
    program = Program(from_ledger(LEDGER, budget=100_000, max_share={"sim": 0.5}))
    program.solve()
    program.reprice(from_ledger(LEDGER, budget=100_000, max_share={"sim": 0.5}).with_byte_price_x(3.0))
    program.set_budget(60_000.0)
    program.solve()
    _assert_same(program)


def test_scenarios_with_risk_and_recourse():
    base = from_ledger(LEDGER, budget=100_000, max_share={"sim": 0.5})
    sp = scenario_problem(
        base, sample_scenarios(LEDGER.sources, 4, seed=3), risk_alpha=0.2, risk_weight=0.5, recourse_price_x=1.2
    )
    program = Program(sp)
    _assert_same(program)
    program.solve()
    _assert_same(program)


def test_scenarios_without_recourse():
    base = from_ledger(LEDGER, budget=100_000)
    program = Program(scenario_problem(base, sample_scenarios(LEDGER.sources, 3, seed=5)))
    program.solve()
    _assert_same(program)


def test_periods():
    from test_periods import periods_of

    problem = from_ledger(LEDGER, budget=100_000, max_share={"sim": 0.5})
    periods = periods_of(problem.n, [3, 3, 6], [40_000, 30_000, 30_000])
    program = Program(period_problem(problem, periods, carry=True))
    program.solve()
    _assert_same(program)


def test_purchase_options():
    problem = from_ledger(LEDGER, budget=100_000)
    inf = infrastructure(problem, LEDGER.sources, LEDGER.cluster, formats=["recorded", "decoded"], cores=[8, 16])
    program = Program(inf)
    program.solve()
    _assert_same(program)


@pytest.mark.parametrize("seed", range(3))
def test_small_integer_ledgers(seed):
    program = Program(from_ledger(random_integer_ledger(seed), budget=20_000.0))
    program.solve()
    _assert_same(program)


@pytest.mark.parametrize("carry", [True, False])
def test_periods_under_scenarios_with_fees_and_a_mix_bound(carry):
    from test_periods import _scenarios, periods_of

    from procure.program.numbers.periods import with_scenarios

    ledger = random_integer_ledger(4)
    kinds = sorted(set(ledger.sources["kind"]))
    problem = from_ledger(ledger, budget=20_000.0, max_share={kinds[0]: 0.6})
    periods = periods_of(problem.n, [3, 3, 6], [8_000, 6_000, 6_000])
    pp = with_scenarios(
        period_problem(problem, periods, carry=carry), scenario_problem(problem, _scenarios(ledger, 3, 7))
    )
    program = Program(pp)
    _assert_same(program)
    program.solve()
    _assert_same(program)
