"""Newton's step on g restricted to the hyperplanes of the linear sources at their kink, for K
problems at once.

On the hyperplanes each kinked source's term of g is 0 whatever its hours, so g is smooth there,
and the kinked sources' hours are the multipliers of the hyperplanes: with the smooth sources'
hours ``x(μ + Δμ) ≈ x(μ) + diag(dx/dc) Aᵀ Δμ``, the step solves::

    [ H      −A_L ] [Δμ ]   [ −(b − A x_other) ]
    [ A_Lᵀ    0   ] [x_L] = [ R_L − A_Lᵀμ      ]

over the rows that bind (H = A diag(−dx/dc) Aᵀ on them). Where its hours ``x_L`` lie in their
boxes and the projected gradient ``b − A x`` (with those hours) meets the dual's tolerance, 0 is
in g's subdifferential: μ is the minimum, and x (the kinked sources bought in part) the
optimum's hours.

The problems' systems differ in which rows bind and which linear sources are kinked, so each is
written over all m rows and all L linear sources: a row that does not bind gets the equation
Δμ_r = 0, a linear source that is not kinked the equation x_s = 0, and the K systems of size
m + L are solved by one call of ``numpy.linalg.solve``. A kinked source whose hours would leave
its box leaves its hyperplane, and that problem's system is solved again without it; a row whose
multiplier the step would take below 0 does not bind, and is held at 0; a singular system
(sources alike) is solved by least squares where that solves it, else that problem has no kink
step. None of this enters a certificate: each problem's bound is g at its final multipliers.
"""

from __future__ import annotations

import numpy as np

from .kinks import SYSTEM_RESIDUAL, binding_rows
from .least_squares import BOX_SLACK


