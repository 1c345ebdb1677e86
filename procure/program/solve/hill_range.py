"""How many hours of each S-shaped source a plan better than a known one can hold, proven by the
Lagrangian bound.

For multipliers μ ≥ 0 of the coupling rows ``A x ≤ b`` every plan that meets them is worth at most

    L(μ) = μ·b + Σ_s φ_s,   φ_s = max over 0 ≤ x ≤ U_s of f_s(x) − p_s x,   p_s = (μᵀA)_s,

and one that buys more than ``t`` hours of an S-shaped source ``h`` at most

    L(μ) − φ_h + ψ_h(t),   ψ_h(t) = max over t ≤ x ≤ U_h of f_h(x) − p_h x,

``f_s(x) = v_s(a_s (h0_s + x))`` being the source's value at ``x`` hours bought and ``U_s`` its
bound in the model [h]. See ``docs/certification.md``, "Narrowing the S-shaped sources' ranges: a proof".
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from ..dual import dual_bound, solve_dual
from ..numbers import value
from ..numbers.bounds import CurveArrays, source_arrays
from ..numbers.problem import Mode, Problem
from ..numbers.scenarios import ScenarioProblem
from ..paths import DUAL_CURVES, priced_by_dual
from ..rows import CouplingRows, capacity_rows_of, coupling_rows, within_rows

if TYPE_CHECKING:
    from ..dual import Dual
    from ..model.build import Formulation
    from .state import Solving

#: Bisection steps that bracket the root of ``f' = p`` past a hill curve's inflection, and the
#: hours ``t`` of :func:`hill_ranges`: each halves the bracket.
BISECTION_STEPS = 60
#: Relative float error allowed for in the values summed into a bound: a few thousand units in
#: the last place [1].
BOUND_MARGIN = 1e-12
#: A source's range is narrowed only where its new bound is below this share of its old one:
#: a bound barely moved changes the breakpoints little and costs a rebuild [1].
LEAST_NARROWING = 0.9


class HillGain:
    """Upper bounds on ``max f(x) − p x`` over ``t ≤ x ≤ U`` hours of S-shaped (hill, s > 1)
    curves at a price per hour, for any ``t`` (see the module); proven.

    Over ``[0, U]`` the inflection and the root of ``f' = p`` past it are found once; the
    maximum over ``[t, U]`` is then the largest of ``g(t)``, ``g(U)``, ``g`` at the inflection
    where it lies past ``t``, and the root's bound where its bracket reaches past ``t``.

    Parameters
    ----------
    a : CurveArrays
        The curves' numbers.
    curves : numpy.ndarray
        Indices of hill curves with s > 1.
    price, top : numpy.ndarray
        Per curve: the price of an hour [value per h] and the most hours ``U`` [h].
    """

    def __init__(self, a: CurveArrays, curves: np.ndarray, price: np.ndarray, top: np.ndarray) -> None:
        self.rate, self.held, self.k, self.s = a.rate[curves], a.held[curves], a.k[curves], a.shape[curves]
        self.price = price
        e_turn = value.hill_turn(self.k, self.s)
        # where the concave part starts
        self.turn = np.clip(value.hill_turn_hours(self.rate, self.held, self.k, self.s), 0.0, top)
        has = (self._slope(self.turn) > 0) & (self._slope(top) < 0)  # slope − p falls from + to − there
        r_lo, r_hi = self.turn, top
        for _ in range(BISECTION_STEPS):
            mid = 0.5 * (r_lo + r_hi)
            rising = self._slope(mid) > 0
            r_lo, r_hi = np.where(rising, mid, r_lo), np.where(rising, r_hi, mid)
        steepest = self.rate * np.asarray(value.derivative(e_turn, "hill", self.k, self.s), float) + np.abs(price)
        self.root_reach = np.where(has, r_hi, -np.inf)
        self.at_root = np.where(has, np.maximum(self.gain(r_lo), self.gain(r_hi)) + steepest * (r_hi - r_lo), -np.inf)
        self.at_turn, self.at_top = self.gain(self.turn), self.gain(top)
        f_top = np.asarray(value.value(self.rate * (self.held + top), "hill", self.k, self.s), dtype=float)
        self.margin = BOUND_MARGIN * (np.abs(f_top) + np.abs(price) * top)

    def gain(self, x: np.ndarray) -> np.ndarray:
        """``f(x) − p x`` [value]."""
        return np.asarray(value.value(self.rate * (self.held + x), "hill", self.k, self.s), float) - self.price * x

    def _slope(self, x: np.ndarray) -> np.ndarray:
        """``f'(x) − p`` [value per h]."""
        e = self.rate * (self.held + x)
        return self.rate * np.asarray(value.derivative(e, "hill", self.k, self.s), float) - self.price

    def over(self, t: np.ndarray) -> np.ndarray:
        """The bound over ``[t, U]`` of each curve, ``0 ≤ t ≤ U`` [value]."""
        best = np.maximum.reduce([
            self.gain(t), self.at_top, np.where(self.turn >= t, self.at_turn, -np.inf),
            np.where(self.root_reach >= t, self.at_root, -np.inf),
        ])  # fmt: skip
        return best + self.margin


