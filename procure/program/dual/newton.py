"""The projected Newton method that minimises K Lagrangian duals over their multipliers μ ≥ 0.

Each dual g(μ) (:mod:`procure.program.dual.terms`) is convex in the few multipliers of its
coupling rows, with ∇g = b − A x(μ) and Hessian A diag(−dx/dc) Aᵀ. The method takes Newton steps
on the rows that bind, projected on μ ≥ 0, with a backtracking line search (Armijo's rule,
judged at g's float resolution near the optimum), from the budget's multiplier alone
(:mod:`procure.program.dual.start`). Where a linear source is at its kink it first tries
Newton's step on the kinks' hyperplanes; where no source is strictly inside its box, or
Newton's step is cut to almost nothing, the dual simplex step along the kinks
(:mod:`procure.program.dual.steps`); where g has no curvature and no linear source, a scaled
gradient step. A problem stops where its projected gradient meets :data:`DUAL_TOLERANCE`
(``converged``), or where no step makes progress. Every problem's state is an array row, and
each evaluation of g serves every problem still moving: K = 1 is the single plan, K scenarios
the wait-and-see values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...arrays import DIVISION_FLOOR
from .kinks import breakpoints, nearest_breakpoint
from .resolution import at_resolution, within_resolution
from .start import budget_start
from .steps import State, kink_newton, pivot, pivots
from .terms import Terms

#: The dual's projected gradient, as a share of each row's scale, at which it stops [1].
DUAL_TOLERANCE = 1e-11
#: Most Newton steps of the dual, and most halvings of one step.
MAX_DUAL_STEPS = 100
MAX_HALVINGS = 60
#: The shortest gradient step (where no source is strictly inside its box) the method takes
#: before it stops, stalled at a kink the gradient cannot leave [1].
SHORTEST_GRADIENT_STEP = 2.0**-20
#: A Newton step cut to below this share of its length, or refused, where the dual has linear
#: sources: the dual simplex step along their kinks is tried in its place [1].
SHORT_NEWTON_STEP = 2.0**-10
#: Armijo's sufficient-decrease share of the line search [1].
ARMIJO = 1e-4
#: Share of the Newton matrix's trace added to its diagonal, so that a source at the edge of
#: its box leaves the system solvable [1].
NEWTON_RIDGE = 1e-12
#: A multiplier below this share of the largest, on a slack row, is float noise about 0 and is
#: held there, out of Newton's system [1].
NEARLY_ZERO = 1e-9
#: Kink steps in a row that leave g where it was before the method takes a plain Newton step.
KINK_STALLS = 2


@dataclass(frozen=True)
class Minimum:
    """The duals' minima, one row per problem.

    Attributes
    ----------
    mu : numpy.ndarray
        Multipliers, K × m, one per coupling row (:class:`procure.program.rows.CouplingRows`)
        [value per unit].
    x : numpy.ndarray
        Hours of each source at μ, K × n [h].
    bound : numpy.ndarray
        g(μ), K: an upper bound on each problem's optimum [own-hour equivalents].
    converged : numpy.ndarray
        K booleans: the projected gradient met :data:`DUAL_TOLERANCE`.
    evaluations : int
        Evaluations of g (each serves every problem still moving).
    """

    mu: np.ndarray
    x: np.ndarray
    bound: np.ndarray
    converged: np.ndarray
    evaluations: int


def held_at_zero(mu: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """The multipliers within float noise of 0 on a slack row (below :data:`NEARLY_ZERO` of the
    largest, gradient > 0), held at 0 out of Newton's system and stepped to 0 alone: the
    ε-active set of projected Newton (booleans, K × m)."""
    largest = np.max(mu, axis=-1, keepdims=True, initial=0.0)
    return (mu > 0) & (mu <= NEARLY_ZERO * largest) & (grad > 0)


def minimise(terms: Terms, start: np.ndarray | None = None) -> Minimum:
    """Minimise every problem's dual over μ ≥ 0 (see the module), from ``start`` (K × m; else,
    and where g is not finite there, from the budget's multiplier alone)."""
    count = terms.b.shape[0]
    every = np.arange(count)
    mu = budget_start(terms, every) if start is None else np.maximum(np.asarray(start, dtype=float), 0.0)
    g, x, slope = terms.g(mu, every)
    if start is not None and not np.all(np.isfinite(g)):
        again = np.flatnonzero(~np.isfinite(g))
        mu[again] = budget_start(terms, again)
        g[again], x[again], slope[again] = terms.g(mu[again], again)
    s = State(mu, g, x, slope, np.zeros(count, dtype=np.int64))
    active = np.isfinite(g)
    converged = np.zeros(count, dtype=bool)
    linear = len(terms.linear) > 0
    for _step in range(MAX_DUAL_STEPS):
        sel = np.flatnonzero(active)
        if not len(sel):
            break
        A, b = terms.A[sel], terms.b[sel]
        grad = b - np.einsum("kmn,kn->km", A, s.x[sel])
        scale = np.maximum(1.0, np.abs(b) + np.einsum("kmn,kn->km", np.abs(A), np.abs(s.x[sel])))
        projected = np.where(s.mu[sel] > 0, grad, np.minimum(grad, 0.0))
        done = np.all(np.abs(projected) <= DUAL_TOLERANCE * scale, axis=1)
        converged[sel[done]], active[sel[done]] = True, False
        keep = ~done
        if linear:
            tried = keep & (s.stalls[sel] < KINK_STALLS)
            stepped = np.zeros(len(sel), dtype=bool)
            stepped[tried] = kink_newton(terms, sel[tried], s)
            keep &= ~stepped
        sel, grad = sel[keep], grad[keep]
        if len(sel):
            s.stalls[sel] = 0
            active[sel[~_newton(terms, sel, grad, s, linear)]] = False
    return Minimum(s.mu, s.x, s.g, converged, terms.evaluations)


