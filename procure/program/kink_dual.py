"""The steps along linear sources' kinks, for any dual whose linear sources are priced alike.

A source whose value is linear in its hours, ``V_s(x) = R_s (h0_s + x)``, buys all or nothing
at a price: its whole box where ``R_s`` exceeds its price in multipliers ``(Aᵀμ)_s``, nothing
where it falls short, anything between on the hyperplane ``(Aᵀμ)_s = R_s`` (its kink). That holds
for a linear curve of one scenario (``R_s`` its rate ρσφ, :mod:`procure.program.dual`) and for
a source linear in every scenario of an expected-value program (``R_s = Σ_ω π_ω ρ_sω``,
:mod:`procure.program.expected`). :class:`KinkSteps` gives both duals the steps of
:mod:`procure.program.kinks` over those hyperplanes, which :func:`procure.program.newton.minimise`
takes (:class:`procure.program.newton.KinkedEvaluator`).
"""

from __future__ import annotations

import math

import numpy as np

from .kinks import at_kinks, breakpoints, kink_step, on_kinks, pivot_step
from .newton import PricedRows, within_resolution
from .step_limits import clear_of_endless, nearest_breakpoint

#: Most halvings of one kink step.
KINK_HALVINGS = 20


class KinkSteps:
    """Kink and pivot steps of a dual; a subclass sets the attributes below and ``g``.

    Attributes
    ----------
    rows : PricedRows
        The coupling rows ``A x ≤ b``.
    room : numpy.ndarray
        Each source's box [h].
    all_or_nothing : numpy.ndarray
        Indices of the linear sources with ``R_s > 0``.
    kink_rate : numpy.ndarray
        ``R_s`` per source, the marginal value of an hour of each linear source [value per h]
        (any number for the others).
    """

    rows: PricedRows
    room: np.ndarray
    all_or_nothing: np.ndarray
    kink_rate: np.ndarray

    @property
    def thresholds(self) -> tuple[np.ndarray, np.ndarray]:
        """Per source, the price in multipliers below which it buys more than nothing and below
        which it buys less than its box (0 for a box without end) [value per h] (the subclass's)."""
        raise NotImplementedError

    def g(self, mu: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """g(μ), x(μ) and dx/dc (the subclass's)."""
        raise NotImplementedError

    def kink_newton(
        self, mu: np.ndarray, g: float, x: np.ndarray, slope: np.ndarray
    ) -> tuple[np.ndarray, float, np.ndarray, np.ndarray] | None:
        """Newton's step on the hyperplanes of the linear sources at their kink at ``mu``
        (:func:`procure.program.kinks.kink_step`): the multipliers, g, the hours (the kinked
        sources bought in part) and dx/dc after it, where g does not rise beyond its float
        resolution; None where no source is at its kink or the step does not hold."""
        A, b, rate = self.rows.A, self.rows.b, self.kink_rate
        kinked = at_kinks(A, rate, self.all_or_nothing, mu)
        if len(kinked) == 0:
            return None
        found = kink_step(A, b, rate, self.room, mu, x, slope, kinked)
        if found is None:
            return None
        target, hours, kinked = found
        # along the step, where g rises at its end (another linear source's kink on the way):
        # that kink first, then halvings
        direction = mu - target
        others = np.setdiff1d(self.all_or_nothing, kinked)
        crossing = breakpoints(A, rate, others, mu, direction)
        lengths = [1.0, *crossing[:1].tolist(), *(0.5**q for q in range(1, KINK_HALVINGS + 1))]
        for t in lengths:
            mu_new = self.cleared(np.maximum(mu - t * direction, 0.0))
            g_new, x_new, slope_new = self.g(mu_new)
            if math.isfinite(g_new) and bool(within_resolution(g_new, g)):
                # the hours in part only where the step ends on the kink (not cut short, not
                # clipped at μ ≥ 0): elsewhere each source's term is maximised by all or nothing
                on = on_kinks(A, rate, self.room, kinked, mu_new, g_new)
                x_new = x_new.copy()
                x_new[kinked[on]] = hours[on]
                return mu_new, g_new, x_new, slope_new
        return None

    def pivot(
        self, mu: np.ndarray, g: float, x: np.ndarray, slope: np.ndarray
    ) -> tuple[np.ndarray, float, np.ndarray, np.ndarray] | None:
        """Where no source is strictly inside its box, the step along g's steepest descent to the
        next breakpoint (:func:`procure.program.kinks.pivot_step`): the multipliers, g, the
        hours and dx/dc there, where g does not rise beyond its float resolution; at the minimum,
        ``mu`` with the kinked sources' hours in part that show it, and ``slope`` as it is
        (once: None where ``x`` already has them); else None."""
        kinked = at_kinks(self.rows.A, self.kink_rate, self.all_or_nothing, mu)
        for vertex in (False, True) if len(kinked) else (False,):
            found = pivot_step(self.rows.A, self.rows.b, mu, x, kinked, *self.thresholds, self.room, vertex=vertex)
            if found is None:
                continue
            trial, hours = found
            if hours is not None:
                x_new = x.copy()
                x_new[kinked] = hours
                if np.array_equal(x_new, x):
                    return None
                return mu, g, x_new, slope
            trial = self.cleared(trial)
            g_new, x_new, slope_new = self.g(trial)
            if math.isfinite(g_new) and bool(within_resolution(g_new, g)):
                return trial, g_new, x_new, slope_new
        return None

    def cleared(self, mu: np.ndarray) -> np.ndarray:
        """``mu`` lifted off the side of a kink where a linear source without end buys without
        end by float noise (:func:`procure.program.step_limits.clear_of_endless`)."""
        return clear_of_endless(self.rows.A, self.kink_rate, self.room, self.all_or_nothing, mu)

    def breakpoints(self, mu: np.ndarray, direction: np.ndarray) -> np.ndarray:
        """Step lengths in (0, 1) along ``mu − t · direction`` at which a linear source reaches
        its kink (:func:`procure.program.kinks.breakpoints`), ascending [1]."""
        return breakpoints(self.rows.A, self.kink_rate, self.all_or_nothing, mu, direction)

    def nearest_breakpoint(self, mu: np.ndarray, direction: np.ndarray) -> float:
        """The least step length in (0, 1) along ``mu − t · direction`` at which some source's
        term of g bends (:func:`procure.program.step_limits.nearest_breakpoint`; inf where none) [1]."""
        A = self.rows.A
        return float(nearest_breakpoint(A.T @ mu, A.T @ direction, *self.thresholds))
