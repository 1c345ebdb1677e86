"""The numbers each curve of the program needs: rates, held hours, bounds, curve and integer terms.

A curve is one (scenario, source) pair, indexed scenario-major (``j = ω n + s``); a problem
without scenarios has one scenario, so its curves are its sources. :func:`source_arrays`
reads a problem's sources and checks its bounds; :func:`curve_arrays` lays them over the
scenarios. No Pyomo here: the builder (:mod:`procure.program.model.build`) reads these arrays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

from ...errors import Reason, SolveError, invalid
from . import value
from .problem import CAPACITIES, HELD_FIT_MARGIN, Mode, Problem, require_sources
from .scenarios import ScenarioProblem

#: Most whole lots a source's hours may span [lots]: up to 1e9 a double tells consecutive
#: integers apart to 1.2e-7, a tenth of HiGHS's integrality tolerance (1e-6); beyond it
#: (1.7e10 lots of 1e-6 h, say) HiGHS cannot tell whole lots from fractions, and its bound is
#: no bound.
MOST_LOTS = 1e9
#: The model bounds a curve's hours, where its range comes from a row (the budget's or a
#: capacity's) rather than its availability, at this multiple of that range [1] (range: > 1):
#: the row, which holds the limit exactly, binds before the bound does, so its dual carries the
#: limit's whole price (λ, a shadow price) and no bound of the model shares it.
DERIVED_BOUND = 1.5


@dataclass(frozen=True)
class CurveArrays:
    """What the model needs of each curve, one array entry per curve.

    Attributes
    ----------
    rate : numpy.ndarray
        Effective hours per recorded hour, ρσφ [1].
    held : numpy.ndarray
        Hours already held [h].
    room : numpy.ndarray
        Most hours availability and capacities allow [h] (inf = unbounded).
    upper : numpy.ndarray
        The bound of the curve's hours in the model [h]: ``room``, or what the budget buys
        where nothing else bounds the source (or where a hill curve's breakpoints need a
        finite range).
    budget_bounded : numpy.ndarray
        True where ``upper`` comes from the budget.
    bound : numpy.ndarray
        The bound of the curve's hours in the model [h]: ``upper`` where that is the curve's
        availability, else :data:`DERIVED_BOUND` times it (at most the availability).
    curve, k, shape : numpy.ndarray
        Value curve name, saturation scale [effective h] and shape [1].
    concave : numpy.ndarray
        True where the curve is concave (tangent cuts); False for S-shaped hill curves.
    binary : numpy.ndarray
        True where a minimum order or a fee needs an on/off variable.
    lots : numpy.ndarray
        Lot size [h] (0 = continuous).
    """

    rate: np.ndarray
    held: np.ndarray
    room: np.ndarray
    upper: np.ndarray
    budget_bounded: np.ndarray
    curve: np.ndarray
    k: np.ndarray
    shape: np.ndarray
    concave: np.ndarray
    binary: np.ndarray
    lots: np.ndarray
    bound: np.ndarray

    def value_of(self, hours: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Effective hours and true value of each curve when ``hours`` are bought [eff. h, value]."""
        e = self.rate * (self.held + hours)
        return e, np.asarray(value.value(e, self.curve, self.k, self.shape), dtype=float)

    def slope_of(self, hours: np.ndarray) -> np.ndarray:
        """Marginal value of the next recorded hour of each curve, v'(e)·ρσφ [value per h]."""
        e = self.rate * (self.held + hours)
        return np.asarray(value.derivative(e, self.curve, self.k, self.shape), dtype=float) * self.rate


def _check_held_fits(problem: Problem) -> np.ndarray:
    """Most hours each source can add within the capacities [h]; a :class:`SolveError` when
    the hours already held break one."""
    upper = problem.column("available_hours").copy()
    held = problem.held
    for name, limit in problem.capacity.items():
        if not math.isfinite(limit):
            continue
        use = problem.usage(name)
        unit = CAPACITIES[name][1]
        used = float(use @ held)
        if used > limit * (1 + HELD_FIT_MARGIN):
            raise SolveError(
                f"infeasible: the hours already held need {used:,.1f} {unit} of {name}, the capacity "
                f"is {limit:,.1f} {unit} (over by {used - limit:,.1f} {unit}): raise the capacity "
                "or lower held_hours",
                Reason.INFEASIBLE,
            )
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where(use > 0, (limit - used) / use, np.inf)
        upper = np.minimum(upper, np.maximum(room, 0.0))
    return upper


def model_bound(upper: np.ndarray, available: np.ndarray) -> np.ndarray:
    """The model's bound of hours whose range is ``upper`` and availability ``available`` [h]:
    ``upper`` where the availability gives it, else :data:`DERIVED_BOUND` times it, at most the
    availability (the range is then a row's, which holds it exactly)."""
    return np.where(upper < available, np.minimum(available, DERIVED_BOUND * upper), upper)


def afford(cost: np.ndarray, budget: float) -> np.ndarray:
    """Hours ``budget`` [$] buys at each ``cost`` [$/h] (inf where the hour is free) [h]."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(cost > 0, budget / np.where(cost > 0, cost, 1.0), np.inf)


def _afford_bounds(
    cost: np.ndarray, budget: float, room: np.ndarray, concave: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The bound of each source in a budget-mode model and where it comes from the budget.

    The budget bounds a source only where nothing else does, or where a hill curve's
    breakpoints need a tight range: the model then stays valid for other budgets and costs up
    to the one it was built for. Why the budget, and why :func:`model_bound` lies beyond this
    range: ``docs/certification.md``, "λ and shadow prices: no bound shares a limit's price".
    """
    buys = afford(cost, budget)
    bounded = (~np.isfinite(room) | ~concave) & (buys < room)
    return np.where(bounded, buys, room), bounded


