"""An independent optimiser for small separable ledgers (no capacity binds, no mix bound).

maximise Σ v_i(a_i (h_i + x_i)) subject to Σ c_i x_i + Σ fee_i [x_i > 0] ≤ B, where each x_i is 0
or in [min_i, room_i], in whole lots where the source has them.

Dynamic programming over a grid of money finds the best split of the budget across sources
(each source's best value for a spend is exact: its value rises with its hours); a local
polish (SciPy SLSQP) with the on/off choices and lot counts of the best splits fixed, and with
each lot count moved by one, removes the grid's rounding. The least money that reaches a
value is found on the same table and polished the same way. Nothing here uses procure's
solver: only its value curves, which the tests check against closed forms elsewhere.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from procure.program.numbers import value

GRID = 3000


@dataclass
class Sources:
    cost: np.ndarray
    rate: np.ndarray
    held: np.ndarray
    room: np.ndarray
    lot: np.ndarray
    min_order: np.ndarray
    fee: np.ndarray
    curve: np.ndarray
    k: np.ndarray
    shape: np.ndarray

    @classmethod
    def of(cls, problem) -> Sources:
        s = problem.sources
        return cls(
            problem.cost,
            problem.rate,
            problem.held,
            s["available_hours"].to_numpy(float),
            s["lot_hours"].to_numpy(float),
            s["min_order_hours"].to_numpy(float),
            s["fixed_fee_usd"].to_numpy(float),
            s["curve"].to_numpy(str),
            s["saturation_hours"].to_numpy(float),
            s["curve_shape"].to_numpy(float),
        )

    def v(self, i: int, x) -> np.ndarray:
        return np.asarray(value.value(self.rate[i] * (self.held[i] + x), self.curve[i], self.k[i], self.shape[i]))

    def dv(self, i: int, x) -> np.ndarray:
        e = self.rate[i] * (self.held[i] + x)
        return np.asarray(value.derivative(e, self.curve[i], self.k[i], self.shape[i])) * self.rate[i]

    def hours_for(self, i: int, money: np.ndarray) -> np.ndarray:
        """Most hours of source i that ``money`` buys (0 where it buys no allowed amount)."""
        x = np.minimum((money - self.fee[i]) / self.cost[i], self.room[i])
        if self.lot[i] > 0:
            x = np.floor(x / self.lot[i] + 1e-12) * self.lot[i]
        return np.where((x >= max(self.min_order[i], 1e-12)) & (money >= self.fee[i]), x, 0.0)

    def spend(self, x: np.ndarray) -> float:
        return float(self.cost @ x + self.fee @ (x > 0))

    def total(self, x: np.ndarray) -> float:
        return float(sum(self.v(i, x[i]) for i in range(len(x))))


def _table(src: Sources, most: float):
    """Best value for each grid amount of money, and the choice of each stage."""
    grid = np.linspace(0.0, most, GRID + 1)
    n = len(src.cost)
    values = [src.v(i, src.hours_for(i, grid)) for i in range(n)]
    best = values[0].copy()
    choices = []
    for i in range(1, n):
        # best_new[m] = max_j values[i][j] + best[m − j]
        m_idx = np.arange(GRID + 1)[:, None]
        j_idx = np.arange(GRID + 1)[None, :]
        rest = np.where(j_idx <= m_idx, best[np.clip(m_idx - j_idx, 0, GRID)], -np.inf)
        total = values[i][None, :] + rest
        choices.append(np.argmax(total, axis=1))
        best = np.max(total, axis=1)
    return grid, best, choices


def _split(src: Sources, grid, choices, m: int) -> np.ndarray:
    """Hours of each source in the grid's best split of amount index m."""
    n = len(src.cost)
    hours = np.zeros(n)
    for i in range(n - 1, 0, -1):
        j = int(choices[i - 1][m])
        hours[i] = src.hours_for(i, grid[j])
        m -= j
    hours[0] = src.hours_for(0, grid[m])
    return hours


def _patterns(src: Sources, x: np.ndarray):
    """The split's on/off and lot choices, and those with each lot count moved by one."""
    lots = [i for i in range(len(x)) if src.lot[i] > 0 and (x[i] > 0 or src.lot[i] <= src.room[i])]
    base = np.where(src.lot > 0, np.round(x / np.where(src.lot > 0, src.lot, 1.0)), -1.0)
    for moves in itertools.product((-1, 0, 1), repeat=len(lots)):
        counts = base.copy()
        for i, d in zip(lots, moves, strict=True):
            counts[i] = counts[i] + d
        if any(counts[i] < 0 or counts[i] * src.lot[i] > src.room[i] + 1e-9 for i in lots):
            continue
        if any(counts[i] > 0 and counts[i] * src.lot[i] < src.min_order[i] for i in lots):
            continue
        yield (x > 0) | (counts > 0), counts


