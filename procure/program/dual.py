"""The Lagrangian dual of a separable concave program: multipliers, hours and a bound, no LP.

For one scenario with concave curves that have a closed-form inverse derivative (log, exp,
power with β < 1, linear) and no integer terms, the few rows that couple the sources — the
budget, the capacities, the mix bounds, ``A x ≤ b`` — are priced by multipliers μ ≥ 0, and the
program splits per source:

    g(μ) = Σ_s max_{0 ≤ x_s ≤ room_s} [v_s(a_s (h0_s + x_s)) − (Aᵀμ)_s x_s] + μ·b.

Each inner maximum is closed-form: the hours where a_s v_s'(e) equals the source's price in
multipliers ``c_s = (Aᵀμ)_s``, clipped to its box (a linear curve takes all or nothing). g is
convex, ∇g = b − A x(μ), and its Hessian on the sources strictly inside their boxes is
A diag(−dx/dc) Aᵀ; a projected Newton method with a backtracking line search
(:mod:`procure.program.newton`) minimises it over μ ≥ 0 in a few dozen evaluations, stepping
along the kinks of linear sources bought in part (:mod:`procure.program.kinks`). For every
μ ≥ 0, g(μ) is an upper bound on the optimum (weak duality), and at the minimum the hours x(μ)
are the optimum's.

The program uses this as its guide (:mod:`procure.program.refine`): the dual's hours, made
exact by :mod:`procure.program.polish`, are where the model's tangent cuts are placed, so that
the Pyomo program certifies in one solve.
"""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np

from ..curves import REGISTRY, Curve
from . import value
from .bounds import CurveArrays
from .kink_dual import KINK_HALVINGS as KINK_HALVINGS
from .kink_dual import KinkSteps
from .kinks import linear_curves, price_thresholds
from .newton import (  # noqa: F401  # the method's names, importable from here as before
    ARMIJO,
    DUAL_TOLERANCE,
    KINK_STALLS,
    MAX_DUAL_STEPS,
    MAX_HALVINGS,
    NEWTON_RIDGE,
    SHORTEST_GRADIENT_STEP,
    STALL_RESOLUTION,
    START_BRACKET,
    START_STEPS,
    Dual,
    Evaluator,
    at_resolution,
    minimise,
    within_resolution,
)
from .rows import CouplingRows

#: Relative step of the central difference that gives the inverse derivative's slope [1].
INVERSE_STEP = 1e-6


