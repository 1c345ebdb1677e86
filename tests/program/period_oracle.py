"""An independent bracket of the program over periods, written apart from procure's model.

Variables ``y[t, s]`` (hours of source s bought in period t) and ``z[t, s]`` (the value credited
to source s at the run of period t). The value of a concave curve is bounded above by its
tangents, so the LP

    maximise Σ_t w_t Σ_s z_ts
    s.t.     z_ts ≤ v(ê) + v'(ê) (e_ts − ê)           for every tangent point ê
             e_ts = ρσ_s (f_s(0, t) h0_s + Σ_{τ≤t} f_s(τ, t) y_τs)
             money, per period t (cumulative with carry-over)
             capacities at each run, availability by period and over all periods

gives an upper bound U; its schedule, valued on the true curves, a lower bound L. Tangents
are added where the LP's point lies until the two agree closely. The ageing factor is the
closed form of the mean of 2^(−a/L) over the run's months, written here again; the LP is
solved with SciPy's HiGHS (``scipy.optimize.linprog``), not procure's hand-over.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import coo_matrix

from procure.program.numbers import value

ROUNDS = 40
FIRST_POINTS = 12


@dataclass
class PeriodCase:
    price: np.ndarray  # [t, s] $/h
    bill: np.ndarray  # [s] $/h per run
    quality: np.ndarray  # ρσ [s]
    shelf_life: np.ndarray  # L [s] months
    held: np.ndarray  # [s]
    available: np.ndarray  # over all periods [s]
    available_t: np.ndarray  # [t, s]
    curve: np.ndarray
    k: np.ndarray
    shape: np.ndarray
    usage: dict[str, np.ndarray]  # per capacity, per hour [s]
    capacity: dict[str, np.ndarray]  # per capacity, per period [t]
    months: np.ndarray
    money: np.ndarray  # [t]
    weight: np.ndarray  # [t]
    carry: bool
    #: mix bounds: (members [s], share): at each run Σ_{s∈G} e_ts ≤ share · Σ_s e_ts
    mix: tuple[tuple[np.ndarray, float], ...] = ()


def ageing(L: np.ndarray, months: np.ndarray) -> np.ndarray:
    """f[τ, t, s]: mean of 2^(−a/L) over run t's months, a from the start of period τ."""
    start = np.concatenate([[0.0], np.cumsum(months)])
    T = len(months)
    out = np.zeros((T, T, len(L)))
    for tau in range(T):
        for t in range(tau, T):
            a0, a1 = start[t] - start[tau], start[t + 1] - start[tau]
            for s, life in enumerate(L):
                if math.isinf(life):
                    out[tau, t, s] = 1.0
                else:
                    c = math.log(2) / life
                    out[tau, t, s] = (math.exp(-c * a0) - math.exp(-c * a1)) / (c * (a1 - a0))
    return out


def bracket(case: PeriodCase, gap: float = 1e-7) -> tuple[float, float, np.ndarray]:
    """(L, U, y): a lower and an upper bound on the optimum, and the LP's schedule."""
    lower, upper, y = bracket_scenarios([case], np.ones(1), gap)
    return lower, upper, y[0]


