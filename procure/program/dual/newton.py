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
from .steps import State, kink_newton, pivots
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
            keep[tried] = ~kink_newton(terms, sel[tried], s)
        sel, grad = sel[keep], grad[keep]
        if len(sel):
            s.stalls[sel] = 0
            active[sel[~_newton(terms, sel, grad, s, linear)]] = False
    return Minimum(s.mu, s.x, s.g, converged, terms.evaluations)


def _direction(terms: Terms, sel: np.ndarray, grad: np.ndarray, s: State) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Newton's direction on the free rows of the problems ``sel``, which rows are free, and
    where it is no direction (g has no curvature there: a gradient step)."""
    mu = s.mu[sel]
    # the ε-active set: NEARLY_ZERO's multipliers (gradient > 0) are stepped to 0 alone
    nearly = (mu > 0) & (mu <= NEARLY_ZERO * np.max(mu, axis=-1, keepdims=True, initial=0.0)) & (grad > 0)
    free = ((mu > 0) & ~nearly) | (grad < 0)
    A = terms.A[sel]
    H = np.where(free[:, :, None] & free[:, None, :], np.einsum("kmn,kn,kln->kml", A, -s.slope[sel], A), 0.0)
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
    rest = np.ones(len(sel), dtype=bool)  # not yet stepped or stopped: the line search's
    direction, free, gradient = _direction(terms, sel, grad, s)
    if linear and gradient.any():
        pos = np.flatnonzero(gradient)
        rest[pos[pivots(terms, sel[pos], s)]] = False
    pos = np.flatnonzero(gradient & rest)
    if len(pos):
        # no source is strictly inside its box (g is piecewise linear here): a gradient step,
        # each row's scaled by the sources' rows as if each bought its box over a price band as
        # wide as its price
        c = np.abs(terms.prices(s.mu[sel[pos]], sel[pos]))
        with np.errstate(divide="ignore", invalid="ignore"):
            weight = np.where(c > 0, terms.room / np.maximum(c, DIVISION_FLOOR), 0.0)
        weight = np.where(np.isfinite(weight), weight, 0.0)
        diagonal = np.einsum("kmn,kn->km", terms.A[sel[pos]] ** 2, weight)
        scaled = np.all((diagonal > 0) | ~free[pos], axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            direction[pos] = np.where(free[pos], grad[pos] / diagonal, 0.0)
        moving[pos[~scaled]] = rest[pos[~scaled]] = False
    idx = np.flatnonzero(rest)
    if not len(idx):
        return moving
    sel, grad, direction, gradient = sel[idx], grad[idx], direction[idx], gradient[idx]
    t, found = _line_search(terms, sel, grad, direction, s, linear)
    if linear:
        # Newton's step over too few curved sources (rows nearly parallel over them) is far too
        # long or no way down: the dual simplex step along the kinks instead, where it does better
        q = np.flatnonzero(~gradient & (t < SHORT_NEWTON_STEP))
        t[q[pivots(terms, sel[q], s, np.where(t[q] == 0.0, np.inf, found.g[q]))]] = -1.0  # taken: no more
    go = t > 0
    stop = gradient & go & (t < SHORTEST_GRADIENT_STEP)  # g piecewise linear, the gradient no way down
    go &= ~stop
    _farther(terms, sel, direction, gradient & (t == 1.0) & go, s.mu[sel], t, found)
    if linear:
        _kink_between(terms, sel, direction, go & (t < 1.0), s.mu[sel], t, found)
    still = go & np.all(found.mu == s.mu[sel], axis=1)
    moving[idx[(t == 0.0) | stop | still]] = False  # no length held, or no way down, or no move
    go &= ~still
    s.take(sel[go], found.mu[go], found.g[go], found.x[go], found.slope[go])
    return moving


def _line_search(terms: Terms, sel: np.ndarray, grad: np.ndarray, direction: np.ndarray, s: State,
                 linear: bool) -> tuple[np.ndarray, State]:  # fmt: skip
    """The backtracking line search along ``mu − t · direction``: the full step, then (with
    linear sources) the nearest point where some source's term bends, where that is below
    half, then halvings. Returns t (0 where no length holds) and the state at the step."""
    mu, g, found = s.mu[sel], s.g[sel], s.rows(sel)
    flat = at_resolution(ARMIJO * np.sum(grad * (mu - np.maximum(mu - direction, 0.0)), axis=1), g)
    nearest = np.full(len(sel), np.inf)
    if linear:
        c, dc = terms.prices(mu, sel), terms.prices(direction, sel)
        nearest = nearest_breakpoint(c, dc, terms.entry[sel], terms.leave[sel])
    early = nearest < 0.5
    t = np.zeros(len(sel))
    for j in range(MAX_HALVINGS + 1):
        power = np.where(early, j - 1, j).astype(float)
        length = np.where(j == 0, 1.0, np.where(early & (j == 1), nearest, 0.5**power))
        q = np.flatnonzero((t == 0.0) & (power < MAX_HALVINGS))
        if not len(q):
            break
        step = np.maximum(mu[q] - length[q, None] * direction[q], 0.0)
        asked = ARMIJO * np.sum(grad[q] * (mu[q] - step), axis=1)
        gq, xq, sq = terms.g(step, sel[q])
        good = np.isfinite(gq) & ((gq <= g[q] - asked) | (flat[q] & within_resolution(gq, g[q])))
        q = q[good]
        found.take(q, step[good], gq[good], xq[good], sq[good])
        t[q] = length[q]
    return t, found


def _lower(terms: Terms, sel: np.ndarray, q: np.ndarray, at: np.ndarray, length: np.ndarray, t: np.ndarray,
           found: State) -> np.ndarray:  # fmt: skip
    """The steps of ``length`` to ``at`` (the problems ``sel[q]``) written into ``t`` and
    ``found`` where g there is finite and no higher than ``found``'s; those of ``q``."""
    g, x, slope = terms.g(at, sel[q])
    better = np.isfinite(g) & (g <= found.g[q])
    found.take(q[better], at[better], g[better], x[better], slope[better])
    t[q[better]] = length[better]
    return q[better]


