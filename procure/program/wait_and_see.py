"""The wait-and-see values of many scenarios at once: one Lagrangian dual per scenario, all
minimised together, each certified by its own bounds.

EVPI needs, for every scenario ω, the best value of the deterministic problem at ω's numbers
(:meth:`procure.program.scenarios.ScenarioProblem.scenario`). Where that problem qualifies
for the dual (:func:`procure.program.paths.eligible`: concave curves with a closed-form
inverse derivative, no integer terms), its dual is that of :mod:`procure.program.dual` with
ω's rates and scales; the scenarios share the sources, their curves, boxes and capacity rows,
so the K duals are minimised as one batch: every evaluation is a few array operations on
K × n numbers, and each projected Newton step solves K small systems at once.

Each scenario's value is certified exactly as :func:`procure.program.certify.dual_certified`
certifies one: the dual at its final multipliers, ``g_ω(μ_ω)``, is an upper bound on the
optimum for every ``μ_ω ≥ 0`` (weak duality); the hours there, clipped to their boxes, with the
hours that break a coupling row (by float noise) scaled down until it holds
(:func:`within_rows`), are a feasible plan whose true value is a lower bound. A scenario is
certified when the two are within the tolerance; its value is the lower bound (a plan's
value). Where a linear source of a scenario reaches its kink, that scenario takes a kink step
(:mod:`procure.program.batch_kinks`), its kinked sources' hours read where it ends on their
hyperplanes; where no kink step holds, or no source is strictly inside its box (no curvature
for Newton), a dual simplex step (:func:`procure.program.kinks.pivot_step`); at a kink where
neither holds, Newton's step on the curvature of the sources inside their boxes, as the
single dual takes (:func:`procure.program.newton.minimise`). A scenario that is
not certified gets ``None``, and the caller solves it on its own: where no step makes its g
fall, or g stays where it is for more than :data:`~procure.program.newton.KINK_STALLS` steps
in a row.
"""

from __future__ import annotations

import numpy as np

from ..arrays import DIVISION_FLOOR
from .batch_dual import BatchDual as BatchDual
from .batch_kinks import STEP_NOISE, batch_kink_step
from .bounds import CurveArrays, source_arrays
from .dual import (
    ARMIJO,
    DUAL_TOLERANCE,
    KINK_HALVINGS,
    KINK_STALLS,
    MAX_DUAL_STEPS,
    MAX_HALVINGS,
    NEWTON_RIDGE,
    STALL_RESOLUTION,
    at_resolution,
    within_resolution,
)
from .kinks import kinked_sources, on_hyperplanes, pivot_step
from .newton import held_at_zero
from .paths import eligible
from .plan import VALUE_ABS_TOLERANCE
from .polish import FEASIBILITY
from .problem import Mode
from .rows import capacity_rows_of, coupling_rows, mix_coefficients, within_rows
from .scenarios import ScenarioProblem
from .step_limits import nearest_breakpoint

#: Newton steps a scenario takes at a kink where neither a kink step nor a dual simplex step
#: holds, before it leaves the batch for its dual on its own [steps]: a scenario that needs
#: more takes ever shorter steps and is rarely certified (1 to 3 sufficed on the ledgers tried).
KINK_NEWTON_STEPS = 3


