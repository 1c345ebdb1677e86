"""The value of effective hours: saturation curves, shelf life, effective hours.

Pure, vectorised functions. ``curve`` may be one name or an array of names, one per source;
``k`` is the saturation scale [effective h] and ``shape`` the power exponent β or the hill
steepness s [1]. The curves' formulas are the entries of :data:`procure.curves.REGISTRY`; the
functions here apply each entry to the sources of its curve (a mask per curve name) and give
NaN for a name the registry does not know. Every curve has ``v(0) = 0``; all but hill with
``s ≠ 1`` have ``v'(0) = 1``, so at small volumes an effective hour is worth one own-hour
equivalent.

Hill with ``s > 1`` is S-shaped (convex, then concave): not concave, so the program treats it
with binary variables (:mod:`procure.program`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ...arrays import ArrayLike
from ...arrays import like as _like
from ...curves import MOST_SHAPE, REGISTRY, Curve, CurveFunction

#: Curves that are concave whatever their shape.
CONCAVE = tuple(name for name, c in REGISTRY.items() if bool(c.concave(np.asarray(MOST_SHAPE))))


def _by_curve(
    formula: Callable[[Curve], CurveFunction], x: ArrayLike, curve: ArrayLike, k: ArrayLike, shape: ArrayLike
) -> np.ndarray:
    """``formula`` of each element's curve at ``x``, NaN for an unknown curve (broadcast shape)."""
    as_float = (np.asarray(v, dtype=float) for v in (x, k, shape))
    x_, k_, s_, c = np.broadcast_arrays(*as_float, np.asarray(curve))
    out = np.full(x_.shape, np.nan)
    with np.errstate(all="ignore"):
        for entry in REGISTRY.values():
            mask = c == entry.name
            if mask.any():
                out[mask] = formula(entry)(x_[mask], k_[mask], s_[mask])
    return out


def value(e: ArrayLike, curve: ArrayLike, k: ArrayLike = np.nan, shape: ArrayLike = np.nan) -> ArrayLike:
    """Value of ``e`` effective hours [own-hour equivalents].

    Parameters
    ----------
    e : array_like
        Effective hours [h], ≥ 0.
    curve : array_like of str
        A name of :data:`procure.curves.REGISTRY` (``linear``, ``log``, ``exp``, ``power``, ``hill``, ``logistic``).
    k : array_like
        Saturation scale [effective h] (unused by linear).
    shape : array_like
        β for power, s for hill [1].
    """
    return _like(_by_curve(lambda c: c.value, e, curve, k, shape), e, curve, k, shape)


def derivative(e: ArrayLike, curve: ArrayLike, k: ArrayLike = np.nan, shape: ArrayLike = np.nan) -> ArrayLike:
    """Marginal value of an effective hour, ``v'(e)`` [own-hour equivalents per effective h]."""
    return _like(_by_curve(lambda c: c.derivative, e, curve, k, shape), e, curve, k, shape)


def hill_turn(k: ArrayLike, shape: ArrayLike) -> np.ndarray:
    """Effective hours of an S-shaped hill curve's inflection, ``k ((s − 1)/(s + 1))^(1/s)``
    (``s > 1``): convex before it, concave after it, steepest at it [effective h]."""
    k, s = np.asarray(k, dtype=float), np.asarray(shape, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(k * ((s - 1.0) / (s + 1.0)) ** (1.0 / s), dtype=float)


def hill_turn_hours(rate: ArrayLike, held: ArrayLike, k: ArrayLike, shape: ArrayLike) -> np.ndarray:
    """Hours bought at which a hill curve read at ``rate · (held + hours)`` reaches its
    inflection (:func:`hill_turn`), ``e_turn / rate − held`` (negative where the hours held pass
    it; inf where the rate is 0) [h]."""
    rate, held = np.asarray(rate, dtype=float), np.asarray(held, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.where(rate > 0, hill_turn(k, shape) / rate - held, np.inf), dtype=float)


def is_concave(curve: ArrayLike, shape: ArrayLike = np.nan) -> ArrayLike:
    """True where the curve is concave: all but hill with ``s > 1`` (False for an unknown name)."""
    c, s = np.broadcast_arrays(np.asarray(curve), np.asarray(shape, dtype=float))
    out = np.zeros(c.shape, dtype=bool)
    for entry in REGISTRY.values():
        mask = c == entry.name
        if mask.any():
            out[mask] = entry.concave(s[mask])
    return _like(out, curve, shape)


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
    above ``v'(0)``; ``inf`` for linear where the slope is below 1) [effective h].

    Where water-filling stops a source: the effective hours at which its marginal value has
    fallen to ``slope``. For an S-shaped hill curve (``s > 1``), the point on its concave
    side, beyond its steepest point (0 where the slope is above every slope of that side).
    """
    out = _by_curve(lambda c: c.inverse_derivative, slope, curve, k, shape)
    return _like(np.maximum(out, 0.0), slope, curve, k, shape)
