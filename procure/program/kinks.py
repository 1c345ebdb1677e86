"""The dual at the kinks of its linear sources: where a source is bought in part.

A source with a linear curve buys all its box where its rate ρσφ exceeds its price in
multipliers ``c_s = (Aᵀμ)_s`` and nothing where it falls short: its term of the dual
``g(μ) = … + max_{0 ≤ x_s ≤ room_s} (ρσφ_s − c_s) x_s`` has a kink on the hyperplane
``A_sᵀμ = ρσφ_s``, and a plan that buys such a source in part has its multipliers there. There
g has no gradient, only a subdifferential: ``b − A x`` for every choice of the kinked sources'
hours in their boxes. The Newton method of :mod:`procure.program.dual` reaches a kink only by
halving its steps towards it, and its gradient test never passes there, so this module gives it
what a kink needs:

* :func:`breakpoints`, the step lengths along a direction at which a linear source's price
  crosses its rate, so that a line search can land on a kink;
* :func:`kink_step`, Newton's step on g restricted to the kinks' hyperplanes. On them each
  kinked source's term is 0 whatever its hours, so g is smooth there, and the kinked sources'
  hours are the multipliers of the hyperplanes: with the smooth sources' hours
  ``x(μ + Δμ) ≈ x(μ) + diag(dx/dc) Aᵀ Δμ``, the step solves::

      [ H      −A_L ] [Δμ ]   [ −(b − A x_other) ]
      [ A_Lᵀ    0   ] [x_L] = [ ρσφ_L − A_Lᵀμ    ]

  over the rows that bind (H = A diag(−dx/dc) Aᵀ on them). Where its hours ``x_L`` lie in their
  boxes and the projected gradient ``b − A x`` (with those hours) meets the dual's tolerance,
  0 is in g's subdifferential: μ is the minimum, and x (the kinked sources bought in part) the
  optimum's hours;
* :func:`pivot_step`, where no source is strictly inside its box (g is then piecewise linear
  and Newton's steps have no curvature): the steepest descent along the kinks' hyperplanes, as
  far as the next breakpoint — a dual simplex step;
* :func:`on_kinks`, which of them a step ended on (it may be cut short, or clipped at μ ≥ 0):
  only those may be bought in part in the hours the gradient test reads.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..arrays import DIVISION_FLOOR
from .least_squares import BOX_SLACK, box_least_squares

#: A linear source is taken to be at its kink where its price in multipliers is within this
#: share of its rate [1]; :func:`kink_step` then puts it on the kink exactly.
KINK_TOLERANCE = 1e-6
#: A kinked source is on its hyperplane, so that any hours in its box may be read as its
#: hours, where its term of g could differ from their value by at most this share of
#: max(1, abs(g)): its price in multipliers less its rate, times its box [1] (float noise).
KINK_EXACT = 1e-12
#: Where the kinks' system is singular (sources alike), its least-squares solution is taken
#: where it solves the system within this share of the right-hand side's size [1].
SYSTEM_RESIDUAL = 1e-9
#: The projected descent of :func:`pivot_step` counts as 0 below this share of the gradient [1].
PROJECTED_ZERO = 1e-12
#: A multiplier that :func:`pivot_step` lowers to within this share of the largest is 0 [1]
#: (the float residue of ``μ + t·d`` where ``t`` was chosen to take it to 0).
ZERO_RESIDUE = 1e-14
#: A linear source whose box has no end and whose price in multipliers lies below its rate by
#: no more than this share of it is on its kink by float noise (a step that put it there lands
#: either side by the rounding of ``μ + t·d`` and by the multipliers it took to 0), not buying
#: without end [1]: :func:`procure.program.step_limits.clear_of_endless` lifts μ to the kink's safe side, where
#: :func:`on_hyperplanes` takes it as on its kink.
ENDLESS_KINK_NOISE = 1e-9


def linear_curves(curve: np.ndarray, shape: np.ndarray) -> np.ndarray:
    """Which sources' curves are linear in the effective hours, v(e) = e: the linear curve and
    the power curve with β = 1 (booleans, one per source)."""
    return (curve == "linear") | ((curve == "power") & (shape == 1))


def kinked_sources(A_lin: np.ndarray, rate_lin: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """Which linear sources are at their kink: price in multipliers within
    :data:`KINK_TOLERANCE` of a positive rate (booleans, one per source).

    Parameters
    ----------
    A_lin : numpy.ndarray
        The coupling rows' coefficients of the linear sources, rows × L (or K × rows × L for
        K scenarios at once).
    rate_lin : numpy.ndarray
        Their rates ρσφ, L (or K × L) [effective h per h].
    mu : numpy.ndarray
        Multipliers, rows (or K × rows) [value per unit].
    """
    c = np.einsum("...ml,...m->...l", A_lin, mu)
    return (rate_lin > 0) & (np.abs(c - rate_lin) <= KINK_TOLERANCE * rate_lin)


def on_hyperplanes(A_lin: np.ndarray, rate_lin: np.ndarray, room_lin: np.ndarray, mu: np.ndarray,
                   g: np.ndarray | float) -> np.ndarray:  # fmt: skip
    """Which of these linear sources are on their hyperplane at ``mu``, where any hours in their
    box may be read as their hours: price in multipliers less rate, times the box ``room_lin``
    [h], within :data:`KINK_EXACT` of max(1, abs(g)); a box without end where the price is at
    its rate or above it by no more than :data:`ENDLESS_KINK_NOISE` of it (its term of g is then
    0 whatever the hours: g stays a bound). Shapes as :func:`kinked_sources`'s; ``g`` one per
    scenario."""
    above = np.einsum("...ml,...m->...l", A_lin, mu) - rate_lin
    off = np.abs(above)
    with np.errstate(invalid="ignore"):
        spread = np.where(off == 0, 0.0, off * room_lin)
    endless = ~np.isfinite(room_lin) & (above >= 0) & (above <= ENDLESS_KINK_NOISE * rate_lin)
    return endless | (spread <= KINK_EXACT * np.maximum(1.0, np.abs(np.asarray(g, dtype=float)))[..., None])


def binding_rows(A: np.ndarray, b: np.ndarray, mu: np.ndarray, x: np.ndarray,
                 kinked: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """g's gradient with the ``kinked`` sources' hours left out, ``b − A x_others``, and the rows
    that bind: priced, or broken with the kinked sources at 0 or at their hours ``x`` now.
    ``kinked`` masks or indexes the sources' axis (the last of ``x``); one scenario, or K at once
    (``A`` K × rows × sources)."""
    others = x.copy()
    others[..., kinked] = 0.0
    grad = b - np.einsum("...mn,...n->...m", A, others)
    return grad, (mu > 0) | (grad < 0) | (b - np.einsum("...mn,...n->...m", A, x) < 0)


def price_thresholds(rate: np.ndarray, held: np.ndarray, room: np.ndarray,
                     derivative: Callable[[np.ndarray], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Per source, the prices in multipliers below which it buys more than nothing (its marginal
    value at the hours held) and below which it buys less than its box (at the box's end; 0 for
    a box without end), both its rate for a linear source [value per h] (:func:`pivot_step`).

    ``derivative`` gives v'(e) of each source's curve at effective hours e (same shape as
    ``rate``: one scenario, or K × sources)."""
    bounded = np.isfinite(room)
    with np.errstate(all="ignore"):
        entry = np.asarray(derivative(rate * held), dtype=float) * rate
        end = np.where(bounded, rate * (held + room), np.inf)
        at_end = np.nan_to_num(np.asarray(derivative(end), dtype=float) * rate, nan=0.0)
    return entry, np.where(bounded, at_end, 0.0)


