"""The dual where its rows are nearly alike over the sources that bend, or a box has no end.

On the default ledger the core and accelerator rows are nearly parallel over the video sources
(each needs 8 core-hours per accelerator-hour but the older arm), so with a source linear and
bought in part the few log sources inside their boxes give Newton's system almost no rank:
its step is many orders of magnitude too long, and a kink step may take a multiplier below 0.
The dual then steps to the nearest kink along Newton's step before halving it, holds at 0 a
row its kink step would take below 0, and takes the dual simplex step where Newton's is cut
short. A linear source whose box has no end, landed on its kink by a step, lies on either side
of it by float noise, and below it buys without end: the step is lifted to the kink's safe side.

Oracles written apart from the code: SciPy's ``linprog`` for the programs whose curves are all
linear (an LP: its optimum is the dual's minimum), and the Pyomo program solved with HiGHS
(tangent cuts, its own bound) for the ledgers with log curves.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from scipy.optimize import linprog

from procure import from_ledger
from procure.ledger import load_ledger
from procure.ledger.scenarios import ledger_scenarios
from procure.program.dual import solve_dual
from procure.program.numbers.bounds import CurveArrays, source_arrays
from procure.program.numbers.scenarios import scenario_problem
from procure.program.rows import CouplingRows, capacity_rows_of, coupling_rows
from procure.program.solve.certify import dual_certified
from procure.program.solve.program import solve_problem
from procure.program.solve.wait_and_see import wait_and_see_values

TOL = 1e-4


def _linear(rate: np.ndarray, room: np.ndarray) -> CurveArrays:
    n = len(rate)
    return CurveArrays(
        rate=rate, held=np.zeros(n), room=room, upper=room, budget_bounded=np.zeros(n, bool),
        curve=np.array(["linear"] * n), k=np.full(n, np.nan), shape=np.full(n, np.nan),
        concave=np.ones(n, bool), binary=np.zeros(n, bool), lots=np.zeros(n), bound=room,
    )  # fmt: skip


def _endless_lp(seed: int) -> tuple[CurveArrays, CouplingRows]:
    """Linear sources, two in five of them with no end to their box, under a budget and one to
    three capacities that bind somewhere."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(3, 8)), int(rng.integers(2, 5))
    rate = rng.uniform(0.05, 2.0, n)
    room = np.where(rng.random(n) < 0.4, np.inf, rng.uniform(100, 5000, n))
    A = rng.uniform(0.1, 3.0, (m, n)) * np.where(rng.random((m, n)) < 0.2, 0.0, 1.0)
    A[0] = rng.uniform(5, 200, n)  # the budget row prices every source
    b = 0.3 * (A @ np.where(np.isfinite(room), room, 3000.0)) * rng.uniform(0.3, 1.0, m)
    return _linear(rate, room), CouplingRows(["budget", *(f"c{j}" for j in range(1, m))], A, b)


@pytest.mark.parametrize("seed", range(40))
def test_an_lp_with_boxes_without_end_reaches_its_optimum(seed):
    # 27 of these 40 stopped unconverged when a step left a source without end a few units in
    # the last place below its kink (g infinite there)
    a, rows = _endless_lp(seed)
    res = linprog(-a.rate, A_ub=rows.A, b_ub=rows.b, bounds=[(0.0, None if math.isinf(u) else u) for u in a.room],
                  method="highs")  # fmt: skip
    assert res.status == 0
    dual = solve_dual(a, rows)
    assert dual.converged
    assert dual.bound == pytest.approx(-res.fun, rel=1e-7)
    endless = ~np.isfinite(a.room)  # priced at or above its rate: g is finite there
    assert np.all((rows.A.T @ dual.mu)[endless] >= a.rate[endless] * (1 - 1e-9))


def _ledger(linear: tuple[str, ...], endless: bool = False):
    ledger = load_ledger()
    s = ledger.sources.copy()
    chosen = s["source"].isin(linear)
    s.loc[chosen, "curve"] = "linear"
    if endless:
        s.loc[chosen, "available_hours"] = math.inf
    return replace(ledger, sources=s)


CASES = [
    (("twin",), 200_000.0),
    (("twin",), 400_000.0),
    (("twin", "sim"), 200_000.0),
    (("own", "twin", "force", "sim"), 200_000.0),
    (("own", "twin", "force", "sim"), 400_000.0),
]


@pytest.mark.parametrize("endless", [False, True])
@pytest.mark.parametrize(("linear", "budget"), CASES)
def test_on_the_default_ledger_with_linear_sources_the_dual_converges_to_the_program(linear, budget, endless):
    # before: only the second converged (boxes with and without end alike); how many
    # evaluations each takes is the benchmark's to print (benchmarks/linear_kinks.py), not a test's
    problem = from_ledger(_ledger(linear, endless), budget=budget)
    a = source_arrays(problem)
    dual = solve_dual(a, coupling_rows(problem, budget, capacity_rows_of(problem)))
    assert dual.converged
    plan = solve_problem(problem, tolerance=TOL)  # the Pyomo program: its own cuts and bound
    assert plan.value <= dual.bound * (1 + 1e-9)  # weak duality
    assert dual.bound <= plan.value_upper_bound * (1 + 1e-9)  # the dual's minimum is the optimum


@pytest.mark.parametrize(("linear", "budget"), [(("twin",), 200_000.0), (("twin", "sim"), 200_000.0),
                                               (("twin",), 400_000.0), (("sim",), 100_000.0)])  # fmt: skip
def test_the_scenarios_are_certified_by_their_duals(linear, budget):
    # Each scenario's best value, as EVPI finds it: by the duals minimised together, else by its
    # own dual, else by the Pyomo program. How many each path takes depends on the machine's
    # floating point (benchmarks/evpi_scale.py prints it); what every path gives is checked here:
    # each scenario's value against the Pyomo program solved alone.
    ledger = _ledger(linear)
    sp = scenario_problem(from_ledger(ledger, budget=budget), ledger_scenarios(ledger, samples=100, seed=1))
    got: list[float | None] = list(wait_and_see_values(sp, TOL))
    start = None
    for k in [k for k, v in enumerate(got) if v is None]:  # as EVPI does: each one's dual on its own
        found = dual_certified(sp.scenario(k), TOL, start)
        if found is None:
            got[k] = solve_problem(sp.scenario(k), tolerance=TOL).value
            continue
        got[k], start = found
    assert all(v is not None and math.isfinite(v) for v in got)
    for k in range(0, 100, 20):
        if got[k] is None:
            continue
        one = sp.scenario(k)
        alone = solve_problem(one, tolerance=TOL)
        # got[k] is a plan's value (a lower bound): neither plan beats the other's bound, the
        # scenario's own dual bound for the one solved alone
        dual = solve_dual(source_arrays(one), coupling_rows(one, float(one.budget), capacity_rows_of(one)))
        assert alone.value <= dual.bound * (1 + 1e-9) + 1e-9
        assert got[k] <= alone.value_upper_bound * (1 + 1e-9)
        assert got[k] == pytest.approx(alone.value, rel=2 * TOL)
