"""The value curves, one :class:`Curve` entry each: formulas, concavity, scale and shape.

A curve gives the value ``v(e)`` of ``e`` effective hours [own-hour equivalents] with a
saturation scale ``k`` [effective h] and a shape ``s`` [1] (the power exponent β, the hill
steepness s). Every curve has ``v(0) = 0``; all but hill with ``s ≠ 1`` have ``v'(0) = 1``.

========  =====================================  ==============================
curve     v(e), r = e/k                          v'(e)
========  =====================================  ==============================
linear    e                                      1
log       k ln(1 + r)                            1 / (1 + r)
exp       k (1 − exp(−r))                        exp(−r)
power     k ((1 + r)^β − 1) / β,  0 < β ≤ 1      (1 + r)^(β − 1)
hill      k u / (1 + u),  u = r^s                s r^(s−1) / (1 + u)²
logistic  2k (1 − exp(−r)) / (1 + exp(−r))       sech²(r / 2)
========  =====================================  ==============================

The logistic curve is PyMC-Marketing's ``LogisticSaturation``,
``β (1 − exp(−λx)) / (1 + exp(−λx))``, with ``λ = 1/k`` and ``β = 2k`` so that ``v'(0) = 1``:
``v(e) = 2k tanh(e / 2k)``, concave for e ≥ 0 and saturating at 2k. A fitted (λ, β) on
recorded hours x is ``k = β/2`` with an exchange rate ``ρ = λβ/2`` (then ``v(ρx) = β tanh(λx/2)``).

The functions of an entry take numpy arrays of one curve's sources (``e``, ``k``, ``s``
broadcast together) and return an array; :mod:`procure.program.numbers.value` applies them to a mix
of curves. A new curve is one more entry of :data:`REGISTRY`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .arrays import ArrayLike, like
from .errors import InputError
from .spec import Range

#: A formula of one curve: ``f(x, k, s)`` on arrays of its sources.
CurveFunction = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]

#: Largest shape a curve takes [1]: a hill steeper than this is a step.
MOST_SHAPE = 20.0
#: Smallest tangent point of a hill curve, in units of its scale k: a hill curve with s < 1 is
#: vertical at 0, so its first tangent touches at 1e-6 k instead [1].
HILL_SMALLEST_TANGENT_POINT = 1e-6
#: Bracket of ln(e/k) in which the hill curve's v' is inverted by bisection [1].
HILL_LOG_RATIO_BRACKET = (-700.0, 700.0)
#: Bisection steps of that inversion: the bracket's width halved to below 1e-16 [1].
HILL_BISECTION_STEPS = 80


# --------------------------------------------------------------------------- formulas


def _quiet(formula: CurveFunction) -> CurveFunction:
    """``formula`` with numpy's warnings off: 0/0, x/0 and overflow give NaN and ±inf, which the
    formulas pick from with ``np.where``."""

    @functools.wraps(formula)
    def run(x: np.ndarray, k: np.ndarray, s: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return formula(x, k, s)

    return run


@_quiet
def _linear_value(e: np.ndarray, k: np.ndarray, s: np.ndarray) -> np.ndarray:
    return e.astype(float)


@_quiet
def _linear_derivative(e: np.ndarray, k: np.ndarray, s: np.ndarray) -> np.ndarray:
    return np.ones_like(e, dtype=float)


@_quiet
def _linear_inverse(y: np.ndarray, k: np.ndarray, s: np.ndarray) -> np.ndarray:
    """0 where the slope is at least 1, ``inf`` where it is below (v' is 1 everywhere)."""
    return np.where(y >= 1, 0.0, np.inf)


@_quiet
def _log_value(e: np.ndarray, k: np.ndarray, s: np.ndarray) -> np.ndarray:
    return k * np.log1p(e / k)


@_quiet
def _log_derivative(e: np.ndarray, k: np.ndarray, s: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + e / k)


@_quiet
def _log_inverse(y: np.ndarray, k: np.ndarray, s: np.ndarray) -> np.ndarray:
    return k * (1.0 / y - 1.0)


@_quiet
def _exp_value(e: np.ndarray, k: np.ndarray, s: np.ndarray) -> np.ndarray:
    return -k * np.expm1(-e / k)


@_quiet
def _exp_derivative(e: np.ndarray, k: np.ndarray, s: np.ndarray) -> np.ndarray:
    return np.exp(-e / k)


@_quiet
def _exp_inverse(y: np.ndarray, k: np.ndarray, s: np.ndarray) -> np.ndarray:
    return -k * np.log(y)


@_quiet
def _power_value(e: np.ndarray, k: np.ndarray, s: np.ndarray) -> np.ndarray:
    return k * np.expm1(s * np.log1p(e / k)) / s


@_quiet
def _power_derivative(e: np.ndarray, k: np.ndarray, s: np.ndarray) -> np.ndarray:
    return (1.0 + e / k) ** (s - 1.0)


@_quiet
def _power_inverse(y: np.ndarray, k: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``k (y^(1/(β−1)) − 1)``; with β = 1 the curve is linear."""
    return np.where(s == 1, _linear_inverse(y, k, s), k * (y ** (1.0 / (s - 1.0)) - 1.0))


@_quiet
def _hill_value(e: np.ndarray, k: np.ndarray, s: np.ndarray) -> np.ndarray:
    r = e / k
    return k * np.where(r > 0, 1.0 / (1.0 + r ** (-s)), 0.0)


@_quiet
def _hill_derivative(e: np.ndarray, k: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``s r^(s−1) / (1 + r^s)²``; at 0: 1 for s = 1, ``inf`` for s < 1, 0 for s > 1."""
    r = e / k
    at_zero = np.where(s == 1, 1.0, np.where(s < 1, np.inf, 0.0))
    return np.where(r > 0, s * r ** (s - 1) / (1 + r**s) ** 2, at_zero)


def _hill_slope_at_log_ratio(t: np.ndarray, s: np.ndarray) -> np.ndarray:
    """The hill curve's v' at ``e/k = exp(t)`` [1]."""
    return s * np.exp((s - 1) * t) / (1 + np.exp(s * t)) ** 2


@_quiet
def _hill_inverse(y: np.ndarray, k: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Where v' falls to ``y`` on the curve's falling side (all of it for s ≤ 1; beyond the
    steepest point for s > 1): ``k (1/√y − 1)`` for s = 1, by bisection on ln(e/k) otherwise;
    0 where ``y`` is above every slope the falling side has."""
    lowest, highest = HILL_LOG_RATIO_BRACKET
    # The steepest point of an S-shaped curve: r^s = (s − 1) / (s + 1).
    steepest = np.where(s > 1, np.log(np.where(s > 1, (s - 1) / (s + 1), 1.0)) / s, lowest)
    lo, hi = steepest.astype(float), np.full_like(steepest, highest, dtype=float)
    for _ in range(HILL_BISECTION_STEPS):
        mid = (lo + hi) / 2
        right = _hill_slope_at_log_ratio(mid, s) > y
        lo, hi = np.where(right, mid, lo), np.where(right, hi, mid)
    solved = k * np.exp((lo + hi) / 2)
    start = np.where(s > 1, _hill_slope_at_log_ratio(steepest, s), np.inf)
    solved = np.where(y >= start, 0.0, np.where(y > 0, solved, np.inf))
    out = np.where(s == 1, k * (1.0 / np.sqrt(y) - 1.0), solved)
    return np.where(np.isnan(y) | np.isnan(s), np.nan, out)


@_quiet
def _logistic_value(e: np.ndarray, k: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``2k tanh(e / 2k)``: ``(1 − exp(−e/k)) / (1 + exp(−e/k))`` times 2k."""
    return 2.0 * k * np.tanh(e / (2.0 * k))


@_quiet
def _logistic_derivative(e: np.ndarray, k: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``sech²(e / 2k) = 4w / (1 + w)²`` with ``w = exp(−|e|/k)``: no overflow, 0 far out."""
    w = np.exp(-np.abs(e / k))
    return 4.0 * w / (1.0 + w) ** 2


@_quiet
def _logistic_inverse(y: np.ndarray, k: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``2k artanh(√(1 − y)) = 2k (ln(1 + u) − ln(y)/2)``, ``u = √(1 − y)`` (no cancellation
    near y = 1 or y = 0); 0 where ``y ≥ 1``, ``inf`` where ``y ≤ 0``."""
    u = np.sqrt(np.clip(1.0 - y, 0.0, 1.0))
    solved = 2.0 * k * (np.log1p(u) - 0.5 * np.log(np.where(y > 0, y, 1.0)))
    out = np.where(y >= 1, 0.0, np.where(y > 0, solved, np.inf))
    return np.where(np.isnan(y), np.nan, out)


def _always(s: np.ndarray) -> np.ndarray:
    return np.ones(np.shape(s), dtype=bool)


def _hill_concave(s: np.ndarray) -> np.ndarray:
    """Concave only for s ≤ 1; with s > 1 it is S-shaped (convex, then concave)."""
    return np.asarray(s <= 1, dtype=bool)


# --------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class Curve:
    """One value curve: its formulas and what the ledger and the program need to know of it.

    Attributes
    ----------
    name : str
        The name a ledger's ``curve`` column gives.
    value : CurveFunction
        ``v(e, k, s)`` [own-hour equivalents], for ``e`` effective hours [h].
    derivative : CurveFunction
        ``v'(e, k, s)`` [own-hour equivalents per effective h].
    inverse_derivative : CurveFunction
        ``e(y, k, s)`` at which ``v'(e) = y`` [effective h], on the concave side of the curve.
    concave : callable
        ``concave(shape)``: True where the curve is concave for that shape [bool].
    needs_scale : bool
        Whether the curve needs a saturation scale k (linear does not).
    default_shape : float
        The shape a blank ``curve_shape`` takes [1]; NaN for a curve without a shape.
    shape_range : Range or None
        The shapes the curve allows; None for a curve without a shape.
    shape_symbol : str
        The shape's symbol in the documentation ("β", "s").
    smallest_tangent_point : float
        The smallest effective hours at which the program may touch the curve with a tangent,
        in units of k [1]: where the curve is vertical at 0, a little to the right of it.
    """

    name: str
    value: CurveFunction
    derivative: CurveFunction
    inverse_derivative: CurveFunction
    concave: Callable[[np.ndarray], np.ndarray] = _always
    needs_scale: bool = True
    default_shape: float = math.nan
    shape_range: Range | None = None
    shape_symbol: str = ""
    smallest_tangent_point: float = 0.0


#: Every curve by the name a ledger gives it: the one definition of each curve.
REGISTRY: dict[str, Curve] = {
    c.name: c
    for c in (
        Curve("linear", _linear_value, _linear_derivative, _linear_inverse, needs_scale=False),
        Curve("log", _log_value, _log_derivative, _log_inverse),
        Curve("exp", _exp_value, _exp_derivative, _exp_inverse),
        Curve(
            "power",
            _power_value,
            _power_derivative,
            _power_inverse,
            default_shape=0.5,
            shape_range=Range("curve_shape", "1", low=0.0, low_open=True, high=1.0, note="concave"),
            shape_symbol="β",
        ),
        Curve(
            "hill",
            _hill_value,
            _hill_derivative,
            _hill_inverse,
            concave=_hill_concave,
            default_shape=2.0,
            shape_range=Range("curve_shape", "1", low=0.0, low_open=True, high=MOST_SHAPE),
            shape_symbol="s",
            smallest_tangent_point=HILL_SMALLEST_TANGENT_POINT,
        ),
        Curve("logistic", _logistic_value, _logistic_derivative, _logistic_inverse),
    )
}
#: The curves' names, in the registry's order.
NAMES = tuple(REGISTRY)


def get(name: str) -> Curve:
    """The entry of curve ``name``.

    Raises
    ------
    InputError
        An unknown name.
    """
    if name not in REGISTRY:
        raise InputError(f"curve = {name!r} is invalid: allowed are one of {', '.join(NAMES)}")
    return REGISTRY[name]


def shaped() -> tuple[Curve, ...]:
    """The curves that take a shape."""
    return tuple(c for c in REGISTRY.values() if c.shape_range is not None)


def shape_range() -> Range:
    """The shapes some curve allows: from the lowest lower bound to the highest upper bound."""
    ranges = [c.shape_range for c in shaped() if c.shape_range is not None]
    low = min(r.low for r in ranges)
    high = max(r.high for r in ranges)
    return Range(
        "curve_shape",
        "1",
        low=low,
        high=high,
        low_open=all(r.low_open for r in ranges if r.low == low),
        high_open=all(r.high_open for r in ranges if r.high == high),
    )


def lookup(curve: ArrayLike, attribute: Callable[[Curve], float], fill: float = math.nan) -> np.ndarray:
    """``attribute`` of each element's curve, ``fill`` for an unknown name [the attribute's unit].

    Parameters
    ----------
    curve : array_like of str
        Curve names.
    attribute : callable
        What to take of an entry, e.g. ``lambda c: c.smallest_tangent_point``.
    fill : float, default NaN
        The value for a name not in :data:`REGISTRY`.
    """
    names = np.asarray(curve)
    out = np.full(names.shape, fill, dtype=float)
    for entry in REGISTRY.values():
        out[names == entry.name] = attribute(entry)
    return out


def needs_scale(curve: ArrayLike) -> ArrayLike:
    """True where the curve needs a saturation scale k (an unknown name does) [bool]."""
    return like(lookup(curve, lambda c: float(c.needs_scale), 1.0).astype(bool), curve)


def default_shape(curve: ArrayLike) -> ArrayLike:
    """The shape a blank ``curve_shape`` takes for each curve; NaN for one without [1]."""
    return like(lookup(curve, lambda c: c.default_shape), curve)


def smallest_tangent_point(curve: ArrayLike) -> ArrayLike:
    """The smallest tangent point of each curve, in units of its scale k; 0 for an unknown name [1]."""
    return like(lookup(curve, lambda c: c.smallest_tangent_point, 0.0), curve)


def smallest_tangent_hours(curve: ArrayLike, k: ArrayLike) -> ArrayLike:
    """The smallest tangent point of each curve in effective hours, ``smallest_tangent_point · k``;
    0 where the curve has none (whatever its k, even NaN) [effective h]."""
    factor = np.asarray(smallest_tangent_point(curve), dtype=float)
    scale = np.asarray(k, dtype=float)
    with np.errstate(invalid="ignore"):
        return like(np.where(factor > 0, factor * scale, 0.0), curve, k)
