"""How far a step of a dual's multipliers goes before some source's term of g bends, and the
safe side of a kink that has no end.

Along a step ``mu − t · direction`` every source's price in multipliers moves linearly; its term
of g changes form where that price crosses one of its thresholds (it starts to buy, stops buying
its whole box, or a linear source reaches its kink: :func:`procure.program.kinks.price_thresholds`).
:func:`nearest_breakpoint` is the first such length, where a Newton step's model of g stops
holding. A linear source whose box has no end, landed on its kink by a step, may lie below it by
float noise, where it buys without end and g is infinite: :func:`clear_of_endless` lifts μ to
the kink's safe side. Pure functions, one scenario or K at once where said.
"""

from __future__ import annotations

import numpy as np

from .kinks import ENDLESS_KINK_NOISE, KINK_TOLERANCE

#: Passes of :func:`clear_of_endless`: each adds what the rounding of the last one left short.
ENDLESS_LIFT_PASSES = 4


def nearest_breakpoint(c: np.ndarray, dc: np.ndarray, entry: np.ndarray, leave: np.ndarray) -> np.ndarray:
    """The least step length t in (0, 1) along ``c − t · dc`` (the sources' prices in
    multipliers along ``mu − t · direction``, ``dc = Aᵀ direction``) at which some source's
    price crosses one of its thresholds ``entry`` or ``leave``
    (:func:`~procure.program.kinks.price_thresholds`) and its term of g bends: it starts to buy,
    stops buying its whole box, or a linear source reaches its kink; a source within
    :data:`~procure.program.kinks.KINK_TOLERANCE` of a threshold now is left out (it is there).
    One scenario (sources on the last axis), or K at once; inf where none lies ahead [1]."""
    lengths = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for threshold in (entry, leave):
            t = (c - threshold) / dc
            there = np.abs(c - threshold) <= KINK_TOLERANCE * np.abs(threshold)
            lengths.append(np.where(np.isfinite(t) & (t > 0) & (t < 1) & ~there & (threshold > 0), t, np.inf))
    return np.min(np.minimum(*lengths), axis=-1, initial=np.inf)


def clear_of_endless(A: np.ndarray, rate: np.ndarray, room: np.ndarray, linear: np.ndarray,
                     mu: np.ndarray) -> np.ndarray:  # fmt: skip
    """``mu`` scaled up by the least factor that lifts every linear source whose box has no end,
    priced below its rate by no more than :data:`~procure.program.kinks.ENDLESS_KINK_NOISE` of it, to its rate or
    above: a step that lands on such a kink lands on either side by float noise, and on the
    lower side the source buys without end (g is infinite there). Scaling keeps each multiplier
    at 0 that is 0, and every other price moves by the same share; ``mu`` itself is returned
    where no such source is near.

    Parameters
    ----------
    A : numpy.ndarray
        The coupling rows' coefficients, rows × sources [their units per h].
    rate, room : numpy.ndarray
        Each source's rate (its marginal value an hour, for a linear source) [value per h] and
        box [h].
    linear : numpy.ndarray
        Indices of the linear sources.
    mu : numpy.ndarray
        Multipliers, ≥ 0 [value per unit].
    """
    endless = linear[~np.isfinite(room[linear])] if len(linear) else linear
    if len(endless) == 0:
        return mu
    A_end, target = A[:, endless], rate[endless]
    lifted = mu
    for _ in range(ENDLESS_LIFT_PASSES):  # each pass adds what the last one's rounding left short
        c = A_end.T @ lifted
        near = (c < target) & (target - c <= ENDLESS_KINK_NOISE * target) & (c > 0)
        if not near.any():
            break
        factor = float(np.max(target[near] / c[near]))
        lifted = lifted * max(factor, float(np.nextafter(1.0, 2.0)))
    return lifted