def minimise_batch(d: BatchDual) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Minimise every scenario's dual over μ ≥ 0 by projected Newton steps with a backtracking
    line search, all scenarios together: (μ, g(μ), x(μ)), one row per scenario. A scenario whose
    step fails stops where it is (its bound still holds)."""
    count, m = d.b.shape
    every = np.arange(count)
    mu = d.start()
    g, x, slope = d.g(mu, every)
    active = np.isfinite(g)
    stalls = np.zeros(count, dtype=np.int64)
    newtons = np.zeros(count, dtype=np.int64)  # Newton steps taken at a kink where no other step held
    eye = np.eye(m)
    for _step in range(MAX_DUAL_STEPS):
        sel = np.flatnonzero(active)
        if not len(sel):
            break
        A, b, mu_s, x_s = d.A[sel], d.b[sel], mu[sel], x[sel]
        grad = b - np.einsum("kmn,kn->km", A, x_s)
        scale = np.maximum(1.0, np.abs(b) + np.einsum("kmn,kn->km", np.abs(A), np.abs(x_s)))
        projected = np.where(mu_s > 0, grad, np.minimum(grad, 0.0))
        done = np.all(np.abs(projected) <= DUAL_TOLERANCE * scale, axis=1)
        active[sel[done]] = False
        pivoted = np.zeros(len(sel), dtype=bool)  # a dual simplex step tried (and failed) already
        if len(d.linear):
            # a linear source at its kink: a kink step instead (procure.program.batch_kinks)
            kinked = kinked_sources(A[:, :, d.linear], d.rate[sel][:, d.linear], mu_s) & ~done[:, None]
            at_kink = kinked.any(axis=1)
            if at_kink.any():
                stuck = _kink_steps(d, sel[at_kink], kinked[at_kink], mu, g, x, slope, stalls, active)
                # neither step holds: Newton's below, up to KINK_NEWTON_STEPS times a scenario
                pos = np.flatnonzero(at_kink)[stuck]
                newtons[sel[pos]] += 1
                over = newtons[sel[pos]] > KINK_NEWTON_STEPS
                active[sel[pos[over]]] = False
                at_kink[pos[~over]] = False
                pivoted[pos[~over]] = True
            done = done | at_kink
        keep = ~done
        sel, A, mu_s, grad, pivoted = sel[keep], A[keep], mu_s[keep], grad[keep], pivoted[keep]
        if not len(sel):
            continue  # every scenario left took a kink step
        nearly = held_at_zero(mu_s, grad)
        free = ((mu_s > 0) & ~nearly) | (grad < 0)
        both = free[:, :, None] & free[:, None, :]
        H = np.where(both, np.einsum("kmn,kn,kln->kml", A, -slope[sel], A), 0.0)
        trace = np.einsum("kii->k", H)
        ridge = NEWTON_RIDGE * np.maximum(trace, DIVISION_FLOOR)
        # rows not free get a unit diagonal and no gradient: no step there
        H = H + eye[None] * np.where(free, ridge[:, None], 1.0)[:, :, None]
        rhs = np.where(free, grad, 0.0)
        stalled = trace <= 0
        with np.errstate(all="ignore"):
            try:
                direction = np.linalg.solve(H, rhs[:, :, None])[:, :, 0]
            except np.linalg.LinAlgError:
                direction = np.full_like(rhs, np.nan)
        direction = np.where(nearly, mu_s, direction)
        stalled |= ~np.all(np.isfinite(direction), axis=1)
        if stalled.any():  # no curvature: g is piecewise linear here, a dual simplex step instead
            active[sel[stalled & pivoted]] = False  # tried just now: it would fail again
            if (stalled & ~pivoted).any():
                _pivots(d, sel[stalled & ~pivoted], mu, g, x, slope, stalls, active)
        ok_rows = ~stalled
        sel, mu_s, grad, direction = sel[ok_rows], mu_s[ok_rows], grad[ok_rows], direction[ok_rows]
        t = np.ones(len(sel))
        pending = np.ones(len(sel), dtype=bool)
        flat = at_resolution(ARMIJO * np.sum(grad * (mu_s - np.maximum(mu_s - direction, 0.0)), axis=1), g[sel])
        nearest = _nearest_breakpoints(d, sel, mu_s, direction)
        for _half in range(MAX_HALVINGS):
            rows = np.flatnonzero(pending)
            if not len(rows):
                break
            trial = np.maximum(mu_s[rows] - t[rows, None] * direction[rows], 0.0)
            g_new, x_new, slope_new = d.g(trial, sel[rows])
            decrease = ARMIJO * np.sum(grad[rows] * (mu_s[rows] - trial), axis=1)
            g_old = g[sel[rows]]
            ok = np.isfinite(g_new) & ((g_new <= g_old - decrease) | (flat[rows] & within_resolution(g_new, g_old)))
            moved = ok & ~np.all(trial == mu_s[rows], axis=1)
            taken = sel[rows[moved]]
            mu[taken], g[taken], x[taken], slope[taken] = trial[moved], g_new[moved], x_new[moved], slope_new[moved]
            active[sel[rows[ok & ~moved]]] = False  # no move left: it stays where it is
            pending[rows[ok]] = False
            # where the step is refused: the nearest breakpoint along it, then halvings from there
            r = rows[~ok]
            t[r] = np.where(nearest[r] < t[r], np.minimum(0.5 * t[r], nearest[r]), 0.5 * t[r])
        if not len(d.linear):
            active[sel[pending]] = False  # no length of Newton's step holds
        elif pending.any():
            # no length of Newton's step holds: the dual simplex step along the kinks instead
            _pivots(d, sel[pending], mu, g, x, slope, stalls, active)
    return mu, g, x


def _nearest_breakpoints(d: BatchDual, sel: np.ndarray, mu: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """Per scenario of ``sel``, the least step length in (0, 1) along ``mu − t · direction`` at
    which some source's term of g bends (:func:`procure.program.step_limits.nearest_breakpoint`; inf
    where none does) [1]."""
    c = np.einsum("kmn,km->kn", d.A[sel], mu)
    dc = np.einsum("kmn,km->kn", d.A[sel], direction)
    return nearest_breakpoint(c, dc, d.entry[sel], d.leave[sel])


def _kink_steps(d: BatchDual, idx: np.ndarray, kinked: np.ndarray, mu: np.ndarray, g: np.ndarray, x: np.ndarray,
                slope: np.ndarray, stalls: np.ndarray, active: np.ndarray) -> np.ndarray:  # fmt: skip
    """The kink steps of the scenarios ``idx`` (K' × L booleans ``kinked``), written into ``mu``,
    ``g``, ``x`` and ``slope`` where g does not rise beyond its resolution; the hours read at
    the new multipliers are the kinked sources' from the step where they are on their
    hyperplanes. A step shorter than :data:`~procure.program.batch_kinks.STEP_NOISE` of μ is
    float noise and counts as no kink step; a step that raises g is halved, up to
    :data:`~procure.program.dual.KINK_HALVINGS` times. A scenario with no kink step, or none
    that holds, takes a dual simplex step instead (:func:`_pivots`); one whose g has not fallen in more than
    :data:`~procure.program.newton.KINK_STALLS` steps in a row leaves the batch (``active``
    False), for its dual on its own. Returns, over ``idx``, the scenarios where neither step
    holds (their state untouched), for a Newton step on their smooth sources' curvature."""
    lin = d.linear
    new_mu, hours, on, ok = batch_kink_step(d.A[idx], d.b[idx], d.rate[idx], d.room, lin, mu[idx], x[idx],
                                            slope[idx], kinked)  # fmt: skip
    start = mu[idx]
    # a step within float noise of μ does not move it: no kink step, the dual simplex step instead
    ok &= np.linalg.norm(new_mu - start, axis=1) > STEP_NOISE * np.linalg.norm(start, axis=1)
    trial = np.where(ok[:, None], np.maximum(new_mu, 0.0), start)
    g_new, x_new, slope_new = d.g(trial, idx)
    g_old = g[idx]
    taken = ok & np.isfinite(g_new) & within_resolution(g_new, g_old)
    length = 1.0
    for _half in range(KINK_HALVINGS):
        retry = np.flatnonzero(ok & ~taken)
        if not len(retry):
            break
        length *= 0.5
        shorter = np.maximum(start[retry] + length * (new_mu[retry] - start[retry]), 0.0)
        g_s, x_s, slope_s = d.g(shorter, idx[retry])
        good = np.isfinite(g_s) & within_resolution(g_s, g_old[retry])
        r = retry[good]
        trial[r], g_new[r], x_new[r], slope_new[r], taken[r] = shorter[good], g_s[good], x_s[good], slope_s[good], True
    on &= on_hyperplanes(d.A[idx][:, :, lin], d.rate[idx][:, lin], d.room[lin], trial, g_new)
    x_new[:, lin] = np.where(on, hours, x_new[:, lin])
    _take(idx, taken, (trial, g_new, x_new, slope_new), (mu, g, x, slope), stalls)
    active[idx[stalls[idx] > KINK_STALLS]] = False
    stuck = np.zeros(len(idx), dtype=bool)
    if not taken.all():
        stuck[np.flatnonzero(~taken)] = _pivots(d, idx[~taken], mu, g, x, slope, stalls, active, release=False)
    return stuck


def _take(idx: np.ndarray, taken: np.ndarray, new: tuple[np.ndarray, ...], state: tuple[np.ndarray, ...],
          stalls: np.ndarray) -> None:  # fmt: skip
    """Write the steps ``taken`` of the scenarios ``idx`` (``new``: μ, g, x and dx/dc after
    them) into the batch's ``state`` (the same four), and count in ``stalls`` the steps in a row
    that leave g where it was (a step not taken leaves the count as it is)."""
    g_old, g_new = state[1][idx], new[1]
    fell = g_new < g_old - STALL_RESOLUTION * np.maximum(1.0, np.abs(g_old))
    stalls[idx] = np.where(taken, np.where(fell, 0, stalls[idx] + 1), stalls[idx])
    for now, after in zip(state, new, strict=True):
        now[idx[taken]] = after[taken]


def _pivots(d: BatchDual, idx: np.ndarray, mu: np.ndarray, g: np.ndarray, x: np.ndarray, slope: np.ndarray,
            stalls: np.ndarray, active: np.ndarray, *, release: bool = True) -> np.ndarray:  # fmt: skip
    """The dual simplex steps (:func:`procure.program.kinks.pivot_step`) of the scenarios
    ``idx``, where g has no curvature or no kink step holds: written into ``mu``, ``g``, ``x``
    and ``slope`` where g does not rise beyond its resolution (``stalls`` counts the steps in a
    row that leave g where it was); a stalled scenario leaves the batch (``active`` False), for
    its dual on its own, and so does one with no such step where ``release``. Returns, over
    ``idx``, the scenarios with no step that holds (their state untouched)."""
    lin = d.linear
    kinked = kinked_sources(d.A[idx][:, :, lin], d.rate[idx][:, lin], mu[idx])
    held = np.zeros(len(idx), dtype=bool)
    for vertex in (False, True):  # then, where no step held, g's steepest descent over all its subgradients
        trial = mu[idx].copy()
        stepped = np.zeros(len(idx), dtype=bool)
        for q in np.flatnonzero(~held & (kinked.any(axis=1) | (not vertex))).tolist():
            r = int(idx[q])
            found = pivot_step(d.A[r], d.b[r], mu[r], x[r], lin[kinked[q]], d.entry[r], d.leave[r], d.room,
                               vertex=vertex)  # fmt: skip
            if found is None:
                continue
            if found[1] is None:
                trial[q], stepped[q] = found[0], True
                continue
            # at the minimum: the kinked sources' hours in part show it (once; μ and g stay)
            part = lin[kinked[q]]
            if not np.array_equal(x[r, part], found[1]):
                x[r, part] = found[1]
                held[q] = True
        if stepped.any():
            s = idx[stepped]
            g_new, x_new, slope_new = d.g(trial[stepped], s)
            taken = np.isfinite(g_new) & within_resolution(g_new, g[s])
            _take(s, taken, (trial[stepped], g_new, x_new, slope_new), (mu, g, x, slope), stalls)
            held[np.flatnonzero(stepped)[taken]] = True
            active[s[taken & (stalls[s] > KINK_STALLS)]] = False
        if held.all():
            break
    if release:
        active[idx[~held]] = False
    return ~held


def _qualified_arrays(sp: ScenarioProblem) -> CurveArrays | None:
    """The sources' arrays where the scenarios' duals can be minimised together, else None."""
    if sp.base.mode is not Mode.BUDGET or sp.count == 0:
        return None
    a = source_arrays(sp.base)
    return a if eligible(a) else None


def qualifies(sp: ScenarioProblem) -> bool:
    """True where the scenarios' duals can be minimised together: budget mode, concave curves
    with a closed-form inverse derivative, no integer terms (the sources' curves are the same in
    every scenario, only their rates and scales move)."""
    return _qualified_arrays(sp) is not None


def wait_and_see_values(sp: ScenarioProblem, tolerance: float) -> list[float | None]:
    """Each scenario's best value, certified within ``tolerance`` by its dual [own-hour
    equivalents], or None where it is not (the caller solves that scenario on its own).

    All None where the problem does not qualify: target mode, integer terms, a curve the dual
    cannot invert (:func:`procure.program.paths.eligible`).
    """
    base = sp.base
    count = sp.count
    a = _qualified_arrays(sp)
    if a is None:
        return [None] * count
    names = capacity_rows_of(base)
    rows = coupling_rows(base, float(base.budget or 0.0), names)
    A = np.repeat(rows.A[None], count, axis=0)
    b = np.repeat(rows.b[None], count, axis=0)
    if sp.recourse_price_x is not None:
        later = np.where(sp.later_ok[None, :], sp.recourse_price_x * sp.later_cost, np.inf)
        A[:, 0, :] = np.minimum(base.cost[None, :], later)
    first_mix = 1 + len(names)
    for j, (key, share) in enumerate(base.max_share.items()):
        coef = mix_coefficients(sp.rate, base.members(key), share)
        A[:, first_mix + j, :] = coef
        b[:, first_mix + j] = -(coef @ a.held)
    d = BatchDual(sp.rate.astype(float), sp.saturation_hours.astype(float), a.held, a.room, a.shape, a.curve, A, b)
    mu, upper, x = minimise_batch(d)
    lower, good = _certified(d, np.arange(count), mu, upper, x, tolerance)
    return [float(v) if ok else None for v, ok in zip(lower, good, strict=True)]


def _certified(d: BatchDual, sel: np.ndarray, mu: np.ndarray, upper: np.ndarray, x: np.ndarray,
               tolerance: float) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The scenarios ``sel``'s lower bounds and which of them are certified (see the module):
    their multipliers ``mu``, bounds ``upper`` = g(μ) and hours ``x`` at μ (rows of ``sel``)."""
    A, b = d.A[sel], d.b[sel]
    finite = np.all(np.isfinite(x), axis=1) & np.isfinite(upper)
    x = np.where(finite[:, None], np.clip(np.nan_to_num(x, posinf=0.0), 0.0, d.room), 0.0)
    x = within_rows(A, b, x)
    met = np.all(np.isfinite(x), axis=1)
    x = np.where(met[:, None], x, 0.0)
    used = np.einsum("kmn,kn->km", A, x)
    scale = np.maximum(1.0, np.abs(b) + np.einsum("kmn,kn->km", np.abs(A), np.abs(x)))
    feasible = np.all(used <= b + FEASIBILITY * scale, axis=1) & met
    lower = d.values(x, sel)
    closes = upper - lower <= np.maximum(tolerance * np.abs(upper), VALUE_ABS_TOLERANCE)
    return lower, finite & feasible & closes & np.isfinite(lower) & (mu >= 0).all(axis=1)