def _direction(terms: Terms, sel: np.ndarray, grad: np.ndarray, s: State) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Newton's direction on the free rows of the problems ``sel``, which rows are free, and
    where it is no direction (g has no curvature there: a gradient step)."""
    mu = s.mu[sel]
    nearly = held_at_zero(mu, grad)
    free = ((mu > 0) & ~nearly) | (grad < 0)
    A = terms.A[sel]
    both = free[:, :, None] & free[:, None, :]
    H = np.where(both, np.einsum("kmn,kn,kln->kml", A, -s.slope[sel], A), 0.0)
    trace = np.einsum("kii->k", H)
    ridge = NEWTON_RIDGE * np.maximum(trace, DIVISION_FLOOR)
    # rows not free get a unit diagonal and no gradient: no step there
    system = H + np.eye(H.shape[1])[None] * np.where(free, ridge[:, None], 1.0)[:, :, None]
    rhs = np.where(free, grad, 0.0)
    with np.errstate(all="ignore"):
        try:
            direction = np.linalg.solve(system, rhs[:, :, None])[:, :, 0]
        except np.linalg.LinAlgError:
            direction = np.empty_like(rhs)
            for q in range(len(sel)):
                try:
                    direction[q] = np.linalg.solve(system[q], rhs[q])
                except np.linalg.LinAlgError:
                    diagonal = max(float(np.max(np.abs(np.diag(H[q])), initial=0.0)), DIVISION_FLOOR)
                    direction[q] = rhs[q] / diagonal
    direction = np.where(nearly, mu, direction)
    flat = ~np.all(np.isfinite(direction), axis=1) | ~(trace > 0)
    return direction, free, flat


def _newton(terms: Terms, sel: np.ndarray, grad: np.ndarray, s: State, linear: bool) -> np.ndarray:
    """One Newton (or gradient, or dual simplex) step of each of the problems ``sel``, with its
    line search; False for those where no step makes progress (they stop)."""
    moving = np.ones(len(sel), dtype=bool)
    direction, free, gradient = _direction(terms, sel, grad, s)
    if linear and gradient.any():
        pos = np.flatnonzero(gradient)
        taken = pivots(terms, sel[pos], s)
        if taken.all() and len(pos) == len(sel):
            return moving
        rest = np.ones(len(sel), dtype=bool)
        rest[pos[taken]] = False
        sel, grad, direction, free, gradient = sel[rest], grad[rest], direction[rest], free[rest], gradient[rest]
        moving_rest = np.flatnonzero(rest)
    else:
        moving_rest = np.arange(len(sel))
    if gradient.any():
        # no source is strictly inside its box (g is piecewise linear here): a gradient step,
        # each row's scaled by the sources' rows as if each bought its box over a price band as
        # wide as its price
        pos = np.flatnonzero(gradient)
        c = np.abs(terms.prices(s.mu[sel[pos]], sel[pos]))
        with np.errstate(divide="ignore", invalid="ignore"):
            weight = np.where(c > 0, terms.room / np.maximum(c, DIVISION_FLOOR), 0.0)
        weight = np.where(np.isfinite(weight), weight, 0.0)
        diagonal = np.einsum("kmn,kn->km", terms.A[sel[pos]] ** 2, weight)
        scaled = np.all((diagonal > 0) | ~free[pos], axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            direction[pos] = np.where(free[pos], grad[pos] / diagonal, 0.0)
        moving[moving_rest[pos[~scaled]]] = False
        gradient[pos[~scaled]] = False
        ok = np.ones(len(sel), dtype=bool)
        ok[pos[~scaled]] = False
        sel, grad, direction, gradient, moving_rest = sel[ok], grad[ok], direction[ok], gradient[ok], moving_rest[ok]
    if not len(sel):
        return moving
    t, trial, g_new, x_new, slope_new = _line_search(terms, sel, grad, direction, s, linear)
    stays = t == 0.0
    if linear:
        # Newton's step over too few curved sources (rows nearly parallel over them) is far too
        # long or no way down: the dual simplex step along the kinks instead, where it does better
        for q in np.flatnonzero(~gradient & (t < SHORT_NEWTON_STEP)).tolist():
            found = pivot(terms, int(sel[q]), s)
            if found is not None and (t[q] == 0.0 or found[1] <= g_new[q]):
                s.take(sel[q : q + 1], *(np.asarray(v)[None] for v in found))
                stays[q] = False
                t[q] = -1.0  # taken: nothing more this step
    moving[moving_rest[stays]] = False
    go = t > 0
    stop = gradient & go & (t < SHORTEST_GRADIENT_STEP)  # g piecewise linear, the gradient no way down
    moving[moving_rest[stop]] = False
    go &= ~stop
    _farther(terms, sel, direction, gradient & (t == 1.0) & go, s.mu[sel], t, trial, g_new, x_new, slope_new)
    if linear:
        _kink_between(terms, sel, direction, go & (t < 1.0), s.mu[sel], t, trial, g_new, x_new, slope_new)
    still = go & np.all(trial == s.mu[sel], axis=1)
    moving[moving_rest[still]] = False
    go &= ~still
    s.take(sel[go], trial[go], g_new[go], x_new[go], slope_new[go])
    return moving


def _line_search(terms: Terms, sel: np.ndarray, grad: np.ndarray, direction: np.ndarray, s: State,
                 linear: bool) -> tuple[np.ndarray, ...]:  # fmt: skip
    """The backtracking line search along ``mu − t · direction``: the full step, then (with
    linear sources) the nearest point where some source's term bends, where that is below
    half, then halvings. Returns t (0 where no length holds), μ, g, x and dx/dc there."""
    mu = s.mu[sel]
    g = s.g[sel]
    flat = at_resolution(ARMIJO * np.sum(grad * (mu - np.maximum(mu - direction, 0.0)), axis=1), g)
    nearest = np.full(len(sel), np.inf)
    if linear:
        A = terms.A[sel]
        c, dc = np.einsum("kmn,km->kn", A, mu), np.einsum("kmn,km->kn", A, direction)
        nearest = nearest_breakpoint(c, dc, terms.entry[sel], terms.leave[sel])
    early = nearest < 0.5
    t = np.zeros(len(sel))
    trial = mu.copy()
    g_new = g.copy()
    x_new, slope_new = s.x[sel].copy(), s.slope[sel].copy()
    pending = np.ones(len(sel), dtype=bool)
    for j in range(MAX_HALVINGS + 1):
        power = np.where(early, j - 1, j).astype(float)
        length = np.where(j == 0, 1.0, np.where(early & (j == 1), nearest, 0.5**power))
        q = np.flatnonzero(pending & (power < MAX_HALVINGS))
        if not len(q):
            break
        step = np.maximum(mu[q] - length[q, None] * direction[q], 0.0)
        asked = ARMIJO * np.sum(grad[q] * (mu[q] - step), axis=1)
        gq, xq, sq = terms.g(step, sel[q])
        good = np.isfinite(gq) & ((gq <= g[q] - asked) | (flat[q] & within_resolution(gq, g[q])))
        q, step = q[good], step[good]
        t[q], trial[q], g_new[q], x_new[q], slope_new[q] = length[q], step, gq[good], xq[good], sq[good]
        pending[q] = False
    return t, trial, g_new, x_new, slope_new


def _farther(terms: Terms, sel: np.ndarray, direction: np.ndarray, which: np.ndarray, mu: np.ndarray,
             t: np.ndarray, trial: np.ndarray, g_new: np.ndarray, x_new: np.ndarray,
             slope_new: np.ndarray) -> None:  # fmt: skip
    """Where a gradient step held at full length, g is piecewise linear and the step's scale a
    guess: double it from ``mu`` while g falls (a row whose multiplier should be 0 gets there,
    at the projection). Writes t and the state at the step into the arrays given."""
    q = np.flatnonzero(which)
    for _double in range(MAX_HALVINGS):
        if not len(q):
            break
        farther = np.maximum(mu[q] - 2 * t[q, None] * direction[q], 0.0)
        moved = ~np.all(farther == trial[q], axis=1)
        q, farther = q[moved], farther[moved]
        if not len(q):
            break
        g_far, x_far, slope_far = terms.g(farther, sel[q])
        better = np.isfinite(g_far) & (g_far <= g_new[q])
        q, farther = q[better], farther[better]
        t[q] *= 2
        trial[q], g_new[q], x_new[q], slope_new[q] = farther, g_far[better], x_far[better], slope_far[better]


def _kink_between(terms: Terms, sel: np.ndarray, direction: np.ndarray, which: np.ndarray, mu: np.ndarray,
                  t: np.ndarray, trial: np.ndarray, g_new: np.ndarray, x_new: np.ndarray,
                  slope_new: np.ndarray) -> None:  # fmt: skip
    """Where a step was cut short and a linear source's kink lies between the step taken and the
    one refused (the minimum along the step is often there): that point instead, where g there
    is no higher. Writes into the arrays given."""
    q = np.flatnonzero(which)
    if not len(q):
        return
    lin = terms.linear
    A_lin = terms.A[sel[q]][:, :, lin]
    bp = breakpoints(np.einsum("kml,km->kl", A_lin, mu[q]), np.einsum("kml,km->kl", A_lin, direction[q]),
                     terms.kink_rate[sel[q]][:, lin])  # fmt: skip
    tq = t[q, None]
    first = np.min(np.where((bp > tq) & (bp < 2 * tq) & (bp < 1), bp, np.inf), axis=1, initial=np.inf)
    has = np.isfinite(first)
    q, first = q[has], first[has]
    if not len(q):
        return
    at_kink = np.maximum(mu[q] - first[:, None] * direction[q], 0.0)
    g_k, x_k, slope_k = terms.g(at_kink, sel[q])
    better = np.isfinite(g_k) & (g_k <= g_new[q])
    q = q[better]
    trial[q], g_new[q], x_new[q], slope_new[q] = at_kink[better], g_k[better], x_k[better], slope_k[better]
    t[q] = first[better]
