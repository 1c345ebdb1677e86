"""The period axis of the model: purchases by period, the runs' curves, money, capacity and mix rows.

Components added to the one model of :func:`procure.program.model.build` when it is built over
periods (:class:`procure.program.periods.PeriodProblem`): the set ``T`` of periods, ``y[t, s]``
the hours of source ``s`` bought in period ``t`` (at most that period's availability),
``total[s]`` tying ``x[s]`` (the hours bought over all periods, which the ledger's
availability, lots, minimum orders and fees bound) to them, ``ahead[j]`` reading each run's
curve ``j = t n + s`` at the aged hours ``w_j = Σ_{τ≤t} φ_sτt y_τs``, and per period the money
row ``budget_row[t]``, the capacity rows ``capacity[r, t]`` and the mix rows ``mix[g, t]``.
Curve ``j`` has rate ``ρ_s σ_s`` and held hours ``φ_s1t h0_s``, so its effective hours are
``ρ_s σ_s (φ_s1t h0_s + w_j)``. No I/O and no solve here.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from .bounds import CurveArrays
from .periods import PeriodProblem


def _linear(coefs: list[Any], variables: list[Any]) -> LinearExpression:
    return LinearExpression(constant=0.0, linear_coefs=coefs, linear_vars=variables)


def period_curve_arrays(pp: PeriodProblem, a: CurveArrays) -> CurveArrays:
    """The arrays of every (run, source) curve, period-major, from the sources' ``a``."""
    T = pp.count

    def tile(v: np.ndarray) -> np.ndarray:
        return np.tile(v, T)

    return CurveArrays(
        rate=tile(pp.quality).astype(float),
        held=(pp.age[0] * a.held[None, :]).ravel(),
        room=tile(a.room),
        upper=tile(a.upper),
        budget_bounded=tile(a.budget_bounded),
        curve=tile(a.curve),
        k=tile(a.k),
        shape=tile(a.shape),
        concave=tile(a.concave),
        binary=tile(a.binary),
        lots=tile(a.lots),
    )


def add_purchases(m: pyo.ConcreteModel, pp: PeriodProblem, upper: np.ndarray) -> None:
    """``T``, ``y[t, s]`` (bounded by the period's availability and the source's ``upper``),
    ``total[s]`` (``x_s = Σ_t y_ts``) and ``ahead[j]`` (``w_j = Σ_{τ≤t} φ_sτt y_τs``)."""
    n, T = pp.n, pp.count
    m.T = pyo.Set(initialize=range(T), ordered=True)
    bound = np.minimum(pp.available, upper[None, :])

    def y_bounds(_m: pyo.ConcreteModel, t: int, i: int) -> tuple[float, float | None]:
        u = float(bound[t, i])
        return 0.0, (u if math.isfinite(u) else None)

    m.y = pyo.Var(m.T, m.S, bounds=y_bounds, initialize=0.0)

    def total_rule(_m: pyo.ConcreteModel, i: int) -> object:
        """The hours bought of source i over all periods: x_i = Σ_t y_ti."""
        return _linear([1.0] + [-1.0] * T, [_m.x[i]] + [_m.y[t, i] for t in range(T)]) == 0

    m.total = pyo.Constraint(m.S, rule=total_rule)
    age = pp.age

    def ahead_rule(_m: pyo.ConcreteModel, j: int) -> object:
        """Run t reads source s at its aged hours: w_j = Σ_{τ≤t} φ_sτt y_τs (j = t n + s)."""
        t, i = divmod(j, n)
        coefs = [1.0] + [-float(age[tau, t, i]) for tau in range(t + 1)]
        return _linear(coefs, [_m.w[j]] + [_m.y[tau, i] for tau in range(t + 1)]) == 0

    m.ahead = pyo.Constraint(m.Jw, rule=ahead_rule)


def add_budget_rows(m: pyo.ConcreteModel, pp: PeriodProblem, fees: tuple[list[float], list[Any]]) -> None:
    """``budget_row[t]``: the money of period t (with carry-over, of periods 1..t together),
    purchases at the period's prices plus each run's bill, and the fees in period 1."""
    T = pp.count
    spend = pp.spend_matrix()  # [t, τ, s]
    cumulative = np.cumsum(spend, axis=0) if pp.carry else spend
    share = np.cumsum(pp.share) if pp.carry else pp.share
    m.Kb = pyo.Set(initialize=range(T), ordered=True)

    def budget_rule(_m: pyo.ConcreteModel, t: int) -> object:
        """Money of period t: Σ_{τ≤t} Σ_s c_tτs y_τs [+ Σ_s fee_s buy_s] ≤ share_t · B."""
        coefs: list[Any] = []
        variables: list[Any] = []
        for tau in range(t + 1):
            row = cumulative[t, tau]
            nz = np.flatnonzero(row).tolist()
            coefs += [float(row[i]) for i in nz]
            variables += [_m.y[tau, i] for i in nz]
        if pp.carry or t == 0:
            coefs += fees[0]
            variables += fees[1]
        return _linear(coefs, variables) <= float(share[t]) * _m.budget

    m.budget_row = pyo.Constraint(m.Kb, rule=budget_rule)


def add_capacity_rows(m: pyo.ConcreteModel, pp: PeriodProblem, held: np.ndarray) -> list[str]:
    """``capacity[r, t]``: capacity r at run t counts every hour held then:
    Σ_s u_rs Σ_{τ≤t} y_τs ≤ C_rt − Σ_s u_rs h0_s. Returns the capacities with rows."""
    p = pp.base
    rows = [name for name, limit in pp.capacity.items() if np.isfinite(limit).any() and (p.usage(name) > 0).any()]
    m.R = pyo.Set(initialize=rows, ordered=True)
    m.Kc = pyo.Set(initialize=range(pp.count), ordered=True)

    def capacity_rule(_m: pyo.ConcreteModel, r: str, t: int) -> object:
        """Capacity r at run t: Σ_s u_rs Σ_{τ≤t} y_τs ≤ C_rt − Σ_s u_rs h0_s."""
        use = p.usage(r)
        limit = float(pp.capacity[r][t])
        if not math.isfinite(limit):
            return pyo.Constraint.Skip
        nz = np.flatnonzero(use).tolist()
        coefs = [float(use[i]) for i in nz for _tau in range(t + 1)]
        variables = [_m.y[tau, i] for i in nz for tau in range(t + 1)]
        return _linear(coefs, variables) <= limit - float(use @ held)

    m.capacity = pyo.Constraint(m.R, m.Kc, rule=capacity_rule)
    return rows


def add_mix_rows(m: pyo.ConcreteModel, pp: PeriodProblem, held: np.ndarray, arguments: list[Any]) -> None:
    """``mix[g, t]``: mix bound g at run t on the effective hours,
    Σ_s ρσ_s (1[s∈G] − share) w_ts ≤ −Σ_s ρσ_s (1[s∈G] − share) φ_s1t h0_s."""
    p, n = pp.base, pp.n
    groups = list(p.max_share)
    m.G = pyo.Set(initialize=range(len(groups)), ordered=True)

    def mix_rule(_m: pyo.ConcreteModel, g: int, t: int) -> object:
        """Mix bound g at run t, as a row in the runs' aged hours."""
        key = groups[g]
        coef = pp.quality * (p.members(key).astype(float) - p.max_share[key])
        nz = np.flatnonzero(coef).tolist()
        rhs = -float(coef @ (pp.age[0, t] * held))
        return _linear([float(coef[i]) for i in nz], [arguments[t * n + i] for i in nz]) <= rhs

    m.mix = pyo.Constraint(m.G, m.K, rule=mix_rule)
