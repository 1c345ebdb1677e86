"""The expected-value program's terms: each source's value a family of curves, one per scenario.

Without a risk weight, recourse or mix bounds, a scenario program maximises
``Σ_s V_s(x_s)`` with ``V_s(x) = Σ_ω π_ω v_sω(a_sω (h0_s + x))``: still separable and concave
in the hours bought now, under the same budget and capacity rows. Its Lagrangian is that of
:mod:`procure.program.dual.terms` with V_s in place of one curve: each source's hours at a price
``c_s`` solve ``V_s'(x) = c_s``, found by a bracketed root search (V_s' falls with x), and dx/dc
is ``1 / V_s''`` by a central difference. A source linear in every scenario is linear in its
hours, ``V_s(x) = R_s (h0_s + x)`` with ``R_s = Σ_ω π_ω ρ_sω``: all or nothing at a price, with
its kink at ``R_s``. The minimiser (:mod:`procure.program.dual.newton`) gives the multipliers and
the hours where each (scenario, source) curve gets its tangent cut (the cuts' slopes, weighted by
the probabilities, are the expected slope the multipliers price); see ``docs/certification.md``,
"The dual as the guide: one solve for concave programs".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ...curves import REGISTRY
from ..numbers import value
from .kinks import linear_curves, price_thresholds
from .terms import INVERSE_STEP, Terms

if TYPE_CHECKING:  # types only: the dual reads arrays, not the numbers' modules
    from ..numbers.bounds import CurveArrays
    from ..numbers.scenarios import ScenarioProblem
    from ..rows import CouplingRows

#: Most steps of the root search of V_s'(x) = c on [0, the source's box] (Illinois steps, a
#: bisection every third step): far more than the 10–20 a smooth curve takes to the precision.
BISECTION_STEPS = 100
#: The root search stops where its bracket is this share of its upper end [1].
ROOT_PRECISION = 1e-15
#: Doublings of the bracket for a source without a finite box, from its saturation scale.
BRACKET_DOUBLINGS = 200


class FamilyTerms(Terms):
    """One problem (K = 1) whose sources' values are the probability-weighted curves V_s.

    Parameters
    ----------
    sp : ScenarioProblem
        The scenarios: their probabilities, rates and saturation scales.
    a : CurveArrays
        The sources' arrays (held hours, boxes, curves, shapes).
    rows : CouplingRows
        The coupling rows ``A x ≤ b``.
    """

    def __init__(self, sp: ScenarioProblem, a: CurveArrays, rows: CouplingRows) -> None:
        self.sp, self.a = sp, a
        self.A, self.b = rows.A[None], rows.b[None]
        self.room = a.room
        self.rate, self.k = sp.rate, sp.saturation_hours
        self.p = sp.probability[:, None]
        kink_rate = np.sum(self.p * self.rate, axis=0)
        self.kink_rate = kink_rate[None]
        self.linear = np.flatnonzero(linear_curves(a.curve, a.shape) & (kink_rate > 0))
        entry, leave = price_thresholds(self.room, lambda x: self.slope(x, np.arange(sp.n)))
        self.entry, self.leave = entry[None], leave[None]

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

    def hours(self, mu: np.ndarray, sel: np.ndarray, *, slopes: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """x(μ) within each box by a bracketed root search, and dx/dc where a source is strictly
        inside it (:meth:`Terms.hours`; ``sel`` is the one problem)."""
        c = self.prices(mu, sel)[0]
        at_zero, room = self.entry[0], self.room
        x = np.zeros(self.sp.n)
        active = np.flatnonzero(at_zero > c)
        if len(active):
            unbounded = ~np.isfinite(room[active])
            hi = np.where(unbounded, np.maximum(np.nanmax(self.k[:, active], axis=0), 1.0), room[active])
            for _ in range(BRACKET_DOUBLINGS):
                grow = unbounded & (self.slope(hi, active) > c[active])
                if not grow.any():
                    break
                hi = np.where(grow, 2 * hi, hi)
            at_hi = self.slope(hi, active) - c[active]
            full = at_hi >= 0
            found = _root(lambda z, cols: self.slope(z, active[cols]) - c[active[cols]], np.zeros(len(active)),
                          at_zero[active] - c[active], hi, at_hi)  # fmt: skip
            x[active] = np.where(full & ~unbounded, room[active], found)
            x[active[full & unbounded]] = np.inf
        slope = np.zeros(self.sp.n)
        cols = np.flatnonzero((x > 0) & (x < room) & np.isfinite(x))
        if slopes and len(cols):
            step = INVERSE_STEP * np.maximum(x[cols], 1.0)
            up, down = x[cols] + step, np.maximum(x[cols] - step, 0.0)
            curvature = (self.slope(up, cols) - self.slope(down, cols)) / (up - down)
            slope[cols] = np.where(curvature < 0, 1.0 / np.where(curvature < 0, curvature, -1.0), 0.0)
        return x[None], slope[None]

    def values(self, x: np.ndarray, sel: np.ndarray) -> np.ndarray:
        """Σ_s V_s(x_s) (:meth:`Terms.values`) [own-hour equivalents]."""
        e = self.rate * (self.a.held + x[0])[None, :]
        v = np.asarray(value.value(e, self.a.curve, self.k, self.a.shape), dtype=float)
        return np.array([float(np.sum(self.p * v))])


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