def bracket_scenarios(cases: list[PeriodCase], prob: np.ndarray, gap: float = 1e-7) -> tuple[float, float, np.ndarray]:
    """(L, U, y) of the expected value over scenarios (one case each, same periods and sources)
    whose first period's purchases are one decision: equal in every scenario."""
    K = len(cases)
    T, n = cases[0].price.shape
    ny = T * n
    block = 2 * ny  # y then z of one scenario
    col_y = lambda k, t, s: k * block + t * n + s  # noqa: E731
    col_z = lambda k, t, s: k * block + ny + t * n + s  # noqa: E731
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    rhs: list[float] = []

    def row(entries: list[tuple[int, float]], b: float) -> None:
        r = len(rhs)
        for c, v in entries:
            rows.append(r)
            cols.append(c)
            vals.append(v)
        rhs.append(b)

    ages = [ageing(c.shelf_life, c.months) for c in cases]
    for k, case in enumerate(cases):
        for t in range(T):  # money
            entries = []
            for u in range(t + 1) if case.carry else [t]:  # spend of period u
                for s in range(n):
                    entries.append((col_y(k, u, s), case.price[u, s]))
                    for tau in range(u + 1):
                        entries.append((col_y(k, tau, s), case.bill[s]))
            row(entries, float(case.money[: t + 1].sum() if case.carry else case.money[t]))
        for name, use in case.usage.items():  # capacities at each run
            for t in range(T):
                limit = case.capacity[name][t]
                if math.isfinite(limit):
                    row([(col_y(k, tau, s), use[s]) for s in range(n) for tau in range(t + 1) if use[s] > 0],
                        float(limit - use @ case.held))  # fmt: skip
        f_k = ages[k]
        for members, share in case.mix:  # mix bounds at each run, on the aged effective hours
            weight = case.quality * (members.astype(float) - share)  # e_ts's weight in the row
            for t in range(T):
                row([(col_y(k, tau, s), weight[s] * f_k[tau, t, s]) for s in range(n) for tau in range(t + 1)],
                    -float(np.sum(weight * f_k[0, t] * case.held)))  # fmt: skip
        for s in range(n):  # availability over all periods
            if math.isfinite(case.available[s]):
                row([(col_y(k, t, s), 1.0) for t in range(T)], float(case.available[s]))
    fixed = len(rhs)
    base = (list(rows), list(cols), list(vals), list(rhs))
    eq_rows, eq_cols, eq_vals = [], [], []
    for k in range(1, K):  # the first period is one decision
        for s in range(n):
            r = (k - 1) * n + s
            eq_rows += [r, r]
            eq_cols += [col_y(k, 0, s), col_y(0, 0, s)]
            eq_vals += [1.0, -1.0]
    A_eq = coo_matrix((eq_vals, (eq_rows, eq_cols)), shape=((K - 1) * n, K * block)).tocsr() if K > 1 else None
    b_eq = np.zeros((K - 1) * n) if K > 1 else None

    def effective(k: int, y: np.ndarray) -> np.ndarray:
        c, f = cases[k], ages[k]
        return c.quality[None, :] * (np.einsum("uts,us->ts", f, y) + f[0] * c.held[None, :])

    def true_value(y: np.ndarray) -> float:
        total = 0.0
        for k, c in enumerate(cases):
            v = value.value(effective(k, y[k]), c.curve[None, :], c.k[None, :], c.shape[None, :])
            total += prob[k] * float(c.weight @ np.asarray(v).sum(axis=1))
        return total

    points = []
    for k, c in enumerate(cases):
        top = np.minimum(c.available, c.available_t.sum(axis=0))
        hi = effective(k, np.tile(np.where(np.isfinite(top), top, 1e5), (T, 1)))
        lo = effective(k, np.zeros((T, n)))
        points += [(k, t, s, p) for t in range(T) for s in range(n)
                   for p in np.geomspace(max(lo[t, s], 1e-3), max(hi[t, s], 1e-2), FIRST_POINTS)]  # fmt: skip
    bounds = []
    cost = np.zeros(K * block)
    for k, c in enumerate(cases):
        bounds += [(0.0, float(c.available_t[t, s]) if math.isfinite(c.available_t[t, s]) else None)
                   for t in range(T) for s in range(n)] + [(None, None)] * ny  # fmt: skip
        cost[k * block + ny : (k + 1) * block] = -prob[k] * np.repeat(c.weight, n)
    lower, upper, y = -math.inf, math.inf, np.zeros((K, T, n))
    for _ in range(ROUNDS):
        rows, cols, vals, rhs = (list(x) for x in base)
        del rhs[fixed:]
        for k, t, s, p in points:
            c, f = cases[k], ages[k]
            slope = float(value.derivative(p, c.curve[s], c.k[s], c.shape[s]))
            height = float(value.value(p, c.curve[s], c.k[s], c.shape[s]))
            # z − slope·q·Σ f y ≤ height − slope·p + slope·q·f0·h0
            entries = [(col_z(k, t, s), 1.0)] + [
                (col_y(k, tau, s), -slope * c.quality[s] * f[tau, t, s]) for tau in range(t + 1)
            ]
            row(entries, height - slope * p + slope * c.quality[s] * f[0, t, s] * c.held[s])
        A = coo_matrix((vals, (rows, cols)), shape=(len(rhs), K * block)).tocsr()
        res = linprog(cost, A_ub=A, b_ub=np.array(rhs), A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs")
        assert res.status == 0, res.message
        y = np.clip(np.stack([res.x[k * block : k * block + ny].reshape(T, n) for k in range(K)]), 0.0, None)
        upper = min(upper, -float(res.fun))
        lower = max(lower, true_value(y))
        if upper - lower <= gap * max(1.0, abs(upper)):
            break
        for k in range(K):
            e = effective(k, y[k])
            points += [(k, t, s, float(e[t, s])) for t in range(T) for s in range(n) if e[t, s] > 0]
    return lower, upper, y
