"""What bounds each curve of the model from above: tangent cuts and the hill curves' piecewise forms.

Every curve enters the model through a form that lies on or above it, so the model's optimum
bounds the true optimum from above:

* a concave curve through tangent cuts on its epigraph variable, ``z_j ≤ v(ê) + v'(ê)(e_j − ê)``,
  written in the curve's hours ``w_j`` (``e_j = a_j (h0_j + w_j)``) as
  ``z_j − v'(ê) a_j w_j ≤ v'(ê) a_j h0_j + v(ê) − v'(ê) ê``. The cuts of one round are one
  block of the model, ``m.cuts[r].rows``, indexed by the cut's place in the round; the block
  also keeps the curve and tangent point of each row (``cut_curve``, ``cut_point``) and the
  row's coefficient and right-hand side (``cut_coef``, ``cut_rhs``), from which the rows were
  built, so that
  the hand-over to HiGHS (:mod:`procure.program.model.highs`) appends the same rows;
* an S-shaped hill curve (``s > 1``) through a piecewise-linear form with incremental binaries
  (Pyomo ``Piecewise``, ``INC``) whose breakpoint values are the curve's plus the largest amount
  by which the curve rises above its chords on the neighbouring segments.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression, MonomialTermExpression

from ...curves import smallest_tangent_hours
from ..numbers import value
from ..numbers.bounds import CurveArrays


class CurveModel(Protocol):
    """What the forms need of a built model (:class:`procure.program.model.build.BuiltModel`)."""

    model: pyo.ConcreteModel
    arrays: CurveArrays
    arguments: list[Any]
    cut_keys: set[tuple[int, float]]
    hill_breakpoints: dict[int, np.ndarray]


#: Breakpoints of the first piecewise form of a hill curve with s > 1.
DEFAULT_HILL_POINTS = 17
#: First tangent points, in units of the curve's saturation scale k.
INITIAL_CUT_POINTS = (0.0, 0.3, 1.0, 3.0)
#: Bisection steps that bracket the point where a hill curve rises most above a chord: each
#: halves the bracket, whose width (times the largest slope) is added to the rise.
ROOT_STEPS = 80
#: Relative float error allowed for in evaluating a hill curve's rise above a chord: a few
#: hundred units in the last place of the values involved [1].
FLOAT_MARGIN = 1e-13
#: Two tangent points of one curve closer than this share of the curve's scale are one [1].
SAME_POINT = 1e-12


def initial_points(arrays: CurveArrays) -> tuple[np.ndarray, np.ndarray]:
    """Curves and effective hours at which the first tangents touch the concave curves: the
    held point, :data:`INITIAL_CUT_POINTS` times the scale (within the curve's range) and the
    end of the range; one point for a linear curve or a curve that adds no effective hours."""
    a = arrays
    lo = a.rate * a.held
    hi = a.rate * (a.held + a.upper)
    scaled = np.clip(np.outer(a.k, INITIAL_CUT_POINTS), lo[:, None], hi[:, None])
    points = np.column_stack([lo, scaled, hi])
    single = (a.curve == "linear") | (a.rate == 0)
    points[single, 1:] = np.nan
    points[~a.concave] = np.nan
    flat = points.ravel()
    keep = np.isfinite(flat)
    return np.repeat(np.arange(len(lo)), points.shape[1])[keep], flat[keep]


def tangent_rows(
    arrays: CurveArrays, curves: np.ndarray, points: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The tangent cuts of ``curves`` at effective hours ``points`` as rows
    ``z_j + coef·w_j ≤ rhs``: ``coef = −slope·a_j``, ``rhs = slope·a_j·h0_j + intercept``."""
    a = arrays
    curves = np.asarray(curves, dtype=np.int64)
    slope, intercept = value.tangent(np.asarray(points, float), a.curve[curves], a.k[curves], a.shape[curves])
    slope = np.asarray(slope, dtype=float)
    return curves, -slope * a.rate[curves], slope * a.rate[curves] * a.held[curves] + intercept


def add_cuts(built: CurveModel, curves: np.ndarray, points: np.ndarray) -> int:
    """Add the tangents of ``curves`` at effective hours ``points`` to the model, as one new
    block of ``m.cuts``; a point where the curve already has a cut is left out (no cut twice).

    Returns
    -------
    int
        The number of cuts added.
    """
    a, m = built.arrays, built.model
    curves = np.asarray(curves, dtype=np.int64)
    points = np.asarray(points, dtype=float)
    # A curve that is vertical at 0 (hill with s < 1) takes its tangent a little to the right.
    points = np.maximum(points, smallest_tangent_hours(a.curve[curves], a.k[curves]))
    # a cut's identity: its curve and its point in units of SAME_POINT of the curve's scale
    scale = SAME_POINT * np.maximum(1.0, np.where(np.isfinite(a.k[curves]), a.k[curves], 1.0))
    keep = []
    for j, key in enumerate(zip(curves.tolist(), np.round(points / scale).tolist(), strict=True)):
        if key not in built.cut_keys:
            built.cut_keys.add(key)
            keep.append(j)
    if not keep:
        return 0
    block = m.cuts[len(m.cuts)]
    block.cut_curve, block.cut_coef, block.cut_rhs = tangent_rows(a, curves[keep], points[keep])
    block.cut_point = points[keep]
    j_, c_, r_ = block.cut_curve.tolist(), block.cut_coef.tolist(), block.cut_rhs.tolist()
    z = [m.z[i] for i in j_]
    w = [built.arguments[i] for i in j_]
    block.Q = pyo.RangeSet(0, len(j_) - 1)

    def cut_rule(_b: pyo.Block, q: int) -> object:
        """Tangent cut q of the round, its two terms given as Pyomo's own (the quickest linear body to build)."""
        return LinearExpression([MonomialTermExpression((1.0, z[q])), MonomialTermExpression((c_[q], w[q]))]) <= r_[q]

    block.rows = pyo.Constraint(block.Q, rule=cut_rule)
    return len(j_)


def cut_points(model: pyo.ConcreteModel) -> tuple[np.ndarray, np.ndarray]:
    """Every tangent point of the model's cuts, as arrays of curves and effective hours."""
    blocks = [model.cuts[r] for r in sorted(model.cuts)]
    if not blocks:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    return np.concatenate([b.cut_curve for b in blocks]), np.concatenate([b.cut_point for b in blocks])


def add_curve_forms(
    built: CurveModel,
    cuts: Sequence[tuple[int, float]],
    hill_points: int,
    hill_breakpoints: Mapping[int, np.ndarray] | None,
    argument: Any,
    *,
    first_cuts: bool = True,
) -> None:
    """What bounds each curve of a built model from above: the first tangent cuts of the concave
    curves and the ``cuts`` kept from a model it replaces, and the piecewise forms ``m.hill``
    over ``m.H`` of the S-shaped ones, in the curves' hours ``argument`` (an indexed variable).
    ``first_cuts=False`` leaves out the first cuts: for a model whose cuts the dual places
    (:mod:`procure.program.solve.refine`), which gives every curve one before the first solve."""
    a, m = built.arrays, built.model
    count = len(a.rate)
    m.cuts = pyo.Block(pyo.NonNegativeIntegers)
    curves, points = initial_points(a) if first_cuts else (np.zeros(0, dtype=np.int64), np.zeros(0))
    kept = [(i, p) for i, p in cuts if 0 <= i < count and a.concave[i]]
    curves = np.concatenate([curves, np.array([i for i, _ in kept], dtype=np.int64)])
    points = np.concatenate([points, np.array([p for _, p in kept], dtype=float)])
    add_cuts(built, curves, points)
    hill = np.flatnonzero(~a.concave).tolist()
    m.H = pyo.Set(initialize=hill, ordered=True)
    if hill:
        given = hill_breakpoints or {}
        xs = built.hill_breakpoints = {i: _breakpoints(a.upper[i], hill_points, given.get(i), a.bound[i]) for i in hill}
        pts, uppers = {i: list(x) for i, x in xs.items()}, hill_upper_values(a, hill, list(xs.values()))
        tops = {i: list(top) for i, top in zip(hill, uppers, strict=True)}
        m.hill = pyo.Piecewise(
            m.H, m.z, argument, pw_pts=pts, pw_constr_type="UB", pw_repn="INC", warning_tol=-1.0, f_rule=tops
        )


def _breakpoints(upper: float, count: int, given: np.ndarray | None, bound: float) -> np.ndarray:
    """Breakpoints over [0, upper] hours, the curve's range: ``given`` clipped to the range and
    continued evenly, or ``count`` evenly spaced. Where the curve's bound in the model lies
    beyond its range (:data:`procure.program.numbers.bounds.DERIVED_BOUND`: a row holds the
    range), the last segment reaches that bound instead of ending at ``upper``, and ``given``'s
    points there are kept: hours a row stops at its limit then lie inside a segment, where the
    form bounds nothing and the row carries the limit's price. A curve that cannot be bought
    (upper 0) keeps distinct breakpoints over [0, 1]; its hours are 0 anyway."""
    top = upper if upper > 0 else 1.0
    beyond = upper > 0 and bound > upper
    end = bound if beyond else top
    if given is None or len(given) < 2:
        kept = np.linspace(0.0, top, count)
    else:
        kept = np.unique(np.clip(np.asarray(given, dtype=float), 0.0, end))
        if kept[0] > 0:
            kept = np.concatenate([[0.0], kept])
        if kept[-1] < top:
            step = top / max(count - 1, 1)
            more = np.linspace(kept[-1], top, max(2, math.ceil((top - kept[-1]) / step) + 1))[1:]
            kept = np.concatenate([kept, more])
    if beyond and kept[-1] <= top:  # the range's end is no breakpoint
        kept = np.concatenate([kept[:-1], [end]])
    elif beyond and kept[-1] < end:
        kept = np.concatenate([kept, [end]])
    return kept


def refined_breakpoints(xs: np.ndarray, at: float) -> np.ndarray:
    """``xs`` with the segment holding ``at`` and its two neighbours split in half: where the
    piecewise form's lift above the curve, which comes from those segments, is largest."""
    j = int(np.clip(np.searchsorted(xs, at, side="right") - 1, 0, len(xs) - 2))
    lo, hi = max(j - 1, 0), min(j + 1, len(xs) - 2)
    mids = 0.5 * (xs[lo : hi + 1] + xs[lo + 1 : hi + 2])
    return np.unique(np.concatenate([xs, mids]))


def chord_rise(
    rate: np.ndarray, held: np.ndarray, k: np.ndarray, shape: np.ndarray, x0: np.ndarray, x1: np.ndarray
) -> np.ndarray:
    """Largest amount by which a hill curve with s > 1 rises above its chord on the segment
    [x0, x1] of its hours, bounded from above with a proven margin [value]. Every argument is an
    array over segments (each segment with its curve's rate, held hours, scale and shape), so
    the segments of every S-shaped curve of a model are bounded in one pass.

    The rise above a chord of slope ``m`` peaks where the curve's slope ``f'`` falls through ``m``
    past the inflection point; :data:`ROOT_STEPS` bisection steps bracket it, and the bracket's
    width times ``max f' + |m|`` and the float error (:data:`FLOAT_MARGIN` of the values involved)
    are added.
    See ``docs/certification.md``, "Why the form lies above the curve: a proof".
    """

    def f(x: np.ndarray) -> np.ndarray:
        return np.asarray(value.value(rate * (held + x), "hill", k, shape), dtype=float)

    def slope(x: np.ndarray) -> np.ndarray:
        return rate * np.asarray(value.derivative(rate * (held + x), "hill", k, shape), dtype=float)

    width = x1 - x0
    f0, f1 = f(x0), f(x1)
    m = (f1 - f0) / np.where(width > 0, width, 1.0)
    steepest = rate * np.asarray(value.derivative(value.hill_turn(k, shape), "hill", k, shape), dtype=float)
    lo = np.clip(value.hill_turn_hours(rate, held, k, shape), x0, x1)  # where the falling part of the segment starts
    hi = x1.copy()
    has = (width > 0) & (slope(lo) > m) & (slope(x1) < m)
    for _ in range(ROOT_STEPS):
        mid = 0.5 * (lo + hi)
        rising = slope(mid) > m
        lo, hi = np.where(rising, mid, lo), np.where(rising, hi, mid)
    at = 0.5 * (lo + hi)
    f_at = f(at)
    rise = f_at - f0 - m * (at - x0)
    float_error = FLOAT_MARGIN * (np.abs(f_at) + np.abs(f0) + np.abs(f1) + np.abs(m * width))
    bracket = (steepest + np.abs(m)) * (hi - lo)
    return np.where(has, np.maximum(rise, 0.0) + bracket, 0.0) + np.where(width > 0, float_error, 0.0)


def hill_upper_values(arrays: CurveArrays, curves: Sequence[int], xs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Values of piecewise-linear forms through the breakpoints ``xs[j]`` of curve ``curves[j]``
    that lie on or above each curve: the curve's value at each breakpoint plus the larger rise
    of the curve above its chord on the two neighbouring segments [value], every curve's
    segments bounded together (:func:`chord_rise`)."""
    a = arrays
    index = np.asarray(curves, dtype=np.int64)
    counts = np.array([len(x) - 1 for x in xs], dtype=np.int64)
    owner = np.repeat(index, counts)
    x0 = np.concatenate([np.asarray(x, dtype=float)[:-1] for x in xs])
    x1 = np.concatenate([np.asarray(x, dtype=float)[1:] for x in xs])
    rises = np.split(chord_rise(a.rate[owner], a.held[owner], a.k[owner], a.shape[owner], x0, x1),
                     np.cumsum(counts)[:-1])  # fmt: skip
    at = np.repeat(index, counts + 1)
    points = np.concatenate([np.asarray(x, dtype=float) for x in xs])
    v = np.asarray(value.value(a.rate[at] * (a.held[at] + points), a.curve[at], a.k[at], a.shape[at]), float)
    values = np.split(v, np.cumsum(counts + 1)[:-1])
    return [
        top + np.maximum(np.concatenate([[0.0], rise]), np.concatenate([rise, [0.0]]))
        for top, rise in zip(values, rises, strict=True)
    ]