def source_arrays(problem: Problem) -> CurveArrays:
    """The arrays of :class:`CurveArrays` for a problem's sources, with its bounds checked.

    Raises
    ------
    SolveError
        No sources; held hours already over a capacity; an unbounded request (a free,
        unlimited source); an unlimited source with integer terms.
    InputError
        A hill curve with a shape ≤ 0.
    """
    s = problem.sources
    require_sources(problem)
    room = _check_held_fits(problem)
    shape = problem.column("curve_shape")
    curve = problem.curves
    concave = np.asarray(value.is_concave(curve, shape), dtype=bool)
    upper, budget_bounded = room, np.zeros(problem.n, dtype=bool)
    if problem.mode is Mode.BUDGET:
        upper, budget_bounded = _afford_bounds(problem.cost, float(problem.budget or 0.0), room, concave)
    bad_hill = (curve == "hill") & ~(shape > 0)
    if bad_hill.any():
        i = int(np.flatnonzero(bad_hill)[0])
        raise invalid(f"curve_shape of {s['source'].iloc[i]!r}", float(shape[i]), "a hill curve needs a shape > 0")
    free = ~np.isfinite(upper)
    if problem.mode is Mode.BUDGET and free.any():
        names = ", ".join(s.loc[free, "source"])
        raise SolveError(
            f"unbounded: {names} costs nothing, is unlimited and uses no limited capacity, so its value "
            "has no ceiling: give it available_hours, a price or a capacity it uses",
            Reason.UNBOUNDED,
        )
    lots = problem.column("lot_hours")
    binary = ((problem.column("min_order_hours") > 0) | (problem.column("fixed_fee_usd") > 0)) & (upper > 0)
    integer_unbounded = (binary | (lots > 0) | ~concave) & ~np.isfinite(upper)
    if integer_unbounded.any():
        bad = s["source"].iloc[int(np.flatnonzero(integer_unbounded)[0])]
        raise SolveError(
            f"{bad!r} is unlimited, which its lots, minimum order, fee or hill curve cannot be modelled with in "
            "target mode: give it available_hours",
            Reason.INVALID,
        )
    return CurveArrays(problem.rate, problem.held, room, upper, budget_bounded, curve,
                       problem.column("saturation_hours"), shape, concave, binary, lots,
                       model_bound(upper, problem.column("available_hours")))  # fmt: skip


def curve_arrays(sp: ScenarioProblem, a: CurveArrays) -> CurveArrays:
    """The arrays of every (scenario, source) curve, scenario-major, from the sources' ``a``.

    With recourse a curve's hours are those its scenario ends with, bounded by what the budget
    buys at the cheaper of today's and the later price where nothing else bounds them.

    Raises
    ------
    SolveError
        With recourse, a source whose later hours cost nothing, unlimited: no ceiling.
    """

    def tile(v: np.ndarray) -> np.ndarray:
        return np.tile(v, sp.count)

    c = {f.name: tile(getattr(a, f.name)) for f in fields(CurveArrays)}
    c.update(rate=sp.rate.ravel().astype(float), k=sp.saturation_hours.ravel().astype(float))
    if sp.recourse_price_x is not None:
        later = np.where(tile(sp.later_ok), sp.recourse_price_x * sp.later_cost.ravel(), np.inf)
        cheapest = np.minimum(tile(sp.base.cost), later)
        upper, c["budget_bounded"] = _afford_bounds(cheapest, float(sp.base.budget or 0.0), c["room"], c["concave"])
        free = ~np.isfinite(upper)
        if free.any():
            j = int(np.flatnonzero(free)[0])
            name = sp.base.sources["source"].iloc[j % sp.n]
            raise SolveError(
                f"unbounded: in scenario {sp.names[j // sp.n]!r}, {name} costs nothing later and is unlimited: give "
                "it available_hours or a price",
                Reason.UNBOUNDED,
            )
        c.update(upper=upper, bound=model_bound(upper, tile(sp.base.column("available_hours"))))
    return CurveArrays(**c)


def check_lots(problem: Problem, a: CurveArrays, budget: float) -> None:
    """Refuse a source whose hours could span more than :data:`MOST_LOTS` whole lots at
    ``budget`` [$]: the hours its bound in the model and what the budget buys at its cost allow.

    Raises
    ------
    SolveError
        Naming the source, its lot, the hours it could take and what to give instead.
    """
    hours = np.minimum(a.upper, afford(problem.cost, budget))
    with np.errstate(divide="ignore", invalid="ignore"):
        count = np.where(a.lots > 0, hours / np.where(a.lots > 0, a.lots, 1.0), 0.0)
    wide = np.flatnonzero(count > MOST_LOTS)
    if len(wide):
        i = int(wide[0])
        name = problem.sources["source"].iloc[i]
        raise SolveError(
            f"{name!r} could take {count[i]:.3g} whole lots of lot_hours = {a.lots[i]:g} h ({hours[i]:.4g} h: what "
            f"its availability, the capacities and a budget of ${budget:,.2f} allow), more than the {MOST_LOTS:.0e} "
            "whole lots a solver tells apart: give it a larger lot_hours, an available_hours, or lot_hours 0 "
            "(any hours)",
            Reason.INVALID,
        )
