"""The Lagrangian dual of a separable concave program: multipliers, hours and a bound, no LP.

For one scenario with concave curves that have a closed-form inverse derivative (log, exp,
power with β < 1, linear) and no integer terms, the few rows that couple the sources — the
budget, the capacities, the mix bounds, ``A x ≤ b`` — are priced by multipliers μ ≥ 0, and the
program splits per source:

    g(μ) = Σ_s max_{0 ≤ x_s ≤ room_s} [v_s(a_s (h0_s + x_s)) − (Aᵀμ)_s x_s] + μ·b.

Each inner maximum is closed-form: the hours where a_s v_s'(e) equals the source's price in
multipliers ``c_s = (Aᵀμ)_s``, clipped to its box (a linear curve takes all or nothing). g is
convex, ∇g = b − A x(μ), and its Hessian on the sources strictly inside their boxes is
A diag(−dx/dc) Aᵀ; a projected Newton method with a backtracking line search minimises it over
μ ≥ 0 in a few dozen evaluations. For every μ ≥ 0, g(μ) is an upper bound on the optimum (weak
duality), and at the minimum the hours x(μ) are the optimum's.

The program uses this as its guide (:mod:`procure.program.refine`): the dual's hours, made
exact by :mod:`procure.program.polish`, are where the model's tangent cuts are placed, so that
the Pyomo program certifies in one solve.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..curves import REGISTRY, Curve
from . import value
from .bounds import CurveArrays
from .kinks import at_kinks, breakpoints, kink_step, on_kinks
from .problem import Problem

#: Curves whose hours at a price have a closed form: log, exp and power (β < 1) smoothly,
#: linear all or nothing.
DUAL_CURVES = ("log", "exp", "power", "linear")
#: Relative step of the central difference that gives the inverse derivative's slope [1].
INVERSE_STEP = 1e-6
#: The dual's projected gradient, as a share of each row's scale, at which it stops [1].
DUAL_TOLERANCE = 1e-11
#: Most Newton steps of the dual, and most halvings of one step.
MAX_DUAL_STEPS = 100
MAX_HALVINGS = 60
#: The shortest gradient step (where no source is strictly inside its box) the method takes
#: before it stops, stalled at a kink the gradient cannot leave [1].
SHORTEST_GRADIENT_STEP = 2.0**-20
#: Armijo's sufficient-decrease share of the line search [1].
ARMIJO = 1e-4
#: g's float resolution, as a share of max(1, abs(g)) [1]: where the decrease Armijo asks of
#: the full Newton step is below it (at the optimum, to float precision), a step is taken where
#: g does not rise by more than it (g cannot show a decrease there).
STALL_RESOLUTION = 1e-15
#: The bracket of ln λ that the start bisects, around ln of the best source's value per dollar
#: at the hours held: from e^−60 of it to e^1 of it [1].
START_BRACKET = (-60.0, 1.0)
#: Share of the Newton matrix's trace added to its diagonal, so that a source at the edge of
#: its box leaves the system solvable [1].
NEWTON_RIDGE = 1e-12
#: Kink steps (:meth:`_Dual.kink_newton`) in a row that leave g where it was before the method
#: takes a plain Newton step instead.
KINK_STALLS = 2
#: Most halvings of one kink step.
KINK_HALVINGS = 20
#: Bisection steps of the budget's multiplier alone, on a log scale of width 61, that start
#: the method: to about 1e-8 of λ, from where Newton's steps take over.
START_STEPS = 32


@dataclass(frozen=True)
class CouplingRows:
    """The coupling rows ``A x ≤ b`` of a one-scenario program (dense: a handful of rows).

    Attributes
    ----------
    names : list of str
        ``budget``, then each capacity with a row, then ``max_share:KEY`` per mix bound.
    A : numpy.ndarray
        Coefficients, rows × sources [$ per h, unit per h, effective h per h].
    b : numpy.ndarray
        Right-hand sides, held hours counted [$, unit, effective h].
    """

    names: list[str]
    A: np.ndarray
    b: np.ndarray


def coupling_rows(problem: Problem, budget: float, capacity_names: list[str]) -> CouplingRows:
    """The budget row (``budget`` on the right), the rows of ``capacity_names`` and the mix rows."""
    p = problem
    names, rows, rhs = ["budget"], [p.cost], [budget]
    for name in capacity_names:
        use = p.usage(name)
        names.append(name)
        rows.append(use)
        rhs.append(float(p.capacity[name] - use @ p.held))
    for key, share in p.max_share.items():
        coef = p.rate * (p.members(key).astype(float) - share)
        names.append(f"max_share:{key}")
        rows.append(coef)
        rhs.append(float(-(coef @ p.held)))
    return CouplingRows(names, np.array(rows, dtype=float), np.array(rhs, dtype=float))


def hours_at_price(c: np.ndarray, rate: np.ndarray, held: np.ndarray, curve: np.ndarray, k: np.ndarray,
                   shape: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Hours where ρσφ·v'(e) equals the price ``c`` > 0 in multipliers, unclipped, and dx/dc
    (central difference of the inverse derivative) [h, h per price unit]."""
    y = c / rate
    e = np.asarray(value.inverse_derivative(y, curve, k, shape), dtype=float)
    step = INVERSE_STEP * np.abs(y)
    low = np.maximum(y - step, 0.5 * y)
    hi = np.asarray(value.inverse_derivative(y + step, curve, k, shape), dtype=float)
    lo = np.asarray(value.inverse_derivative(low, curve, k, shape), dtype=float)
    de_dy = (hi - lo) / (y + step - low)
    return e / rate - held, de_dy / rate**2


