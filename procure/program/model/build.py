"""The Pyomo model of the procurement program: one formulation over sources × scenarios.

The program, over sources ``s`` and scenarios ``ω``::

    maximise  (1 − W) Σ_ω π_ω Σ_s z_sω  +  W (η − Σ_ω π_ω u_ω / A)
    subject to
        z_sω ≤ v_sω(w_sω)            tangent cuts or a piecewise form above the curve (procure.program.model.forms)
        budget        Σ_s c_s x_s + Σ_s fee_s buy_s [+ Σ_s M c'_sω (w_sω − x_s)] ≤ B
        capacity r    Σ_s u_rs (h0_s + w_sω) ≤ C_r     (accelerator-h, core-h, GB)
        mix bound g   Σ_{s∈G} e_sω ≤ share · Σ_s e_sω,  e_sω = a_sω (h0_s + w_sω)
        u_ω ≥ η − Σ_s z_sω,  u_ω ≥ 0                    (CVaR rows, only when W > 0)
        0 ≤ x_s ≤ available_s;  x_s = lot_s n_s;  min_s y_s ≤ x_s ≤ ub_s y_s   (integer terms)

``x_s`` are the hours bought now, shared by every scenario. A curve is one (scenario, source)
pair, ``j = ω n + s``, read at hours ``w_j``: without recourse ``w_j`` is ``x_s`` itself (a
separate variable tied to it by ``ahead`` only where a piecewise form needs one per curve);
with recourse (later hours at ``M`` times the scenario's all-in price ``c'_sω``) ``w_j ≥ x_s``
are the hours the scenario ends with, and the budget, capacity and mix rows are per scenario.
The deterministic program is one scenario of probability 1 with ``W = 0`` and no recourse: its
curves are its sources, read at ``x``.

This module builds the model and nothing else: no I/O, no solve (:mod:`procure.program.solve.program`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pyomo.environ as pyo

from ...errors import invalid
from ..numbers.bounds import CurveArrays, check_lots, curve_arrays, source_arrays
from ..numbers.infrastructure import Infrastructure
from ..numbers.periods import PeriodProblem
from ..numbers.problem import Mode, Problem
from ..numbers.scenarios import ScenarioProblem, one_scenario
from ..paths import eligible, qualifies
from . import array_rows, infra_rows, scenario_rows
from .forms import DEFAULT_HILL_POINTS, add_curve_forms, cut_points
from .integer_rows import add_integer_terms, add_integer_value_rows
from .period_rows import add_budget_rows, add_capacity_rows, add_mix_rows, add_purchases, period_curve_arrays

#: What the model is built from: one problem, scenarios of it, periods of it, or its
#: infrastructure's purchase options.
Formulation = ScenarioProblem | PeriodProblem | Infrastructure


@dataclass
class BuiltModel:
    """A built model and where its parts are.

    Attributes
    ----------
    model : pyomo.environ.ConcreteModel
        The model (components listed in :func:`build`): the program that is solved.
    formulation : ScenarioProblem
        What it was built from (one scenario for the deterministic program).
    sources : CurveArrays
        The per-source numbers (bounds of the hours bought now).
    arrays : CurveArrays
        The per-curve numbers, scenario-major.
    bounds_budget : float
        The budget the bounds were built for [$]: the bounds of budget-bounded sources hold
        for any budget up to it.
    arguments : list
        Per curve, the variable whose hours its value is read at (``x[s]`` or ``w[j]``).
    capacity_names : list of str
        Capacities that have a row (finite and used by some source).
    hill_breakpoints : dict of int to numpy.ndarray
        The breakpoints of each hill curve, in its hours [h].
    budget_dependent : bool
        Some bound of the model holds only up to ``bounds_budget`` (the purchase options' hours).
    at : procure.program.model.array_rows.Arguments
        Where each curve's value is read (``w[j]`` or ``x[s]``), by position.
    cut_keys : set
        The identity of every tangent cut in ``model.cuts`` (see :func:`procure.program.model.forms.add_cuts`),
        kept beside the cut blocks by the one function that adds both.
    """

    model: pyo.ConcreteModel
    formulation: Formulation
    sources: CurveArrays
    arrays: CurveArrays
    bounds_budget: float
    arguments: list[Any]
    capacity_names: list[str]
    at: array_rows.Arguments
    budget_dependent: bool = False
    hill_breakpoints: dict[int, np.ndarray] = field(default_factory=dict)
    cut_keys: set[tuple[int, float]] = field(default_factory=set)

    def true_objective(self, values: np.ndarray) -> float:
        """The objective at the true value of each curve [own-hour equivalents]."""
        sp = self.formulation
        return sp.objective(np.asarray(values, dtype=float).reshape(sp.count, sp.n).sum(axis=1))

    @property
    def room(self) -> np.ndarray:
        """Most hours availability and capacities allow of each source [h]."""
        return self.sources.room

    @property
    def budget_bounds(self) -> bool:
        """True where some source's or curve's bound is what the budget buys: the model then
        holds for budgets up to :attr:`bounds_budget` only."""
        return bool(self.sources.budget_bounded.any() or self.arrays.budget_bounded.any())

    @property
    def hill_budget_ranges(self) -> np.ndarray:
        """The S-shaped curves whose breakpoints are placed over what the budget buys [bool]: at
        another budget its row could stop one on a breakpoint, where the form's fixed integers
        would share the budget's price, so the model is rebuilt with theirs placed anew."""
        return self.arrays.budget_bounded & ~self.arrays.concave

    def own_breakpoints(self) -> dict[int, np.ndarray]:
        """The S-shaped curves' breakpoints that hold at any budget (not :attr:`hill_budget_ranges`)."""
        ranged = self.hill_budget_ranges
        return {i: xs for i, xs in self.hill_breakpoints.items() if not ranged[i]}

    def cuts(self) -> list[tuple[int, float]]:
        """Every tangent point in the model, as (curve, effective hours)."""
        curves, points = cut_points(self.model)
        return list(zip(curves.tolist(), points.tolist(), strict=True))

    @property
    def cut_count(self) -> int:
        """Tangent cuts in the model."""
        return sum(len(self.model.cuts[r].rows) for r in self.model.cuts)

    @property
    def has_integers(self) -> bool:
        """True when the model has binary or integer variables (a MIP)."""
        m = self.model
        return bool(len(m.B) or len(m.L) or len(m.H))


def build(
    formulation: Problem | Formulation,
    *,
    hill_points: int = DEFAULT_HILL_POINTS,
    hill_breakpoints: Mapping[int, np.ndarray] | None = None,
    cuts: Sequence[tuple[int, float]] = (),
    fixed_hours: np.ndarray | None = None,
    dual_guide: bool = True,
    deadline: float = math.inf,
    narrowed: np.ndarray | None = None,
) -> BuiltModel:
    """Build the model of a problem (one scenario) or a scenario problem, in budget mode.

    Components: sets ``S`` (sources), ``K`` (scenarios), ``J`` (curves); ``x[s]`` hours bought
    now, ``z[j]`` value credited, ``w[j]`` and ``ahead[j]`` where a curve has hours of its own;
    ``cost[s]``, ``later[ω, s]`` (with recourse) and ``budget`` (mutable parameters);
    ``budget_row[k]`` (one, or one per scenario with recourse), ``capacity[r, k]``,
    ``mix[g, ω]``; ``eta``, ``tail[ω]``, ``tail_row[ω]`` (CVaR); ``buy``/``lots`` and their
    rows (integer terms), ``lot_value[j]`` and ``buy_value[j]`` over ``Jl`` and ``Jb`` (a curve
    vertical at 0 bounded on them, :func:`add_integer_value_rows`); ``cuts[r].rows`` (the
    tangent cuts, a block a round); ``hill``
    (piecewise forms of S-shaped curves); ``objective``.

    Over periods (a :class:`procure.program.numbers.periods.PeriodProblem`), ``K`` are the
    (scenario, period) runs and the model adds ``T``, ``W``, ``y[ω, t, s]`` and the rows tying
    ``x[s]`` to them (``total[s]``, or with scenarios ``first[ω, s]`` and ``most[ω, s]``); its
    money, capacity and mix rows are per run (:mod:`procure.program.model.period_rows`).

    Parameters
    ----------
    formulation : Problem, ScenarioProblem, PeriodProblem or Infrastructure
        In budget mode; a :class:`Problem` is the one-scenario formulation.
    hill_points : int, default 17
        Breakpoints of the first piecewise form of each S-shaped hill curve, evenly spaced.
    hill_breakpoints : mapping of int to numpy.ndarray, optional
        Breakpoints by curve, in hours [h], instead (those a rebuilt model keeps from the one
        it replaces); where they stop short of the curve's range, evenly spaced ones continue them.
    cuts : sequence of (int, float)
        Tangent points to start with besides the first ones, as (curve, effective hours): the
        cuts a rebuilt model keeps from the model it replaces.
    fixed_hours : numpy.ndarray, optional
        Hours bought now of each source, fixed (the bounds of ``x``): the model then only
        chooses what each scenario adds later.
    dual_guide : bool, default True
        Leave the first cuts to the dual where it qualifies (:mod:`procure.program.dual`: one
        scenario of concave curves, no integer terms): the refinement gives every curve a cut at
        the optimum before the first solve. False starts from the spread of first cuts.
    deadline : float, default inf
        When the build must stop (:func:`time.perf_counter`) [s]: the large families of rows
        (per scenario, per period) look at the clock as they are built.
    narrowed : numpy.ndarray, optional
        Per source, a bound on its hours bought that a proof gives (one scenario; see
        :mod:`procure.program.solve.hill_range`) [h]: the model's bound is the lesser of it and
        the source's own.

    Raises
    ------
    InputError
        If the problem is not in budget mode.
    """
    sp = formulation if isinstance(formulation, Formulation) else one_scenario(formulation)
    problem = sp.base
    if problem.mode is not Mode.BUDGET:
        raise invalid("mode", str(problem.mode), "the model is built in budget mode; target mode solves it at budgets")
    a = source_arrays(problem)
    if narrowed is not None:
        tighter = np.asarray(narrowed, dtype=float) < a.upper
        a = replace(a, upper=np.where(tighter, narrowed, a.upper), bound=np.where(tighter, narrowed, a.bound),
                    budget_bounded=a.budget_bounded & ~tighter)  # fmt: skip
    periods = sp if isinstance(sp, PeriodProblem) else None
    if isinstance(sp, PeriodProblem):
        c = period_curve_arrays(sp, a)
    else:
        c = a if isinstance(sp, Infrastructure) else curve_arrays(sp, a)
    n, count = sp.n, sp.count
    recourse = sp.recourse_price_x is not None
    m = pyo.ConcreteModel(name="procure")
    array_rows.start(m)
    m.S = pyo.Set(initialize=range(n), ordered=True)
    m.K = pyo.Set(initialize=range(count), ordered=True)
    m.J = pyo.Set(initialize=range(n * count), ordered=True)
    lower, upper = np.zeros(n), np.asarray(a.bound, dtype=float)
    if fixed_hours is not None:
        lower = upper = np.asarray(fixed_hours, dtype=float)
    array_rows.variable(m, "x", m.S, lower, upper)
    array_rows.variable(m, "z", m.J, np.full(n * count, -np.inf), np.full(n * count, np.inf))
    # the costs are the problem's, finite and ≥ 0 (checked where it was priced): Pyomo's domain
    # check per item is left out (within=Any, stored unchecked)
    m.cost = pyo.Param(m.S, mutable=True, within=pyo.Any, initialize=0.0)
    m.cost.store_values(dict(enumerate(problem.cost.tolist())), check=False)
    m.budget = pyo.Param(mutable=True, initialize=float(problem.budget or 0.0))
    check_lots(problem, a, float(problem.budget or 0.0))
    add_integer_terms(m, a, problem.column("min_order_hours"))

    # Where a curve's hours are not x itself: every curve with recourse or over periods; the
    # hill curves of a several-scenario program (a piecewise form is indexed by its curve).
    every = periods is not None or recourse
    own = [] if count == 1 and not every else [j for j in range(n * count) if every or not c.concave[j]]
    m.Jw = pyo.Set(initialize=own, ordered=True)
    array_rows.variable(m, "w", m.Jw, np.zeros(len(own)), np.asarray(c.bound, dtype=float)[own])
    at = array_rows.Arguments(n, np.asarray(own, dtype=np.int64), n * count)
    arguments = at.variables(m)
    fees = problem.column("fixed_fee_usd")[np.asarray(list(m.B), dtype=np.int64)].astype(float)  # in B's order
    if periods is not None:
        add_purchases(m, periods, a, deadline)
        add_budget_rows(m, periods, fees, deadline)
        capacity_names = add_capacity_rows(m, periods, a.held, deadline)
        add_mix_rows(m, periods, a.held, at, deadline)
    elif isinstance(sp, Infrastructure):
        infra_rows.add_options(m, sp, a)
        infra_rows.add_budget_row(m, sp, fees)
        capacity_names = infra_rows.add_capacity_rows(m, sp)
        scenario_rows.mix_rows(m, sp, scenario_rows.coupling(sp, problem), at)
    else:
        assert isinstance(sp, ScenarioProblem)
        rows = scenario_rows.coupling(sp, problem)
        scenario_rows.ahead_rows(m, sp, deadline)
        scenario_rows.budget_rows(m, sp, fees, at, deadline)
        capacity_names = scenario_rows.capacity_rows(m, sp, rows, at, deadline)
        scenario_rows.mix_rows(m, sp, rows, at, deadline)
    add_integer_value_rows(m, c, arguments, n)
    _objective(m, sp)

    built = BuiltModel(
        model=m,
        formulation=sp,
        sources=a,
        arrays=c,
        bounds_budget=float(problem.budget or 0.0),
        arguments=arguments,
        capacity_names=capacity_names,
        at=at,
        budget_dependent=isinstance(sp, Infrastructure),
    )
    guided = (
        dual_guide and fixed_hours is None and periods is None and (eligible(a) if sp.certain else qualifies(sp, a))  # type: ignore[arg-type]
    )
    add_curve_forms(built, cuts, hill_points, hill_breakpoints, m.w if own else m.x, first_cuts=not guided)
    return built


def _objective(m: pyo.ConcreteModel, sp: Formulation) -> None:
    """``objective``: (1 − W) Σ_ω π_ω Σ_s z_sω + W (η − Σ_ω π_ω u_ω / A), with the CVaR rows;
    over periods, Σ_t w_t Σ_s z_st."""
    n = sp.n
    curves = np.arange(len(m.z))
    if isinstance(sp, Infrastructure):
        terms = [array_rows.Terms("z", curves, np.ones(len(curves)))]
    elif isinstance(sp, PeriodProblem):
        terms = [array_rows.Terms("z", curves, np.repeat(np.asarray(sp.block_weight, dtype=float), n))]
    else:
        weight, alpha, prob = sp.risk_weight, sp.risk_alpha, sp.probability
        terms = [array_rows.Terms("z", curves, np.repeat((1 - weight) * np.asarray(prob, dtype=float), n))]
        if weight > 0:
            m.eta = pyo.Var()
            m.tail = pyo.Var(m.K, domain=pyo.NonNegativeReals)

            def tail_rule(_m: pyo.ConcreteModel, k: int) -> object:
                zs = [_m.z[k * n + i] for i in range(n)]
                return array_rows.sum_of([1.0, -1.0] + [1.0] * n, [_m.tail[k], _m.eta, *zs]) >= 0

            m.tail_row = pyo.Constraint(m.K, rule=tail_rule)
            terms += [
                array_rows.Terms("eta", np.zeros(1, dtype=np.int64), np.array([weight], dtype=float)),
                array_rows.Terms("tail", np.arange(len(m.K)), -weight * np.asarray(prob, dtype=float) / alpha),
            ]
    m.objective = pyo.Objective(expr=array_rows.linear(m, terms), sense=pyo.maximize)


def build_model(problem: Problem, *, hill_points: int = DEFAULT_HILL_POINTS) -> pyo.ConcreteModel:
    """The Pyomo ``ConcreteModel`` of a problem (see :func:`build` for its components)."""
    return build(problem, hill_points=hill_points).model
