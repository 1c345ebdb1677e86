"""The dual simplex step: where g has no curvature, along the kinks' hyperplanes to the next
breakpoint, for one problem (:func:`pivot_step`).
"""

from __future__ import annotations

import numpy as np

from ...arrays import DIVISION_FLOOR
from .kinks import binding_rows
from .least_squares import box_least_squares

#: The projected descent of :func:`pivot_step` counts as 0 below this share of the gradient [1].
PROJECTED_ZERO = 1e-12
#: A multiplier that :func:`pivot_step` lowers to within this share of the largest is 0 [1]
#: (the float residue of ``μ + t·d`` where ``t`` was chosen to take it to 0).
ZERO_RESIDUE = 1e-14


def pivot_step(A: np.ndarray, b: np.ndarray, mu: np.ndarray, x: np.ndarray, kinked: np.ndarray,
               entry: np.ndarray, leave: np.ndarray, room: np.ndarray,
               *, vertex: bool = False) -> tuple[np.ndarray, np.ndarray | None] | None:  # fmt: skip
    """Where g has no curvature (no source strictly inside its box), the step along the kinks'
    hyperplanes to the next breakpoint — a dual simplex step.

    g is linear there, so the step follows its steepest descent projected on the hyperplanes (the kinked
    sources stay on their kinks). Where that projection is 0 (μ at a vertex of kinks: as many kinked
    sources as rows that bind) or its step does not lower g, the caller asks for the ``vertex`` step:
    g's steepest descent over all its subgradients (:mod:`procure.program.dual.kinks`) instead, the
    least of which in norm (:func:`box_least_squares` chooses the kinked sources' hours) is 0 at the
    minimum; otherwise the kinked sources whose chosen hours lie at an end of their box leave their
    kinks, bought at that end, and the others stay on theirs. The step goes as far as the first point
    where some other source's term bends, a multiplier reaches 0, or another source reaches its kink.

    Parameters
    ----------
    A, b : numpy.ndarray
        The coupling rows ``A x ≤ b``.
    mu, x : numpy.ndarray
        Multipliers, ≥ 0, and the hours at them [value per unit, h].
    kinked : numpy.ndarray
        The linear sources at their kink (:func:`~procure.program.dual.kinks.kinked_sources`; may be empty).
    entry, leave : numpy.ndarray
        Per source, its :func:`~procure.program.dual.kinks.price_thresholds` [value per h].
    room : numpy.ndarray
        Each source's box [h] (inf for a box without end).
    vertex : bool, default False
        Follow the steepest descent over all of g's subgradients (where the step along the
        hyperplanes is 0 or did not lower g; needs a kinked source).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray or None) or None
        The multipliers at that breakpoint and None; or, where the least subgradient is 0 (μ is
        the minimum; ``vertex`` only), ``mu`` itself and the kinked sources' hours that make it
        so [h] (the optimum buys them in part); None where the descent is 0 otherwise, or no
        breakpoint lies ahead.
    """
    grad, free = binding_rows(A, b, mu, x, kinked)
    scale = max(float(np.max(np.abs(grad), initial=0.0)), DIVISION_FLOOR)
    if vertex:
        found = _subgradient_descent(A, grad, mu, kinked, room)
        if found is None:
            return None
        direction, hours = found
        if not np.any(np.abs(direction) > PROJECTED_ZERO * scale):
            return mu, hours
    else:
        projected = _projected_descent(A, grad, free, mu, kinked)
        if projected is None or not np.any(np.abs(projected) > PROJECTED_ZERO * scale):
            return None  # no way down along the hyperplanes (at a vertex of kinks: ``vertex``)
        direction = projected
    c, dc = A.T @ mu, A.T @ direction
    with np.errstate(divide="ignore", invalid="ignore"):
        bends = np.array([(entry - c) / dc, (leave - c) / dc])  # where another source's term bends
        bends[:, kinked] = np.inf
        t = np.concatenate([bends.ravel(), np.where(direction < 0, -mu / direction, np.inf)])
    t = t[np.isfinite(t) & (t > 0)]
    if len(t) == 0:
        return None
    step = np.maximum(mu + float(np.min(t)) * direction, 0.0)
    # a multiplier the step takes to 0 lands there, not on float residue above it
    step[(direction < 0) & (step <= ZERO_RESIDUE * float(np.max(step, initial=0.0)))] = 0.0
    return step, None


def _projected_descent(A: np.ndarray, grad: np.ndarray, free: np.ndarray, mu: np.ndarray,
                       kinked: np.ndarray) -> np.ndarray | None:  # fmt: skip
    """g's steepest descent over the ``free`` rows projected on the ``kinked`` sources'
    hyperplanes, the rows that would take μ below 0 held at 0 (:func:`pivot_step`); None where
    no row is left or the projection fails."""
    for _pass in range(2):  # once more with the rows that would go below 0 held at 0
        F = np.flatnonzero(free)
        if len(F) == 0:
            return None
        d = -grad[F]
        if len(kinked):
            N = A[np.ix_(F, kinked)]
            try:
                d = d - N @ np.linalg.lstsq(N, d, rcond=None)[0]
            except np.linalg.LinAlgError:  # the projection has no solution (SVD fails)
                return None
        direction = np.zeros_like(mu)
        direction[F] = d
        stuck = (mu <= 0) & (direction < 0)
        if not stuck.any():
            return direction
        free = free & ~stuck
    return None


def _subgradient_descent(A: np.ndarray, grad: np.ndarray, mu: np.ndarray, kinked: np.ndarray,
                         room: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:  # fmt: skip
    """g's steepest descent over all its subgradients ``grad − A_L y`` (``y`` the ``kinked``
    sources' hours in their boxes ``room``), projected on μ ≥ 0, and the hours of the least:
    the rows counted are the priced ones and those broken by those hours (a row at μ = 0 that
    the hours leave slack has no descent). None where a least-squares solve fails or the rows
    do not settle."""
    rows = (mu > 0) | (grad < 0)
    A_L = A[:, kinked]
    for _change in range(2 * len(mu) + 1):
        F = np.flatnonzero(rows)
        hours = box_least_squares(A_L[F], grad[F], room[kinked]) if len(F) else np.zeros(len(kinked))
        if hours is None:
            return None
        s = grad - A_L @ hours
        broken = ~rows & (s < 0)
        slack = rows & (mu <= 0) & (s > 0)
        if not (broken.any() or slack.any()):
            direction = np.where(rows, -s, 0.0)
            return direction, hours
        rows = (rows | broken) & ~slack
    return None
