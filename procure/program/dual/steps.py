"""The minimiser's steps at the kinks of linear sources, for K problems: Newton's step on the
kinks' hyperplanes with its line search, and the dual simplex step.

Each function reads and writes the minimiser's state (:class:`State`) for the problems it is
given, where g does not rise beyond its float resolution
(:func:`procure.program.dual.resolution.within_resolution`), and says which of them took a step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .kink_step import kink_step
from .kinks import breakpoints, clear_of_endless, kinked_sources, on_hyperplanes
from .pivot import pivot_step
from .resolution import STALL_RESOLUTION, within_resolution
from .terms import Terms

#: Most halvings of one kink step.
KINK_HALVINGS = 20
#: A kink step shorter than this share of the multipliers' size is float noise: the multipliers
#: are kept and the kinked sources' hours read there (g evaluated at a point moved by noise may
#: rise by more than its resolution) [1].
STEP_NOISE = 1e-12


@dataclass
class State:
    """The minimiser's state, one row per problem: multipliers μ ≥ 0 [value per unit], g(μ)
    [own-hour equivalents], the hours x(μ) [h], dx/dc [h per (value per h)], and the kink steps
    in a row that left g where it was."""

    mu: np.ndarray
    g: np.ndarray
    x: np.ndarray
    slope: np.ndarray
    stalls: np.ndarray

    def rows(self, idx: np.ndarray) -> State:
        """A copy of the problems ``idx``'s state."""
        return State(self.mu[idx], self.g[idx], self.x[idx], self.slope[idx], self.stalls[idx])

    def take(self, idx: np.ndarray, mu: np.ndarray, g: np.ndarray, x: np.ndarray, slope: np.ndarray) -> None:
        """Move the problems ``idx`` to ``mu`` with g, x and dx/dc there."""
        self.mu[idx], self.g[idx], self.x[idx], self.slope[idx] = mu, g, x, slope


