"""The projected Newton method that minimises a Lagrangian dual over its multipliers μ ≥ 0.

The dual g(μ) of a separable concave program (:mod:`procure.program.dual`, one scenario;
:mod:`procure.program.expected`, the expected value over scenarios) is convex in the few
multipliers of its coupling rows, with ∇g = b − A x(μ) and Hessian A diag(−dx/dc) Aᵀ. The method
takes Newton steps on the rows that bind, projected on μ ≥ 0, with a backtracking line search
(Armijo's rule, judged at g's float resolution near the optimum), from the budget's multiplier
alone found by bisection. Where the dual has linear sources (:class:`KinkedEvaluator`) it also
steps along their kinks (:mod:`procure.program.kinks`); where no source is strictly inside its
box it takes a scaled gradient step. It stops where the projected gradient meets
:data:`DUAL_TOLERANCE` (``converged``), or where no step makes progress.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from ..arrays import DIVISION_FLOOR
from .bounds import CurveArrays

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
#: A multiplier below this share of the largest, on a slack row, is float noise about 0 and is
#: held there, out of Newton's system [1].
NEARLY_ZERO = 1e-9
#: Kink steps (:meth:`KinkedEvaluator.kink_newton`) in a row that leave g where it was before the method
#: takes a plain Newton step instead; in the batch of scenarios
#: (:mod:`procure.program.wait_and_see`), kink and dual simplex steps before a scenario leaves it.
KINK_STALLS = 2
#: Bisection steps of the budget's multiplier alone, on a log scale of width 61, that start
#: the method: to about 1e-8 of λ, from where Newton's steps take over.
START_STEPS = 32


@dataclass(frozen=True)
class Dual:
    """The dual's minimum: multipliers, the hours at them, and the bound g(μ).

    Attributes
    ----------
    mu : numpy.ndarray
        One multiplier per row of the coupling rows (:class:`procure.program.dual.CouplingRows`) [value per unit].
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


class PricedRows(Protocol):
    """The coupling rows ``A x ≤ b`` a dual prices (:class:`procure.program.dual.CouplingRows`)."""

    @property
    def A(self) -> np.ndarray:
        """Coefficients, rows × sources."""

    @property
    def b(self) -> np.ndarray:
        """Right-hand sides."""


