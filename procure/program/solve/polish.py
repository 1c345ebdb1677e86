"""Exact hours: the optimality conditions of a certified plan solved to machine precision.

With the active set the certified plan shows (which sources sit at a bound, which rows bind),
Newton's method on the binding rows' multipliers μ solves the hours of the sources between their
bounds, and the active set is corrected until it holds; see ``docs/certification.md``, "Hours,
not only value". Lots and on/off choices stay as the plan has them; an S-shaped curve bought past
its steepest point is polished with the concave curves, and one bought in part before it, like a
linear source at its kink, has its hours solved beside the multipliers (``_newton``).

Where the program has no integer terms and the dual prices every curve
(:func:`procure.program.paths.eligible`), :func:`procure.program.dual.dual_bound` at the polished
μ is an upper bound on the optimum (weak duality, :mod:`procure.program.dual.terms`): a
certificate of its own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..dual import dual_bound
from ..dual.terms import INVERSE_STEP, hours_at_price
from ..numbers import value
from ..numbers.bounds import CurveArrays
from ..numbers.problem import BOUGHT_HOURS, Problem
from ..paths import eligible
from ..readout.plan import BINDING_TOLERANCE
from ..rows import CouplingRows, coupling_rows
from .state import Refined, Solving

#: Curves whose derivative has a closed-form inverse and is strictly decreasing (power with
#: β < 1; logistic): their hours are a smooth function of their price in multipliers.
SMOOTH_CURVES = ("log", "exp", "power", "logistic")
#: Newton's method stops when every binding row holds within this share of its scale [1].
ROW_TOLERANCE = 1e-12
#: Most Newton steps per active set, and most corrections of the active set.
MAX_NEWTON_STEPS = 60
MAX_ACTIVE_SET_CHANGES = 25
#: A row counts as binding in the certified plan where its dual exceeds this [value per unit].
DUAL_ZERO = 1e-12
#: Relative margin by which a source's marginal value must pass its price before the exact
#: step lets it leave the bound it sits at [1].
RELEASE_MARGIN = 1e-12
#: The polished plan's rows may exceed their right-hand side by this share of their scale [1]:
#: float noise, far below HiGHS's own feasibility tolerance (1e-7).
FEASIBILITY = 1e-9
#: A binding row whose plan leaves it slack by more than this share of its scale, with a
#: positive multiplier, stops binding in the next active set [1] (HiGHS's feasibility tolerance).
SLACK_SHARE = 1e-7


@dataclass(frozen=True)
class Polished:
    """A plan whose hours solve the optimality conditions exactly.

    Attributes
    ----------
    x : numpy.ndarray
        Hours bought of each source [h].
    value : float
        Their true value [own-hour equivalents].
    bound : float
        The Lagrangian dual at the multipliers, an upper bound on the optimum; inf where the
        program has integer terms or a curve the dual cannot be evaluated for exactly.
    lam : float
        The budget row's multiplier, λ [value per $].
    shadow : dict of str to float
        The capacity rows' and mix rows' multipliers [value per unit].
    """

    x: np.ndarray
    value: float
    bound: float
    lam: float
    shadow: dict[str, float]


def polish(program: Solving, r: Refined) -> Polished | None:
    """The plan of ``r`` with its hours solved exactly, from the LP's duals of the coupling rows
    (see the module), each with what the bounds derived from its limit carry
    (:meth:`procure.program.model.highs.HighsModel.duals`)."""
    if not program.built.formulation.certain or program.fixed_hours is not None:
        return None
    lam, capacity, mix = program.highs.duals(r.results)
    return polish_from(program, r.x, np.array([lam, *capacity, *mix], dtype=float), r.value)


def polish_from(program: Solving, x_start: np.ndarray, mu_start: np.ndarray, floor: float) -> Polished | None:
    """Hours and multipliers that solve the optimality conditions of a one-scenario program, from
    a plan and multipliers near them (see the module), or None where the conditions do not
    settle, or the result is worth less than ``floor`` (the plan it starts from stands)."""
    built = program.built
    return exact_hours(program.problem, built.sources, built.capacity_names, program.budget, x_start, mu_start,
                       floor, integers=built.has_integers)  # fmt: skip


def exact_hours(
    p: Problem, a: CurveArrays, capacity_names: list[str], budget: float, x_start: np.ndarray,
    mu_start: np.ndarray, floor: float, *, integers: bool = False,
) -> Polished | None:  # fmt: skip
    """:func:`polish_from` on a problem's numbers: its sources ``a``, the capacities with a row,
    the budget [$]; ``integers`` where the program has integer terms (no dual bound then)."""
    # A source's own bound is its availability: a capacity holds through its row, whose
    # multiplier then prices a source that fills it.
    own = p.column("available_hours")
    x0 = np.clip(x_start, 0.0, a.room)
    bought = p.bought(x0)
    rows = coupling_rows(p, budget - float(p.column("fixed_fee_usd") @ (bought & a.binary)), capacity_names)
    straight = a.concave & ((a.curve == "linear") | ((a.curve == "power") & (a.shape >= 1)))
    movable = (a.lots == 0) & (~a.binary | bought) & (a.rate > 0)
    # An S-shaped source bought past its steepest point is on its concave side: its hours there
    # are a smooth function of its price as a concave curve's are, at least the steepest point's.
    hill = (a.curve == "hill") & ~a.concave
    turn = np.where(hill, value.hill_turn_hours(a.rate, a.held, a.k, a.shape), np.inf)  # inf where rate 0
    past = hill & movable & (x0 > turn)
    # Before it, its slope rises with its hours: bought in part there, it takes what a binding
    # row leaves (as a linear source at its kink does), its hours beside the multipliers.
    rising = hill & movable & ~past
    smooth = (np.isin(a.curve, SMOOTH_CURVES) & a.concave & ~straight) | past
    free, linear = smooth & movable, (straight & movable) | rising
    lo = np.where(a.binary & bought, p.column("min_order_hours"), 0.0)
    lo = np.where(past, np.maximum(lo, turn), lo)
    hi = np.where(rising, np.minimum(own, turn), own)
    tol = BINDING_TOLERANCE * np.maximum(1.0, np.where(np.isfinite(hi), hi, 1.0))
    # fixed, at its lower bound, at its upper bound, between (smooth), at its kink (linear, between)
    inside = np.where(smooth, 3, 4)
    state = np.where(~(free | linear), 0, np.where(x0 <= lo + tol, 1, np.where(x0 >= hi - tol, 2, inside)))
    dual = np.asarray(mu_start, dtype=float)
    binding = dual > DUAL_ZERO
    mu = np.where(binding, dual, 0.0)
    fixed_x = np.where(free, 0.0, x0)
    for _change in range(MAX_ACTIVE_SET_CHANGES):
        x, mu, ok = _newton(rows, dual, a, state, binding, mu, fixed_x, lo, hi)
        fixed_x = np.where(state == 4, x, fixed_x)  # a kink's hours: where the rows put them
        if not ok:
            return None
        between = (state == 3) | (state == 4)
        below, above = between & (x < lo), between & (x > hi)
        state = np.where(below, 1, np.where(above, 2, state))
        scale = np.maximum(1.0, np.abs(rows.b) + np.abs(rows.A) @ np.abs(x))
        slack = binding & (rows.A @ x < rows.b - SLACK_SHARE * scale) & (mu > 0)
        negative = binding & ((mu < 0) | slack)
        binding &= ~negative
        mu = np.where(binding, mu, 0.0)
        over = ~binding & (rows.A @ x > rows.b + FEASIBILITY * scale)
        binding |= over
        if below.any() or above.any() or negative.any() or over.any():
            continue
        c, slope = rows.A.T @ mu, a.slope_of(x)
        release = ((state == 1) & (slope > c * (1 + RELEASE_MARGIN))) | (
            (state == 2) & (slope < c * (1 - RELEASE_MARGIN))
        )
        if not release.any():
            break
        state = np.where(release, inside, state)
        fixed_x = np.where(release & linear, x, fixed_x)
    else:
        return None
    if np.any(rows.A @ x > rows.b + FEASIBILITY * scale) or np.any(x < lo - tol) or np.any(x > hi + tol):
        return None
    if np.any((past & (state == 1)) | (rising & (state == 2))):
        return None  # held at its steepest point, which is no bound of its own
    x = np.clip(x, lo, hi)
    x = np.where(free | linear | (x > BOUGHT_HOURS), x, 0.0)
    _e, v = a.value_of(x)
    true_value = float(np.sum(v))
    if true_value < floor - FEASIBILITY * max(1.0, abs(floor)):
        return None
    bound = math.inf
    if not integers and eligible(a):
        bound = dual_bound(a, coupling_rows(p, budget, capacity_names), mu)
    shadow = dict(zip(rows.names[1:], (float(m) for m in mu[1:]), strict=True))
    return Polished(x, true_value, bound, float(mu[0]), shadow)


def _bend(a: CurveArrays, curves: np.ndarray, e: np.ndarray) -> np.ndarray:
    """v''(e) of ``curves`` at effective hours ``e``, by a central difference of v' (0 for a
    linear curve) [value per effective h²]."""
    step = INVERSE_STEP * np.maximum(np.abs(e), np.where(np.isfinite(a.k[curves]), a.k[curves], 1.0))
    up = np.asarray(value.derivative(e + step, a.curve[curves], a.k[curves], a.shape[curves]), dtype=float)
    down = np.asarray(value.derivative(np.maximum(e - step, 0.0), a.curve[curves], a.k[curves], a.shape[curves]), float)
    return (up - down) / (e + step - np.maximum(e - step, 0.0))


def _newton(
    rows: CouplingRows, dual: np.ndarray, a: CurveArrays, state: np.ndarray, binding: np.ndarray, mu: np.ndarray,
    fixed_x: np.ndarray, lo: np.ndarray, hi: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, bool]:  # fmt: skip
    """Solve the binding rows for their multipliers with the between sources at their price
    (``dual``: the multipliers the plan came with, which order the rows).

    A linear source at its kink, or an S-shaped one bought in part before its steepest point
    (state 4), is not a function of its price: its hours are unknowns beside the multipliers,
    and its marginal value ρσφ·v'(e) equal to its price in multipliers an equation beside the
    rows (the saddle-point system of the optimality conditions; ``fixed_x`` holds their hours to
    start from)."""
    A = rows.A
    between = state == 3
    kink = np.flatnonzero(state == 4)
    B = _independent(A[:, between | (state == 4)], np.flatnonzero(binding), dual)

    def hours(m: np.ndarray, xk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = np.where(state == 1, lo, np.where(state == 2, hi, fixed_x))
        x = np.where(np.isfinite(x), x, 0.0)
        x[kink] = xk
        slope = np.zeros_like(x)
        if between.any():
            c = A[:, between].T @ m
            if np.any(c <= 0):
                return x, np.full_like(x, np.nan)
            x[between], slope[between] = hours_at_price(c, a.rate[between], a.held[between], a.curve[between],
                                                        a.k[between], a.shape[between])  # fmt: skip
        return x, slope

    def residual(m: np.ndarray, xk: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        x, slope = hours(m, xk)
        scale = np.maximum(1.0, np.abs(rows.b[B]) + np.abs(A[B]) @ np.abs(np.where(np.isfinite(x), x, 0.0)))
        e = a.rate[kink] * (a.held[kink] + x[kink])
        own = np.asarray(value.derivative(e, a.curve[kink], a.k[kink], a.shape[kink]), dtype=float)
        priced = (A[:, kink].T @ m) / a.rate[kink] - own
        return np.concatenate([(A[B] @ x - rows.b[B]) / scale, priced]), x, slope

    m, xk = mu.copy(), fixed_x[kink].copy()
    if len(B) == 0:
        x, slope = hours(m, xk)
        return x, m, bool(np.all(np.isfinite(slope))) and len(kink) == 0
    f, x, slope = residual(m, xk)
    for _step in range(MAX_NEWTON_STEPS):
        if not np.all(np.isfinite(f)):
            return x, m, False
        if np.max(np.abs(f)) <= ROW_TOLERANCE:
            return x, m, True
        scale = np.maximum(1.0, np.abs(rows.b[B]) + np.abs(A[B]) @ np.abs(x))
        J = np.zeros((len(B) + len(kink), len(B) + len(kink)))
        J[: len(B), : len(B)] = (A[B][:, between] * slope[between]) @ A[B][:, between].T / scale[:, None]
        J[: len(B), len(B) :] = A[B][:, kink] / scale[:, None]
        J[len(B) :, : len(B)] = (A[B][:, kink] / a.rate[kink]).T
        J[len(B) :, len(B) :] = np.diag(-a.rate[kink] * _bend(a, kink, a.rate[kink] * (a.held[kink] + x[kink])))
        try:
            delta = np.linalg.solve(J, f)
        except np.linalg.LinAlgError:
            return x, m, False
        t = 1.0
        for _half in range(40):
            trial, trial_k = m.copy(), xk - t * delta[len(B) :]
            trial[B] = m[B] - t * delta[: len(B)]
            f_new, x_new, slope_new = residual(trial, trial_k)
            if np.all(np.isfinite(f_new)) and np.max(np.abs(f_new)) < np.max(np.abs(f)):
                break
            t *= 0.5
        else:
            return x, m, False
        m, xk, f, x, slope = trial, trial_k, f_new, x_new, slope_new
    return x, m, bool(np.max(np.abs(f)) <= ROW_TOLERANCE)


def _independent(A_between: np.ndarray, binding: np.ndarray, dual: np.ndarray) -> np.ndarray:
    """The binding rows whose coefficients on the between sources are linearly independent,
    taken by decreasing dual: the rows Newton's method solves for. The others keep their
    multipliers (a degenerate vertex: a row tight through a source's own bound)."""
    chosen: list[int] = []
    for r in sorted(binding.tolist(), key=lambda q: -dual[q]):
        trial = A_between[[*chosen, r]]
        if trial.shape[1] and np.linalg.matrix_rank(trial) == len(chosen) + 1:
            chosen.append(r)
    return np.array(sorted(chosen), dtype=np.int64)