def cleared(terms: Terms, sel: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """``mu`` (rows of ``sel``) lifted off the side of a kink where a linear source without end
    buys without end by float noise (:func:`procure.program.dual.kinks.clear_of_endless`)."""
    lin = terms.linear
    endless = lin[~np.isfinite(terms.room[lin])]
    if not len(endless):
        return mu
    return clear_of_endless(terms.A[sel][:, :, endless], terms.kink_rate[sel][:, endless], mu)


def kink_newton(terms: Terms, idx: np.ndarray, s: State) -> np.ndarray:
    """Newton's step on the hyperplanes of the linear sources at their kink
    (:func:`procure.program.dual.kink_step.kink_step`) for the problems ``idx``: along it, where
    g rises at its end (another linear source's kink on the way), that kink first, then up to
    :data:`KINK_HALVINGS` halvings. The kinked sources' hours are read from the step where it
    ends on their hyperplanes (not cut short, not clipped at μ ≥ 0). Returns which of ``idx``
    took a step."""
    lin = terms.linear
    stepped = np.zeros(len(idx), dtype=bool)
    A_lin, rate_lin = terms.A[idx][:, :, lin], terms.kink_rate[idx][:, lin]
    kinked = kinked_sources(A_lin, rate_lin, s.mu[idx])
    pos = np.flatnonzero(kinked.any(axis=1))
    if not len(pos):
        return stepped
    r = idx[pos]
    A_lin, rate_lin = A_lin[pos], rate_lin[pos]
    target, hours, on, ok = kink_step(terms.A[r], terms.b[r], terms.kink_rate[r], terms.room, lin, s.mu[r], s.x[r],
                                      s.slope[r], kinked[pos])  # fmt: skip
    start = s.mu[r]
    noise = np.linalg.norm(target - start, axis=1) <= STEP_NOISE * np.linalg.norm(start, axis=1)
    target = np.where(noise[:, None], start, target)
    direction = start - target
    crossing = breakpoints(A_lin, rate_lin, start, direction)
    first = np.min(np.where(~on & (crossing < 1), crossing, np.inf), axis=1, initial=np.inf)
    pending = ok.copy()
    for t in [np.ones(len(r)), first, *(np.full(len(r), 0.5**q) for q in range(1, KINK_HALVINGS + 1))]:
        q = np.flatnonzero(pending & np.isfinite(t))
        if not len(q):
            continue
        trial = cleared(terms, r[q], np.maximum(start[q] - t[q, None] * direction[q], 0.0))
        # no move (a step of float noise): g, the hours and dx/dc where they were, not evaluated
        # again; the kinked hours are read there below
        g_new, x_new, slope_new = s.g[r[q]].copy(), s.x[r[q]].copy(), s.slope[r[q]].copy()
        moved = ~noise[q]
        if moved.any():
            g_new[moved], x_new[moved], slope_new[moved] = terms.g(trial[moved], r[q][moved])
        good = np.isfinite(g_new) & within_resolution(g_new, s.g[r[q]])
        if not good.any():
            continue
        q, trial, g_new, x_new, slope_new = q[good], trial[good], g_new[good], x_new[good], slope_new[good]
        there = on[q] & on_hyperplanes(A_lin[q], rate_lin[q], terms.room[lin], trial, g_new)
        x_new[:, lin] = np.where(there, hours[q], x_new[:, lin])
        fell = g_new < s.g[r[q]] - STALL_RESOLUTION * np.maximum(1.0, np.abs(s.g[r[q]]))
        s.stalls[r[q]] = np.where(fell, 0, s.stalls[r[q]] + 1)
        s.take(r[q], trial, g_new, x_new, slope_new)
        pending[q] = False
        stepped[pos[q]] = True
        if not pending.any():
            break
    return stepped


def pivot(terms: Terms, k: int, s: State) -> tuple[np.ndarray, float, np.ndarray, np.ndarray] | None:
    """Problem ``k``'s dual simplex step (:func:`procure.program.dual.pivot.pivot_step`), where
    no source is strictly inside its box or Newton's step does not hold: the multipliers, g,
    the hours and dx/dc after it, where g does not rise beyond its float resolution; at the
    minimum, μ with the kinked sources' hours in part that show it, and dx/dc as it is (once:
    None where the hours already have them); else None."""
    lin = terms.linear
    A, b, mu, x = terms.A[k], terms.b[k], s.mu[k], s.x[k]
    kinked = lin[kinked_sources(A[:, lin], terms.kink_rate[k, lin], mu)]
    for vertex in (False, True) if len(kinked) else (False,):
        found = pivot_step(A, b, mu, x, kinked, terms.entry[k], terms.leave[k], terms.room, vertex=vertex)
        if found is None:
            continue
        trial, hours = found
        if hours is not None:
            x_new = x.copy()
            x_new[kinked] = hours
            if np.array_equal(x_new, x):
                return None
            return mu, float(s.g[k]), x_new, s.slope[k]
        at = np.array([k])
        trial = cleared(terms, at, trial[None])
        g_new, x_new, slope_new = terms.g(trial, at)
        if math.isfinite(g_new[0]) and bool(within_resolution(g_new[0], s.g[k])):
            return trial[0], float(g_new[0]), x_new[0], slope_new[0]
    return None


def pivots(terms: Terms, idx: np.ndarray, s: State, limit: np.ndarray | None = None) -> np.ndarray:
    """:func:`pivot` for each of the problems ``idx``, taken where found (and g there is at most
    ``limit``, one per problem of ``idx``); which of ``idx`` took one."""
    taken = np.zeros(len(idx), dtype=bool)
    for q, k in enumerate(idx.tolist()):
        found = pivot(terms, k, s)
        if found is not None and (limit is None or found[1] <= limit[q]):
            s.take(np.array([k]), *(np.asarray(v)[None] for v in found))
            taken[q] = True
    return taken
