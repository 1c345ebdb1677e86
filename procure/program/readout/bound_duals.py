"""The part of λ and of a shadow price that a bound derived from that limit carries.

Where nothing else bounds a source (no availability, no capacity it uses), the model bounds
its hours by what the budget buys, ``x ≤ B / c`` (:func:`procure.program.numbers.bounds.source_arrays`).
That bound is implied by the budget row, so where the plan spends the budget on such a source
the LP is degenerate: its solver may put the budget's price on the row or on the bound. One
more dollar moves both (the bound is the budget's), so the value of one more budget dollar is

    λ = abs(y_budget) + Σ_s abs(d_s) · (B / c_s) / B = abs(y_budget) + Σ_s abs(d_s) / c_s,

over the budget-bounded columns at their bound, ``y`` the row's dual and ``d_s`` the column's
reduced cost [value per h]: the same at either end of the degenerate dual range.

A capacity bounds a source's hours in the same way, ``x_s ≤ (C − u·h0) / u_s`` where nothing
bounds it tighter, and its shadow price counts that bound's reduced cost as λ counts the
budget's: each bound is ``rhs / coefficient`` of its row, so it adds ``abs(d_s) · bound / rhs``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from ..rows import capacity_room, mix_coefficients

if TYPE_CHECKING:
    from ..model.build import BuiltModel

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
        Σ abs(reduced cost) · bound / rhs over the columns at their bound; 0 where none is, or
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


def with_box_duals(mu: np.ndarray, A: np.ndarray, b: np.ndarray, rows: range, x: np.ndarray, box: np.ndarray,
                   slope: np.ndarray) -> np.ndarray:  # fmt: skip
    """The multipliers of the Lagrangian dual's optimum with what the boxes derived from each of
    ``rows`` (capacities: a box ``b_r / A_rs``) carry added, as :func:`bound_dual` adds them to an
    LP's duals: over the sources at such a box, Σ (v'_s − (Aᵀμ)_s) · box_s / b_r.

    Where one source fills a capacity, the dual's g is flat between the price at which the
    next source would start to buy and the filling source's own value per unit: its minimiser
    may stop at the low end, where one more unit of the capacity, which the filling source
    takes, is worth the high end.

    Parameters
    ----------
    mu : numpy.ndarray
        The dual's multipliers, one per coupling row [value per unit].
    A, b : numpy.ndarray
        The coupling rows and their right-hand sides (held hours counted).
    rows : range
        The rows whose limit gives boxes (the capacities).
    x, box, slope : numpy.ndarray
        Each source's hours [h], box [h] and marginal value at its hours [value per h].

    Returns
    -------
    numpy.ndarray
        The multipliers, those of ``rows`` raised where a box of theirs binds.
    """
    out = np.array(mu, dtype=float)
    reduced = np.maximum(slope - A.T @ mu, 0.0)
    at = np.isfinite(box) & (box > 0) & (x >= box * (1 - AT_BOUND))
    for r in rows:
        mine = at & bounded_by(box, A[r], float(b[r]))
        if mine.any() and b[r] > 0:
            out[r] += float(np.sum(reduced[mine] * box[mine]) / b[r])
    return out


def capacity_rooms(built: BuiltModel) -> Iterator[tuple[np.ndarray, float]]:
    """Per capacity of ``built.capacity_names``, each source's use of it [unit per h] and what
    the hours already held leave of it, the right-hand side of its row [unit]."""
    p = built.formulation.base
    for name in built.capacity_names:
        use = p.usage(name)
        yield use, capacity_room(p.capacity[name], use, p.held)


def s_shaped(built: BuiltModel) -> np.ndarray | None:
    """The S-shaped sources of a one-scenario model, whose limit-derived bounds
    :func:`carried_by_curves` counts [bool]; None where there are none, or several scenarios
    (every bound is then counted by :func:`carried_by_bounds`)."""
    if len(built.arrays.upper) != len(built.sources.upper):
        return None
    hill = ~built.arrays.concave
    return hill if hill.any() else None


def limit_duals(built: BuiltModel, x_cols: np.ndarray, w_cols: np.ndarray, on_off: np.ndarray,
                columns: tuple[np.ndarray, np.ndarray, np.ndarray], row_dual: np.ndarray, col_dual: np.ndarray,
                x: np.ndarray, rows: tuple[float, list[float], list[float]]) -> tuple[float, list[float]]:  # fmt: skip
    """λ and each capacity's shadow price of one LP solution [value per unit]: ``rows``, the
    budget's, each capacity's and each mix bound's row duals, with what the budget's and the
    capacities' limit-derived bounds carry, by the LP's reduced costs (:func:`carried_by_bounds`)
    and, for S-shaped sources, by their curves' slope (:func:`carried_by_curves`). The other
    parameters are :func:`carried_by_bounds`'s."""
    hill = s_shaped(built)
    lam, capacity = carried_by_bounds(built, x_cols, w_cols, on_off, columns, row_dual, col_dual, x, hill)
    lam += rows[0]
    capacity = [r + c for r, c in zip(rows[1], capacity, strict=True)]
    if hill is not None:
        more_lam, more = carried_by_curves(built, x, lam, capacity, rows[2], hill)
        lam += more_lam
        capacity = [c + d for c, d in zip(capacity, more, strict=True)]
    return lam, capacity


