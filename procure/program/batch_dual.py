"""The duals of K scenarios of one problem as arrays: g_ω(μ_ω), x_ω(μ_ω), dx/dc and a start.

The scenarios share their sources, curves, boxes and the shape of their coupling rows; each has
its own rates, saturation scales and rows. :class:`BatchDual` evaluates all their duals at once
(K × n numbers per evaluation), for :func:`procure.program.wait_and_see.minimise_batch`.
"""

from __future__ import annotations

import math

import numpy as np

from ..curves import REGISTRY
from .dual import START_BRACKET, START_STEPS, box_hours
from .kinks import linear_curves, price_thresholds


class BatchDual:
    """g_ω(μ_ω), x_ω(μ_ω) and dx/dc for K scenarios of one problem, as arrays (K × ...).

    Parameters
    ----------
    rate, k : numpy.ndarray
        Each scenario's rates ρσφ [1] and saturation scales [effective h], K × n.
    held, room, shape : numpy.ndarray
        Hours held [h], most hours [h] and curve shapes [1] of the n sources.
    curve : numpy.ndarray
        Curve name of each source.
    A : numpy.ndarray
        Coupling rows of each scenario, K × m × n (budget first) [$ per h, unit per h, ...].
    b : numpy.ndarray
        Their right-hand sides, K × m [$, unit, ...].
    """

    def __init__(self, rate: np.ndarray, k: np.ndarray, held: np.ndarray, room: np.ndarray, shape: np.ndarray,
                 curve: np.ndarray, A: np.ndarray, b: np.ndarray) -> None:  # fmt: skip
        self.rate, self.k, self.held, self.room, self.shape = rate, k, held, room, shape
        self.A, self.b = A, b
        linear = linear_curves(curve, shape)
        self.linear = np.flatnonzero(linear)
        self.groups = [(entry, np.flatnonzero((curve == name) & ~linear)) for name, entry in REGISTRY.items()]
        self.groups = [(entry, idx) for entry, idx in self.groups if len(idx)]
        self.evaluations = 0
        #: Per scenario and source, the price in multipliers below which it buys more than
        #: nothing (its marginal value at the hours held) and below which it buys less than its
        #: box (at the box's end; 0 for a box without end), both its rate for a linear source
        #: [value per h] (:func:`procure.program.kinks.pivot_step`).
        self.entry, self.leave = price_thresholds(rate, held, room, self.derivative)

    def derivative(self, e: np.ndarray) -> np.ndarray:
        """v'(e) of each source's curve at effective hours ``e`` (K × n; 1 for a linear source)."""
        out = np.ones_like(e)
        for entry, idx in self.groups:
            out[:, idx] = entry.derivative(e[:, idx], self.k[:, idx], self.shape[idx])
        return out

    def prices(self, mu: np.ndarray, sel: np.ndarray) -> np.ndarray:
        """Each source's price in multipliers, ``(Aᵀμ)_s``, for the scenarios ``sel`` [value per h]."""
        return np.einsum("kmn,km->kn", self.A[sel], mu)

    def hours(self, mu: np.ndarray, sel: np.ndarray, *, slopes: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """x(μ) within each box and dx/dc where a smooth source is strictly inside it, for the
        scenarios ``sel`` (μ one row per scenario of ``sel``)."""
        c = self.prices(mu, sel)
        rate_all = self.rate[sel]
        x = np.zeros_like(c)
        slope = np.zeros_like(c)
        lin = self.linear
        if len(lin):
            x[:, lin] = np.where((rate_all[:, lin] > c[:, lin]) & (rate_all[:, lin] > 0), self.room[lin], 0.0)
        k_all = self.k[sel]
        with np.errstate(all="ignore"):
            for entry, idx in self.groups:
                x[:, idx], slope[:, idx] = box_hours(entry, c[:, idx], rate_all[:, idx], self.held[idx], k_all[:, idx],
                                                     self.shape[idx], self.room[idx], slopes=slopes)  # fmt: skip
        return x, slope

    def values(self, x: np.ndarray, sel: np.ndarray) -> np.ndarray:
        """Each scenario's true value of hours ``x`` (rows of ``sel``) [own-hour equivalents]."""
        rate = self.rate[sel]
        total = np.zeros(len(sel))
        lin = self.linear
        if len(lin):
            total += np.sum(rate[:, lin] * (self.held[lin] + x[:, lin]), axis=1)
        with np.errstate(all="ignore"):
            for entry, idx in self.groups:
                e = rate[:, idx] * (self.held[idx] + x[:, idx])
                total += np.sum(entry.value(e, self.k[sel][:, idx], self.shape[idx]), axis=1)
        return total

    def g(self, mu: np.ndarray, sel: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """g(μ) per scenario of ``sel`` (inf where some box is unbounded), x(μ) and dx/dc."""
        self.evaluations += 1
        x, slope = self.hours(mu, sel)
        finite = np.all(np.isfinite(x), axis=1)
        safe = np.where(finite[:, None], x, 0.0)
        c = self.prices(mu, sel)
        g = self.values(safe, sel) - np.sum(c * safe, axis=1) + np.sum(mu * self.b[sel], axis=1)
        return np.where(finite, g, math.inf), x, slope

    def start(self) -> np.ndarray:
        """μ with only the budget priced, at each scenario's λ where its budget is spent
        (bisection on log λ, all scenarios together); where the hours there still break another
        row (a budget slack at every box, say), the start of least g among that and each such
        row priced alone where it is met (as :func:`procure.program.newton.budget_start`)."""
        every = np.arange(self.b.shape[0])
        mu = self._row_priced(0, every)
        x, _ = self.hours(mu, every, slopes=False)
        with np.errstate(invalid="ignore"):
            broken = np.einsum("kmn,kn->km", self.A[:, 1:], x) > self.b[:, 1:]
        broken &= np.all(np.isfinite(x), axis=1)[:, None]
        if not broken.any():
            return mu
        best, _x, _slope = self.g(mu, every)
        for r in np.flatnonzero(broken.any(axis=0)).tolist():
            sel = np.flatnonzero(broken[:, r])
            trial = self._row_priced(r + 1, sel)
            g, _x, _slope = self.g(trial, sel)
            better = np.isfinite(g) & (g < best[sel])
            mu[sel[better]], best[sel[better]] = trial[better], g[better]
        return mu

    def _row_priced(self, r: int, sel: np.ndarray) -> np.ndarray:
        """μ (one row per scenario of ``sel``) with only row ``r`` priced, at the multiplier where
        the row is met (bisection on its log; 0 where buying every box meets it, for the budget
        every row, or nothing it holds has value)."""
        mu = np.zeros((len(sel), self.b.shape[1]))
        row = self.A[sel, r, :]
        with np.errstate(all="ignore"):
            top = np.max(np.where(row > 0, self.entry[sel] / row, 0.0), axis=1, initial=0.0)
        priced = (top > 0) & np.isfinite(top)
        x, _ = self.hours(mu, sel, slopes=False)
        with np.errstate(invalid="ignore"):
            used = np.einsum("kmn,kn->km", self.A[sel], x)
        met = np.all(used <= self.b[sel], axis=1) if r == 0 else used[:, r] <= self.b[sel, r]
        priced &= ~(met & np.all(np.isfinite(x), axis=1))
        log_top = np.log(np.where(priced, top, 1.0))
        lo, hi = log_top + START_BRACKET[0], log_top + START_BRACKET[1]
        for _ in range(START_STEPS):
            mid = 0.5 * (lo + hi)
            mu[:, r] = np.exp(mid)
            x, _ = self.hours(mu, sel, slopes=False)
            finite = np.all(np.isfinite(x), axis=1)
            spent = np.where(finite, np.sum(row * np.where(finite[:, None], x, 0.0), axis=1), math.inf)
            under = spent <= self.b[sel, r]
            lo, hi = np.where(under, lo, mid), np.where(under, mid, hi)
        mu[:, r] = np.where(priced, np.exp(hi), 0.0)
        return mu