def _bound_sources(a: CurveArrays) -> CurveArrays | None:
    """The sources as the dual prices them for L(μ): the S-shaped ones out (linear, no hours
    held, no room: a term of 0), the integer terms of the others relaxed; None where some other
    source's curve has no price in closed form."""
    hill = ~a.concave
    shaped = (a.curve != "power") | (a.shape <= 1)
    if not np.all(hill | (np.isin(a.curve, DUAL_CURVES) & shaped)):
        return None
    return replace(
        a, held=np.where(hill, 0.0, a.held), room=np.where(hill, 0.0, a.upper), upper=np.where(hill, 0.0, a.upper),
        curve=np.where(hill, "linear", a.curve), concave=np.ones_like(a.concave), binary=np.zeros_like(a.binary),
        lots=np.zeros_like(a.lots),
    )  # fmt: skip


def hill_ranges(a: CurveArrays, rows: CouplingRows, incumbent: float, mu: np.ndarray) -> np.ndarray | None:
    """Per source, the most hours a plan worth more than ``incumbent`` can buy of it (its bound
    ``a.upper`` for all but the S-shaped ones), by the Lagrangian bound at ``mu`` (see the
    module) [h]; None where no bound can be drawn (a curve with no price in closed form, a bound
    not finite at ``mu``).

    Parameters
    ----------
    a : CurveArrays
        The sources (one scenario), with their bounds in the model.
    rows : CouplingRows
        The coupling rows at the budget asked.
    incumbent : float
        The true value of a plan that meets every row and buys none of the S-shaped sources
        beyond what is returned (none at all, say) [own-hour equivalents].
    mu : numpy.ndarray
        Multipliers of ``rows``, ≥ 0 [value per unit].
    """
    sub = _bound_sources(a)
    mu = np.asarray(mu, dtype=float)
    if sub is None or len(mu) != len(rows.b) or not np.all(mu >= 0):
        return None
    base = dual_bound(sub, rows, mu)
    hill = np.flatnonzero(~a.concave)
    top = a.upper[hill]
    if not (np.isfinite(base) and np.all(np.isfinite(top))):
        return None
    gains = HillGain(a, hill, (mu @ rows.A)[hill], top)
    phi = gains.over(np.zeros(len(hill)))
    others = base + phi.sum() - phi  # L(μ) − φ_h, each term bounded from above
    others = others + BOUND_MARGIN * (abs(base) + np.abs(phi).sum())

    def removable(t: np.ndarray) -> np.ndarray:
        """Whether every plan with at least t hours of the source is worth no more than the incumbent."""
        return others + gains.over(t) <= incumbent

    lo, hi = np.zeros(len(hill)), top
    fits = removable(hi)
    at_zero = removable(lo)
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        ok = removable(mid)
        lo, hi = np.where(ok, lo, mid), np.where(ok, mid, hi)
    t = np.where(at_zero, 0.0, np.where(fits, hi, top))
    out = a.upper.copy()
    out[hill] = np.minimum(top, t)
    return out


def priced_dual(a: CurveArrays, rows: CouplingRows) -> tuple[np.ndarray, Dual] | None:
    """The sources the dual prices in closed form (:func:`procure.program.paths.priced_by_dual`)
    and their dual with the others left out (linear with no room, which the dual prices at 0
    hours); None where there are none or its hours are not finite."""
    part = priced_by_dual(a)
    if not part.any():
        return None
    alone = replace(a, room=np.where(part, a.room, 0.0), upper=np.where(part, a.upper, 0.0),
                    curve=np.where(part, a.curve, "linear"), concave=np.ones_like(a.concave),
                    binary=np.zeros_like(a.binary), lots=np.where(part, a.lots, 0.0))  # fmt: skip
    dual = solve_dual(alone, rows)
    return (part, dual) if np.all(np.isfinite(dual.x)) else None


def first_incumbent(a: CurveArrays, rows: CouplingRows) -> tuple[float, np.ndarray] | None:
    """A plan that meets every coupling row and buys only what the dual prices in closed form
    (the dual of those sources alone, pulled inside the rows), its true value and the dual's
    multipliers; None where there is none."""
    found = priced_dual(a, rows)
    if found is None:
        return None
    part, dual = found
    x = np.where(part, np.clip(dual.x, 0.0, a.upper), 0.0)
    x = within_rows(rows.A[None], rows.b[None], x[None])[0]
    if not np.all(np.isfinite(x)):
        return None
    _e, v = a.value_of(x)
    return float(np.sum(v)), dual.mu