def carried_by_curves(built: BuiltModel, x: np.ndarray, lam: float, capacity: list[float], mix: list[float],
                      hill: np.ndarray) -> tuple[float, list[float]]:  # fmt: skip
    """What the limit-derived bounds of S-shaped sources carry, from their curves' own slope.

    A hill curve's piecewise form is bounded at its last breakpoint, the source's bound: with
    the form's integers fixed (how an integer plan's duals are read), the LP cannot move the
    source past that breakpoint, and the price of one more unit of the limit sits on the
    fixed integers, where no row's dual shows it (λ read 0 where one S-shaped source took the
    whole budget). Over the sources ``hill`` at a bound derived from the budget or from a
    capacity, this adds max(v'_s − c_s·λ − Σ u_s·μ − Σ g_s·ν, 0) · bound / rhs, ``v'_s`` the
    curve's own marginal value at the plan's hours, ``g_s`` its coefficient in each mix row and
    ν that row's dual (:func:`procure.program.rows.mix_coefficients`: negative for a source
    outside the bound's group, whose hours make room under it), as :func:`with_box_duals` adds
    it for the dual.

    Parameters
    ----------
    built : BuiltModel
        A model of one scenario (see :func:`s_shaped`).
    x : numpy.ndarray
        The hours bought now of each source [h].
    lam, capacity : float and list of float
        λ and each capacity's shadow price as read from the LP's duals [value per unit].
    mix : list of float
        Each mix bound's dual, in ``max_share`` order [value per effective h].
    hill : numpy.ndarray
        The sources whose curve is S-shaped (a piecewise form) [bool].

    Returns
    -------
    tuple of float and list of float
        What to add to λ and to each capacity's shadow price [value per unit].
    """
    a = built.sources
    at = hill & np.isfinite(a.upper) & (a.upper > 0) & (x >= a.upper * (1 - AT_BOUND))
    if not at.any():
        return 0.0, [0.0] * len(capacity)
    p = built.formulation.base
    price = p.cost * lam
    for name, mu in zip(built.capacity_names, capacity, strict=True):
        price = price + p.usage(name) * mu
    for (key, share), nu in zip(p.max_share.items(), mix, strict=True):
        price = price + mix_coefficients(p.rate, p.members(key), share) * nu
    reduced = np.maximum(p.marginal_value(x) - price, 0.0)
    added_lam = 0.0
    if built.bounds_budget > 0:
        mine = at & a.budget_bounded
        added_lam = float(np.sum(reduced[mine] * a.upper[mine]) / built.bounds_budget)
    added = []
    for use, rhs in capacity_rooms(built):
        mine = at & ~a.budget_bounded & bounded_by(a.upper, use, rhs)
        added.append(float(np.sum(reduced[mine] * a.upper[mine]) / rhs) if mine.any() and rhs > 0 else 0.0)
    return added_lam, added


def carried_by_bounds(built: BuiltModel, x_cols: np.ndarray, w_cols: np.ndarray, on_off: np.ndarray,
                      columns: tuple[np.ndarray, np.ndarray, np.ndarray], row_dual: np.ndarray,
                      col_dual: np.ndarray, x: np.ndarray,
                      hill: np.ndarray | None = None) -> tuple[float, list[float]]:  # fmt: skip
    """What the bounds derived from the budget and from each capacity with a row carry, of one
    LP solution of ``built`` as handed to HiGHS: the λ to add, and per capacity of
    ``built.capacity_names`` the shadow price to add [value per unit] (see the module).

    Parameters
    ----------
    built : BuiltModel
        The model: its bounds (``sources``, ``arrays``), ``bounds_budget`` and problem.
    x_cols, w_cols : numpy.ndarray
        The matrix column of each source's hours bought now, and of each curve's hours (−1: none).
    on_off : numpy.ndarray
        Per source, the matrix row of its x ≤ ub · buy (−1: none), which bounds it as its column does.
    columns : tuple of numpy.ndarray
        Every column's lower and upper bound and value, as HiGHS has them.
    row_dual, col_dual : numpy.ndarray
        The solution's row duals and reduced costs.
    x : numpy.ndarray
        The hours bought now of each source [h].
    hill : numpy.ndarray, optional
        Sources left out, whose bounds :func:`carried_by_curves` counts [bool].
    """
    lower, upper, value = columns

    def free(col: np.ndarray, bound: np.ndarray) -> np.ndarray:
        """Where a column still has the bound the model gave it and is not fixed (fixed hours
        are no limit's bound)."""
        c = np.maximum(col, 0)
        return (col >= 0) & (upper[c] == bound) & (lower[c] < upper[c])

    free_x, free_w = free(x_cols, built.sources.upper), free(w_cols, built.arrays.upper)

    count = len(built.arrays.upper) // max(len(built.sources.upper), 1)
    if hill is not None:
        free_x, free_w = free_x & ~hill, free_w & ~np.tile(hill, count)

    def carried(xs: np.ndarray, ws: np.ndarray, rhs: float) -> float:
        xs, ws = xs & free_x, ws & free_w
        both = np.concatenate([x_cols[xs], w_cols[ws]])
        through = bound_dual(col_dual, value, upper, np.unique(both[both >= 0]), rhs)
        i = np.flatnonzero(xs & (on_off >= 0))
        if len(i):
            through += bound_dual(row_dual[on_off[i]], x[i], built.sources.upper[i], np.arange(len(i)), rhs)
        return through

    a, c = built.sources, built.arrays
    lam = carried(a.budget_bounded, c.budget_bounded, built.bounds_budget)
    capacity = []
    for use, rhs in capacity_rooms(built):
        xs = bounded_by(a.upper, use, rhs) & ~a.budget_bounded
        ws = bounded_by(c.upper, np.tile(use, count), rhs) & ~c.budget_bounded
        capacity.append(carried(xs, ws, rhs))
    return lam, capacity