def hours_at_price(c: np.ndarray, rate: np.ndarray, held: np.ndarray, curve: np.ndarray, k: np.ndarray,
                   shape: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Hours where ρσφ·v'(e) equals the price ``c`` > 0 in multipliers, unclipped, and dx/dc
    (central difference of the inverse derivative) [h, h per price unit]."""
    y = c / rate
    e = np.asarray(value.inverse_derivative(y, curve, k, shape), dtype=float)
    step = INVERSE_STEP * np.abs(y)
    low = np.maximum(y - step, 0.5 * y)
    hi = np.asarray(value.inverse_derivative(y + step, curve, k, shape), dtype=float)
    lo = np.asarray(value.inverse_derivative(low, curve, k, shape), dtype=float)
    de_dy = (hi - lo) / (y + step - low)
    return e / rate - held, de_dy / rate**2


def box_hours(entry: Curve, c: np.ndarray, rate: np.ndarray, held: np.ndarray, k: np.ndarray, shape: np.ndarray,
              room: np.ndarray, *, slopes: bool = True) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Sources of one smooth curve (``entry``, of :data:`procure.curves.REGISTRY`) at prices ``c``
    in multipliers [value per h]: the hours in [0, room] where ρσφ·v'(e) equals the price, and
    dx/dc where a source is strictly inside its box, 0 elsewhere (central difference of the
    inverse derivative) [h, h per price unit]. Any array shape; the arguments broadcast. A
    source with ρσφ = 0 buys nothing; one priced at 0 buys its whole box. Call under
    ``np.errstate(all="ignore")``."""
    y = c / rate
    priced = (y > 0) & (rate > 0)
    safe = np.where(priced, y, 1.0)
    e = np.where(priced, entry.inverse_derivative(safe, k, shape), np.inf)
    xs = np.where(rate > 0, e / rate - held, 0.0)
    x = np.clip(xs, 0.0, room)
    if not slopes:
        return x, np.zeros_like(x)
    step = INVERSE_STEP * np.abs(safe)
    low = np.maximum(safe - step, 0.5 * safe)
    up = entry.inverse_derivative(safe + step, k, shape)
    down = entry.inverse_derivative(low, k, shape)
    inside = priced & (xs > 0) & (xs < room)
    return x, np.where(inside, (up - down) / (safe + step - low) / rate**2, 0.0)


class _Dual(KinkSteps):
    """g(μ), x(μ) and the Hessian's pieces for one problem's sources and rows.

    The sources are grouped by curve once, and each group's formulas called on it directly
    (:mod:`procure.curves`), so an evaluation costs a few array operations per curve.
    """

    def __init__(self, a: CurveArrays, rows: CouplingRows) -> None:
        self.a, self.rows = a, rows
        self.linear = linear_curves(a.curve, a.shape)
        grows = a.rate > 0
        groups = [(entry, np.flatnonzero((a.curve == name) & ~self.linear & grows)) for name, entry in REGISTRY.items()]
        #: Per curve with sources, their indices, ρσφ, held hours, k, shape and box, gathered once.
        self._parts = [
            (entry, idx, a.rate[idx], a.held[idx], a.k[idx], a.shape[idx], a.room[idx])
            for entry, idx in groups
            if len(idx)
        ]
        self.all_or_nothing = np.flatnonzero(self.linear & grows)
        self.kink_rate, self.room = a.rate, a.room
        self.evaluations = 0

    @cached_property
    def thresholds(self) -> tuple[np.ndarray, np.ndarray]:
        """Per source, the prices in multipliers below which it buys more than nothing (its
        marginal value at the hours held) and below which it buys less than its box (at the
        box's end; 0 for a box without end) [value per h] (for :meth:`pivot`)."""
        a = self.a
        return price_thresholds(a.rate, a.held, a.room, lambda e: value.derivative(e, a.curve, a.k, a.shape))

    def hours(self, mu: np.ndarray, *, slopes: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """x(μ) within each box, and dx/dc where a smooth source is strictly inside it."""
        return self._hours_at(self.rows.A.T @ mu, slopes)

    def _hours_at(self, c: np.ndarray, slopes: bool) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`hours` at the sources' prices in multipliers ``c = Aᵀμ`` [value per h]."""
        a = self.a
        x = np.zeros(len(c))
        slope = np.zeros(len(c))
        lin = self.all_or_nothing
        x[lin] = np.where(a.rate[lin] > c[lin], a.room[lin], 0.0)
        with np.errstate(all="ignore"):
            for entry, idx, rate, held, k, shape, room in self._parts:
                x[idx], slope[idx] = box_hours(entry, c[idx], rate, held, k, shape, room, slopes=slopes)
        return x, slope

    def marginal_at_held(self) -> np.ndarray:
        """ρσφ·v'(e) at the hours held [value per h]."""
        a = self.a
        return np.asarray(value.derivative(a.rate * a.held, a.curve, a.k, a.shape), dtype=float) * a.rate

    def g(self, mu: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """g(μ), x(μ) and dx/dc; g = inf where some box is unbounded at these prices, or where
        the multipliers are so large that the prices times the hours overflow (g grows without
        bound there: an infeasible row drives its multiplier up)."""
        self.evaluations += 1
        c = self.rows.A.T @ mu
        x, slope = self._hours_at(c, True)
        if not np.all(np.isfinite(x)):
            return math.inf, x, slope
        a = self.a
        total = float(np.sum(a.rate[self.all_or_nothing] * (a.held[self.all_or_nothing] + x[self.all_or_nothing])))
        for entry, idx, rate, held, k, shape, _room in self._parts:
            total += float(np.sum(entry.value(rate * (held + x[idx]), k, shape)))
        with np.errstate(over="ignore", invalid="ignore"):
            g = total - float(c @ x) + float(mu @ self.rows.b)
        return (g if math.isfinite(g) else math.inf), x, slope


def dual_bound(a: CurveArrays, rows: CouplingRows, mu: np.ndarray) -> float:
    """g(μ) for μ ≥ 0: an upper bound on the optimum [own-hour equivalents] (inf where some
    source's box is unbounded at these prices)."""
    if np.any(np.asarray(mu) < 0):
        return math.inf
    return _Dual(a, rows).g(np.asarray(mu, dtype=float))[0]


def solve_dual(a: CurveArrays, rows: CouplingRows, start: np.ndarray | None = None) -> Dual:
    """Minimise g over μ ≥ 0 by projected Newton steps from ``start`` (else the budget alone)."""
    return minimise(_Dual(a, rows), start)