def eligible(a: CurveArrays) -> bool:
    """True when every source's inner maximum has a closed form and no integer term is present."""
    shaped = (a.curve != "power") | (a.shape <= 1)
    return bool(
        np.all(np.isin(a.curve, DUAL_CURVES) & shaped & a.concave) and not a.binary.any() and not (a.lots > 0).any()
    )


@dataclass(frozen=True)
class Dual:
    """The dual's minimum: multipliers, the hours at them, and the bound g(μ).

    Attributes
    ----------
    mu : numpy.ndarray
        One multiplier per row of :class:`CouplingRows` [value per unit].
    x : numpy.ndarray
        Hours of each source at μ [h].
    bound : float
        g(μ), an upper bound on the optimum [own-hour equivalents].
    converged : bool
        The projected gradient met :data:`DUAL_TOLERANCE`.
    evaluations : int
        Evaluations of g.
    """

    mu: np.ndarray
    x: np.ndarray
    bound: float
    converged: bool
    evaluations: int


def at_resolution(asked: np.ndarray | float, g: np.ndarray | float) -> np.ndarray:
    """True where the decrease ``asked`` of a full Newton step (Armijo's share of it) is ≥ 0 and
    within g's float resolution (:data:`STALL_RESOLUTION` of max(1, abs(g))): the dual is at its
    optimum to float precision, and a step there is judged by g not rising beyond that
    resolution (:func:`within_resolution`) [own-hour equivalents]."""
    return (np.asarray(asked) >= 0) & (np.asarray(asked) <= STALL_RESOLUTION * np.maximum(1.0, np.abs(g)))


def within_resolution(g_new: np.ndarray | float, g: np.ndarray | float) -> np.ndarray:
    """True where ``g_new`` is no more than g's float resolution above ``g`` [own-hour equivalents]."""
    return np.asarray(g_new) <= np.asarray(g) + STALL_RESOLUTION * np.maximum(1.0, np.abs(g))


