"""Which path solves a program: the questions the model builder and the solvers both ask of
its curves and rows, answered without either importing the other.

A program whose every curve has hours in closed form at a price (:data:`DUAL_CURVES`, power
only with β ≤ 1) and no integer term is minimised by its Lagrangian dual
(:func:`eligible`); an expected-value program over scenarios with no risk term, recourse or
mix bound, by the dual of its probability-weighted curves (:func:`qualifies`).
"""

from __future__ import annotations

import numpy as np

from .numbers.bounds import CurveArrays
from .numbers.scenarios import ScenarioProblem

#: Curves whose hours at a price have a closed form: log, exp, logistic and power (β ≤ 1)
#: smoothly, linear all or nothing.
DUAL_CURVES = ("log", "exp", "power", "logistic", "linear")


def priced_by_dual(a: CurveArrays) -> np.ndarray:
    """Per curve, whether its hours at a price have a closed form and it has no integer term."""
    shaped = (a.curve != "power") | (a.shape <= 1)
    return np.isin(a.curve, DUAL_CURVES) & shaped & a.concave & ~a.binary & ~(a.lots > 0)


def eligible(a: CurveArrays) -> bool:
    """True when every source's inner maximum has a closed form and no integer term is present."""
    return bool(np.all(priced_by_dual(a)))


def qualifies(sp: ScenarioProblem, a: CurveArrays) -> bool:
    """True for an expected-value program (no risk weight, recourse or mix bounds) of concave
    curves the dual can price, with no integer terms."""
    return sp.risk_weight == 0 and sp.recourse_price_x is None and not sp.base.max_share and eligible(a)
