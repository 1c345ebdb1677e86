"""The Lagrangian dual of the program's separable concave part: multipliers, hours and a bound, no LP.

For problems of curves with hours in closed form and no integer term
(:func:`procure.program.paths.eligible`; power only with β ≤ 1), the coupling rows
(:mod:`procure.program.rows`) are priced by multipliers μ ≥ 0 and the program splits per source
(:mod:`~procure.program.dual.terms`); one projected Newton method (:mod:`~procure.program.dual.newton`)
minimises K such duals at once. The entry points here ask it of one problem (:func:`solve_dual`), of the
expected-value program over scenarios (:func:`solve_expected_dual`), or for the bound at given
multipliers (:func:`dual_bound`); the wait-and-see values of many scenarios ask it of all of them
together (:mod:`procure.program.solve.wait_and_see`).

The program uses this as its guide (:mod:`procure.program.solve.refine`): the dual's hours, made exact
by :mod:`procure.program.solve.polish`, are where the model's tangent cuts are placed, so that the
Pyomo program certifies in one solve. Nothing here imports the Pyomo model, and the model
imports nothing here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .family import FamilyTerms
from .newton import minimise
from .terms import CurveTerms, Terms

if TYPE_CHECKING:  # types only: the dual reads arrays, not the numbers' modules
    from ..numbers.bounds import CurveArrays
    from ..numbers.scenarios import ScenarioProblem
    from ..rows import CouplingRows


@dataclass(frozen=True)
class Dual:
    """One problem's dual minimum: multipliers, the hours at them, and the bound g(μ).

    Attributes
    ----------
    mu : numpy.ndarray
        One multiplier per coupling row (:class:`procure.program.rows.CouplingRows`) [value per unit].
    x : numpy.ndarray
        Hours of each source at μ [h].
    bound : float
        g(μ), an upper bound on the optimum [own-hour equivalents].
    converged : bool
        The projected gradient met :data:`procure.program.dual.newton.DUAL_TOLERANCE`.
    evaluations : int
        Evaluations of g.
    """

    mu: np.ndarray
    x: np.ndarray
    bound: float
    converged: bool
    evaluations: int


def _one(terms: Terms, start: np.ndarray | None) -> Dual:
    """The minimum of the one problem of ``terms`` from ``start`` (else the budget alone)."""
    found = minimise(terms, None if start is None else np.asarray(start, dtype=float)[None])
    return Dual(found.mu[0], found.x[0], float(found.bound[0]), bool(found.converged[0]), found.evaluations)


def single_terms(a: CurveArrays, rows: CouplingRows) -> CurveTerms:
    """The terms of one problem (K = 1): its sources' arrays and coupling rows."""
    return CurveTerms(a.rate[None], a.k[None], a.held, a.room, a.shape, a.curve, rows.A[None], rows.b[None])


def dual_bound(a: CurveArrays, rows: CouplingRows, mu: np.ndarray) -> float:
    """g(μ) for μ ≥ 0: an upper bound on the optimum [own-hour equivalents] (inf where some
    source's box is unbounded at these prices, or some multiplier is negative)."""
    mu = np.asarray(mu, dtype=float)
    if np.any(mu < 0):
        return math.inf
    return float(single_terms(a, rows).g(mu[None], np.array([0]))[0][0])


def solve_dual(a: CurveArrays, rows: CouplingRows, start: np.ndarray | None = None) -> Dual:
    """Minimise one problem's g over μ ≥ 0 from ``start`` (else the budget alone)."""
    return _one(single_terms(a, rows), start)


def solve_expected_dual(sp: ScenarioProblem, a: CurveArrays, rows: CouplingRows,
                        start: np.ndarray | None = None) -> Dual:  # fmt: skip
    """The expected-value program's dual minimum (multipliers, hours, bound); ``a`` the sources' arrays."""
    return _one(FamilyTerms(sp, a, rows), start)
