"""The period axis of the model: purchases by period, the runs' curves, money, capacity and mix rows.

Components added to the one model of :func:`procure.program.model.build.build` when it is built over
periods (:class:`procure.program.numbers.periods.PeriodProblem`), each stated by the function that
adds it (see ``docs/program.md``, "Plans over periods"). Curve ``j = (ω T + t) n + s`` has rate
``ρ_ωs σ_ωs`` and held hours ``φ_s1t h0_s``, so its effective hours are
``ρ_ωs σ_ωs (φ_s1t h0_s + w_j)``. No I/O and no solve here.
"""

from __future__ import annotations

import math
from dataclasses import fields

import numpy as np
import pyomo.environ as pyo

from ..numbers.bounds import CurveArrays
from ..numbers.periods import PeriodProblem
from ..rows import capacity_room, has_row, mix_row
from . import array_rows
from .array_rows import Arguments, Terms
from .read import timed_rows


def period_curve_arrays(pp: PeriodProblem, a: CurveArrays) -> CurveArrays:
    """The arrays of every (scenario, run, source) curve, ``j = (ω T + t) n + s``, from the
    sources' ``a``."""
    K, T = pp.scenarios, pp.periods
    c = {f.name: np.tile(getattr(a, f.name), K * T) for f in fields(CurveArrays)}
    c.update(rate=np.repeat(pp.qualities, T, axis=0).ravel().astype(float),
             held=np.tile((pp.age[0] * a.held[None, :]).ravel(), K),
             k=np.repeat(pp.scales, T, axis=0).ravel().astype(float))  # fmt: skip
    return CurveArrays(**c)


def add_purchases(m: pyo.ConcreteModel, pp: PeriodProblem, a: CurveArrays, deadline: float = math.inf) -> None:
    """``T``, ``W`` (scenarios, one without), ``y[ω, t, s]`` (bounded by the period's availability
    and the source's bound), ``ahead[j]`` (``w_j = Σ_{τ≤t} φ_sτt y_ωτs``) and what ties ``x[s]`` to them:
    without scenarios ``total[s]`` (``x_s = Σ_t y_ts``, the hours over all periods); with them
    ``first[ω, s]`` (``y_ω1s = x_s``: the first period's purchase is one decision) and
    ``most[ω, s]`` (``Σ_t y_ωts ≤ available_s``). With scenarios a source with lots, a minimum
    order or a fee is bought in the first period only."""
    n, T, K = pp.n, pp.periods, pp.scenarios
    m.T = pyo.Set(initialize=range(T), ordered=True)
    m.W = pyo.Set(initialize=range(K), ordered=True)
    bound = np.minimum(pp.available, a.bound[None, :])
    now_only = a.binary | (a.lots > 0)

    # with scenarios, a source bought now only has no hours in a later period
    later = (K > 1) & (np.arange(T) > 0)[:, None] & now_only[None, :]
    upper = np.tile(np.where(later, 0.0, bound), (K, 1, 1))  # [ω, t, s]
    array_rows.variable(m, "y", m.W * m.T * m.S, np.zeros(upper.size), upper.ravel())
    if K == 1:

        def total_rule(_m: pyo.ConcreteModel, i: int) -> object:
            return array_rows.sum_of([1.0] + [-1.0] * T, [_m.x[i]] + [_m.y[0, t, i] for t in range(T)]) == 0

        m.total = pyo.Constraint(m.S, rule=total_rule)
    else:

        def first_rule(_m: pyo.ConcreteModel, k: int, i: int) -> object:
            return array_rows.sum_of([1.0, -1.0], [_m.y[k, 0, i], _m.x[i]]) == 0

        def most_rule(_m: pyo.ConcreteModel, k: int, i: int) -> object:
            if not math.isfinite(float(a.room[i])):
                return pyo.Constraint.Skip
            available = float(pp.base.column("available_hours")[i])
            return array_rows.sum_of([1.0] * T, [_m.y[k, t, i] for t in range(T)]) <= available

        m.first = pyo.Constraint(m.W, m.S, rule=first_rule)
        m.most = pyo.Constraint(m.W, m.S, rule=most_rule)

    def ahead_rule(_m: pyo.ConcreteModel, j: int) -> object:
        b, i = divmod(j, n)
        k, t = divmod(b, T)
        coefs = [1.0] + [-float(pp.age[tau, t, i]) for tau in range(t + 1)]
        return array_rows.sum_of(coefs, [_m.w[j]] + [_m.y[k, tau, i] for tau in range(t + 1)]) == 0

    timed_rows(m, "ahead", (m.Jw,), ahead_rule, deadline)


