"""Values certified by the dual alone: the same value whatever the dual starts from."""

from __future__ import annotations

import numpy as np
import pytest

from procure.ledger import load_ledger
from procure.ledger.synthetic import random_ledger
from procure.program import from_ledger
from procure.program.solve.certify import dual_certified, dual_certified_value
from procure.program.solve.program import solve_problem


@pytest.mark.parametrize("seed", range(4))
def test_a_warm_start_changes_the_steps_not_the_value(seed):
    ledger = random_ledger(20, seed, curves=("log", "exp"))
    one = from_ledger(ledger, budget=30_000.0)
    other = from_ledger(ledger, budget=36_000.0)  # a problem like it: another scenario's numbers
    found = dual_certified(one, 1e-6)
    assert found is not None
    cold = dual_certified_value(other, 1e-6)
    warm = dual_certified_value(other, 1e-6, start=found[1])
    assert cold is not None and warm is not None
    assert warm == pytest.approx(cold, rel=1e-6)
    assert warm == pytest.approx(solve_problem(other, tolerance=1e-6).value, rel=2e-6)


def test_a_start_of_the_wrong_length_is_ignored():
    p = from_ledger(load_ledger(), budget=100_000)
    assert dual_certified_value(p, 1e-6, start=np.ones(7)) == pytest.approx(dual_certified_value(p, 1e-6))