def at_kinks(A: np.ndarray, rate: np.ndarray, linear: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """Of the coupling rows' coefficients ``A`` (rows × sources), the linear sources (of the
    indices ``linear``) whose price in multipliers at ``mu`` is within :data:`KINK_TOLERANCE` of
    their rate ``rate`` [value per h]."""
    if len(linear) == 0:
        return linear
    return linear[kinked_sources(A[:, linear], rate[linear], mu)]


def on_kinks(A: np.ndarray, rate: np.ndarray, room: np.ndarray, kinked: np.ndarray, mu: np.ndarray,
             g: float) -> np.ndarray:  # fmt: skip
    """True for each of the ``kinked`` sources on its hyperplane at ``mu``, where it may be
    bought in part: its price in multipliers less its rate, times its box ``room`` [h], within
    :data:`KINK_EXACT` of max(1, abs(g)) (a box without end only exactly on its kink)."""
    return on_hyperplanes(A[:, kinked], rate[kinked], room[kinked], mu, g)


def breakpoints(A: np.ndarray, rate: np.ndarray, linear: np.ndarray, mu: np.ndarray,
                direction: np.ndarray) -> np.ndarray:  # fmt: skip
    """Step lengths t in (0, 1), ascending, at which a linear source's price in multipliers along
    ``mu − t · direction`` equals its rate (before the projection on μ ≥ 0) [1]."""
    if len(linear) == 0:
        return np.zeros(0)
    A_lin = A[:, linear]
    c, dc = A_lin.T @ mu, A_lin.T @ direction
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (c - rate[linear]) / dc
    return np.sort(t[np.isfinite(t) & (t > 0) & (t < 1)])


def kink_step(A: np.ndarray, b: np.ndarray, rate: np.ndarray, room: np.ndarray, mu: np.ndarray, x: np.ndarray,
              slope: np.ndarray, kinked: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:  # fmt: skip
    """Newton's step on g restricted to the hyperplanes of the ``kinked`` sources (see the module).

    Parameters
    ----------
    A, b : numpy.ndarray
        The coupling rows ``A x ≤ b`` (rows × sources, rows) [their units per h, their units].
    rate, room : numpy.ndarray
        Each source's ρσφ [effective h per h] and box [h].
    mu : numpy.ndarray
        Multipliers, ≥ 0 [value per unit].
    x, slope : numpy.ndarray
        Hours at ``mu`` and dx/dc of the smooth sources strictly inside their boxes.
    kinked : numpy.ndarray
        Indices of the linear sources at their kink (:func:`at_kinks`).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray, numpy.ndarray) or None
        The multipliers after the step (not yet clipped to μ ≥ 0), the kinked sources' hours, in
        their boxes [h], and which sources those are: where some source's hours would leave its box, it is not bought
        in part at the minimum, and the step is taken again without its hyperplane; where the
        step would take a row's multiplier below 0, the row does not bind at the minimum of the
        step's model, and the step is taken again with that multiplier held at 0. None where
        the system is singular or no kink is left.
    """
    kinked = np.asarray(kinked)
    held = np.zeros(len(mu), dtype=bool)  # rows the step would take below 0: held at 0
    base = mu
    while len(kinked):
        found = _on_hyperplanes(A, b, rate, base, x, slope, kinked, held, base - mu)
        if found is None:
            return None
        step, hours = found
        below = (base + step < 0) & ~held
        if below.any():
            held |= below
            base = np.where(held, 0.0, base)
            continue
        box = room[kinked]
        size = np.where(np.isfinite(box), np.maximum(1.0, box), 1.0)
        outside = np.maximum(-BOX_SLACK * size - hours, hours - box - BOX_SLACK * size) / size
        if not np.any(outside > 0):
            return base + step, np.clip(hours, 0.0, box), kinked
        # that source is not in part at the minimum: leave its hyperplane
        kinked = np.delete(kinked, int(np.argmax(outside)))
    return None


def _on_hyperplanes(A: np.ndarray, b: np.ndarray, rate: np.ndarray, mu: np.ndarray, x: np.ndarray,
                    slope: np.ndarray, kinked: np.ndarray, held: np.ndarray,
                    moved: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:  # fmt: skip
    """The step Δμ from ``mu`` and the kinked sources' hours of the system in the module's
    docstring, the rows ``held`` (booleans) kept out of it at their multiplier; ``x`` and
    ``slope`` are read where μ was before the held rows were ``moved`` to ``mu`` (their shift),
    so the gradient there is moved by the curvature times that shift. None where singular."""
    grad, binding = binding_rows(A, b, mu, x, kinked)
    free = np.flatnonzero(binding & ~held)
    if len(free) == 0:
        return None
    if np.any(moved):
        grad = grad + ((A * (-slope)) @ A.T) @ moved  # g's gradient at ``mu``, to first order
    Af, AL = A[free], A[np.ix_(free, kinked)]
    H = (Af * (-slope)) @ Af.T
    k = len(kinked)
    K = np.block([[H, -AL], [AL.T, np.zeros((k, k))]])
    rhs = np.concatenate([-grad[free], rate[kinked] - A[:, kinked].T @ mu])
    try:
        solution = np.linalg.solve(K, rhs)
    except np.linalg.LinAlgError:  # singular: kinks that are not independent (sources alike)
        try:
            solution = np.linalg.lstsq(K, rhs, rcond=None)[0]
        except np.linalg.LinAlgError:  # no least-squares solution either (SVD fails)
            return None
        if not np.allclose(K @ solution, rhs, rtol=SYSTEM_RESIDUAL, atol=SYSTEM_RESIDUAL * np.max(np.abs(rhs))):
            return None  # no solution: the kinks' hyperplanes do not meet
    if not np.all(np.isfinite(solution)):
        return None
    step = np.zeros_like(mu)
    step[free] = solution[: len(free)]
    return step, solution[len(free) :]


def pivot_step(A: np.ndarray, b: np.ndarray, mu: np.ndarray, x: np.ndarray, kinked: np.ndarray,
               entry: np.ndarray, leave: np.ndarray, room: np.ndarray,
               *, vertex: bool = False) -> tuple[np.ndarray, np.ndarray | None] | None:  # fmt: skip
    """Where g has no curvature (no source strictly inside its box), the step along the kinks'
    hyperplanes to the next breakpoint — a dual simplex step.

    g is linear there, so the step follows its steepest descent projected on the hyperplanes
    (the kinked sources stay on their kinks). Where that projection is 0 (μ at a vertex of kinks:
    as many kinked sources as rows that bind) or its step does not lower g, the caller asks for
    the ``vertex`` step: g's steepest descent over all
    its subgradients instead: they are ``b − A x`` for every choice of the kinked sources' hours
    in their boxes, and the least of them in norm (:func:`box_least_squares` chooses those hours)
    is 0 at the minimum; otherwise the kinked sources whose chosen hours lie at an end of their
    box leave their kinks, bought at that end, and the others stay on theirs. The step goes as
    far as the first point where some other source's term bends, a multiplier reaches 0, or
    another source reaches its kink.

    Parameters
    ----------
    A, b : numpy.ndarray
        The coupling rows ``A x ≤ b``.
    mu, x : numpy.ndarray
        Multipliers, ≥ 0, and the hours at them [value per unit, h].
    kinked : numpy.ndarray
        The linear sources at their kink (:func:`at_kinks`; may be empty).
    entry, leave : numpy.ndarray
        Per source, the price in multipliers below which it buys more than nothing (its marginal
        value at the hours held) and below which it buys less than its box (at its box's end;
        both its rate for a linear source) [value per h].
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
        found = _subgradient_descent(A, grad, mu, kinked, room) if len(kinked) else None
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
    lengths = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for threshold in (entry, leave):
            t = (threshold - c) / dc
            t[kinked] = np.inf
            lengths.append(t)
        lengths.append(np.where(direction < 0, -mu / direction, np.inf))
    t = np.concatenate(lengths)
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
    free = free.copy()
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
        free &= ~stuck
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
