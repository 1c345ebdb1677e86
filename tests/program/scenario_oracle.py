"""An independent solution of small scenario programs: one LP on a fixed, fine tangent grid.

Every curve (scenario, source) is replaced by the lower envelope of its tangents at
:data:`GRID` points spread over its whole range, so the LP's optimum bounds the true optimum
from above; its plan, valued at the true curves, bounds it from below. The LP is written
here as matrices for ``scipy.optimize.linprog``: no procure model, no refinement, no cuts
chosen from a solution; only procure's value curves (checked against closed forms elsewhere).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import lil_matrix

from procure.program.numbers import value
from procure.program.numbers.scenarios import cvar

GRID = 400


@dataclass
class OracleResult:
    hours: np.ndarray  # bought now [h]
    later: np.ndarray  # (scenarios, sources) bought later [h]
    upper: float  # the LP's optimum: an upper bound
    value: float  # the LP plan's true objective: a lower bound
    scenario_values: np.ndarray


def solve(sp, fixed_hours=None) -> OracleResult:
    """Solve a :class:`procure.program.numbers.scenarios.ScenarioProblem` without integer terms (mix
    bounds hold in every scenario, on its own rates); ``fixed_hours`` fixes the hours bought now (only later hours are chosen)."""
    p = sp.base
    s = p.sources
    n, count = p.n, sp.count
    cost = p.cost
    held = p.held
    avail = s["available_hours"].to_numpy(float)
    curve = s["curve"].to_numpy(str)
    shape = s["curve_shape"].to_numpy(float)
    budget = float(p.budget)
    recourse = sp.recourse_price_x is not None
    later_cost = (sp.recourse_price_x or 1.0) * sp.later_cost
    w_ = sp.risk_weight
    # columns: x (n), w (count*n, recourse only), z (count*n), eta, u (count)
    nx = n
    nw = count * n if recourse else 0
    nz = count * n
    ix = np.arange(n)
    iw = nx + np.arange(nw)
    iz = nx + nw + np.arange(nz)
    ieta = nx + nw + nz
    iu = ieta + 1 + np.arange(count)
    ncol = ieta + 1 + count
    c = np.zeros(ncol)
    c[iz] = -(1 - w_) * np.repeat(sp.probability, n)
    c[ieta] = -w_
    c[iu] = w_ * sp.probability / sp.risk_alpha
    rows, rhs = [], []

    def arg(k: int, i: int) -> int:
        return int(iw[k * n + i]) if recourse else int(ix[i])

    most = np.minimum(avail, budget / np.minimum(cost, later_cost.min(axis=0) if recourse else cost))
    for k in range(count):
        for i in range(n):
            a, kk = sp.rate[k, i], sp.saturation_hours[k, i]
            lo, hi = a * held[i], a * (held[i] + most[i])
            pts = np.unique(
                np.concatenate([np.linspace(lo, hi, GRID // 2), lo + (hi - lo) * np.geomspace(1e-6, 1, GRID // 2)])
            )
            slope = np.asarray(value.derivative(pts, curve[i], kk, shape[i]), float)
            val = np.asarray(value.value(pts, curve[i], kk, shape[i]), float)
            for sl, v0, e0 in zip(slope, val, pts, strict=True):
                row = {int(iz[k * n + i]): 1.0, arg(k, i): -sl * a}
                rows.append(row)
                rhs.append(v0 + sl * (a * held[i] - e0))
    if recourse:
        for k in range(count):
            row = {int(ix[i]): cost[i] - later_cost[k, i] for i in range(n)}
            for i in range(n):
                row[int(iw[k * n + i])] = later_cost[k, i]
            rows.append(row)
            rhs.append(budget)
            for i in range(n):
                rows.append({int(ix[i]): 1.0, int(iw[k * n + i]): -1.0})
                rhs.append(0.0)
    else:
        rows.append({int(ix[i]): cost[i] for i in range(n)})
        rhs.append(budget)
    for name, limit in p.capacity.items():
        if not np.isfinite(limit):
            continue
        use = p.usage(name)
        for k in range(count if recourse else 1):
            rows.append({arg(k, i): use[i] for i in range(n)})
            rhs.append(limit - use @ held)
    for key, share in p.max_share.items():  # each scenario's mix, on its own effective hours
        members = p.members(key).astype(float)
        for k in range(count):
            weight = sp.rate[k] * (members - share)
            rows.append({arg(k, i): weight[i] for i in range(n) if weight[i] != 0})
            rhs.append(-float(weight @ held))
    if w_ > 0:
        for k in range(count):
            row = {int(iu[k]): -1.0, ieta: 1.0}
            for i in range(n):
                row[int(iz[k * n + i])] = -1.0
            rows.append(row)
            rhs.append(0.0)
    A = lil_matrix((len(rows), ncol))
    for r, row in enumerate(rows):
        for j, v in row.items():
            A[r, j] = A[r, j] + v
    bounds = [(0, avail[i]) for i in range(n)] if fixed_hours is None else [(h, h) for h in fixed_hours]
    bounds += [(0, avail[j % n]) for j in range(nw)]
    bounds += [(None, None)] * nz + [(None, None)] + [(0, None)] * count
    res = linprog(c, A_ub=A.tocsr(), b_ub=np.array(rhs), bounds=bounds, method="highs")
    assert res.status == 0, res.message
    x = np.clip(res.x[ix], 0, avail)
    w = np.clip(res.x[iw].reshape(count, n), 0, avail) if recourse else np.tile(x, (count, 1))
    e = sp.rate * (held[None, :] + w)
    v = np.asarray(value.value(e, curve[None, :], sp.saturation_hours, shape[None, :]), float).sum(axis=1)
    true = (1 - w_) * float(sp.probability @ v) + (w_ * cvar(v, sp.probability, sp.risk_alpha) if w_ > 0 else 0.0)
    return OracleResult(x, w - x[None, :], -float(res.fun), true, v)