def add_budget_rows(m: pyo.ConcreteModel, pp: PeriodProblem, fees: np.ndarray, deadline: float = math.inf) -> None:
    """``budget_row[b]``, ``b = ω T + t``: the money of period t in scenario ω (with carry-over,
    of periods 1..t together), purchases at the period's prices plus each run's bill, and the
    fees in period 1 (``fees``: of the sources bought on or off, in the order of ``B``):
    Σ_{τ≤t} Σ_s c_ωtτs y_ωτs [+ Σ_s fee_s buy_s] ≤ share_t · B."""
    T, n = pp.periods, pp.n
    share = np.cumsum(pp.share) if pp.carry else pp.share
    m.Kb = pyo.Set(initialize=range(pp.count), ordered=True)
    spend = [pp.spend_matrix(k) for k in range(pp.scenarios)]  # [t, τ, s] per scenario
    spends = [np.cumsum(s, axis=0) for s in spend] if pp.carry else spend

    def budget_rule(_m: pyo.ConcreteModel, b: int) -> object:
        k, t = divmod(b, T)
        row = spends[k][t, : t + 1].ravel()  # [τ, s] for τ ≤ t
        nz = np.flatnonzero(row)
        money = [Terms("y", k * T * n + nz, row[nz])]  # y[ω, τ, s] is item (ω T + τ) n + s
        if pp.carry or t == 0:
            money.append(Terms("buy", np.arange(len(_m.B)), fees))
        return array_rows.linear(_m, money) <= float(share[t]) * _m.budget

    timed_rows(m, "budget_row", (m.Kb,), budget_rule, deadline)


def add_capacity_rows(
    m: pyo.ConcreteModel, pp: PeriodProblem, held: np.ndarray, deadline: float = math.inf
) -> list[str]:
    """``capacity[r, b]``: capacity r at run t of scenario ω counts every hour held then:
    Σ_s u_rs Σ_{τ≤t} y_ωτs ≤ C_rt − Σ_s u_rs h0_s. Returns the capacities with rows."""
    p, T, n = pp.base, pp.periods, pp.n
    rows = [name for name, limit in pp.capacity.items() if has_row(limit, p.usage(name))]
    m.R = pyo.Set(initialize=rows, ordered=True)
    m.Kc = pyo.Set(initialize=range(pp.count), ordered=True)

    def capacity_rule(_m: pyo.ConcreteModel, r: str, b: int) -> object:
        k, t = divmod(b, T)
        use = p.usage(r)
        limit = float(pp.capacity[r][t])
        if not math.isfinite(limit):
            return pyo.Constraint.Skip
        used = np.tile(use, t + 1)  # [τ, s] for τ ≤ t
        nz = np.flatnonzero(used)
        return array_rows.linear(_m, [Terms("y", k * T * n + nz, used[nz])]) <= capacity_room(limit, use, held)

    timed_rows(m, "capacity", (m.R, m.Kc), capacity_rule, deadline)
    return rows


def add_mix_rows(
    m: pyo.ConcreteModel, pp: PeriodProblem, held: np.ndarray, at: Arguments, deadline: float = math.inf
) -> None:
    """``mix[g, b]``: mix bound g at run t of scenario ω as a row in the runs' aged hours
    (:func:`procure.program.rows.mix_row`)."""
    p, n, T = pp.base, pp.n, pp.periods
    groups = list(p.max_share)
    m.G = pyo.Set(initialize=range(len(groups)), ordered=True)

    def mix_rule(_m: pyo.ConcreteModel, g: int, b: int) -> object:
        k, t = divmod(b, T)
        key = groups[g]
        coef, rhs = mix_row(pp.qualities[k], p.members(key), p.max_share[key], pp.age[0, t] * held)
        nz = np.flatnonzero(coef)
        return array_rows.linear(_m, at.terms(b * n + nz, coef[nz])) <= float(rhs)

    timed_rows(m, "mix", (m.G, m.K), mix_rule, deadline)