def _farther(terms: Terms, sel: np.ndarray, direction: np.ndarray, which: np.ndarray, mu: np.ndarray,
             t: np.ndarray, found: State) -> None:  # fmt: skip
    """Where a gradient step held at full length, g is piecewise linear and the step's scale a
    guess: double it from ``mu`` while g falls (a row whose multiplier should be 0 gets there,
    at the projection). Writes t and the state at the step into ``t`` and ``found``."""
    q = np.flatnonzero(which)
    for _double in range(MAX_HALVINGS):
        farther = np.maximum(mu[q] - 2 * t[q, None] * direction[q], 0.0)
        moved = ~np.all(farther == found.mu[q], axis=1)
        if not moved.any():
            break
        q = _lower(terms, sel, q[moved], farther[moved], 2 * t[q[moved]], t, found)


def _kink_between(terms: Terms, sel: np.ndarray, direction: np.ndarray, which: np.ndarray, mu: np.ndarray,
                  t: np.ndarray, found: State) -> None:  # fmt: skip
    """Where a step was cut short and a linear source's kink lies between the step taken and the
    one refused (the minimum along the step is often there): that point instead, where g there
    is no higher. Writes into ``t`` and ``found``."""
    q = np.flatnonzero(which)
    lin = terms.linear
    A_lin = terms.A[sel[q]][:, :, lin]
    bp = breakpoints(A_lin, terms.kink_rate[sel[q]][:, lin], mu[q], direction[q])
    tq = t[q, None]
    first = np.min(np.where((bp > tq) & (bp < 2 * tq) & (bp < 1), bp, np.inf), axis=1, initial=np.inf)
    has = np.isfinite(first)
    q, first = q[has], first[has]
    if len(q):
        _lower(terms, sel, q, np.maximum(mu[q] - first[:, None] * direction[q], 0.0), first, t, found)
