"""The part of λ and of a shadow price that a bound derived from that limit carries.

Where nothing else bounds a source (no availability, no capacity it uses), the model bounds
its hours by what the budget buys, ``x ≤ B / c`` (:func:`procure.program.bounds.source_arrays`).
That bound is implied by the budget row, so where the plan spends the budget on such a source
the LP is degenerate: its solver may put the budget's price on the row or on the bound. One
more dollar moves both (the bound is the budget's), so the value of one more budget dollar is

    λ = |y_budget| + Σ_s |d_s| · (B / c_s) / B = |y_budget| + Σ_s |d_s| / c_s,

over the budget-bounded columns at their bound, ``y`` the row's dual and ``d_s`` the column's
reduced cost [value per h]: the same at either end of the degenerate dual range.

A capacity bounds a source's hours in the same way, ``x_s ≤ (C − u·h0) / u_s`` where nothing
bounds it tighter, and its shadow price counts that bound's reduced cost as λ counts the
budget's: each bound is ``rhs / coefficient`` of its row, so it adds ``|d_s| · bound / rhs``.
"""

from __future__ import annotations

import numpy as np

#: Relative distance from its bound within which a column counts as at it [1]: ten times
#: HiGHS's primal feasibility tolerance, relative to the bound.
AT_BOUND = 1e-6


def bound_dual(col_dual: np.ndarray, col_value: np.ndarray, col_upper: np.ndarray, cols: np.ndarray,
               rhs: float) -> float:  # fmt: skip
    """What the bounds of columns ``cols`` derived from one limit add to its dual [value per unit].

    Parameters
    ----------
    col_dual, col_value, col_upper : numpy.ndarray
        Every column's reduced cost [value per unit], value and upper bound, of one LP solution.
    cols : numpy.ndarray
        The columns whose upper bound is the limit's right-hand side over their coefficient in
        its row (``budget / cost``, ``(C − u·h0) / u_s``) [index].
    rhs : float
        That right-hand side when the bounds were built [$ or the capacity's unit].

    Returns
    -------
    float
        Σ |reduced cost| · bound / rhs over the columns at their bound; 0 where none is, or
        where the right-hand side is not > 0.
    """
    if len(cols) == 0 or not rhs > 0:
        return 0.0
    upper = col_upper[cols]
    at = col_value[cols] >= upper * (1 - AT_BOUND)
    return float(np.sum(np.abs(col_dual[cols][at]) * upper[at]) / rhs)


def bounded_by(upper: np.ndarray, use: np.ndarray, rhs: float) -> np.ndarray:
    """Where a bound ``upper`` [h] is a capacity's: ``rhs / use`` (equal to the float rounding
    of the division that made it) [bool]."""
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.where(use > 0, rhs / use, np.inf)
    return (use > 0) & np.isfinite(upper) & (np.abs(upper - room) <= SAME_BOUND * np.abs(room))


#: Relative difference within which a source's bound is taken as a capacity's room [1].
SAME_BOUND = 1e-12
