"""The dual at the kinks of its linear sources: where a source is bought in part.

A source linear in its hours buys all its box where its marginal value ``R_s`` (its rate ρσφ
for one curve; the probability-weighted rate for an expected value) exceeds its price in
multipliers ``c_s = (Aᵀμ)_s`` and nothing where it falls short: its term of the dual
``g(μ) = … + max_{0 ≤ x_s ≤ room_s} (R_s − c_s) x_s`` has a kink on the hyperplane
``A_sᵀμ = R_s``, and a plan that buys such a source in part has its multipliers there. There g
has no gradient, only a subdifferential: ``b − A x`` for every choice of the kinked sources'
hours in their boxes. This module has the pure functions the minimiser
(:mod:`procure.program.dual.newton`) reads a kink by, for K problems at once (rows and sources
on the last two axes): which sources are at their kink (:func:`kinked_sources`) or exactly on
its hyperplane (:func:`on_hyperplanes`), the rows that bind there (:func:`binding_rows`), the
thresholds a source's term bends at (:func:`price_thresholds`), how far a step goes before a
term bends (:func:`breakpoints`, :func:`nearest_breakpoint`), and the safe side of a kink whose
box has no end (:func:`clear_of_endless`). The steps themselves are
:mod:`procure.program.dual.kink_step` (Newton's step on the kinks' hyperplanes) and
:mod:`procure.program.dual.pivot` (the dual simplex step where g has no curvature).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

#: A linear source is taken to be at its kink where its price in multipliers is within this
#: share of its rate [1]; :func:`procure.program.dual.kink_step.kink_step` then puts it on
#: the kink exactly.
KINK_TOLERANCE = 1e-6
#: A kinked source is on its hyperplane (:func:`on_hyperplanes`) where its term of g could differ
#: from the value of any hours in its box by at most this share of max(1, abs(g)) [1] (float noise).
KINK_EXACT = 1e-12
#: Where the kinks' system is singular (sources alike), its least-squares solution is taken
#: where it solves the system within this share of the right-hand side's size [1].
SYSTEM_RESIDUAL = 1e-9
#: A linear source whose box has no end, priced in multipliers below its rate by no more than this
#: share of it, is on its kink by float noise, not buying without end [1] (:func:`clear_of_endless`).
ENDLESS_KINK_NOISE = 1e-9

#: Passes of :func:`clear_of_endless`: each adds what the rounding of the last one left short.
ENDLESS_LIFT_PASSES = 4


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


def price_thresholds(room: np.ndarray, marginal: Callable[[np.ndarray], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per source, the prices in multipliers below which it buys more than nothing (its marginal
    value at the hours held) and below which it buys less than its box (at the box's end; 0 for
    a box without end), both its rate for a linear source [value per h] (:func:`procure.program.dual.pivot.pivot_step`).

    ``marginal`` gives each source's marginal value V'(x) at hours bought x, one per source of
    ``room`` (its result one scenario, or K × sources) [value per h]."""
    bounded = np.isfinite(room)
    with np.errstate(all="ignore"):
        entry = marginal(np.zeros_like(room))
        at_end = np.nan_to_num(marginal(room), nan=0.0)
    return entry, np.where(bounded, at_end, 0.0)


def breakpoints(A_lin: np.ndarray, rate_lin: np.ndarray, mu: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """Step lengths t along ``mu − t · direction`` at which each linear source's price in
    multipliers, ``A_linᵀ μ``, reaches its kink ``rate_lin`` (before the projection on μ ≥ 0);
    inf where it never does ahead [1]. Shapes as :func:`kinked_sources`'s."""
    c = np.einsum("...ml,...m->...l", A_lin, mu)
    dc = np.einsum("...ml,...m->...l", A_lin, direction)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (c - rate_lin) / dc
    return np.where(np.isfinite(t) & (t > 0), t, np.inf)


def nearest_breakpoint(c: np.ndarray, dc: np.ndarray, entry: np.ndarray, leave: np.ndarray) -> np.ndarray:
    """The least step length t in (0, 1) along ``c − t · dc`` (the sources' prices in
    multipliers along ``mu − t · direction``) at which some source's price crosses one of its
    thresholds ``entry`` or ``leave`` (:func:`price_thresholds`) and its term of g bends: it
    starts to buy, stops buying its whole box, or a linear source reaches its kink; a source
    within :data:`KINK_TOLERANCE` of a threshold now is left out (it is there). Sources on the
    last axis; inf where none lies ahead [1]."""
    lengths = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for threshold in (entry, leave):
            t = (c - threshold) / dc
            there = np.abs(c - threshold) <= KINK_TOLERANCE * np.abs(threshold)
            lengths.append(np.where(np.isfinite(t) & (t > 0) & (t < 1) & ~there & (threshold > 0), t, np.inf))
    return np.min(np.minimum(*lengths), axis=-1, initial=np.inf)


def clear_of_endless(A_end: np.ndarray, rate_end: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """``mu`` (K × rows) scaled up, per problem, by the least factor that lifts every linear source
    whose box has no end (``A_end``, K × rows × E, their rates ``rate_end``, K × E), priced below
    its rate by no more than :data:`ENDLESS_KINK_NOISE` of it, to its rate or above: a step that
    lands on such a kink lands on either side by float noise (the rounding of ``μ + t·d``, the
    multipliers it took to 0), and on the lower side the source buys without end (g is infinite
    there). Scaling keeps each multiplier at 0 that is 0, and every other price moves by the same
    share; a problem with no such source near keeps its ``mu``."""
    lifted = mu
    for _ in range(ENDLESS_LIFT_PASSES):  # each pass adds what the last one's rounding left short
        c = np.einsum("kme,km->ke", A_end, lifted)
        near = (c < rate_end) & (rate_end - c <= ENDLESS_KINK_NOISE * rate_end) & (c > 0)
        if not near.any():
            break
        with np.errstate(divide="ignore", invalid="ignore"):
            factor = np.max(np.where(near, rate_end / c, 1.0), axis=1)
        lift = np.where(near.any(axis=1), np.maximum(factor, np.nextafter(1.0, 2.0)), 1.0)
        lifted = lifted * lift[:, None]
    return lifted
