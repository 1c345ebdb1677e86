"""The dual of an expected-value scenario program: where its first cuts go.

Without a risk weight, recourse or mix bounds, a scenario program maximises
``Σ_s V_s(x_s)`` with ``V_s(x) = Σ_ω π_ω v_sω(a_sω (h0_s + x))``: still separable and concave
in the hours bought now, under the same budget and capacity rows. Its Lagrangian dual is that
of :mod:`procure.program.dual` with V_s in place of one curve: each source's hours at a price
``c_s`` solve ``V_s'(x) = c_s``, found by a bracketed root search (V_s' falls with x), and dx/dc is
``1 / V_s''`` by a central difference. The projected Newton method of
:func:`procure.program.dual.minimise` then gives the multipliers and the hours; each (scenario,
source) curve gets a tangent cut at its own effective hours there, and the model, solved once,
bounds the plan: the tangents' slopes, weighted by the probabilities, are the expected slope
the multipliers price, so the LP's optimum is the plan's value.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property

import numpy as np

from ..curves import REGISTRY
from . import value
from .bounds import CurveArrays
from .dual import INVERSE_STEP, Dual, minimise
from .kink_dual import KinkSteps
from .kinks import linear_curves
from .rows import CouplingRows
from .scenarios import ScenarioProblem

#: Most steps of the root search of V_s'(x) = c on [0, the source's box] (Illinois steps, a
#: bisection every third step): far more than the 10–20 a smooth curve takes to the precision.
BISECTION_STEPS = 100
#: The root search stops where its bracket is this share of its upper end [1].
ROOT_PRECISION = 1e-15
#: Doublings of the bracket for a source without a finite box, from its saturation scale.
BRACKET_DOUBLINGS = 200


class _ExpectedDual(KinkSteps):
    """g(μ) and x(μ) for V_s, the probability-weighted curves of each source.

    A source with a linear curve is linear in every scenario, ``V_s(x) = R_s (h0_s + x)`` with
    ``R_s = Σ_ω π_ω ρ_sω``: all or nothing at a price, and the method steps along its kink
    (:class:`procure.program.kink_dual.KinkSteps`) as along a linear curve's of one scenario.
    """

    def __init__(self, sp: ScenarioProblem, a: CurveArrays, rows: CouplingRows) -> None:
        self.sp, self.a, self.rows = sp, a, rows
        self.evaluations = 0
        n = sp.n
        self.curve = np.broadcast_to(a.curve, (sp.count, n))
        self.shape = np.broadcast_to(a.shape, (sp.count, n))
        self.rate = sp.rate
        self.k = sp.saturation_hours
        self.p = sp.probability[:, None]
        linear = linear_curves(a.curve, a.shape)
        self.kink_rate = np.sum(self.p * self.rate, axis=0)
        self.all_or_nothing = np.flatnonzero(linear & (self.kink_rate > 0))
        self.room = a.room

    @cached_property
    def thresholds(self) -> tuple[np.ndarray, np.ndarray]:
        """Per source, V_s' at the hours held and at the end of its box (0 for a box without
        end): the prices in multipliers below which it buys more than nothing and less than its
        box [value per h]."""
        every = np.arange(self.sp.n)
        finite = np.isfinite(self.room)
        leave = np.zeros(self.sp.n)
        with np.errstate(all="ignore"):
            leave[finite] = np.nan_to_num(self.slope(self.room[finite], every[finite]), nan=0.0)
        return self.marginal_at_held(), leave

    def slope(self, x: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """V_s'(x_s) of the sources ``columns`` [value per h]."""
        rate = self.rate[:, columns]
        e = rate * (self.a.held[columns] + x)[None, :]
        dv = np.empty_like(e)
        names = self.a.curve[columns]
        with np.errstate(all="ignore"):
            for name in np.unique(names):
                sub = np.flatnonzero(names == name)
                dv[:, sub] = REGISTRY[str(name)].derivative(
                    e[:, sub], self.k[:, columns[sub]], self.a.shape[columns[sub]]
                )
        return np.asarray(np.sum(self.p * rate * dv, axis=0), dtype=float)

    def marginal_at_held(self) -> np.ndarray:
        """V_s'(0): the expected marginal value of the next hour at the hours held [value per h]."""
        return self.slope(np.zeros(self.sp.n), np.arange(self.sp.n))

    def hours(self, mu: np.ndarray, *, slopes: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """x(μ) within each box by a bracketed root search, and dx/dc where a source is strictly inside it."""
        a = self.a
        n = self.sp.n
        c = self.rows.A.T @ mu
        every = np.arange(n)
        at_zero = self.slope(np.zeros(n), every)
        x = np.zeros(n)
        active = np.flatnonzero(at_zero > c)
        room = a.room
        if len(active):
            lo = np.zeros(len(active))
            hi = np.where(
                np.isfinite(room[active]), room[active], np.maximum(np.nanmax(self.k[:, active], axis=0), 1.0)
            )
            unbounded = ~np.isfinite(room[active])
            for _ in range(BRACKET_DOUBLINGS):
                grow = unbounded & (self.slope(hi, active) > c[active])
                if not grow.any():
                    break
                hi = np.where(grow, 2 * hi, hi)
            at_hi = self.slope(hi, active) - c[active]
            full = at_hi >= 0
            found = _root(lambda z, cols: self.slope(z, active[cols]) - c[active[cols]], lo,
                          at_zero[active] - c[active], hi, at_hi)  # fmt: skip
            x[active] = np.where(full & np.isfinite(room[active]), room[active], found)
            if np.any(full & unbounded):
                x[active[full & unbounded]] = np.inf
        slope = np.zeros(n)
        inside = (x > 0) & (x < room) & np.isfinite(x)
        if slopes and inside.any():
            cols = np.flatnonzero(inside)
            step = INVERSE_STEP * np.maximum(x[cols], 1.0)
            curvature = (self.slope(x[cols] + step, cols) - self.slope(np.maximum(x[cols] - step, 0.0), cols)) / (
                x[cols] + step - np.maximum(x[cols] - step, 0.0)
            )
            slope[cols] = np.where(curvature < 0, 1.0 / np.where(curvature < 0, curvature, -1.0), 0.0)
        return x, slope

    def g(self, mu: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """g(μ), x(μ) and dx/dc; g = inf where some box is unbounded at these prices."""
        self.evaluations += 1
        x, slope = self.hours(mu)
        if not np.all(np.isfinite(x)):
            return float("inf"), x, slope
        return self.value(x) - float((self.rows.A.T @ mu) @ x) + float(mu @ self.rows.b), x, slope

    def value(self, x: np.ndarray) -> float:
        """Σ_s V_s(x_s) [own-hour equivalents]."""
        e = self.rate * (self.a.held + x)[None, :]
        v = np.asarray(value.value(e, self.curve, self.k, self.shape), dtype=float)
        return float(np.sum(self.p * v))


def solve_expected_dual(
    sp: ScenarioProblem, a: CurveArrays, rows: CouplingRows, start: np.ndarray | None = None
) -> Dual:
    """The expected-value program's dual minimum (multipliers, hours, bound); ``a`` the sources' arrays."""
    return minimise(_ExpectedDual(sp, a, rows), start)


def _root(f: Callable[[np.ndarray, np.ndarray], np.ndarray], lo: np.ndarray, f_lo: np.ndarray, hi: np.ndarray,
          f_hi: np.ndarray) -> np.ndarray:  # fmt: skip
    """The roots of decreasing functions, one per element, bracketed by ``lo`` (f > 0) and ``hi``
    (f ≤ 0): regula falsi with the Illinois correction, a bisection every third step so the
    bracket at least halves every three; ``f(z, cols)`` evaluates the elements ``cols`` at ``z``."""
    lo, hi, f_lo, f_hi = lo.copy(), hi.copy(), f_lo.copy(), f_hi.copy()
    side = np.zeros(len(lo), dtype=np.int8)  # which end moved last: -1 low, +1 high
    todo = np.flatnonzero(hi - lo > ROOT_PRECISION * np.abs(hi))
    for step in range(BISECTION_STEPS):
        if not len(todo):
            break
        a, b, fa, fb = lo[todo], hi[todo], f_lo[todo], f_hi[todo]
        with np.errstate(all="ignore"):
            z = b - fb * (b - a) / (fb - fa)
        mid = 0.5 * (a + b)
        z = np.where((step % 3 == 2) | ~np.isfinite(z) | (z <= a) | (z >= b), mid, z)
        fz = f(z, todo)
        up = fz > 0
        lo[todo] = np.where(up, z, a)
        hi[todo] = np.where(up, b, z)
        f_lo[todo] = np.where(up, fz, np.where(side[todo] == 1, 0.5 * fa, fa))
        f_hi[todo] = np.where(up, np.where(side[todo] == -1, 0.5 * fb, fb), fz)
        side[todo] = np.where(up, -1, 1)
        exact = fz == 0
        lo[todo[exact]] = hi[todo[exact]] = z[exact]
        todo = todo[(hi[todo] - lo[todo] > ROOT_PRECISION * np.abs(hi[todo])) & ~exact]
    return 0.5 * (lo + hi)
