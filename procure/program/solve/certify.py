"""A value certified by the dual alone: the best value of a one-scenario concave problem, proven
within a tolerance without building a model.

For the numbers an analysis needs in bulk and never shows as a plan — the wait-and-see value of
each scenario behind EVPI — the Lagrangian dual (:mod:`procure.program.dual`) gives an upper
bound g(μ) for its multipliers, and the hours at those multipliers, made exact by
:mod:`procure.program.solve.polish` and checked against every row, a feasible plan whose true value
is a lower bound. When the two agree within the tolerance the value is certified exactly as a
plan's is (both bounds proven); otherwise, or where the problem does not qualify (integer terms,
an S-shaped or hill curve), the caller solves the Pyomo program instead.

The same holds for an expected-value program over scenarios (:func:`expected_certified_value`,
the groups behind EVPPI): its dual is that of the probability-weighted curves
(:class:`procure.program.dual.family.FamilyTerms`), and the hours at its multipliers, pulled
inside the rows, a feasible plan whose expected value is the lower bound.
"""

from __future__ import annotations

import math

import numpy as np

from ..dual import solve_dual
from ..dual.family import FamilyTerms
from ..dual.newton import minimise
from ..numbers.bounds import source_arrays
from ..numbers.problem import Mode, Problem
from ..numbers.scenarios import ScenarioProblem
from ..paths import eligible, qualifies
from ..readout.plan import VALUE_ABS_TOLERANCE
from ..rows import capacity_rows_of, coupling_rows
from .polish import exact_hours
from .wait_and_see import certified_values


def dual_certified_value(problem: Problem, tolerance: float, start: np.ndarray | None = None) -> float | None:
    """The best value of ``problem`` (budget mode) certified within ``tolerance`` by the dual
    alone [own-hour equivalents], or None where it does not qualify or the bounds do not close.

    ``start``, when given, is where the dual's Newton steps start (the multipliers of a problem
    like this one, such as the scenario before: fewer steps); the certificate does not depend on it.
    """
    found = dual_certified(problem, tolerance, start)
    return None if found is None else found[0]


def dual_certified(
    problem: Problem, tolerance: float, start: np.ndarray | None = None
) -> tuple[float, np.ndarray] | None:
    """:func:`dual_certified_value` and the multipliers it ended at (to start the next one from).

    Where the dual started from ``start`` does not certify, it is tried once more from its own
    start (from another problem's multipliers the method may end at a kink it cannot leave).
    """
    if problem.mode is not Mode.BUDGET or not eligible(a := source_arrays(problem)):
        return None
    names = capacity_rows_of(problem)
    budget = float(problem.budget or 0.0)
    rows = coupling_rows(problem, budget, names)
    for first in [start, None] if start is not None and len(start) == len(rows.b) else [None]:
        dual = solve_dual(a, rows, first)
        exact = exact_hours(problem, a, names, budget, dual.x, dual.mu, -math.inf)
        if exact is None or not math.isfinite(exact.bound):
            continue
        upper = max(exact.bound, exact.value)
        if upper - exact.value <= max(tolerance * abs(upper), VALUE_ABS_TOLERANCE):
            return exact.value, dual.mu
    return None


def expected_certified_value(problem: ScenarioProblem, tolerance: float,
                             start: np.ndarray | None = None) -> tuple[float | None, np.ndarray | None]:  # fmt: skip
    """The best expected value of a scenario program (budget mode, :func:`procure.program.paths.qualifies`)
    certified within ``tolerance`` by its dual alone [own-hour equivalents], or None where it does
    not qualify or the bounds do not close (the caller then solves the Pyomo program); and the
    multipliers the dual ended at (None where it did not run), to start the next such program from
    (``start``: fewer steps for a program like this one; the certificate does not depend on it)."""
    base = problem.base
    if base.mode is not Mode.BUDGET or not qualifies(problem, a := source_arrays(base)):
        return None, None
    rows = coupling_rows(base, float(base.budget or 0.0), capacity_rows_of(base))
    terms = FamilyTerms(problem, a, rows)
    found = minimise(terms, start[None] if start is not None and len(start) == len(rows.b) else None)
    lower, good = certified_values(terms, found.mu, found.bound, found.x, tolerance)
    return (float(lower[0]) if bool(good[0]) else None), found.mu[0]