def kink_step(A: np.ndarray, b: np.ndarray, rate: np.ndarray, room: np.ndarray, linear: np.ndarray,
                    mu: np.ndarray, x: np.ndarray, slope: np.ndarray,
                    kinked: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """Each problem's kink step (see the module).

    Parameters
    ----------
    A, b : numpy.ndarray
        Each problem's coupling rows, K × m × n, and right-hand sides, K × m.
    rate : numpy.ndarray
        Each problem's rates ρσφ, K × n [effective h per h].
    room : numpy.ndarray
        Each source's box, n [h].
    linear : numpy.ndarray
        Indices of the L linear sources.
    mu, x, slope : numpy.ndarray
        Multipliers (K × m, ≥ 0), the hours at them and dx/dc of the smooth sources strictly
        inside their boxes (K × n).
    kinked : numpy.ndarray
        K × L booleans, from :func:`procure.program.dual.kinks.kinked_sources`.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray, numpy.ndarray, numpy.ndarray)
        The multipliers after the step (K × m, not yet clipped to μ ≥ 0); the linear sources'
        hours in their boxes (K × L, 0 where not kinked) [h]; which linear sources are still on
        their hyperplane in the step (K × L); and which problems have a step (K). A problem has
        none where its system is singular and has no solution, or no kinked source is left.
    """
    K, m, _n = A.shape
    L = len(linear)
    A_lin = A[:, :, linear]
    left_out = np.zeros(x.shape, dtype=bool)  # the kinked sources, whose hours the step finds
    left_out[:, linear] = kinked
    grad, free = binding_rows(A, b, mu, x, left_out)
    held = np.zeros_like(free)  # rows held at 0 (below)
    curvature = np.einsum("kmn,kn,kln->kml", A, -slope, A)
    base = mu.copy()  # μ with the rows held at 0 set there
    box = room[linear]
    size = np.where(np.isfinite(box), np.maximum(1.0, box), 1.0)
    kin = kinked.copy()
    step, hours, ok = np.zeros((K, m)), np.zeros((K, L)), np.zeros(K, dtype=bool)
    pending = np.asarray(kin.any(axis=1) & free.any(axis=1))
    for _change in range(L + m):
        rows = np.flatnonzero(pending)
        if not len(rows):
            break
        k_, f_ = kin[rows], free[rows]
        coupling = A_lin[rows] * f_[:, :, None] * k_[:, None, :]
        system = np.zeros((len(rows), m + L, m + L))
        system[:, :m, :m] = curvature[rows] * (f_[:, :, None] & f_[:, None, :])
        system[:, np.arange(m), np.arange(m)] += ~f_
        system[:, :m, m:] = -coupling
        system[:, m:, :m] = np.transpose(coupling, (0, 2, 1))
        system[:, np.arange(m, m + L), np.arange(m, m + L)] = ~k_
        # the gradient where the held rows were moved to 0, to first order (curvature × their shift)
        moved = grad[rows] + np.einsum("kml,kl->km", curvature[rows], base[rows] - mu[rows])
        # each kinked source's rate less its price in multipliers at μ with the held rows at 0
        gap = rate[rows][:, linear] - np.einsum("kml,km->kl", A_lin[rows], base[rows])
        rhs = np.concatenate([np.where(f_, -moved, 0.0), np.where(k_, gap, 0.0)], axis=1)
        solution = _solve(system, rhs)
        solved = np.all(np.isfinite(solution), axis=1)
        pending[rows[~solved]] = False  # no solution: the kinks' hyperplanes do not meet
        rows, k_, solution = rows[solved], k_[solved], solution[solved]
        h = solution[:, m:]
        # a row the step takes below 0 does not bind (see the module): held at 0, the step taken again
        below = free[rows] & (base[rows] + solution[:, :m] < 0)
        outside = np.where(k_, np.maximum(-BOX_SLACK * size - h, h - box - BOX_SLACK * size) / size, -np.inf)
        some = below.any(axis=1)
        fits = ~np.any(outside > 0, axis=1) & ~some
        done = rows[fits]
        step[done], ok[done] = solution[fits, :m], True
        hours[done] = np.where(k_[fits], np.clip(h[fits], 0.0, box), 0.0)
        pending[done] = False
        # the rows that do not bind first; then a source leaving its box goes off its hyperplane (its hours at μ)
        lowered = rows[some]
        held[lowered] |= below[some]
        free[lowered] &= ~below[some]
        base[lowered] = np.where(held[lowered], 0.0, base[lowered])
        worse = rows[~fits & ~some]
        leaving = linear[np.argmax(outside[~fits & ~some], axis=1)]
        kin[worse] &= linear[None, :] != leaving[:, None]
        left_out[worse, leaving] = False
        grad[worse], binding = binding_rows(A[worse], b[worse], mu[worse], x[worse], left_out[worse])
        free[worse] = binding & ~held[worse]
        pending[rows[~fits]] = kin[rows[~fits]].any(axis=1) & free[rows[~fits]].any(axis=1)
    return base + step, hours, kin & ok[:, None], ok


def _solve(system: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """The solutions of the stacked systems; where one is singular (kinks that are not
    independent, sources alike), its least-squares solution, kept where it solves the system
    within :data:`~procure.program.dual.kinks.SYSTEM_RESIDUAL` (relative, and of the right-hand
    side's size); NaN rows where none does (and where a system is not finite)."""
    finite = np.all(np.isfinite(system), axis=(1, 2)) & np.all(np.isfinite(rhs), axis=1)
    solution = np.full(rhs.shape, np.nan)
    with np.errstate(all="ignore"):
        try:
            solution[finite] = np.linalg.solve(system[finite], rhs[finite][:, :, None])[:, :, 0]
            return solution
        except np.linalg.LinAlgError:
            pass
        for q in np.flatnonzero(finite).tolist():
            try:
                solution[q] = np.linalg.solve(system[q], rhs[q])
                continue
            except np.linalg.LinAlgError:
                pass
            try:
                least = np.linalg.lstsq(system[q], rhs[q], rcond=None)[0]
            except np.linalg.LinAlgError:  # no least-squares solution either (SVD fails)
                continue
            off = np.abs(system[q] @ least - rhs[q])
            if np.all(off <= SYSTEM_RESIDUAL * (np.abs(rhs[q]) + np.max(np.abs(rhs[q])))):
                solution[q] = least
    return solution
