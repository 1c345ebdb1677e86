"""The Lagrangian of K separable concave programs that share their sources: g, x(μ) and dx/dc.

For each problem k the few rows that couple its sources, ``A_k x ≤ b_k`` (budget, capacities,
mix bounds: :mod:`procure.program.rows`), are priced by multipliers μ_k ≥ 0 and the program
splits per source:

    g_k(μ_k) = Σ_s max_{0 ≤ x_s ≤ room_s} [V_ks(x_s) − c_ks x_s] + μ_k·b_k,   c_k = A_kᵀ μ_k.

Each inner maximum is where ``V_ks'(x) = c_ks``, clipped to the box (a source linear in its
hours takes all or nothing). g_k is convex, ∇g_k = b_k − A_k x(μ_k), and its Hessian on the
sources strictly inside their boxes is A_k diag(−dx/dc) A_kᵀ. For every μ_k ≥ 0, g_k(μ_k) is an
upper bound on problem k's optimum (weak duality).

Two kinds of term, one interface (:class:`Terms`) that :mod:`procure.program.dual.newton`
reads:

* :class:`CurveTerms`: each source's value is one curve, ``V(x) = v(ρσφ (h0 + x))``, whose
  hours at a price are in closed form (the curve's inverse derivative). K = 1 is the single
  plan; K scenarios of one problem (their own rates, scales and rows) give the wait-and-see
  values.
* :class:`~procure.program.dual.family.FamilyTerms`: each source's value is a family of curves
  weighted by the scenarios' probabilities, ``V(x) = Σ_ω π_ω v_ω(ρ_ω (h0 + x))`` (the
  expected-value program), whose hours at a price a bracketed root search finds.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ...curves import REGISTRY, Curve
from ..numbers import value
from .kinks import linear_curves, price_thresholds

#: Relative step of the central difference that gives the inverse derivative's slope [1].
INVERSE_STEP = 1e-6


def _inverse_slope(inverse: Callable[[np.ndarray], np.ndarray], y: np.ndarray) -> np.ndarray:
    """d(inverse)/dy by a central difference, its step :data:`INVERSE_STEP` of ``y`` (at most
    half of ``y`` below it)."""
    step = INVERSE_STEP * np.abs(y)
    low = np.maximum(y - step, 0.5 * y)
    return (inverse(y + step) - inverse(low)) / (y + step - low)


def hours_at_price(c: np.ndarray, rate: np.ndarray, held: np.ndarray, curve: np.ndarray, k: np.ndarray,
                   shape: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Hours where ρσφ·v'(e) equals the price ``c`` > 0 in multipliers, unclipped, and dx/dc
    (central difference of the inverse derivative) [h, h per price unit]."""

    def inverse(z: np.ndarray) -> np.ndarray:
        return np.asarray(value.inverse_derivative(z, curve, k, shape), dtype=float)

    y = c / rate
    return inverse(y) / rate - held, _inverse_slope(inverse, y) / rate**2


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
    slope = _inverse_slope(lambda z: entry.inverse_derivative(z, k, shape), safe)
    return x, np.where(priced & (xs > 0) & (xs < room), slope / rate**2, 0.0)


