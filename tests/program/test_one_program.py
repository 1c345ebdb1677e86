"""The Pyomo model is the program that is solved: solved by Pyomo's own HiGHS interface, or
written to an LP file and read back by HiGHS, it gives the plan's bound."""

from __future__ import annotations

import ast
from pathlib import Path

import highspy
import numpy as np
import pyomo.environ as pyo
import pytest
from pyomo.contrib.solver.common.factory import SolverFactory

from procure.ledger import load_ledger
from procure.ledger.scenarios import sample_scenarios
from procure.program import from_ledger
from procure.program.numbers.scenarios import scenario_problem
from procure.program.solve.program import Program
from procure.program.solve.stochastic import scenario_plan

PACKAGE = Path(__file__).resolve().parents[2] / "procure"
LEDGER = load_ledger()


def _pyomo_optimum(model: pyo.ConcreteModel) -> float:
    """The model's optimum by Pyomo's own HiGHS interface (no procure code in between)."""
    result = SolverFactory("highs").solve(model, load_solutions=False)
    return float(result.incumbent_objective)


def _lp_optimum(model: pyo.ConcreteModel, path: Path) -> float:
    """The optimum of the model written to an LP file and read back by HiGHS."""
    model.write(str(path), io_options={"symbolic_solver_labels": True})
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return float(h.getInfo().objective_function_value)


def _check(program: Program, bound: float, tmp_path: Path) -> None:
    assert program.built.cut_count > 0  # the cuts are part of the model
    pyomo_value = _pyomo_optimum(program.model)
    assert pyomo_value == pytest.approx(bound, rel=1e-6)
    assert _lp_optimum(program.model, tmp_path / "plan.lp") == pytest.approx(bound, rel=1e-6)


def test_budget_mode_model_is_the_program(tmp_path):
    program = Program(from_ledger(LEDGER, budget=100_000, max_share={"sim": 0.5}))
    plan = program.solve()
    # The cuts HiGHS solved with are the model's, added after it was built.
    assert program.highs.cut_rows == program.built.cut_count > 0
    _check(program, plan.value_upper_bound, tmp_path)


def test_target_mode_last_budget_is_the_program(tmp_path):
    program = Program(from_ledger(LEDGER, target=900.0))
    plan = program.solve()
    # The model stands at the last budget target mode solved: the money the plan was read at.
    assert program.budget >= plan.spent_usd * (1 - 1e-9)
    bound = _pyomo_optimum(program.model)
    assert bound >= plan.value * (1 - 1e-9)  # the plan is feasible in the model
    assert bound <= plan.value * (1 + plan.tolerance) + 1e-6
    assert _lp_optimum(program.model, tmp_path / "target.lp") == pytest.approx(bound, rel=1e-6)


def test_scenario_model_with_risk_and_recourse_is_the_program(tmp_path):
    base = from_ledger(LEDGER, budget=100_000)
    sp = scenario_problem(
        base, sample_scenarios(LEDGER.sources, 12, seed=3), risk_alpha=0.2, risk_weight=0.5, recourse_price_x=1.2
    )
    program = Program(sp)
    plan = scenario_plan(program, program.solve())
    assert len(program.model.K) == 12 and len(program.model.w) == 12 * base.n
    _check(program, plan.plan.value_upper_bound, tmp_path)


def test_a_cost_change_reaches_the_model_and_the_solver(tmp_path):
    """The costs have one owner, the model's parameters: after a re-price, Pyomo's solve of the
    model and procure's agree."""
    base = from_ledger(LEDGER, budget=100_000)
    program = Program(base)
    program.solve()
    dearer = base.with_byte_price_x(3.0)
    program.reprice(dearer)
    plan = program.solve()
    assert [program.model.cost[i].value for i in program.model.S] == pytest.approx(dearer.cost.tolist())
    fresh = Program(dearer).solve()
    assert plan.value == pytest.approx(fresh.value, rel=2e-4)
    _check(program, plan.value_upper_bound, tmp_path)
    # The bill's terms are the pipeline's, not a transport column back-computed from a cost.
    assert program.problem.sources["bytes_usd_per_hour"].to_numpy() == pytest.approx(
        3.0 * base.sources["bytes_usd_per_hour"].to_numpy()
    )


def test_a_budget_change_reaches_the_model():
    program = Program(from_ledger(LEDGER, budget=100_000))
    program.solve()
    program.set_budget(50_000)
    plan = program.solve()
    assert program.model.budget.value == 50_000
    assert plan.spent_usd == pytest.approx(50_000, rel=1e-6)
    assert _pyomo_optimum(program.model) == pytest.approx(plan.value_upper_bound, rel=1e-6)


def test_set_costs_keeps_the_bill_terms():
    base = from_ledger(LEDGER, budget=100_000)
    program = Program(base)
    cost = base.cost * 1.5
    program.set_costs(cost)
    s = program.problem.sources
    assert np.allclose(s["transport_usd_per_hour"], base.sources["transport_usd_per_hour"])
    assert np.allclose(s["price_usd_per_hour"] + s["transport_usd_per_hour"], cost)


def _constructors() -> list[str]:
    found = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                if name == "ConcreteModel":
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    return found


def test_one_place_constructs_a_concrete_model():
    places = _constructors()
    assert len(places) == 1 and places[0].startswith("program/model/build.py"), places


def test_no_override_that_changes_the_base_class_contract():
    for path in PACKAGE.rglob("*.py"):
        assert "ignore[override]" not in path.read_text(), path


def test_solve_errors_carry_their_reason():
    import pickle

    from procure.errors import Reason, SolveError

    with pytest.raises(SolveError) as short:
        Program(from_ledger(LEDGER, budget=20_000, max_share={"own": 0.2})).solve()
    assert short.value.reason is Reason.INFEASIBLE
    with pytest.raises(SolveError) as late:
        Program(from_ledger(LEDGER, budget=100_000), time_limit=1e-9).solve()
    assert late.value.reason is Reason.TIME_LIMIT
    with pytest.raises(SolveError) as far:
        Program(from_ledger(LEDGER, target=1e9)).solve()
    assert far.value.reason is Reason.INFEASIBLE
    again = pickle.loads(pickle.dumps(late.value))
    assert again.reason is Reason.TIME_LIMIT and str(again) == str(late.value)