def box_hours(entry: Curve, c: np.ndarray, rate: np.ndarray, held: np.ndarray, k: np.ndarray, shape: np.ndarray,
              room: np.ndarray, *, slopes: bool = True) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Sources of one smooth curve (``entry``, of :data:`procure.curves.REGISTRY`) at prices ``c``
    in multipliers [value per h]: the hours in [0, room] where ρσφ·v'(e) equals the price, and
    dx/dc where a source is strictly inside its box, 0 elsewhere (central difference of the
    inverse derivative) [h, h per price unit]. Any array shape; the arguments broadcast. A
    source with ρσφ = 0 buys nothing; one priced at 0 buys its whole box. Call under
    ``np.errstate(all="ignore")``."""
    y = c / rate
    priced = (y > 0) & (rate > 0)
    safe = np.where(priced, y, 1.0)
    e = np.where(priced, entry.inverse_derivative(safe, k, shape), np.inf)
    xs = np.where(rate > 0, e / rate - held, 0.0)
    x = np.clip(xs, 0.0, room)
    if not slopes:
        return x, np.zeros_like(x)
    step = INVERSE_STEP * np.abs(safe)
    low = np.maximum(safe - step, 0.5 * safe)
    up = entry.inverse_derivative(safe + step, k, shape)
    down = entry.inverse_derivative(low, k, shape)
    inside = priced & (xs > 0) & (xs < room)
    return x, np.where(inside, (up - down) / (safe + step - low) / rate**2, 0.0)


class _Dual:
    """g(μ), x(μ) and the Hessian's pieces for one problem's sources and rows.

    The sources are grouped by curve once, and each group's formulas called on it directly
    (:mod:`procure.curves`), so an evaluation costs a few array operations per curve.
    """

    def __init__(self, a: CurveArrays, rows: CouplingRows) -> None:
        self.a, self.rows = a, rows
        self.linear = (a.curve == "linear") | ((a.curve == "power") & (a.shape == 1))
        grows = a.rate > 0
        self.groups = [
            (entry, np.flatnonzero((a.curve == name) & ~self.linear & grows)) for name, entry in REGISTRY.items()
        ]
        self.groups = [(entry, idx) for entry, idx in self.groups if len(idx)]
        self.all_or_nothing = np.flatnonzero(self.linear & grows)
        self.evaluations = 0

    def hours(self, mu: np.ndarray, *, slopes: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """x(μ) within each box, and dx/dc where a smooth source is strictly inside it."""
        a = self.a
        c = self.rows.A.T @ mu
        x = np.zeros(len(c))
        slope = np.zeros(len(c))
        lin = self.all_or_nothing
        x[lin] = np.where(a.rate[lin] > c[lin], a.room[lin], 0.0)
        with np.errstate(all="ignore"):
            for entry, idx in self.groups:
                x[idx], slope[idx] = box_hours(
                    entry, c[idx], a.rate[idx], a.held[idx], a.k[idx], a.shape[idx], a.room[idx], slopes=slopes
                )
        return x, slope

    def marginal_at_held(self) -> np.ndarray:
        """ρσφ·v'(e) at the hours held [value per h]."""
        a = self.a
        return np.asarray(value.derivative(a.rate * a.held, a.curve, a.k, a.shape), dtype=float) * a.rate

    def g(self, mu: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """g(μ), x(μ) and dx/dc; g = inf where some box is unbounded at these prices."""
        self.evaluations += 1
        x, slope = self.hours(mu)
        if not np.all(np.isfinite(x)):
            return math.inf, x, slope
        a = self.a
        total = float(np.sum(a.rate[self.all_or_nothing] * (a.held[self.all_or_nothing] + x[self.all_or_nothing])))
        for entry, idx in self.groups:
            total += float(np.sum(entry.value(a.rate[idx] * (a.held[idx] + x[idx]), a.k[idx], a.shape[idx])))
        c = self.rows.A.T @ mu
        return total - float(c @ x) + float(mu @ self.rows.b), x, slope

    def kink_newton(
        self, mu: np.ndarray, g: float, x: np.ndarray, slope: np.ndarray
    ) -> tuple[np.ndarray, float, np.ndarray, np.ndarray] | None:
        """Newton's step on the hyperplanes of the linear sources at their kink at ``mu``
        (:func:`procure.program.kinks.kink_step`): the multipliers, g, the hours (the kinked
        sources bought in part) and dx/dc after it, where g does not rise beyond its float
        resolution; None where no source is at its kink or the step does not hold."""
        kinked = at_kinks(self.rows.A, self.a.rate, self.all_or_nothing, mu)
        if len(kinked) == 0:
            return None
        found = kink_step(self.rows.A, self.rows.b, self.a.rate, self.a.room, mu, x, slope, kinked)
        if found is None:
            return None
        target, hours, kinked = found
        # along the step, where g rises at its end (another linear source's kink on the way):
        # that kink first, then halvings
        direction = mu - target
        others = np.setdiff1d(self.all_or_nothing, kinked)
        crossing = breakpoints(self.rows.A, self.a.rate, others, mu, direction)
        lengths = [1.0, *crossing[:1].tolist(), *(0.5**q for q in range(1, KINK_HALVINGS + 1))]
        for t in lengths:
            mu_new = np.maximum(mu - t * direction, 0.0)
            g_new, x_new, slope_new = self.g(mu_new)
            if math.isfinite(g_new) and bool(within_resolution(g_new, g)):
                # the hours in part only where the step ends on the kink (not cut short, not
                # clipped at μ ≥ 0): elsewhere each source's term is maximised by all or nothing
                on = on_kinks(self.rows.A, self.a.rate, kinked, mu_new)
                x_new = x_new.copy()
                x_new[kinked[on]] = hours[on]
                return mu_new, g_new, x_new, slope_new
        return None

    def breakpoints(self, mu: np.ndarray, direction: np.ndarray) -> np.ndarray:
        """Step lengths in (0, 1) along ``mu − t · direction`` at which a linear source reaches
        its kink (:func:`procure.program.kinks.breakpoints`), ascending [1]."""
        return breakpoints(self.rows.A, self.a.rate, self.all_or_nothing, mu, direction)


def dual_bound(a: CurveArrays, rows: CouplingRows, mu: np.ndarray) -> float:
    """g(μ) for μ ≥ 0: an upper bound on the optimum [own-hour equivalents] (inf where some
    source's box is unbounded at these prices)."""
    if np.any(np.asarray(mu) < 0):
        return math.inf
    return _Dual(a, rows).g(np.asarray(mu, dtype=float))[0]


class Evaluator(Protocol):
    """What the projected Newton method needs of a dual (the one-scenario dual of this module,
    or the expected-value dual of :mod:`procure.program.expected`)."""

    a: CurveArrays
    rows: CouplingRows
    evaluations: int

    def hours(self, mu: np.ndarray, *, slopes: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """x(μ) and dx/dc."""

    def g(self, mu: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """g(μ), x(μ) and dx/dc."""

    def marginal_at_held(self) -> np.ndarray:
        """Each source's marginal value of its next hour at the hours held [value per h]."""


def _start(d: Evaluator) -> np.ndarray:
    """μ with only the budget priced, at the λ where the budget is spent (bisection on log λ)."""
    rows = d.rows
    mu = np.zeros(len(rows.b))
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = d.marginal_at_held()
        top = float(np.max(np.where(rows.A[0] > 0, rate / rows.A[0], 0.0), initial=0.0))
    if not (top > 0 and math.isfinite(top)):
        return mu
    x, _ = d.hours(mu, slopes=False)
    if np.all(np.isfinite(x)) and np.all(rows.A @ x <= rows.b):
        return mu  # every box bought meets every row: nothing is priced
    lo, hi = math.log(top) + START_BRACKET[0], math.log(top) + START_BRACKET[1]
    for _ in range(START_STEPS):
        mid = 0.5 * (lo + hi)
        mu[0] = math.exp(mid)
        x, _ = d.hours(mu, slopes=False)
        spent = rows.A[0] @ x if np.all(np.isfinite(x)) else math.inf
        lo, hi = (lo, mid) if spent <= rows.b[0] else (mid, hi)
    mu[0] = math.exp(hi)
    return mu


def solve_dual(a: CurveArrays, rows: CouplingRows, start: np.ndarray | None = None) -> Dual:
    """Minimise g over μ ≥ 0 by projected Newton steps from ``start`` (else the budget alone)."""
    return minimise(_Dual(a, rows), start)


def minimise(d: Evaluator, start: np.ndarray | None = None) -> Dual:
    """Minimise the dual ``d`` over μ ≥ 0 by projected Newton steps with a backtracking line
    search, from ``start`` (else from the budget's multiplier alone)."""
    rows = d.rows
    mu = np.maximum(start, 0.0) if start is not None else _start(d)
    g, x, slope = d.g(mu)
    if not math.isfinite(g):
        mu = _start(d)
        g, x, slope = d.g(mu)
    converged = False
    A, b = rows.A, rows.b
    kinky = isinstance(d, _Dual) and len(d.all_or_nothing) > 0
    stalled_kinks = 0  # kink steps in a row that left g where it was
    for _step in range(MAX_DUAL_STEPS):
        grad = b - A @ x
        scale = np.maximum(1.0, np.abs(b) + np.abs(A) @ np.abs(x))
        projected = np.where(mu > 0, grad, np.minimum(grad, 0.0))
        if np.all(np.abs(projected) <= DUAL_TOLERANCE * scale):
            converged = True
            break
        if kinky and stalled_kinks < KINK_STALLS:
            assert isinstance(d, _Dual)
            stepped = d.kink_newton(mu, g, x, slope)
            if stepped is not None:
                stalled_kinks = stalled_kinks + 1 if stepped[1] >= g else 0
                mu, g, x, slope = stepped
                continue
        stalled_kinks = 0
        free = (mu > 0) | (grad < 0)
        H = (A * (-slope)) @ A.T
        Hf = H[np.ix_(free, free)]
        ridge = NEWTON_RIDGE * max(float(np.trace(Hf)), 1e-300)
        direction = np.zeros_like(mu)
        try:
            direction[free] = np.linalg.solve(Hf + ridge * np.eye(len(Hf)), grad[free])
        except np.linalg.LinAlgError:
            direction[free] = grad[free] / max(float(np.max(np.abs(np.diag(Hf)))), 1e-300)
        gradient_step = not np.all(np.isfinite(direction)) or not float(np.trace(Hf)) > 0
        if gradient_step:
            # no source is strictly inside its box (g is piecewise linear here): a gradient step,
            # each row's scaled by the sources' rows as if each bought its box over a price band
            # as wide as its price
            c = np.abs(A.T @ mu)
            weight = np.where(c > 0, d.a.room / np.maximum(c, 1e-300), 0.0)
            weight = np.where(np.isfinite(weight), weight, 0.0)
            diagonal = (A[free] ** 2) @ weight
            if not np.all(diagonal > 0):
                break
            direction = np.zeros_like(mu)
            direction[free] = grad[free] / diagonal
        t = 1.0
        flat = bool(at_resolution(ARMIJO * float(grad @ (mu - np.maximum(mu - direction, 0.0))), g))
        for _half in range(MAX_HALVINGS):
            trial = np.maximum(mu - t * direction, 0.0)
            asked = ARMIJO * float(grad @ (mu - trial))
            g_new, x_new, slope_new = d.g(trial)
            if math.isfinite(g_new) and (g_new <= g - asked or (flat and bool(within_resolution(g_new, g)))):
                break
            t *= 0.5
        else:
            break
        if gradient_step and t < SHORTEST_GRADIENT_STEP:
            break  # g piecewise linear and the gradient no way down: stalled at a kink
        if gradient_step and t == 1.0:
            # g is piecewise linear here and the scale of the step a guess: go on while g falls
            # (a row whose multiplier should be 0 gets there, at the projection)
            for _double in range(MAX_HALVINGS):
                farther = np.maximum(mu - 2 * t * direction, 0.0)
                if np.array_equal(farther, trial):
                    break
                g_far, x_far, slope_far = d.g(farther)
                if not (math.isfinite(g_far) and g_far <= g_new):
                    break
                t, trial, g_new, x_new, slope_new = 2 * t, farther, g_far, x_far, slope_far
        if kinky and t < 1.0:
            # the step was cut short: where a linear source's kink lies between the step taken
            # and the one refused, try it (the minimum along the step is often there)
            assert isinstance(d, _Dual)
            beyond = d.breakpoints(mu, direction)
            beyond = beyond[(beyond > t) & (beyond < 2 * t)]
            if len(beyond):
                at_kink = np.maximum(mu - float(beyond[0]) * direction, 0.0)
                g_kink, x_kink, slope_kink = d.g(at_kink)
                if math.isfinite(g_kink) and g_kink <= g_new:
                    trial, g_new, x_new, slope_new = at_kink, g_kink, x_kink, slope_kink
        if np.array_equal(trial, mu):
            break
        mu, g, x, slope = trial, g_new, x_new, slope_new
    return Dual(mu, x, g, converged, d.evaluations)


def capacity_rows_of(problem: Problem) -> list[str]:
    """The capacities that have a row: finite and used by some source."""
    return [
        name for name, limit in problem.capacity.items() if math.isfinite(limit) and (problem.usage(name) > 0).any()
    ]
