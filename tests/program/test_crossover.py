"""HiGHS started from the exact plan (``procure.program.model.crossover``): the same bound as a cold
solve, in a fresh process too, and from a start that is not optimal."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from test_dual_guide import _ledger

from procure.program import from_ledger
from procure.program.model import crossover
from procure.program.solve.program import Program

TOL = 1e-6


def _problem(seed: int):
    ledger, rng = _ledger(3000 + seed)
    kinds = sorted(set(ledger.sources["kind"]))
    share = {str(rng.choice(kinds)): float(rng.uniform(0.3, 0.8))} if seed % 2 == 0 else {}
    return from_ledger(ledger, budget=float(rng.choice([2e3, 2e4, 2e5])), max_share=share)


def _solve(problem, monkeypatch, start_from):
    with monkeypatch.context() as m:
        m.setattr("procure.program.solve.refine.start_from", start_from)
        return Program(problem, tolerance=TOL).solve()


def _cold(_hm, _x, _mu):
    return None


@pytest.mark.parametrize("seed", range(12))
def test_the_start_gives_the_bound_a_cold_solve_gives(seed, monkeypatch):
    problem = _problem(seed)
    used = []

    def spy(hm, x, mu):
        found = crossover.start_from(hm, x, mu)
        used.append(found is not None)
        return found

    try:
        started = _solve(problem, monkeypatch, spy)
    except Exception as err:  # refused by the program: refused the same way cold
        with pytest.raises(type(err)):
            _solve(problem, monkeypatch, _cold)
        return
    cold = _solve(problem, monkeypatch, _cold)
    assert started.value == pytest.approx(cold.value, rel=1e-9, abs=1e-9)
    assert started.value_upper_bound == pytest.approx(cold.value_upper_bound, rel=1e-9, abs=1e-9)
    np.testing.assert_allclose(started.sources["hours"], cold.sources["hours"], rtol=1e-9, atol=1e-9)
    if used:
        assert all(used)  # one scenario of concave curves: a start was made


def test_a_start_that_is_not_optimal_still_gives_the_bound(monkeypatch):
    problem = _problem(0)

    def wrong(hm, x, mu):
        return crossover.start_from(hm, 0.5 * np.asarray(x), 3.0 * np.asarray(mu))

    off = _solve(problem, monkeypatch, wrong)
    cold = _solve(problem, monkeypatch, _cold)
    assert off.value_upper_bound == pytest.approx(cold.value_upper_bound, rel=1e-9, abs=1e-9)
    assert off.value == pytest.approx(cold.value, rel=1e-9, abs=1e-9)


def test_the_first_solve_of_a_fresh_process_starts_from_the_plan():
    """In a new interpreter the guided solve's crossover is HiGHS's first call: it must not
    crash the process, and gives this process's value."""
    code = (
        "from procure import from_ledger, load_ledger\n"
        "from procure.program.solve.program import Program\n"
        "print(repr(Program(from_ledger(load_ledger(), budget=100_000), tolerance=1e-6).solve().value))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    here = Program(from_ledger(__import__("procure").load_ledger(), budget=100_000), tolerance=1e-6).solve()
    assert float(out.stdout.strip()) == pytest.approx(here.value, rel=1e-12)


def test_solves_in_other_threads_start_from_the_plan_too():
    """HiGHS's crossover needs a run in the thread it is called in: a solve in a second thread,
    one after another and two at once, in a fresh interpreter (a crash would end it)."""
    code = (
        "import threading\n"
        "from procure import from_ledger, load_ledger\n"
        "from procure.program.solve.program import Program\n"
        "p = from_ledger(load_ledger(), budget=100_000)\n"
        "out = []\n"
        "def work():\n"
        "    out.append(Program(p, tolerance=1e-6).solve().value)\n"
        "for group in (1, 1, 2):\n"
        "    threads = [threading.Thread(target=work) for _ in range(group)]\n"
        "    [t.start() for t in threads]\n"
        "    [t.join() for t in threads]\n"
        "print(len(out), len(set(out)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["4", "1"]  # four solves, one value


def test_the_model_names_each_cost_by_its_source_index():
    problem = _problem(1)
    model = Program(problem, tolerance=TOL).model
    assert [model.cost[i].name for i in (0, problem.n - 1)] == ["cost[0]", f"cost[{problem.n - 1}]"]
    assert model.cost[problem.n - 1].value == pytest.approx(problem.cost[-1])
