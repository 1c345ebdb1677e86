"""The value of effective hours (DESIGN.md §4): saturation curves, shelf life, effective hours.

Pure, vectorised functions. ``curve`` may be one name or an array of names, one per source;
``k`` is the saturation scale [effective h] and ``shape`` the power exponent β or the hill
steepness s [1]. Every curve has ``v(0) = 0``; all but hill with ``s ≠ 1`` have ``v'(0) = 1``,
so at small volumes an effective hour is worth one own-hour equivalent.

========  =====================================  ==============================
curve     v(e)                                   v'(e)
========  =====================================  ==============================
linear    e                                      1
log       k ln(1 + e/k)                          1 / (1 + e/k)
exp       k (1 − exp(−e/k))                      exp(−e/k)
power     k ((1 + e/k)^β − 1) / β,  0 < β ≤ 1    (1 + e/k)^(β − 1)
hill      k u / (1 + u),  u = (e/k)^s            s (e/k)^(s−1) / (1 + u)²
========  =====================================  ==============================

Hill with ``s > 1`` is S-shaped (convex, then concave): not concave, so the program treats it
with binary variables (:mod:`procure.program`).
"""

from __future__ import annotations

import math

import numpy as np

from ..arrays import ArrayLike
from ..arrays import like as _like

CONCAVE = ("linear", "log", "exp", "power")


def _arrays(e: ArrayLike, curve: ArrayLike, k: ArrayLike, shape: ArrayLike) -> tuple[np.ndarray, ...]:
    e_ = np.asarray(e, dtype=float)
    c = np.asarray(curve)
    k_ = np.asarray(k, dtype=float)
    s_ = np.asarray(shape, dtype=float)
    return np.broadcast_arrays(e_, c, k_, s_)


def value(e: ArrayLike, curve: ArrayLike, k: ArrayLike = np.nan, shape: ArrayLike = np.nan) -> ArrayLike:
    """Value of ``e`` effective hours [own-hour equivalents].

    Parameters
    ----------
    e : array_like
        Effective hours [h], ≥ 0.
    curve : array_like of str
        ``linear``, ``log``, ``exp``, ``power`` or ``hill``.
    k : array_like
        Saturation scale [effective h] (unused by linear).
    shape : array_like
        β for power, s for hill [1].
    """
    e_, c, k_, s_ = _arrays(e, curve, k, shape)
    out = np.empty(e_.shape)
    with np.errstate(all="ignore"):
        r = e_ / k_
        out = np.select(
            [c == "linear", c == "log", c == "exp", c == "power", c == "hill"],
            [
                e_,
                k_ * np.log1p(r),
                -k_ * np.expm1(-r),
                k_ * np.expm1(s_ * np.log1p(r)) / s_,
                k_ * np.where(r > 0, 1.0 / (1.0 + r ** (-s_)), 0.0),
            ],
            np.nan,
        )
    return _like(out, e, curve, k, shape)


def derivative(e: ArrayLike, curve: ArrayLike, k: ArrayLike = np.nan, shape: ArrayLike = np.nan) -> ArrayLike:
    """Marginal value of an effective hour, ``v'(e)`` [own-hour equivalents per effective h]."""
    e_, c, k_, s_ = _arrays(e, curve, k, shape)
    with np.errstate(all="ignore"):
        r = e_ / k_
        u = r**s_
        hill = np.where(r > 0, s_ * r ** (s_ - 1) / (1 + u) ** 2, np.where(s_ == 1, 1.0, np.where(s_ < 1, np.inf, 0.0)))
        out = np.select(
            [c == "linear", c == "log", c == "exp", c == "power", c == "hill"],
            [np.ones_like(e_), 1.0 / (1.0 + r), np.exp(-r), (1.0 + r) ** (s_ - 1.0), hill],
            np.nan,
        )
    return _like(out, e, curve, k, shape)


def is_concave(curve: ArrayLike, shape: ArrayLike = np.nan) -> ArrayLike:
    """True where the curve is concave: all but hill with ``s > 1``."""
    c = np.asarray(curve)
    s = np.asarray(shape, dtype=float)
    return _like(np.isin(c, CONCAVE) | ((c == "hill") & (s <= 1)), curve, shape)


def tangent(point: ArrayLike, curve: ArrayLike, k: ArrayLike, shape: ArrayLike) -> tuple[ArrayLike, ArrayLike]:
    """Slope and intercept of the tangent to ``v`` at ``point``: ``v(e) ≤ slope·e + intercept``
    for every ``e`` when the curve is concave."""
    slope = derivative(point, curve, k, shape)
    return slope, value(point, curve, k, shape) - slope * np.asarray(point, dtype=float)


def per_usd(marginal_value: ArrayLike, cost: ArrayLike) -> ArrayLike:
    """Marginal value per dollar, ``v'·ρσφ / (p + t + charges)`` [value per $]; ∞ for a free hour.

    Parameters
    ----------
    marginal_value : array_like
        Value of the next recorded hour, ``v'(e) · ρσφ`` [own-hour equivalents per h].
    cost : array_like
        What that hour costs, all in [$/h].
    """
    mv = np.asarray(marginal_value, dtype=float)
    c = np.asarray(cost, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(c > 0, mv / np.where(c > 0, c, 1.0), np.inf)
    return _like(out, marginal_value, cost)


def shelf_life_factor(shelf_life_months: ArrayLike, horizon_months: ArrayLike) -> ArrayLike:
    """Mean of ``2^(−t/L)`` over the planning horizon H, φ [1].

    ``φ = L / (H ln 2) · (1 − 2^(−H/L))``; 1 when L is infinite or H is 0.
    """
    L = np.asarray(shelf_life_months, dtype=float)
    H = np.asarray(horizon_months, dtype=float)
    with np.errstate(all="ignore"):
        x = H / L
        phi = np.where(np.isinf(L) | (H == 0), 1.0, -np.expm1(-x * math.log(2)) / np.where(x > 0, x * math.log(2), 1.0))
    return _like(phi, shelf_life_months, horizon_months)


def effective_rate(
    exchange_rate: ArrayLike, survival: ArrayLike, shelf_life_months: ArrayLike, horizon_months: ArrayLike
) -> ArrayLike:
    """Effective hours per recorded hour, ``ρ σ φ`` [1]."""
    return exchange_rate * survival * shelf_life_factor(shelf_life_months, horizon_months)


def inverse_derivative(
    slope: ArrayLike, curve: ArrayLike, k: ArrayLike = np.nan, shape: ArrayLike = np.nan
) -> ArrayLike:
    """Effective hours at which ``v'(e) = slope``, for the concave curves (0 where the slope is
    above ``v'(0)``; ``inf`` for linear where the slope is below 1).

    Where water-filling stops a source: the effective hours at which its marginal value has
    fallen to ``slope``.
    """
    y, c, k_, s_ = _arrays(slope, curve, k, shape)
    with np.errstate(all="ignore"):
        out = np.select(
            [c == "linear", c == "log", c == "exp", c == "power", c == "hill"],
            [
                np.where(y >= 1, 0.0, np.inf),
                k_ * (1.0 / y - 1.0),
                -k_ * np.log(y),
                k_ * (y ** (1.0 / (s_ - 1.0)) - 1.0),
                k_,  # hill: its half-saturation point
            ],
            np.nan,
        )
        out = np.where(np.isnan(out) & (c == "power") & (s_ == 1), np.where(y >= 1, 0.0, np.inf), out)
    return _like(np.maximum(out, 0.0), slope, curve, k, shape)
