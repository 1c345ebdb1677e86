"""λ and the shadow prices read where tangents pin each curve's slope.

Where a plan's hours are not made exact (:mod:`procure.program.solve.polish`), the duals are read
from an LP of the model with the plan's integers fixed, to which each round appends a tangent at
the point of each curve bought in part (below its bound in the model), until its nearest tangents
on both sides have slopes within :data:`DUAL_SLOPE_SHARE` of its own (on an S-shaped curve's
convex part, until it has tangents on both sides). The model, the plan's hours and its
certificate stay as certified. See ``docs/certification.md``, "λ and shadow prices: no bound
shares a limit's price".
"""

from __future__ import annotations

import time
from dataclasses import replace

import highspy
import numpy as np

from ..model.forms import cut_points, tangent_rows
from ..model.highs import LEAST_TIME_LIMIT, SolverResult
from ..numbers import value
from ..numbers.bounds import CurveArrays
from ..readout.plan import BINDING_TOLERANCE
from .state import Refined, Solving

#: Relative width of a curve's slope bracket at its point (the slopes of its nearest tangents on
#: either side, over its own slope) under which the LP's duals are read as the curves' [1].
DUAL_SLOPE_SHARE = 1e-6
#: Most rounds of tangents added to pin the slopes [rounds].
MAX_SHARPEN_ROUNDS = 40


def slope_brackets(a: CurveArrays, cut_curve: np.ndarray, cut_point: np.ndarray, e: np.ndarray,
                   curves: np.ndarray) -> np.ndarray:  # fmt: skip
    """Per curve of ``curves`` at effective hours ``e`` [h], the relative width of the bracket of
    its slope that its nearest tangents (at ``cut_point`` of ``cut_curve``) on either side give,
    over its own slope; 0 on a tangent point, inf where it has none on a side [1]."""
    if len(cut_point) == 0 or len(curves) == 0:
        return np.full(len(curves), np.inf)
    order = np.lexsort((cut_point, cut_curve))
    sc, sp = cut_curve[order], cut_point[order]
    start, end = np.searchsorted(sc, curves, "left"), np.searchsorted(sc, curves, "right")
    lo, hi = start, end
    while np.any(lo < hi):  # the first of each curve's points at or past its e, all curves at once
        mid = (lo + hi) // 2
        left = (lo < hi) & (sp[np.minimum(mid, len(sp) - 1)] < e)
        lo, hi = np.where(left, mid + 1, lo), np.where((lo < hi) & ~left, mid, hi)
    at = lo
    on = (at < end) & (sp[np.minimum(at, len(sp) - 1)] == e)  # on a tangent point: the curve's slope
    both = (at > start) & (at < end) & ~on
    below, above = sp[np.maximum(at - 1, 0)], sp[np.minimum(at, len(sp) - 1)]
    c, k, shape = a.curve[curves], a.k[curves], a.shape[curves]
    with np.errstate(all="ignore"):
        rise = np.asarray(value.derivative(below, c, k, shape), float) - np.asarray(
            value.derivative(above, c, k, shape), float
        )
        own = np.maximum(np.asarray(value.derivative(e, c, k, shape), float), np.finfo(float).tiny)
    return np.where(on, 0.0, np.where(both, rise / own, np.inf))


def sharpened(program: Solving, r: Refined, deadline: float) -> tuple[SolverResult, highspy.Highs | None]:
    """The LP of the model with ``r``'s integers fixed and tangents appended until the slopes of
    the concave curves bought in part are pinned (see the module), with its solution; ``r``'s
    solution and None (read the model's own duals) where nothing is to pin, the LP has no
    optimum, or the time runs out (:func:`time.perf_counter` ``deadline``) [s]."""
    built, hm = program.built, program.highs
    a = built.arrays
    solution, lp = r.results, None
    cut_curve, cut_point = cut_points(built.model)
    tol = BINDING_TOLERANCE * np.maximum(1.0, np.where(np.isfinite(a.bound), a.bound, 1.0))
    for _round in range(MAX_SHARPEN_ROUNDS):
        w = np.clip(np.nan_to_num(solution.w), 0.0, a.bound)
        inside = (a.rate > 0) & (a.curve != "linear") & (w > tol) & (w < a.bound - tol)
        curves = np.flatnonzero(inside)
        e = a.rate[curves] * (a.held[curves] + w[curves])
        wide = slope_brackets(a, cut_curve, cut_point, e, curves) > DUAL_SLOPE_SHARE
        if not wide.any() or time.perf_counter() > deadline:
            break
        if lp is None:
            lp = hm.fixed_lp(r.results, deadline)
            if lp is None:
                return r.results, None
        hm.add_tangent_rows(lp, *tangent_rows(a, curves[wide], e[wide]))
        cut_curve, cut_point = np.concatenate([cut_curve, curves[wide]]), np.concatenate([cut_point, e[wide]])
        lp.setOptionValue("time_limit", max(deadline - time.perf_counter(), LEAST_TIME_LIMIT))
        lp.run()  # its output is off (a HiGHS object of the hand-over's making)
        if lp.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return r.results, None
        c = np.asarray(lp.getSolution().col_value, dtype=float)[: len(r.results.columns)]
        w, x = (np.where(cols >= 0, c[np.maximum(cols, 0)], 0.0) for cols in (hm.w_cols, hm.x_cols))
        solution = replace(r.results, w=w, x=x, columns=c)
    return solution, lp
