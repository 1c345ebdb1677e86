"""The integer terms of the sources' hours and what they credit.

On/off choices (a minimum order or a fee: ``buy[s]`` with ``min_s buy_s ≤ x_s ≤ ub_s buy_s``)
and whole lots (``x_s = lot_s n_s``), and the rows that credit a concave curve read at such
hours on the integers themselves (:func:`add_integer_value_rows`). ``ub_s`` is the model's bound
of the hours (:data:`procure.program.numbers.bounds.DERIVED_BOUND`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyomo.environ as pyo

from ...curves import smallest_tangent_hours
from ..numbers.bounds import CurveArrays

#: Relative margin with which a whole-lot count is floored, so that an exact multiple of the
#: lot is not rounded down by floating-point error [1].
LOT_FLOOR_MARGIN = 1e-9


def add_integer_terms(m: pyo.ConcreteModel, a: CurveArrays, min_order: np.ndarray) -> None:
    """The on/off and whole-lot terms of the sources' hours ``m.x``: ``B``, ``buy``,
    ``buy_upper``, ``buy_lower`` (a minimum order or a fee), ``L``, ``lots``, ``lot_row``."""
    m.B = pyo.Set(initialize=np.flatnonzero(a.binary).tolist(), ordered=True)
    m.buy = pyo.Var(m.B, domain=pyo.Binary)

    def buy_upper_rule(_m: pyo.ConcreteModel, i: int) -> object:
        return _m.x[i] <= float(a.bound[i]) * _m.buy[i]

    def buy_lower_rule(_m: pyo.ConcreteModel, i: int) -> object:
        return _m.x[i] >= float(min_order[i]) * _m.buy[i]

    def lot_rule(_m: pyo.ConcreteModel, i: int) -> object:
        return _m.x[i] == float(a.lots[i]) * _m.lots[i]

    m.buy_upper = pyo.Constraint(m.B, rule=buy_upper_rule)
    m.buy_lower = pyo.Constraint(m.B, rule=buy_lower_rule)
    m.L = pyo.Set(initialize=np.flatnonzero(a.lots > 0).tolist(), ordered=True)
    m.lots = pyo.Var(m.L, domain=pyo.NonNegativeIntegers,
                     bounds=lambda _m, i: (0, math.floor(a.upper[i] / a.lots[i] + LOT_FLOOR_MARGIN)))  # fmt: skip
    m.lot_row = pyo.Constraint(m.L, rule=lot_rule)


def add_integer_value_rows(m: pyo.ConcreteModel, c: CurveArrays, arguments: Sequence[Any], n: int) -> None:
    """``lot_value`` and ``buy_value``: what a concave curve read at a source's hours bought in
    whole lots or on/off can be credited, on the integers themselves, where its first tangent
    point lies right of the hours held (:func:`procure.curves.smallest_tangent_hours`).

    With f(x) = v(a (h0 + x)): ``z_j ≤ f(0) + n_s (f(L) − f(0))`` in whole lots of L and
    ``z_j ≤ f(0) + buy_s (f(ub) − f(0))`` on/off, upper bounds that credit exactly f(0) at 0. See
    ``docs/certification.md``, "S-shaped curves, lots, minimum orders and fees: the integer form".
    """
    if not len(m.L) and not len(m.B):
        m.Jl, m.Jb = pyo.Set(initialize=[], ordered=True), pyo.Set(initialize=[], ordered=True)
        m.lot_value, m.buy_value = pyo.Constraint(m.Jl), pyo.Constraint(m.Jb)
        return
    short = c.rate * c.held < np.asarray(smallest_tangent_hours(c.curve, c.k), dtype=float)
    own = [j for j in range(len(c.rate)) if c.concave[j] and short[j] and arguments[j] is m.x[j % n]]
    _e, at_zero = c.value_of(np.zeros(len(c.rate)))
    lots = [j for j in own if (j % n) in m.L]
    _e, at_lot = c.value_of(np.where(c.lots > 0, c.lots, 0.0))
    # at the bound of the big-M row x ≤ bound · buy: with buy fixed at 1 the chord then bounds
    # no hours a row stops (f is nondecreasing, so f(bound) bounds f at every hour up to it)
    bought = [j for j in own if (j % n) in m.B and math.isfinite(c.bound[j])]
    _e, at_top = c.value_of(np.where(np.isfinite(c.bound), c.bound, 0.0))

    def lot_value_rule(_m: pyo.ConcreteModel, j: int) -> object:
        return _m.z[j] - float(at_lot[j] - at_zero[j]) * _m.lots[j % n] <= float(at_zero[j])

    def buy_value_rule(_m: pyo.ConcreteModel, j: int) -> object:
        return _m.z[j] - float(at_top[j] - at_zero[j]) * _m.buy[j % n] <= float(at_zero[j])

    m.Jl = pyo.Set(initialize=lots, ordered=True)
    m.lot_value = pyo.Constraint(m.Jl, rule=lot_value_rule)
    m.Jb = pyo.Set(initialize=bought, ordered=True)
    m.buy_value = pyo.Constraint(m.Jb, rule=buy_value_rule)