class Evaluator(Protocol):
    """What the projected Newton method needs of a dual (the one-scenario dual of
    :mod:`procure.program.dual`, or the expected-value dual of :mod:`procure.program.expected`)."""

    evaluations: int

    @property
    def a(self) -> CurveArrays:
        """The sources' arrays."""

    @property
    def rows(self) -> PricedRows:
        """The coupling rows."""

    def hours(self, mu: np.ndarray, *, slopes: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """x(μ) and dx/dc."""

    def g(self, mu: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """g(μ), x(μ) and dx/dc."""

    def marginal_at_held(self) -> np.ndarray:
        """Each source's marginal value of its next hour at the hours held [value per h]."""


@runtime_checkable
class KinkedEvaluator(Evaluator, Protocol):
    """A dual with linear sources (``all_or_nothing``, their indices), whose kinks the method
    steps along (the one-scenario dual of :mod:`procure.program.dual`)."""

    all_or_nothing: np.ndarray

    def kink_newton(
        self, mu: np.ndarray, g: float, x: np.ndarray, slope: np.ndarray
    ) -> tuple[np.ndarray, float, np.ndarray, np.ndarray] | None:
        """Newton's step along the kinks' hyperplanes: μ, g, x and dx/dc after it, or None."""

    def pivot(
        self, mu: np.ndarray, g: float, x: np.ndarray, slope: np.ndarray
    ) -> tuple[np.ndarray, float, np.ndarray, np.ndarray] | None:
        """Where g has no curvature, the step to the next breakpoint along the kinks, or None."""

    def breakpoints(self, mu: np.ndarray, direction: np.ndarray) -> np.ndarray:
        """Step lengths in (0, 1) at which a linear source reaches its kink, ascending."""

    def nearest_breakpoint(self, mu: np.ndarray, direction: np.ndarray) -> float:
        """The least step length in (0, 1) at which some source's term of g bends (inf where none)."""


def budget_start(d: Evaluator) -> np.ndarray:
    """μ with only the budget priced, at the λ where the budget is spent (bisection on log λ);
    where the hours there still break another row (a budget slack at every box, say), the start
    of least g among that and each such row priced alone where it is met."""
    rows = d.rows
    mu = _row_priced(d, 0)
    x, _ = d.hours(mu, slopes=False)
    if not np.all(np.isfinite(x)):
        return mu
    broken = np.flatnonzero(rows.A[1:] @ x > rows.b[1:]) + 1
    if not len(broken):
        return mu
    starts = [mu, *(_row_priced(d, int(r)) for r in broken)]
    bounds = [d.g(start)[0] for start in starts]
    return starts[int(np.argmin(bounds))]


def held_at_zero(mu: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """The multipliers within float noise of 0 on a slack row (below :data:`NEARLY_ZERO` of the
    largest, gradient > 0), held at 0 out of Newton's system and stepped to 0 alone: the
    ε-active set of projected Newton (booleans; one problem, or K at once on the last axis)."""
    largest = np.max(mu, axis=-1, keepdims=True, initial=0.0)
    return (mu > 0) & (mu <= NEARLY_ZERO * largest) & (grad > 0)


def _row_priced(d: Evaluator, r: int) -> np.ndarray:
    """μ with only row ``r`` priced, at the multiplier where the row is met (bisection on its
    log; 0 where buying every box meets it or nothing it holds has value)."""
    rows = d.rows
    mu = np.zeros(len(rows.b))
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = d.marginal_at_held()
        top = float(np.max(np.where(rows.A[r] > 0, rate / rows.A[r], 0.0), initial=0.0))
    if not (top > 0 and math.isfinite(top)):
        return mu
    x, _ = d.hours(mu, slopes=False)
    if np.all(np.isfinite(x)) and (np.all(rows.A @ x <= rows.b) if r == 0 else rows.A[r] @ x <= rows.b[r]):
        return mu  # every box bought meets the row (for the budget: every row): nothing is priced
    lo, hi = math.log(top) + START_BRACKET[0], math.log(top) + START_BRACKET[1]
    for _ in range(START_STEPS):
        mid = 0.5 * (lo + hi)
        mu[r] = math.exp(mid)
        x, _ = d.hours(mu, slopes=False)
        used = rows.A[r] @ x if np.all(np.isfinite(x)) else math.inf
        lo, hi = (lo, mid) if used <= rows.b[r] else (mid, hi)
    mu[r] = math.exp(hi)
    return mu


def _price_band(d: Evaluator, rows: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """Per row of ``rows`` (rows of the coupling rows' A), the curvature g would have were each
    source to buy its box over a price band as wide as its price in multipliers at ``mu`` (0
    where none is priced) [h per (value per unit)²]: the scale of a step where g has none."""
    c = np.abs(d.rows.A.T @ mu)
    weight = np.where(c > 0, d.a.room / np.maximum(c, DIVISION_FLOOR), 0.0)
    weight = np.where(np.isfinite(weight), weight, 0.0)
    return (rows**2) @ weight


def minimise(d: Evaluator, start: np.ndarray | None = None) -> Dual:
    """Minimise the dual ``d`` over μ ≥ 0 by projected Newton steps with a backtracking line
    search, from ``start`` (else from the budget's multiplier alone)."""
    rows = d.rows
    mu = np.maximum(start, 0.0) if start is not None else budget_start(d)
    g, x, slope = d.g(mu)
    if not math.isfinite(g):
        mu = budget_start(d)
        g, x, slope = d.g(mu)
    converged = False
    A, b = rows.A, rows.b
    kd = d if isinstance(d, KinkedEvaluator) and len(d.all_or_nothing) > 0 else None  # linear sources
    stalled_kinks = 0  # kink steps in a row that left g where it was
    for _step in range(MAX_DUAL_STEPS):
        grad = b - A @ x
        scale = np.maximum(1.0, np.abs(b) + np.abs(A) @ np.abs(x))
        projected = np.where(mu > 0, grad, np.minimum(grad, 0.0))
        if np.all(np.abs(projected) <= DUAL_TOLERANCE * scale):
            converged = True
            break
        if kd is not None and stalled_kinks < KINK_STALLS:
            stepped = kd.kink_newton(mu, g, x, slope)
            if stepped is not None:
                stalled_kinks = stalled_kinks + 1 if stepped[1] >= g else 0
                mu, g, x, slope = stepped
                continue
        stalled_kinks = 0
        nearly = held_at_zero(mu, grad)
        free = ((mu > 0) & ~nearly) | (grad < 0)
        H = (A * (-slope)) @ A.T
        Hf = H[np.ix_(free, free)]
        ridge = NEWTON_RIDGE * max(float(np.trace(Hf)), DIVISION_FLOOR)
        direction = np.zeros_like(mu)
        try:
            direction[free] = np.linalg.solve(Hf + ridge * np.eye(len(Hf)), grad[free])
        except np.linalg.LinAlgError:
            direction[free] = grad[free] / max(float(np.max(np.abs(np.diag(Hf)))), DIVISION_FLOOR)
        direction[nearly] = mu[nearly]
        gradient_step = not np.all(np.isfinite(direction)) or not float(np.trace(Hf)) > 0
        if gradient_step and kd is not None:
            pivoted = kd.pivot(mu, g, x, slope)
            if pivoted is not None:
                mu, g, x, slope = pivoted
                continue
        if gradient_step:
            # no source is strictly inside its box (g is piecewise linear here): a gradient step,
            # each row's scaled by the sources' rows as if each bought its box over a price band
            # as wide as its price
            diagonal = _price_band(d, A[free], mu)
            if not np.all(diagonal > 0):
                break
            direction = np.zeros_like(mu)
            direction[free] = grad[free] / diagonal
        flat = bool(at_resolution(ARMIJO * float(grad @ (mu - np.maximum(mu - direction, 0.0))), g))
        # where the full step is refused, the nearest point along it where some source's term
        # bends (it starts to buy, reaches its box's end or its kink) is tried once before the
        # halvings: the step's model of g holds only up to there (a step over nearly parallel
        # rows can be many orders of magnitude too long)
        nearest = kd.nearest_breakpoint(mu, direction) if kd is not None else math.inf
        lengths = [1.0, *([nearest] if nearest < 0.5 else []), *(0.5**q for q in range(1, MAX_HALVINGS))]
        for t in lengths:
            trial = np.maximum(mu - t * direction, 0.0)
            asked = ARMIJO * float(grad @ (mu - trial))
            g_new, x_new, slope_new = d.g(trial)
            if math.isfinite(g_new) and (g_new <= g - asked or (flat and bool(within_resolution(g_new, g)))):
                break
        else:
            t = 0.0  # no length of the step holds
        if kd is not None and not gradient_step and t < SHORT_NEWTON_STEP:
            # Newton's step over too few curved sources (rows nearly parallel over them) is far
            # too long or no way down: the dual simplex step along the kinks instead, where it
            # does better
            pivoted = kd.pivot(mu, g, x, slope)
            if pivoted is not None and (t == 0.0 or pivoted[1] <= g_new):
                mu, g, x, slope = pivoted
                continue
        if t == 0.0:
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
        if kd is not None and t < 1.0:
            # the step was cut short: where a linear source's kink lies between the step taken
            # and the one refused, try it (the minimum along the step is often there)
            beyond = kd.breakpoints(mu, direction)
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