class Terms:
    """What the minimiser reads of K problems' Lagrangians; a subclass gives :meth:`hours` and
    :meth:`values`.

    Attributes
    ----------
    A : numpy.ndarray
        Each problem's coupling rows, K × m × n (budget first) [$ per h, unit per h, ...].
    b : numpy.ndarray
        Their right-hand sides, K × m [$, unit, ...].
    room : numpy.ndarray
        Each source's box, n [h] (inf: no end).
    linear : numpy.ndarray
        Indices of the sources linear in their hours (all or nothing at a price) with a
        positive marginal value in some problem.
    kink_rate : numpy.ndarray
        K × n, each source's marginal value of an hour where it is linear (the price in
        multipliers at its kink) [value per h]; any number for the others.
    entry, leave : numpy.ndarray
        K × n, each source's :func:`~procure.program.dual.kinks.price_thresholds` [value per h].
    evaluations : int
        Evaluations of g so far (one per call of :meth:`g`, whatever the number of problems).
    """

    A: np.ndarray
    b: np.ndarray
    room: np.ndarray
    linear: np.ndarray
    kink_rate: np.ndarray
    entry: np.ndarray
    leave: np.ndarray
    evaluations: int = 0

    def hours(self, mu: np.ndarray, sel: np.ndarray, *, slopes: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """x(μ) within each box and dx/dc where a source is strictly inside it (0 elsewhere), for
        the problems ``sel`` (μ one row per problem of ``sel``) [h, h per (value per h)]."""
        raise NotImplementedError

    def values(self, x: np.ndarray, sel: np.ndarray) -> np.ndarray:
        """Each problem's true value of hours ``x`` (rows of ``sel``) [own-hour equivalents]."""
        raise NotImplementedError

    def prices(self, mu: np.ndarray, sel: np.ndarray) -> np.ndarray:
        """Each source's price in multipliers, ``(Aᵀμ)_s``, for the problems ``sel`` [value per h]."""
        return np.einsum("kmn,km->kn", self.A[sel], mu)

    def g(self, mu: np.ndarray, sel: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """g(μ) per problem of ``sel``, x(μ) and dx/dc; g = inf where some box is unbounded at
        these prices, or where prices times hours overflow (g grows without bound there: an
        infeasible row drives its multiplier up)."""
        self.evaluations += 1
        x, slope = self.hours(mu, sel)
        finite = np.all(np.isfinite(x), axis=1)
        safe = np.where(finite[:, None], x, 0.0)
        with np.errstate(over="ignore", invalid="ignore"):
            g = self.values(safe, sel) - np.sum(self.prices(mu, sel) * safe, axis=1) + np.sum(mu * self.b[sel], axis=1)
        return np.where(finite & np.isfinite(g), g, math.inf), x, slope


class CurveTerms(Terms):
    """K problems whose sources each have one curve with its hours at a price in closed form.

    Parameters
    ----------
    rate, k : numpy.ndarray
        Each problem's rates ρσφ [1] and saturation scales [effective h], K × n.
    held, room, shape : numpy.ndarray
        Hours held [h], most hours [h] and curve shapes [1] of the n sources.
    curve : numpy.ndarray
        Curve name of each source.
    A, b : numpy.ndarray
        Coupling rows of each problem, K × m × n (budget first), and right-hand sides, K × m.
    """

    def __init__(self, rate: np.ndarray, k: np.ndarray, held: np.ndarray, room: np.ndarray, shape: np.ndarray,
                 curve: np.ndarray, A: np.ndarray, b: np.ndarray) -> None:  # fmt: skip
        self.rate, self.k, self.held, self.room, self.shape, self.A, self.b = rate, k, held, room, shape, A, b
        linear = linear_curves(curve, shape)
        self.linear = np.flatnonzero(linear & np.any(rate > 0, axis=0))
        self._all_linear = np.flatnonzero(linear)
        groups = [(entry, np.flatnonzero((curve == name) & ~linear)) for name, entry in REGISTRY.items()]
        self.groups = [(entry, idx) for entry, idx in groups if len(idx)]
        self.kink_rate = rate
        self.entry, self.leave = price_thresholds(room, self._marginal)

    def _marginal(self, x: np.ndarray) -> np.ndarray:
        """Each source's marginal value at hours bought ``x``, ρσφ·v'(ρσφ (h0 + x)) (K × n; ρσφ
        for a linear source) [value per h]."""
        e = self.rate * (self.held + x)
        dv = np.ones_like(e)
        for entry, idx in self.groups:
            dv[:, idx] = entry.derivative(e[:, idx], self.k[:, idx], self.shape[idx])
        return dv * self.rate

    def hours(self, mu: np.ndarray, sel: np.ndarray, *, slopes: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """x(μ) within each box and dx/dc (:meth:`Terms.hours`): closed form per curve."""
        c = self.prices(mu, sel)
        rate = self.rate[sel]
        x = np.zeros_like(c)
        slope = np.zeros_like(c)
        lin = self._all_linear
        x[:, lin] = np.where((rate[:, lin] > c[:, lin]) & (rate[:, lin] > 0), self.room[lin], 0.0)
        k = self.k[sel]
        with np.errstate(all="ignore"):
            for entry, idx in self.groups:
                x[:, idx], slope[:, idx] = box_hours(entry, c[:, idx], rate[:, idx], self.held[idx], k[:, idx],
                                                     self.shape[idx], self.room[idx], slopes=slopes)  # fmt: skip
        return x, slope

    def values(self, x: np.ndarray, sel: np.ndarray) -> np.ndarray:
        """Each problem's true value of hours ``x`` (:meth:`Terms.values`) [own-hour equivalents]."""
        rate = self.rate[sel]
        lin = self._all_linear
        total = np.sum(rate[:, lin] * (self.held[lin] + x[:, lin]), axis=1)
        with np.errstate(all="ignore"):
            for entry, idx in self.groups:
                e = rate[:, idx] * (self.held[idx] + x[:, idx])
                total += np.sum(entry.value(e, self.k[sel][:, idx], self.shape[idx]), axis=1)
        return total