def _polish_budget(src: Sources, budget: float, on: np.ndarray, counts: np.ndarray, start: np.ndarray):
    fixed = np.where(counts >= 0, counts * src.lot, 0.0)
    free = [i for i in range(len(on)) if on[i] and counts[i] < 0]
    left = budget - src.cost @ fixed - src.fee @ on
    if left < -1e-9:
        return None
    x = np.where(on, fixed, 0.0)
    if not free:
        return x
    lo = np.array([max(src.min_order[i], 0.0) for i in free])
    hi = np.array([src.room[i] for i in free])
    if src.cost[free] @ lo > left + 1e-9:
        return None
    x0 = np.clip(start[free], lo, hi)
    x0 = x0 * min(1.0, left / max(src.cost[free] @ x0, 1e-300)) if src.cost[free] @ x0 > left else x0
    x0 = np.maximum(x0, lo)

    def f(y):
        return -float(sum(src.v(i, y[k]) for k, i in enumerate(free)))

    def g(y):
        return -np.array([float(src.dv(i, y[k])) for k, i in enumerate(free)])

    cons = [{"type": "ineq", "fun": lambda y: left - src.cost[free] @ y, "jac": lambda y: -src.cost[free]}]
    res = minimize(f, x0, jac=g, bounds=list(zip(lo, hi, strict=True)), constraints=cons, method="SLSQP",
                   options={"ftol": 1e-14, "maxiter": 500})  # fmt: skip
    y = np.clip(res.x, lo, hi)
    if src.cost[free] @ y > left * (1 + 1e-12) + 1e-9:
        y = y * left / (src.cost[free] @ y)
    x[free] = y
    return x


def best_value(src: Sources, budget: float) -> tuple[float, np.ndarray]:
    """The most value ``budget`` buys, and the hours that buy it."""
    grid, _best, choices = _table(src, budget)
    found, hours = -math.inf, None
    for m in (GRID, GRID - 1, GRID - 2):  # the whole budget's split and its neighbours on the grid
        split = _split(src, grid, choices, m)
        for on, counts in _patterns(src, split):
            x = _polish_budget(src, budget, on, counts, split)
            if x is not None and src.total(x) > found:
                found, hours = src.total(x), x
    return found, hours


def _polish_money(src: Sources, target: float, on: np.ndarray, counts: np.ndarray, start: np.ndarray):
    fixed = np.where(counts >= 0, counts * src.lot, 0.0)
    free = [i for i in range(len(on)) if on[i] and counts[i] < 0]
    x = np.where(on, fixed, 0.0)
    if not free:
        return x if src.total(x) >= target else None
    lo = np.array([max(src.min_order[i], 0.0) for i in free])
    hi = np.array([src.room[i] for i in free])
    x_hi = x.copy()
    x_hi[free] = hi
    if src.total(x_hi) < target:
        return None

    def total(y):
        z = x.copy()
        z[free] = y
        return src.total(z)

    cons = [{"type": "ineq", "fun": lambda y: total(y) - target,
             "jac": lambda y: np.array([float(src.dv(i, y[k])) for k, i in enumerate(free)])}]  # fmt: skip
    res = minimize(lambda y: float(src.cost[free] @ y), np.clip(start[free], lo, hi), jac=lambda y: src.cost[free],
                   bounds=list(zip(lo, hi, strict=True)), constraints=cons, method="SLSQP",
                   options={"ftol": 1e-14, "maxiter": 500})  # fmt: skip
    y = np.clip(res.x, lo, hi)
    # Push up along the gradient until the target is truly reached (SLSQP stops at its tolerance).
    for _ in range(60):
        if total(y) >= target:
            break
        y = np.minimum(y * (1 + 1e-7) + 1e-9, hi)
    x[free] = y
    return x if src.total(x) >= target else None


def least_money(src: Sources, target: float, most: float) -> tuple[float, np.ndarray]:
    """The least money whose plan reaches ``target``, and the hours of that plan."""
    grid, best, choices = _table(src, most)
    reach = np.flatnonzero(best >= target)
    if len(reach) == 0:
        raise ValueError("target out of reach of the oracle's money")
    first = int(reach[0])
    found, hours = math.inf, None
    for m in range(max(first - 2, 0), min(first + 3, GRID + 1)):
        split = _split(src, grid, choices, m)
        for on, counts in _patterns(src, split):
            x = _polish_money(src, target, on, counts, split)
            if x is not None and src.spend(x) < found:
                found, hours = src.spend(x), x
    return found, hours
