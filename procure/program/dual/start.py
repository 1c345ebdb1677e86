"""Where the minimiser starts: the budget's multiplier alone, found by bisection.

Each problem's start prices only the budget, at the λ where it is spent (bisection on log λ,
every problem together). Where the hours there still break another row (a budget slack at every
box, say), the start is the one of least g among that and each such row priced alone where it
is met.
"""

from __future__ import annotations

import math

import numpy as np

from .terms import Terms

#: The bracket of ln λ that the start bisects, around ln of the best source's value per dollar
#: at the hours held: from e^−60 of it to e^1 of it [1].
START_BRACKET = (-60.0, 1.0)
#: Bisection steps of the budget's multiplier alone, on a log scale of width 61, that start
#: the method: to about 1e-8 of λ, from where Newton's steps take over.
START_STEPS = 32


def budget_start(terms: Terms, sel: np.ndarray) -> np.ndarray:
    """μ of the problems ``sel`` (one row each) with only the budget priced (see the module)."""
    mu = row_priced(terms, 0, sel)
    x, _ = terms.hours(mu, sel, slopes=False)
    with np.errstate(invalid="ignore"):
        broken = np.einsum("kmn,kn->km", terms.A[sel, 1:], x) > terms.b[sel, 1:]
    broken &= np.all(np.isfinite(x), axis=1)[:, None]
    if not broken.any():
        return mu
    best, _x, _slope = terms.g(mu, sel)
    for r in np.flatnonzero(broken.any(axis=0)).tolist():
        pos = np.flatnonzero(broken[:, r])
        trial = row_priced(terms, r + 1, sel[pos])
        g, _x, _slope = terms.g(trial, sel[pos])
        better = np.isfinite(g) & (g < best[pos])
        mu[pos[better]], best[pos[better]] = trial[better], g[better]
    return mu


def row_priced(terms: Terms, r: int, sel: np.ndarray) -> np.ndarray:
    """μ (one row per problem of ``sel``) with only row ``r`` priced, at the multiplier where the
    row is met (bisection on its log; 0 where buying every box meets it, for the budget every
    row, or nothing it holds has value)."""
    mu = np.zeros((len(sel), terms.b.shape[1]))
    row = terms.A[sel, r, :]
    with np.errstate(all="ignore"):
        top = np.max(np.where(row > 0, terms.entry[sel] / row, 0.0), axis=1, initial=0.0)
    priced = (top > 0) & np.isfinite(top)
    x, _ = terms.hours(mu, sel, slopes=False)
    with np.errstate(invalid="ignore"):
        used = np.einsum("kmn,kn->km", terms.A[sel], x)
    met = np.all(used <= terms.b[sel], axis=1) if r == 0 else used[:, r] <= terms.b[sel, r]
    priced &= ~(met & np.all(np.isfinite(x), axis=1))
    log_top = np.log(np.where(priced, top, 1.0))
    lo, hi = log_top + START_BRACKET[0], log_top + START_BRACKET[1]
    for _ in range(START_STEPS):
        mid = 0.5 * (lo + hi)
        mu[:, r] = np.exp(mid)
        x, _ = terms.hours(mu, sel, slopes=False)
        finite = np.all(np.isfinite(x), axis=1)
        with np.errstate(invalid="ignore"):
            spent = np.where(finite, np.sum(row * np.where(finite[:, None], x, 0.0), axis=1), math.inf)
        under = spent <= terms.b[sel, r]
        lo, hi = np.where(under, lo, mid), np.where(under, mid, hi)
    mu[:, r] = np.where(priced, np.exp(hi), 0.0)
    return mu
