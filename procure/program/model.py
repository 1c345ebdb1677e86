"""The Pyomo model of the procurement program: variables, named rows, cuts, piecewise forms.

maximise  Σ_s v_s(e_s),  e_s = a_s (h0_s + x_s),  a_s = ρ_s σ_s φ_s
subject to
    budget        Σ_s (p_s + t_s) x_s + Σ_s fee_s y_s ≤ B
    capacity r    Σ_s u_rs (h0_s + x_s) ≤ C_r     (accelerator-h, core-h, GB)
    mix bound     Σ_{s∈G} e_s ≤ share · Σ_s e_s
    0 ≤ x_s ≤ available_s;  x_s = lot_s n_s;  min_s y_s ≤ x_s ≤ ub_s y_s  (integer terms)

This module builds the model and nothing else: no I/O, no solve (:mod:`procure.program.solve`
refines and solves it; target mode solves this budget form at a sequence of budgets). Every
curve enters through a form that lies on or above it, so the model's optimum bounds the true
optimum from above:

* concave curves through tangent cuts on an epigraph variable, ``z_s ≤ v(ê) + v'(ê)(e_s − ê)``;
* S-shaped hill curves (``s > 1``) through a piecewise-linear form with incremental binaries
  (Pyomo ``Piecewise``, ``INC``) whose breakpoint values are the curve's plus the largest
  amount by which the curve rises above its chords on the neighbouring segments.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from ..errors import SolveError, invalid
from . import value
from .problem import CAPACITIES, Mode, Problem

#: Breakpoints of the first piecewise form of a hill curve with s > 1.
DEFAULT_HILL_POINTS = 17
#: First tangent points, in units of the curve's saturation scale k.
INITIAL_CUT_POINTS = (0.0, 0.3, 1.0, 3.0)
#: Smallest tangent point of a hill curve, in units of its scale k: a hill curve with s < 1 is
#: vertical at 0, so its first tangent touches at 1e-6 k instead [1].
SMALLEST_TANGENT_POINT = 1e-6
#: Samples per segment at which a hill curve is compared with its chord.
HILL_ERROR_SAMPLES = 65
#: Relative margin on the sampled largest rise of a hill curve above a chord: sampling at
#: 65 points a segment underestimates the true maximum by at most about 2.4e-4 of it [1].
HILL_ERROR_MARGIN = 1e-3
#: Two tangent points of one source closer than this share of the curve's scale are one [1].
SAME_POINT = 1e-12
#: Relative margin with which a whole-lot count is floored, so that an exact multiple of the
#: lot is not rounded down by floating-point error [1].
LOT_FLOOR_MARGIN = 1e-9


@dataclass
class SourceArrays:
    """What the model needs of each source, one array per source in ledger order.

    Attributes
    ----------
    cost : numpy.ndarray
        All-in price of an hour [$/h].
    rate : numpy.ndarray
        Effective hours per recorded hour, ρσφ [1].
    held : numpy.ndarray
        Hours already held [h].
    room : numpy.ndarray
        Most hours availability and capacities allow [h] (inf = unbounded).
    upper : numpy.ndarray
        The bound of ``x`` in the model [h]: ``room``, or what the budget buys where nothing
        else bounds the source (or where a hill curve's breakpoints need a finite range).
    budget_bounded : numpy.ndarray
        True where ``upper`` comes from the budget.
    curve, k, shape : numpy.ndarray
        Value curve name, saturation scale [effective h] and shape [1].
    concave : numpy.ndarray
        True where the curve is concave (tangent cuts); False for S-shaped hill curves.
    binary : numpy.ndarray
        True where a minimum order or a fee needs an on/off variable.
    lots : numpy.ndarray
        Lot size [h] (0 = continuous).
    """

    cost: np.ndarray
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

    def value_of(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Effective hours and true value of each source when ``x`` hours are bought."""
        e = self.rate * (self.held + x)
        return e, np.asarray(value.value(e, self.curve, self.k, self.shape), dtype=float)


def source_arrays(problem: Problem) -> SourceArrays:
    """The arrays of :class:`SourceArrays` for a problem, with its bounds checked.

    Raises
    ------
    SolveError
        No sources; held hours already over a capacity; an unbounded request (a free,
        unlimited source); an unlimited source with integer terms.
    InputError
        A hill curve with a shape ≤ 0.
    """
    s = problem.sources
    if problem.n == 0:
        raise SolveError("the ledger has no sources: nothing to buy")
    cost = problem.cost
    held = problem.held
    upper = problem.column("available_hours").copy()
    # Capacities bound what can be bought; held hours must fit already.
    for name, limit in problem.capacity.items():
        use = problem.usage(name)
        if not math.isfinite(limit):
            continue
        unit = CAPACITIES[name][1]
        used = float(use @ held)
        if used > limit * (1 + 1e-12):
            raise SolveError(
                f"infeasible: the hours already held need {used:,.1f} {unit} of {name}, the capacity "
                f"is {limit:,.1f} {unit} (over by {used - limit:,.1f} {unit}): raise the capacity "
                "or lower held_hours"
            )
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where(use > 0, (limit - used) / use, np.inf)
        upper = np.minimum(upper, np.maximum(room, 0.0))
    room = upper.copy()  # what availability and capacities allow
    shape = problem.column("curve_shape")
    curve = s["curve"].to_numpy(str)
    concave = np.asarray(value.is_concave(curve, shape), dtype=bool)
    budget_bounded = np.zeros(problem.n, dtype=bool)
    if problem.mode is Mode.BUDGET:
        # The budget bounds a source in the model only where nothing else does, or where a hill
        # curve's breakpoints need a tight range: the model then stays valid for other budgets
        # and costs (Program.set_budget, Program.set_costs).
        with np.errstate(divide="ignore", invalid="ignore"):
            afford = np.where(cost > 0, float(problem.budget or 0.0) / cost, np.inf)
        budget_bounded = (~np.isfinite(room) | ~concave) & (afford < room)
        upper = np.where(budget_bounded, afford, room)
    bad_hill = (curve == "hill") & ~(shape > 0)
    if bad_hill.any():
        i = int(np.flatnonzero(bad_hill)[0])
        raise invalid(f"curve_shape of {s['source'].iloc[i]!r}", float(shape[i]), "a hill curve needs a shape > 0")
    free = ~np.isfinite(upper)
    if problem.mode is Mode.BUDGET and free.any():
        names = ", ".join(s.loc[free, "source"])
        raise SolveError(
            f"unbounded: {names} costs nothing, is unlimited and uses no limited capacity, so its value "
            "has no ceiling: give it available_hours, a price or a capacity it uses"
        )
    lots = problem.column("lot_hours")
    binary = ((problem.column("min_order_hours") > 0) | (problem.column("fixed_fee_usd") > 0)) & (upper > 0)
    integer_unbounded = (binary | (lots > 0) | ~concave) & ~np.isfinite(upper)
    if integer_unbounded.any():
        bad = s["source"].iloc[int(np.flatnonzero(integer_unbounded)[0])]
        raise SolveError(
            f"{bad!r} is unlimited, which its lots, minimum order, fee or hill curve cannot be modelled with in "
            "target mode: give it available_hours"
        )
    return SourceArrays(cost, problem.rate, held, room, upper, budget_bounded, curve,
                        problem.column("saturation_hours"), shape, concave, binary, lots)  # fmt: skip


@dataclass
class BuiltModel:
    """A built model and what the solve loop needs to know about it.

    Attributes
    ----------
    model : pyomo.environ.ConcreteModel
        The model (components listed in :func:`build_model`).
    arrays : SourceArrays
        The per-source numbers it was built from.
    budget : float
        The budget the model was built for [$]: the bounds of budget-bounded sources hold for
        any budget up to it.
    hill_breakpoints : dict of int to numpy.ndarray
        The breakpoints of each hill source, in hours bought [h].
    capacity_rows : list of str
        Capacities that have a row (finite and used by some source).
    cut_points : dict of int to dict of float to float
        The effective hours at which each source has a tangent cut [effective h], keyed by the
        point in units of :data:`SAME_POINT` times the curve's scale (two points that close are one).
    cuts_in_model : bool
        True when the cuts are Pyomo constraints of ``model.cuts``; False when they are kept
        as points only and handed to the solver as rows (:mod:`procure.program.highs`).
    """

    model: pyo.ConcreteModel
    arrays: SourceArrays
    budget: float
    hill_breakpoints: dict[int, np.ndarray] = field(default_factory=dict)
    capacity_rows: list[str] = field(default_factory=list)
    cut_points: dict[int, dict[float, float]] = field(default_factory=dict)
    cuts_in_model: bool = True
    arguments: list[Any] | None = None
    budget_rows: list[Any] | None = None
    capacity_cons: list[list[Any]] | None = None
    mix_cons: list[list[Any]] | None = None
    source_room: np.ndarray | None = None
    plan_upper: np.ndarray | None = None
    objective_of: Callable[[np.ndarray], float] | None = None

    def __post_init__(self) -> None:
        """Fill in the hooks of the one-scenario model: a curve per source, whose argument is
        the source's hours; one budget row; one row per capacity and mix bound; the value is
        the sum of the curves'."""
        m = self.model
        if self.arguments is None:
            self.arguments = [m.x[i] for i in m.S]
        if self.budget_rows is None:
            self.budget_rows = [m.budget_row]
        if self.capacity_cons is None:
            self.capacity_cons = [[m.capacity[r]] for r in m.R]
        if self.mix_cons is None:
            self.mix_cons = [[m.mix[g]] for g in m.G]
        if self.source_room is None:
            self.source_room = self.arrays.room
        if self.plan_upper is None:
            self.plan_upper = self.arrays.upper
        if self.objective_of is None:
            self.objective_of = _total

    def true_objective(self, values: np.ndarray) -> float:
        """The objective at the true value of each curve [own-hour equivalents]."""
        assert self.objective_of is not None
        return self.objective_of(values)

    @property
    def room(self) -> np.ndarray:
        """Most hours availability and capacities allow of each source [h]."""
        assert self.source_room is not None
        return self.source_room

    @property
    def hill_points(self) -> dict[int, int]:
        """Breakpoints of each S-shaped hill curve's piecewise form."""
        return {i: len(xs) for i, xs in self.hill_breakpoints.items()}

    def cuts(self) -> list[tuple[int, float]]:
        """Every tangent point so far, as (source, effective hours)."""
        return [(i, p) for i, points in self.cut_points.items() for p in sorted(points.values())]

    def cut_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """Every tangent point so far, as arrays of sources and effective hours."""
        pairs = self.cuts()
        return np.array([i for i, _ in pairs], dtype=np.int64), np.array([p for _, p in pairs], dtype=float)

    @property
    def cut_count(self) -> int:
        """Tangent cuts in the model."""
        return sum(len(points) for points in self.cut_points.values())

    @property
    def has_integers(self) -> bool:
        """True when the model has binary or integer variables (a MIP)."""
        m = self.model
        return bool(len(m.B) or len(m.L) or len(m.H))


def _total(values: np.ndarray) -> float:
    """The value of a plan of one scenario: the sum of its curves' values."""
    return float(np.sum(values))


def initial_points(arrays: SourceArrays) -> tuple[np.ndarray, np.ndarray]:
    """Sources and effective hours at which the first tangents touch the concave curves: the
    held point, :data:`INITIAL_CUT_POINTS` times the scale (within the source's range) and the
    end of the range; one point for a linear curve or a source that adds no effective hours."""
    a = arrays
    lo = a.rate * a.held
    hi = a.rate * (a.held + a.upper)
    scaled = np.clip(np.outer(a.k, INITIAL_CUT_POINTS), lo[:, None], hi[:, None])
    points = np.column_stack([lo, scaled, hi])
    single = (a.curve == "linear") | (a.rate == 0)
    points[single, 1:] = np.nan
    points[~np.isfinite(points)] = np.nan
    points[~a.concave] = np.nan
    sources = np.repeat(np.arange(len(lo)), points.shape[1])
    flat = points.ravel()
    keep = ~np.isnan(flat)
    return sources[keep], flat[keep]


def build(
    problem: Problem,
    *,
    hill_points: int = DEFAULT_HILL_POINTS,
    hill_breakpoints: Mapping[int, np.ndarray] | None = None,
    cuts: Sequence[tuple[int, float]] = (),
    cuts_in_model: bool = True,
) -> BuiltModel:
    """Build the model of a problem in budget mode, with its tangent cuts (no I/O, no solve).

    Components: ``x[s]`` hours bought, ``z[s]`` value credited, ``cost[s]`` and ``budget``
    (mutable parameters), ``budget_row``, ``capacity[r]``, ``mix[g]``, ``cuts`` (a
    ``ConstraintList`` of tangent cuts), ``buy[s]``/``lots[s]`` and their rows (integer
    terms), ``hill[s]`` (piecewise forms of S-shaped curves), and the objective ``objective``.

    Parameters
    ----------
    problem : Problem
        In budget mode.
    hill_points : int, default 17
        Breakpoints of the first piecewise form of each S-shaped hill curve, evenly spaced.
    hill_breakpoints : mapping of int to numpy.ndarray, optional
        Breakpoints by source index, in hours bought [h], instead (those a rebuilt model keeps
        from the one it replaces); where they stop short of the source's range, evenly spaced
        ones continue them.
    cuts : sequence of (int, float)
        Tangent points to start with besides the first ones, as (source, effective hours):
        the cuts a rebuilt model keeps from the model it replaces.
    cuts_in_model : bool, default True
        Make each cut a Pyomo constraint of ``model.cuts``; False keeps only the points, for a
        solver that takes the cuts as rows (:class:`procure.program.highs.HighsModel`), so
        that no Pyomo expression is built per cut.

    Raises
    ------
    InputError
        If the problem is not in budget mode.
    """
    if problem.mode is not Mode.BUDGET:
        raise invalid("mode", str(problem.mode), "the model is built in budget mode; target mode solves it at budgets")
    a = source_arrays(problem)
    n = problem.n
    m = pyo.ConcreteModel(name="procure")
    m.S = pyo.Set(initialize=range(n), ordered=True)
    ub = [float(u) if math.isfinite(u) else None for u in a.upper]
    m.x = pyo.Var(m.S, bounds=lambda _m, i: (0.0, ub[i]), initialize=0.0)
    m.z = pyo.Var(m.S)
    m.cost = pyo.Param(m.S, mutable=True, initialize=dict(enumerate(a.cost.tolist())))
    m.budget = pyo.Param(mutable=True, initialize=float(problem.budget or 0.0))

    fee = problem.column("fixed_fee_usd")
    add_integer_terms(m, a, problem.column("min_order_hours"))

    # A source that costs nothing has no term: no zero coefficient is handed to the solver.
    paid = [i for i in range(n) if a.cost[i] > 0]
    spend = LinearExpression(
        constant=0.0,
        linear_coefs=[m.cost[i] for i in paid] + [float(fee[i]) for i in m.B],
        linear_vars=[m.x[i] for i in paid] + [m.buy[i] for i in m.B],
    )
    m.budget_row = pyo.Constraint(expr=spend <= m.budget)

    rows = [
        name for name, limit in problem.capacity.items() if math.isfinite(limit) and (problem.usage(name) > 0).any()
    ]
    m.R = pyo.Set(initialize=rows, ordered=True)

    def capacity_rule(_m: pyo.ConcreteModel, r: str) -> object:
        """Capacity r over the window, held hours counted: Σ u_rs x_s ≤ C_r − Σ u_rs h0_s."""
        use = problem.usage(r)
        nz = np.flatnonzero(use)
        room = float(problem.capacity[r] - use @ a.held)
        coefs, xs = [float(use[i]) for i in nz], [_m.x[i] for i in nz]
        return LinearExpression(constant=0.0, linear_coefs=coefs, linear_vars=xs) <= room

    m.capacity = pyo.Constraint(m.R, rule=capacity_rule)

    groups = list(problem.max_share)
    m.G = pyo.Set(initialize=range(len(groups)), ordered=True)

    def mix_rule(_m: pyo.ConcreteModel, g: int) -> object:
        """Mix bound g: Σ_{s∈G} e_s ≤ share · Σ_s e_s, as a row in x."""
        key = groups[g]
        coef = a.rate * (problem.members(key).astype(float) - problem.max_share[key])
        return sum(float(coef[i]) * _m.x[i] for i in range(n) if coef[i] != 0) <= float(-(coef @ a.held))

    m.mix = pyo.Constraint(m.G, rule=mix_rule)

    m.cuts = pyo.ConstraintList()
    built = BuiltModel(m, a, float(problem.budget or 0.0), capacity_rows=rows, cuts_in_model=cuts_in_model)
    add_curve_forms(built, cuts, hill_points, hill_breakpoints, m.x)
    m.objective = pyo.Objective(
        expr=LinearExpression(constant=0.0, linear_coefs=[1.0] * n, linear_vars=list(m.z.values())), sense=pyo.maximize
    )
    return built


def add_integer_terms(m: pyo.ConcreteModel, a: SourceArrays, min_order: np.ndarray) -> None:
    """The on/off and whole-lot terms of the sources' hours ``m.x``: ``B``, ``buy``,
    ``buy_upper``, ``buy_lower`` (a minimum order or a fee), ``L``, ``lots``, ``lot_row``."""
    n = len(a.cost)
    m.B = pyo.Set(initialize=[i for i in range(n) if a.binary[i]], ordered=True)
    m.buy = pyo.Var(m.B, domain=pyo.Binary)

    def buy_upper_rule(_m: pyo.ConcreteModel, i: int) -> object:
        """Nothing of source i unless it is bought: x_i ≤ ub_i · buy_i."""
        return _m.x[i] <= float(a.upper[i]) * _m.buy[i]

    def buy_lower_rule(_m: pyo.ConcreteModel, i: int) -> object:
        """If source i is bought, at least its minimum order: x_i ≥ min_i · buy_i."""
        return _m.x[i] >= float(min_order[i]) * _m.buy[i]

    def lot_rule(_m: pyo.ConcreteModel, i: int) -> object:
        """Source i in whole lots: x_i = lot_i · n_i."""
        return _m.x[i] == float(a.lots[i]) * _m.lots[i]

    m.buy_upper = pyo.Constraint(m.B, rule=buy_upper_rule)
    m.buy_lower = pyo.Constraint(m.B, rule=buy_lower_rule)
    m.L = pyo.Set(initialize=[i for i in range(n) if a.lots[i] > 0], ordered=True)
    m.lots = pyo.Var(m.L, domain=pyo.NonNegativeIntegers,
                     bounds=lambda _m, i: (0, math.floor(a.upper[i] / a.lots[i] + LOT_FLOOR_MARGIN)))  # fmt: skip
    m.lot_row = pyo.Constraint(m.L, rule=lot_rule)


def add_curve_forms(
    built: BuiltModel,
    cuts: Sequence[tuple[int, float]],
    hill_points: int,
    hill_breakpoints: Mapping[int, np.ndarray] | None,
    argument: Any,
) -> None:
    """What bounds each curve of a built model from above: the first tangent cuts of the concave
    curves and the ``cuts`` kept from a model it replaces, and the piecewise forms ``m.hill``
    over ``m.H`` of the S-shaped ones, in the curves' hours ``argument`` (an indexed variable)."""
    a, m = built.arrays, built.model
    curves = len(a.cost)
    sources, points = initial_points(a)
    kept = [(i, p) for i, p in cuts if 0 <= i < curves and a.concave[i]]
    sources = np.concatenate([sources, np.array([i for i, _ in kept], dtype=np.int64)])
    points = np.concatenate([points, np.array([p for _, p in kept], dtype=float)])
    add_cuts(built, sources, points)
    hill = np.flatnonzero(~a.concave).tolist()
    m.H = pyo.Set(initialize=hill, ordered=True)
    if hill:
        given = hill_breakpoints or {}
        built.hill_breakpoints = {i: _breakpoints(a.upper[i], hill_points, given.get(i)) for i in hill}
        pts = {i: list(built.hill_breakpoints[i]) for i in hill}
        tops = {i: list(hill_upper_values(a, i, built.hill_breakpoints[i])) for i in hill}
        m.hill = pyo.Piecewise(
            m.H, m.z, argument, pw_pts=pts, pw_constr_type="UB", pw_repn="INC", warning_tol=-1.0, f_rule=tops
        )


def _breakpoints(upper: float, count: int, given: np.ndarray | None) -> np.ndarray:
    """Breakpoints over [0, upper] hours: ``given`` clipped to the range and continued evenly,
    or ``count`` evenly spaced. A source that cannot be bought (upper 0) keeps distinct
    breakpoints over [0, 1]; its hours are 0 anyway."""
    top = upper if upper > 0 else 1.0
    if given is None or len(given) < 2:
        return np.linspace(0.0, top, count)
    kept = np.unique(np.clip(np.asarray(given, dtype=float), 0.0, top))
    if kept[0] > 0:
        kept = np.concatenate([[0.0], kept])
    if kept[-1] < top:
        step = top / max(count - 1, 1)
        kept = np.concatenate([kept, np.linspace(kept[-1], top, max(2, math.ceil((top - kept[-1]) / step) + 1))[1:]])
    return kept


def refined_breakpoints(xs: np.ndarray, at: float) -> np.ndarray:
    """``xs`` with the segment holding ``at`` and its two neighbours split in half: where the
    piecewise form's lift above the curve, which comes from those segments, is largest."""
    j = int(np.clip(np.searchsorted(xs, at, side="right") - 1, 0, len(xs) - 2))
    lo, hi = max(j - 1, 0), min(j + 1, len(xs) - 2)
    mids = 0.5 * (xs[lo : hi + 1] + xs[lo + 1 : hi + 2])
    return np.unique(np.concatenate([xs, mids]))


def build_model(problem: Problem, *, hill_points: int = DEFAULT_HILL_POINTS) -> pyo.ConcreteModel:
    """The Pyomo ``ConcreteModel`` of a problem (see :func:`build` for its components)."""
    return build(problem, hill_points=hill_points).model


def tangent_rows(
    arrays: SourceArrays, sources: np.ndarray, points: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The tangent cuts of ``sources`` at effective hours ``points`` as rows
    ``z_i + coef·x_i ≤ rhs``: ``coef = −slope·a_i``, ``rhs = slope·a_i·h0_i + intercept``."""
    a = arrays
    sources = np.asarray(sources, dtype=np.int64)
    if len(sources) == 0:
        return sources, np.zeros(0), np.zeros(0)
    slope, intercept = value.tangent(np.asarray(points, float), a.curve[sources], a.k[sources], a.shape[sources])
    slope = np.asarray(slope, dtype=float)
    return sources, -slope * a.rate[sources], slope * a.rate[sources] * a.held[sources] + intercept


def add_cuts(built: BuiltModel, sources: np.ndarray, points: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Add the tangents of ``sources`` at effective hours ``points`` to the model's cuts.

    A point where the source already has a cut is left out: no cut is added twice. The cuts
    are recorded as points, and made Pyomo constraints of ``model.cuts`` when the model keeps
    its cuts (``cuts_in_model``). Returns the new cuts as rows (:func:`tangent_rows`).
    """
    a, m = built.arrays, built.model
    sources = np.asarray(sources, dtype=np.int64)
    if len(sources) == 0:
        return tangent_rows(a, sources, np.zeros(0))
    # A curve that is vertical at 0 (hill with s < 1) takes its tangent a little to the right.
    points = np.maximum(
        np.asarray(points, dtype=float),
        np.where(a.curve[sources] == "hill", SMALLEST_TANGENT_POINT * a.k[sources], 0.0),
    )
    scale = SAME_POINT * np.maximum(1.0, np.where(np.isfinite(a.k[sources]), a.k[sources], 1.0))
    keys = np.round(points / scale).tolist()
    keep = []
    for j, (i, key, p) in enumerate(zip(sources.tolist(), keys, points.tolist(), strict=True)):
        seen = built.cut_points.setdefault(i, {})
        if key not in seen:
            seen[key] = p
            keep.append(j)
    rows = tangent_rows(a, sources[keep], points[keep])
    if built.cuts_in_model:
        add, z, x = m.cuts.add, m.z, m.x
        for i, c, r in zip(rows[0].tolist(), rows[1].tolist(), rows[2].tolist(), strict=True):
            add(LinearExpression(constant=0.0, linear_coefs=[1.0, c], linear_vars=[z[i], x[i]]) <= r)
    return rows


def chord_rise(arrays: SourceArrays, i: int, xs: np.ndarray) -> np.ndarray:
    """Largest amount by which source ``i``'s curve rises above its chord on each segment of the
    breakpoints ``xs`` [value], with :data:`HILL_ERROR_MARGIN`; 0 where the curve lies below."""
    a = arrays
    fine = np.linspace(xs[:-1], xs[1:], HILL_ERROR_SAMPLES, axis=1)
    v = value.value(a.rate[i] * (a.held[i] + fine), a.curve[i], a.k[i], a.shape[i])
    ends = value.value(a.rate[i] * (a.held[i] + xs), a.curve[i], a.k[i], a.shape[i])
    width = np.diff(xs)
    w = (fine - xs[:-1, None]) / np.where(width > 0, width, 1.0)[:, None]
    chord = ends[:-1, None] * (1 - w) + ends[1:, None] * w
    rise = np.maximum(0.0, np.max(v - chord, axis=1))
    return np.where(rise > 0, rise * (1 + HILL_ERROR_MARGIN), 0.0)


def hill_upper_values(arrays: SourceArrays, i: int, xs: np.ndarray) -> np.ndarray:
    """Values of a piecewise-linear form through the breakpoints ``xs`` that lies on or above
    source ``i``'s curve: the curve's value at each breakpoint plus the larger rise of the
    curve above its chord on the two neighbouring segments [value]."""
    a = arrays
    rise = chord_rise(a, i, xs)
    lift = np.maximum(np.concatenate([[0.0], rise]), np.concatenate([rise, [0.0]]))
    return np.asarray(value.value(a.rate[i] * (a.held[i] + xs), a.curve[i], a.k[i], a.shape[i]), float) + lift
