"""The procurement program: a Pyomo model, solved by HiGHS, refined until certified.

maximise  Σ_s v_s(e_s),  e_s = a_s (h0_s + x_s),  a_s = ρ_s σ_s φ_s
subject to
    budget        Σ_s (p_s + t_s) x_s + Σ_s fee_s y_s ≤ B
    capacity r    Σ_s u_rs (h0_s + x_s) ≤ C_r     (accelerator-h, core-h, GB)
    mix bound     Σ_{s∈G} e_s ≤ share · Σ_s e_s
    0 ≤ x_s ≤ available_s;  x_s = lot_s n_s;  min_s y_s ≤ x_s ≤ ub_s y_s  (MIP terms)

or, in target mode, the least ``Σ (p + t) x + Σ fee y`` with ``Σ v_s(e_s) ≥ V``.

The formulation, and why (measured on 2 cores; ``benchmarks/solve_scaling.py``):

* Concave curves enter through tangent cuts on an epigraph variable, ``z_s ≤ v(ê) + v'(ê)(e_s − ê)``:
  an outer approximation, so the LP optimum bounds the true optimum from above, and the
  true value of the LP's plan bounds it from below. Cuts are placed adaptively: a few per
  source to start, then one at each source's plan point while the two bounds differ by more
  than the tolerance (Kelley's cutting planes, one-dimensional per source). A fixed grid of
  16 cuts per source is 16 rows a source to build and hand over; the adaptive form is about
  a fifth of that (3.2 rows a source at 10,000 sources) and ends at the same certified optimum.
* The model goes to HiGHS through Pyomo's persistent HiGHS interface
  (``pyomo.contrib.solver``): the cuts of each round are added to the solver's model, not
  rebuilt, and a changed mutable parameter (costs, budget) keeps the basis.
* Hill curves with ``s > 1`` are S-shaped: they enter as a piecewise-linear interpolation with
  incremental binaries (Pyomo ``Piecewise``, ``INC``), solved globally by HiGHS's branch and
  bound; the upper bound adds the interpolation's largest shortfall, and the breakpoints
  double until the gap is within tolerance.
* Duals: the budget row's dual is λ; each capacity row's is its shadow price. With integer
  variables, they are read from the LP with the integers fixed at the plan.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import pyomo.environ as pyo
from pyomo.contrib.solver.common.factory import SolverFactory
from pyomo.contrib.solver.common.results import TerminationCondition
from pyomo.core.expr.numeric_expr import LinearExpression

from . import value as vc
from .errors import SolveError, invalid
from .plan import Plan
from .problem import CAPACITIES, Problem

#: Default relative gap between the plan's upper bound and its true value [1].
DEFAULT_TOLERANCE = 1e-4
#: Absolute gap that counts as closed whatever the relative one [own-hour equivalents]: ten
#: times HiGHS's primal feasibility tolerance (1e-7), below which the LP cannot tell plans apart.
VALUE_ABS_TOLERANCE = 1e-6
#: Default wall-time limit of one solve [s].
DEFAULT_TIME_LIMIT = 120.0
#: Breakpoints of the first piecewise form of a hill curve with s > 1.
DEFAULT_HILL_POINTS = 17
#: Most refinement rounds before giving up.
MAX_ROUNDS = 100
#: First tangent points, in units of the curve's saturation scale k.
INITIAL_CUT_POINTS = (0.0, 0.3, 1.0, 3.0)
#: Smallest tangent point of a hill curve, in units of its scale k: a hill curve with s < 1 is
#: vertical at 0, so its first tangent touches at 1e-6 k instead [1].
SMALLEST_TANGENT_POINT = 1e-6
#: A source gets a new cut when the LP credits it with more than this share of the plan's
#: value above its curve [1].
CUT_THRESHOLD = 1e-9
#: Relative slack under which a capacity or mix row counts as binding, and the share of its
#: room within which a source counts as at zero or at its cap [1].
BINDING_TOLERANCE = 1e-7


@dataclass
class _State:
    """Numbers the solve loop derives from a problem, one array per source."""

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


def _state(problem: Problem) -> _State:
    s = problem.sources
    if problem.n == 0:
        raise SolveError("the ledger has no sources: nothing to buy")
    cost = problem.cost
    held = s["held_hours"].to_numpy(float)
    upper = s["available_hours"].to_numpy(float).copy()
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
    shape = s["curve_shape"].to_numpy(float)
    curve = s["curve"].to_numpy(str)
    concave = np.asarray(vc.is_concave(curve, shape), dtype=bool)
    budget_bounded = np.zeros(problem.n, dtype=bool)
    if problem.budget is not None:
        # The budget bounds a source in the model only where nothing else does, or where a hill
        # curve's breakpoints need a tight range: the model then stays valid for other budgets
        # and costs (Program.set_budget, Program.set_costs).
        with np.errstate(divide="ignore", invalid="ignore"):
            afford = np.where(cost > 0, problem.budget / cost, np.inf)
        budget_bounded = (~np.isfinite(room) | ~concave) & (afford < room)
        upper = np.where(budget_bounded, afford, room)
    if ((curve == "hill") & ~(shape > 0)).any():
        bad = s.loc[(curve == "hill") & ~(shape > 0), "source"].iloc[0]
        raise invalid(f"curve_shape of {bad!r}", float(s.loc[s["source"] == bad, "curve_shape"].iloc[0]),
                      "a hill curve needs a shape > 0")  # fmt: skip
    free = ~np.isfinite(upper)
    if problem.budget is not None and free.any():
        names = ", ".join(s.loc[free, "source"])
        raise SolveError(
            f"unbounded: {names} costs nothing, is unlimited and uses no limited capacity, so its value "
            "has no ceiling: give it available_hours, a price or a capacity it uses"
        )
    lots = s["lot_hours"].to_numpy(float)
    binary = ((s["min_order_hours"] > 0) | (s["fixed_fee_usd"] > 0)).to_numpy() & (upper > 0)
    if ((binary | (lots > 0) | ~concave) & ~np.isfinite(upper)).any():
        bad = s.loc[(binary | (lots > 0) | ~concave) & ~np.isfinite(upper), "source"].iloc[0]
        raise SolveError(
            f"{bad!r} is unlimited, which its lots, minimum order, fee or hill curve cannot be modelled with in "
            "target mode: give it available_hours"
        )
    return _State(cost, s["rate"].to_numpy(float), held, room, upper, budget_bounded, curve,
                  s["saturation_hours"].to_numpy(float), shape, concave, binary, lots)  # fmt: skip


def _initial_points(st: _State, i: int) -> list[float]:
    """Effective hours at which the first tangents of source ``i`` touch its curve."""
    lo = st.rate[i] * st.held[i]
    hi = st.rate[i] * (st.held[i] + st.upper[i])
    if st.curve[i] == "linear" or st.rate[i] == 0:
        return [lo]
    pts = {lo} | {min(max(f * st.k[i], lo), hi) for f in INITIAL_CUT_POINTS}
    if math.isfinite(hi):
        pts.add(hi)
    return sorted(p for p in pts if math.isfinite(p))


def _hill_points(st: _State, i: int, count: int) -> list[float]:
    return list(np.linspace(0.0, st.upper[i], count))


def build_model(problem: Problem, *, hill_points: int = DEFAULT_HILL_POINTS) -> pyo.ConcreteModel:
    """The Pyomo model of a problem (no I/O): variables, named constraints, first cuts.

    Components: ``x[s]`` hours bought, ``z[s]`` value credited, ``cost[s]`` and ``budget``
    (mutable parameters), ``budget_row``, ``capacity[r]``, ``mix[g]``, ``cuts`` (a
    ``ConstraintList`` of tangent cuts), ``buy[s]``/``lots[s]`` and their rows (MIP terms),
    ``hill[s]`` (piecewise forms of S-shaped curves), and the objective ``objective``.
    """
    st = _state(problem)
    n = problem.n
    s = problem.sources
    m = pyo.ConcreteModel(name="procure")
    m.S = pyo.Set(initialize=range(n), ordered=True)
    ub = [float(u) if math.isfinite(u) else None for u in st.upper]
    m.x = pyo.Var(m.S, bounds=lambda _m, i: (0.0, ub[i]), initialize=0.0)
    m.z = pyo.Var(m.S)
    m.cost = pyo.Param(m.S, mutable=True, initialize=lambda _m, i: float(st.cost[i]))
    budget_mode = problem.budget is not None
    m.budget = pyo.Param(mutable=True, initialize=float(problem.budget if budget_mode else 0.0))
    m.target = pyo.Param(mutable=True, initialize=float(problem.target if not budget_mode else 0.0))

    fee = s["fixed_fee_usd"].to_numpy(float)
    min_order = s["min_order_hours"].to_numpy(float)
    m.B = pyo.Set(initialize=[i for i in range(n) if st.binary[i]], ordered=True)
    m.buy = pyo.Var(m.B, domain=pyo.Binary)

    def buy_upper_rule(_m: pyo.ConcreteModel, i: int) -> object:
        """Nothing of source i unless it is bought: x_i ≤ ub_i · buy_i."""
        return _m.x[i] <= float(st.upper[i]) * _m.buy[i]

    def buy_lower_rule(_m: pyo.ConcreteModel, i: int) -> object:
        """If source i is bought, at least its minimum order: x_i ≥ min_i · buy_i."""
        return _m.x[i] >= float(min_order[i]) * _m.buy[i]

    def lot_rule(_m: pyo.ConcreteModel, i: int) -> object:
        """Source i in whole lots: x_i = lot_i · n_i."""
        return _m.x[i] == float(st.lots[i]) * _m.lots[i]

    m.buy_upper = pyo.Constraint(m.B, rule=buy_upper_rule)
    m.buy_lower = pyo.Constraint(m.B, rule=buy_lower_rule)
    m.L = pyo.Set(initialize=[i for i in range(n) if st.lots[i] > 0], ordered=True)
    # floor(ub / lot) lots at most; the 1e-9 keeps an exact multiple from rounding down.
    m.lots = pyo.Var(m.L, domain=pyo.NonNegativeIntegers,
                     bounds=lambda _m, i: (0, math.floor(st.upper[i] / st.lots[i] + 1e-9)))  # fmt: skip
    m.lot_row = pyo.Constraint(m.L, rule=lot_rule)

    spend = sum(m.cost[i] * m.x[i] for i in m.S) + sum(float(fee[i]) * m.buy[i] for i in m.B)
    if budget_mode:
        m.budget_row = pyo.Constraint(expr=spend <= m.budget)

    rows = []
    for name, limit in problem.capacity.items():
        use = problem.usage(name)
        if math.isfinite(limit) and (use > 0).any():
            rows.append(name)
    m.R = pyo.Set(initialize=rows, ordered=True)

    def capacity_rule(_m: pyo.ConcreteModel, r: str) -> object:
        """Capacity r over the window, held hours counted: Σ u_rs x_s ≤ C_r − Σ u_rs h0_s."""
        use = problem.usage(r)
        nz = np.flatnonzero(use)
        room = float(problem.capacity[r] - use @ st.held)
        coefs, xs = [float(use[i]) for i in nz], [_m.x[i] for i in nz]
        return LinearExpression(constant=0.0, linear_coefs=coefs, linear_vars=xs) <= room

    m.capacity = pyo.Constraint(m.R, rule=capacity_rule)

    groups = list(problem.max_share)
    m.G = pyo.Set(initialize=range(len(groups)), ordered=True)

    def mix_rule(_m: pyo.ConcreteModel, g: int) -> object:
        """Mix bound g: Σ_{s∈G} e_s ≤ share · Σ_s e_s, as a row in x."""
        key = groups[g]
        share = problem.max_share[key]
        member = ((s["source"] == key) | (s["kind"] == key)).to_numpy()
        coef = st.rate * (member.astype(float) - share)
        return sum(float(coef[i]) * _m.x[i] for i in range(n) if coef[i] != 0) <= float(-(coef @ st.held))

    m.mix = pyo.Constraint(m.G, rule=mix_rule)

    m.cuts = pyo.ConstraintList()
    hill = [i for i in range(n) if not st.concave[i]]
    first = [(i, p) for i in range(n) if st.concave[i] for p in _initial_points(st, i)]
    _add_cuts(m, st, np.array([i for i, _ in first], dtype=np.int64), np.array([p for _, p in first]))
    m.H = pyo.Set(initialize=hill, ordered=True)
    if hill:
        pts = {i: _hill_points(st, i, hill_points) for i in hill}
        m.hill = pyo.Piecewise(
            m.H, m.z, m.x, pw_pts=pts, pw_constr_type="UB", pw_repn="INC", warning_tol=-1.0,
            f_rule=lambda _m, i, x: float(vc.value(st.rate[i] * (st.held[i] + x), st.curve[i], st.k[i], st.shape[i])),
        )  # fmt: skip
    if budget_mode:
        m.objective = pyo.Objective(expr=sum(m.z[i] for i in m.S), sense=pyo.maximize)
    else:
        m.reach = pyo.Constraint(expr=sum(m.z[i] for i in m.S) >= m.target)
        m.objective = pyo.Objective(expr=spend, sense=pyo.minimize)
    m._procure_state = st
    m._procure_hill_points = hill_points
    m._procure_hill_breakpoints = {i: np.asarray(pts[i]) for i in hill} if hill else {}
    return m


def _add_cuts(m: pyo.ConcreteModel, st: _State, sources: np.ndarray, points: np.ndarray) -> list:
    """Tangents of sources ``sources`` at effective hours ``points`` (tangents computed at once):
    ``z_i − slope·a_i·x_i ≤ slope·a_i·h0_i + intercept``."""
    if len(sources) == 0:
        return []
    sources = np.asarray(sources, dtype=np.int64)
    # A curve that is vertical at 0 (hill with s < 1) takes its tangent a little to the right.
    points = np.maximum(
        np.asarray(points, dtype=float),
        np.where(st.curve[sources] == "hill", SMALLEST_TANGENT_POINT * st.k[sources], 0.0),
    )
    slope, intercept = vc.tangent(points, st.curve[sources], st.k[sources], st.shape[sources])
    coef = (-np.asarray(slope) * st.rate[sources]).tolist()
    rhs = (np.asarray(slope) * st.rate[sources] * st.held[sources] + intercept).tolist()
    add, z, x = m.cuts.add, m.z, m.x
    return [
        add(LinearExpression(constant=0.0, linear_coefs=[1.0, c], linear_vars=[z[i], x[i]]) <= r)
        for i, c, r in zip(sources.tolist(), coef, rhs, strict=True)
    ]


def _hill_error(m: pyo.ConcreteModel, st: _State) -> float:
    """Largest amount by which the hill curves exceed their interpolation, summed [value]."""
    total = 0.0
    for i in m.H:
        xs = m._procure_hill_breakpoints[i]
        fine = np.linspace(xs[:-1], xs[1:], 65, axis=1)  # 65 samples in each segment
        v = vc.value(st.rate[i] * (st.held[i] + fine), st.curve[i], st.k[i], st.shape[i])
        ends = vc.value(st.rate[i] * (st.held[i] + xs), st.curve[i], st.k[i], st.shape[i])
        w = (fine - xs[:-1, None]) / np.where(np.diff(xs) > 0, np.diff(xs), 1.0)[:, None]
        chord = ends[:-1, None] * (1 - w) + ends[1:, None] * w
        total += float(max(0.0, np.max(v - chord)))
    return total


def _persistent_highs() -> object:
    """Pyomo's persistent HiGHS, told what changes between solves instead of rescanning.

    Between solves only mutable parameters change (costs, budget) and cuts are added, which
    :meth:`Program.solve` hands over itself; rescanning 10,000 sources' rows for changes took
    about a tenth of a second a round.
    """
    opt = SolverFactory("highs")
    au = opt.config.auto_updates
    au.check_for_new_or_removed_constraints = False
    au.check_for_new_or_removed_vars = False
    au.check_for_new_or_removed_params = False
    au.check_for_new_objective = False
    au.update_constraints = False
    au.update_vars = False
    au.update_named_expressions = False
    au.update_objective = False
    au.update_parameters = True
    return opt


class Program:
    """A built model and its persistent solver, re-solvable after a change of costs or budget.

    Parameters
    ----------
    problem : Problem
        What to allocate.
    tolerance : float, default 1e-4
        Relative gap between the upper bound and the plan's true value to stop at.
    time_limit : float, default 120
        Wall-time limit for all the solves of one :meth:`solve` [s].
    hill_points : int, default 17
        Breakpoints of the first piecewise form of an S-shaped hill curve.
    """

    def __init__(
        self,
        problem: Problem,
        *,
        tolerance: float = DEFAULT_TOLERANCE,
        time_limit: float = DEFAULT_TIME_LIMIT,
        hill_points: int = DEFAULT_HILL_POINTS,
    ) -> None:
        if not (0 < tolerance < 1):
            raise invalid("tolerance", tolerance, "must be a number > 0 and < 1")
        if not (time_limit > 0):
            raise invalid("time_limit", time_limit, "must be a number > 0 [s]")
        self.problem = problem
        self.tolerance = tolerance
        self.time_limit = time_limit
        self._build(hill_points)

    def _build(self, hill_points: int) -> None:
        """Build the model of ``self.problem`` and a fresh persistent solver for it."""
        t0 = time.perf_counter()
        self.model = build_model(self.problem, hill_points=hill_points)
        self.build_seconds = time.perf_counter() - t0
        self.solver = _persistent_highs()
        self._has_integers = bool(len(self.model.B) or len(self.model.L) or len(self.model.H))

    # ------------------------------------------------------------------ changes between solves

    def set_costs(self, cost: np.ndarray) -> None:
        """New all-in prices per hour [$/h], in source order; the cuts stay valid.

        Changes mutable parameters of the built model (the persistent solver keeps its
        basis); rebuilds only where a source's bound came from the budget and would loosen.
        """
        cost = np.asarray(cost, dtype=float)
        if cost.shape != (self.problem.n,) or not np.all(np.isfinite(cost) & (cost >= 0)):
            raise invalid("cost", cost, f"must be {self.problem.n} numbers ≥ 0 [$/h], one per source")
        st: _State = self.model._procure_state
        self.problem = self._with_cost(cost)
        if np.any(st.budget_bounded & (cost < st.cost)):
            self._rebuild()
            return
        for data, c in zip(self.model.cost.values(), cost.tolist(), strict=True):
            data.set_value(c)
        st.cost = cost

    def set_budget(self, budget: float) -> None:
        """A new budget [$] for the built model (budget mode)."""
        if self.problem.budget is None:
            raise invalid("budget", budget, "this program is in target mode")
        if not (math.isfinite(budget) and budget >= 0):
            raise invalid("budget", budget, "must be a number ≥ 0 [$]")
        st: _State = self.model._procure_state
        old = self.problem.budget
        self.problem = replace(self.problem, budget=float(budget))
        if np.any(st.budget_bounded) and budget > old:
            self._rebuild()
            return
        self.model.budget = float(budget)

    def _rebuild(self) -> None:
        self._build(self.model._procure_hill_points)

    # ------------------------------------------------------------------ solving

    def _solve_once(self, model: pyo.ConcreteModel, deadline: float, solver: object | None = None) -> object:
        left = deadline - time.perf_counter()
        if left <= 0:
            raise SolveError(f"out of time: the time limit of {self.time_limit:g} s was reached while refining")
        opt = solver or self.solver
        res = opt.solve(
            model,
            load_solutions=False,
            raise_exception_on_nonoptimal_result=False,
            time_limit=left,
            rel_gap=self.tolerance / 10,
        )
        tc = res.termination_condition
        if tc == TerminationCondition.convergenceCriteriaSatisfied:
            return res
        if tc == TerminationCondition.maxTimeLimit:
            raise SolveError(f"out of time: HiGHS reached the time limit of {self.time_limit:g} s")
        if tc in (TerminationCondition.provenInfeasible, TerminationCondition.infeasibleOrUnbounded):
            raise SolveError(self._infeasible_message())
        if tc == TerminationCondition.unbounded:
            raise SolveError("unbounded: the value has no ceiling (a free, unlimited source?)")
        raise SolveError(f"HiGHS stopped without a solution: {tc.name}")

    def _infeasible_message(self) -> str:
        p = self.problem
        if p.target is not None:
            return (
                f"infeasible: target = {p.target:,.4g} is out of reach: the sources' availability, the "
                "capacities and the mix bounds cap the value below it (solve with a large --budget to see the most)"
            )
        if p.max_share:
            return "infeasible: the mix bounds cannot be met with the hours held: relax --max-share"
        return "infeasible: no plan meets the budget and the capacities"

    def solve(self) -> Plan:
        """Solve, refine until certified, and read the duals.

        Raises
        ------
        SolveError
            Infeasible, unbounded, out of time, or not certified within ``MAX_ROUNDS``.
        """
        m = self.model
        st: _State = m._procure_state
        p = self.problem
        budget_mode = p.budget is not None
        t0 = time.perf_counter()
        deadline = t0 + self.time_limit
        if budget_mode:
            self._check_minimum_orders(st)
        rounds = 0
        while True:
            rounds += 1
            res = self._solve_once(m, deadline)
            xs, zs = list(m.x.values()), list(m.z.values())
            if self._has_integers:
                res.solution_loader.load_vars()  # the duals fix the integers at their values
            found = res.solution_loader.get_vars(xs + zs)
            x = np.array([found[v] or 0.0 for v in xs])
            x = np.clip(x, 0.0, st.upper)
            z = np.array([found[v] or 0.0 for v in zs])
            e = st.rate * (st.held + x)
            v = np.asarray(vc.value(e, st.curve, st.k, st.shape), dtype=float)
            true_value = float(v.sum())
            hill_err = _hill_error(m, st) if len(m.H) else 0.0
            if budget_mode:
                bound = res.objective_bound if res.objective_bound is not None else res.incumbent_objective
                upper = float(bound) + hill_err
                gap = max(0.0, upper - true_value) / max(abs(upper), 1e-12)
                done = gap <= self.tolerance or upper - true_value <= VALUE_ABS_TOLERANCE
            else:
                upper = float(z.sum())
                gap = max(0.0, (p.target - true_value) / p.target)
                done = true_value >= p.target * (1 - self.tolerance) or p.target - true_value <= VALUE_ABS_TOLERANCE
            if done:
                break
            if rounds >= MAX_ROUNDS:
                raise SolveError(
                    f"not certified: after {rounds} rounds the gap is {gap:.2e}, above the tolerance "
                    f"{self.tolerance:.0e}: raise --tolerance"
                )
            over = np.flatnonzero(((z - v) > CUT_THRESHOLD * max(1.0, abs(upper))) & st.concave)
            new = _add_cuts(m, st, over, e[over])
            if new:
                self.solver.add_constraints(new)
            added = len(over)
            if added == 0 and len(m.H):
                self._refine_hills()
                m = self.model
            elif added == 0:
                raise SolveError(f"not certified: the gap {gap:.2e} does not close; raise --tolerance")
        lam, shadow = self._duals(m, res, x)
        return self._plan(st, x, v, e, true_value, upper, gap, lam, shadow, rounds, time.perf_counter() - t0)

    def _with_cost(self, cost: np.ndarray) -> Problem:
        s = self.problem.sources.copy()
        s["transport_usd_per_hour"] = cost - s["price_usd_per_hour"].to_numpy()
        return replace(self.problem, sources=s)

    def _refine_hills(self) -> None:
        points = 2 * self.model._procure_hill_points - 1
        self._build(points)

    def _check_minimum_orders(self, st: _State) -> None:
        s = self.problem.sources
        budget = float(self.problem.budget)
        least = st.cost * np.maximum(s["min_order_hours"].to_numpy(float), st.lots) + s["fixed_fee_usd"].to_numpy(float)
        least = np.where(st.room > 0, least, np.inf)
        if budget > 0 and (st.room > 0).any() and np.all(least > budget):
            i = int(np.argmin(least))
            raise SolveError(
                f"budget = {budget:,.2f} buys nothing: it is below every source's minimum order (the least is "
                f"{s['source'].iloc[i]!r}: {max(s['min_order_hours'].iloc[i], st.lots[i]):g} h × "
                f"${st.cost[i]:,.2f} + fee ${s['fixed_fee_usd'].iloc[i]:,.2f} = ${least[i]:,.2f})"
            )

    def _duals(self, m: pyo.ConcreteModel, res: object, x: np.ndarray) -> tuple[float, dict[str, float]]:
        """λ and the shadow prices, from the LP (with integers fixed at the plan if any)."""
        rows = [m.budget_row] if hasattr(m, "budget_row") else [m.reach]
        rows += [m.capacity[r] for r in m.R] + [m.mix[g] for g in m.G]
        if self._has_integers:
            fixed = m.clone()
            for var in (fixed.buy, fixed.lots):
                for idx in var:
                    var[idx].fix(round(var[idx].value or 0))
            for i in fixed.H:
                for var in fixed.hill[i].component_data_objects(pyo.Var, descend_into=True):
                    if var.is_integer() or var.is_binary():
                        var.fix(round(var.value or 0))
            pyo.TransformationFactory("core.relax_integer_vars").apply_to(fixed)
            lp = SolverFactory("highs")
            res = self._solve_once(fixed, time.perf_counter() + self.time_limit, solver=lp)
            rows = [fixed.find_component(r) for r in rows]
            m = fixed
        duals = res.solution_loader.get_duals(rows)
        sign = 1.0 if hasattr(m, "budget_row") else -1.0  # a ≥ row in a minimisation
        lam = abs(duals[rows[0]]) if rows[0] in duals else 0.0
        if not hasattr(m, "budget_row"):
            lam = 1.0 / lam if lam > 0 else math.inf  # $ per value → value per $
        shadow = dict.fromkeys(CAPACITIES, 0.0)
        names = [str(r) for r in m.R] + [f"max_share:{k}" for k in self.problem.max_share]
        for name, row in zip(names, rows[1:], strict=True):
            d = sign * duals.get(row, 0.0)
            shadow[name] = abs(d) if abs(d) > 1e-12 else 0.0
        if not hasattr(m, "budget_row") and math.isfinite(lam):
            shadow = {k: v * lam for k, v in shadow.items()}  # $ per unit → value per unit
        return float(lam), shadow

    def _plan(self, st, x, v, e, true_value, upper, gap, lam, shadow, rounds, seconds) -> Plan:
        p = self.problem
        s = p.sources
        fee = s["fixed_fee_usd"].to_numpy(float)
        tol = BINDING_TOLERANCE * np.maximum(1.0, np.where(np.isfinite(st.room), st.room, 1.0))
        position = np.where(x <= tol, "zero", np.where(x >= st.room - tol, "cap", "between"))
        bought = position != "zero"
        purchase = s["price_usd_per_hour"].to_numpy(float) * x + np.where(bought, fee, 0.0)
        transport = s["transport_usd_per_hour"].to_numpy(float) * x
        dv = np.asarray(vc.derivative(e, st.curve, st.k, st.shape), dtype=float) * st.rate
        charge = np.zeros(p.n)
        if lam > 0 and math.isfinite(lam):
            for name, price in shadow.items():
                if name.startswith("max_share:"):
                    key = name.split(":", 1)[1]
                    member = ((s["source"] == key) | (s["kind"] == key)).to_numpy().astype(float)
                    charge += price / lam * st.rate * (member - p.max_share[key])
                else:
                    charge += price / lam * p.usage(name)
        with np.errstate(divide="ignore", invalid="ignore"):
            mv = np.where(st.cost + charge > 0, dv / (st.cost + charge), np.inf)
            mv_price = np.where(st.cost > 0, dv / st.cost, np.inf)
        sources = pd.DataFrame(
            {
                "source": s["source"],
                "kind": s["kind"],
                "hours": x,
                "held_hours": st.held,
                "purchase_usd": purchase,
                "transport_usd": transport,
                "effective_hours": e,
                "value": v,
                "marginal_value_per_usd": mv,
                "marginal_value_per_usd_price_only": mv_price,
                "position": position,
            }
        )

        def row(name: str, unit: str, used: float, limit: float) -> dict[str, object]:
            price = shadow.get(name, 0.0)
            slack = limit - used
            binding = price > 0 or (math.isfinite(limit) and slack <= BINDING_TOLERANCE * max(1.0, limit))
            usd = price / lam if lam > 0 and math.isfinite(lam) else 0.0
            return {"capacity": name, "unit": unit, "used": used, "limit": limit, "slack": slack,
                    "binding": bool(binding), "shadow_price": price, "shadow_usd": usd}  # fmt: skip

        caps = [
            row(name, unit, float(p.usage(name) @ (st.held + x)), p.capacity[name])
            for name, (_col, unit) in CAPACITIES.items()
        ]
        for key, share in p.max_share.items():
            member = ((s["source"] == key) | (s["kind"] == key)).to_numpy()
            caps.append(row(f"max_share:{key}", "effective h", float(e[member].sum()), share * float(e.sum())))
        notes = []
        if p.budget is not None:
            least = st.cost * np.maximum(s["min_order_hours"].to_numpy(float), st.lots) + fee
            for i in np.flatnonzero((least > p.budget) & (least > 0)):
                notes.append(
                    f"{s['source'].iloc[i]} cannot be bought: its minimum order costs ${least[i]:,.2f}, "
                    f"more than the budget"
                )
        for i in np.flatnonzero(st.room <= 0):
            notes.append(f"{s['source'].iloc[i]} cannot be bought: nothing available or no capacity left")
        return Plan(
            mode="budget" if p.budget is not None else "target",
            status="optimal",
            value=true_value,
            value_upper_bound=upper,
            gap=gap,
            tolerance=self.tolerance,
            lambda_=lam,
            shadow_prices=shadow,
            sources=sources,
            capacities=pd.DataFrame(caps),
            budget=float(p.budget) if p.budget is not None else math.nan,
            spent_usd=float(purchase.sum() + transport.sum()),
            purchase_usd=float(purchase.sum()),
            transport_usd=float(transport.sum()),
            target=float(p.target) if p.target is not None else math.nan,
            rounds=rounds,
            cuts=len(self.model.cuts),
            build_seconds=self.build_seconds,
            solve_seconds=seconds,
            notes=notes,
        )


def solve(problem: Problem, **options: object) -> Plan:
    """Build and solve a problem: the plan, certified within ``tolerance`` (see :class:`Program`)."""
    return Program(problem, **options).solve()  # type: ignore[arg-type]