def narrow_hills(problem: Problem, incumbent: float, a: CurveArrays) -> tuple[np.ndarray, float] | None:
    """The bounds on the S-shaped sources' hours of a one-scenario budget-mode ``problem`` (its
    sources ``a``) that a plan worth more than the best known must keep (:func:`hill_ranges`),
    with that value; None where none narrows a source's bound below :data:`LEAST_NARROWING` of it.

    The best plan known is the better of ``incumbent`` (the true value of a plan found,
    [own-hour equivalents]) and :func:`first_incumbent`'s; the multipliers are the dual's of the
    sources it prices.

    Returns
    -------
    tuple of (numpy.ndarray, float) or None
        Per source its narrowed bound [h] (NaN where not narrowed), and the value they were
        proven against: no plan beyond them is worth more.
    """
    if a.concave.all():
        return None
    rows = coupling_rows(problem, float(problem.budget or 0.0), capacity_rows_of(problem))
    start = first_incumbent(a, rows)
    if start is None:
        return None
    known, mu = start
    against = max(known, incumbent)
    ranges = hill_ranges(a, rows, against, mu)
    if ranges is None:
        return None
    narrower = ranges < LEAST_NARROWING * a.upper
    if not narrower.any():
        return None
    return np.where(narrower, ranges, np.nan), against


def convex_reach(a: CurveArrays) -> np.ndarray:
    """Per curve, the hours bought up to which an S-shaped (hill, s > 1) curve is convex, its
    inflection (:func:`procure.program.numbers.value.hill_turn_hours`; 0 where the hours held pass
    it, NaN for the other curves) [h]."""
    x_turn = value.hill_turn_hours(a.rate, a.held, a.k, a.shape)
    return np.where(~a.concave, np.maximum(x_turn, 0.0), np.nan)


def narrowed_breakpoints(a: CurveArrays, narrowed: np.ndarray, count: int,
                         given: dict[int, np.ndarray] | None) -> dict[int, np.ndarray]:  # fmt: skip
    """Breakpoints of each S-shaped curve whose range was narrowed to ``narrowed`` [h] (NaN: not
    narrowed): ``given``'s within the new range, and where that range lies where the curve is
    convex its two ends (its chord lies on or above it there: a form with no binary, which the
    refinement splits where a plan leans on it), else ``count`` evenly spaced. The other curves
    keep ``given``'s."""
    out = dict(given or {})
    reach = convex_reach(a)
    for i in np.flatnonzero(~np.isnan(narrowed)).tolist():
        top = float(narrowed[i])
        kept = out.get(i, np.zeros(0))
        inside = kept[(kept > 0) & (kept < top)]
        if top <= 0:
            out[i] = np.array([0.0, 1.0])
        elif top <= reach[i]:
            out[i] = np.unique(np.concatenate([[0.0, top], inside]))
        else:
            out[i] = np.unique(np.concatenate([inside, np.linspace(0.0, top, count)]))
    return out


def narrowing(
    program: Solving, formulation: Formulation, breakpoints: dict[int, np.ndarray] | None, budget: float | None
) -> tuple[np.ndarray | None, dict[int, np.ndarray] | None]:
    """The bounds this module proves for the S-shaped sources of ``program``'s one-scenario
    budget-mode ``formulation`` at ``budget`` (else its own), against the best plan known
    (``program.incumbent``), as the model's bounds (inf where not narrowed), and the breakpoints
    over the narrowed ranges (:func:`narrowed_breakpoints`); ``(None, breakpoints)`` where none
    narrows, or the program does not narrow (``program.narrowing`` off, no guide, fixed
    hours, target mode). Sets ``program.narrowed`` and ``program.narrowed_value``."""
    program.narrowed, program.narrowed_value = None, -math.inf
    one = isinstance(formulation, ScenarioProblem) and formulation.certain and formulation.count == 1
    if not (one and program.narrowing and program.dual_guide and program.fixed_hours is None
            and program.problem.mode is Mode.BUDGET):  # fmt: skip
        return None, breakpoints
    base = formulation.base if budget is None else formulation.base.asking(budget=budget, target=None)
    a = source_arrays(base)
    found = narrow_hills(base, program.incumbent, a)
    if found is None:
        return None, breakpoints
    program.narrowed, program.narrowed_value = found
    points = narrowed_breakpoints(a, found[0], program.first_hill_points, breakpoints)
    return np.where(np.isnan(found[0]), np.inf, found[0]), points
