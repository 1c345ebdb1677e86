"""The Pyomo model of the program under uncertainty (the deterministic equivalent).

maximise  (1 − W) Σ_ω π_ω Σ_s z_sω  +  W (η − Σ_ω π_ω u_ω / A)
subject to
    z_sω ≤ v_sω(w_sω)                through tangent cuts (concave) or a piecewise form above
                                     the curve (S-shaped hill), as in :mod:`procure.program.model`
    u_ω ≥ η − Σ_s z_sω,  u_ω ≥ 0     (CVaR rows, only when W > 0)

without recourse: w_sω = x_s (hours bought now), one budget row and one row per capacity on
x, a mix bound per scenario (the rates differ by scenario);
with recourse (later hours cost M times the scenario's all-in price c'_sω): w_sω ≥ x_s are the
hours each scenario ends with, and per scenario
    budget    Σ_s c_s x_s + Σ_s fee_s buy_s + Σ_s M c'_sω (w_sω − x_s) ≤ B
    capacity  Σ_s u_rs (h0_s + w_sω) ≤ C_r;  mix bounds in w_sω;  w_sω ≤ what availability allows.

Each (scenario, source) pair is one curve, indexed ``j = ω n + s``; the cut and refinement
machinery of :mod:`procure.program.model` works on the curves unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

from ..errors import SolveError
from .model import (
    DEFAULT_HILL_POINTS,
    BuiltModel,
    SourceArrays,
    add_curve_forms,
    add_integer_terms,
    source_arrays,
)
from .scenarios import ScenarioProblem


def curve_arrays(sp: ScenarioProblem, a: SourceArrays) -> SourceArrays:
    """The arrays of every (scenario, source) curve, scenario-major, from the sources' ``a``.

    Raises
    ------
    SolveError
        With recourse, a source whose later hours cost nothing, unlimited: no ceiling.
    """
    count = sp.count

    def tile(v: np.ndarray) -> np.ndarray:
        return np.tile(v, count)

    room = tile(a.room)
    concave = tile(a.concave)
    if sp.recourse_price_x is None:
        upper, bounded = tile(a.upper), tile(a.budget_bounded)
    else:
        later = np.where(tile(sp.later_ok), sp.recourse_price_x * sp.later_cost.ravel(), np.inf)
        cheapest = np.minimum(tile(a.cost), later)
        with np.errstate(divide="ignore", invalid="ignore"):
            afford = np.where(cheapest > 0, float(sp.base.budget or 0.0) / cheapest, np.inf)
        bounded = (~np.isfinite(room) | ~concave) & (afford < room)
        upper = np.where(bounded, afford, room)
        free = ~np.isfinite(upper)
        if free.any():
            j = int(np.flatnonzero(free)[0])
            name = sp.base.sources["source"].iloc[j % sp.n]
            raise SolveError(
                f"unbounded: in scenario {sp.names[j // sp.n]!r}, {name} costs nothing later and is unlimited: give "
                "it available_hours or a price"
            )
    return SourceArrays(
        cost=tile(a.cost),
        rate=sp.rate.ravel().astype(float),
        held=tile(a.held),
        room=room,
        upper=upper,
        budget_bounded=bounded,
        curve=tile(a.curve),
        k=sp.saturation_hours.ravel().astype(float),
        shape=tile(a.shape),
        concave=concave,
        binary=tile(a.binary),
        lots=tile(a.lots),
    )


def _linear(coefs: Sequence[float], variables: Sequence[object]) -> LinearExpression:
    return LinearExpression(constant=0.0, linear_coefs=list(coefs), linear_vars=list(variables))


def build_scenarios(
    sp: ScenarioProblem,
    *,
    hill_points: int = DEFAULT_HILL_POINTS,
    hill_breakpoints: Mapping[int, np.ndarray] | None = None,
    cuts: Sequence[tuple[int, float]] = (),
) -> BuiltModel:
    """Build the model of a scenario problem (see the module), its cuts kept as points for
    the hand-over to HiGHS (:mod:`procure.program.highs`).

    Components: ``x[s]``, ``z[j]``, ``w[j]`` (every curve with recourse; the S-shaped ones
    without), ``ahead[j]``, ``budget_row`` (per scenario with recourse), ``capacity``,
    ``mix[g, ω]``, ``eta``/``tail[ω]``/``tail_row[ω]`` (CVaR), ``hill``, the integer terms of
    :func:`procure.program.model.add_integer_terms`, and ``objective``.
    """
    problem = sp.base
    a = source_arrays(problem)
    c = curve_arrays(sp, a)
    n, count = sp.n, sp.count
    curves = n * count
    recourse = sp.recourse_price_x is not None
    m = pyo.ConcreteModel(name="procure_scenarios")
    m.S = pyo.Set(initialize=range(n), ordered=True)
    ub = [float(u) if math.isfinite(u) else None for u in a.upper]
    m.x = pyo.Var(m.S, bounds=lambda _m, i: (0.0, ub[i]), initialize=0.0)
    m.cost = pyo.Param(m.S, mutable=True, initialize=dict(enumerate(a.cost.tolist())))
    m.budget = pyo.Param(mutable=True, initialize=float(problem.budget or 0.0))
    fee = problem.column("fixed_fee_usd")
    add_integer_terms(m, a, problem.column("min_order_hours"))
    m.K = pyo.Set(initialize=range(count), ordered=True)
    m.J = pyo.Set(initialize=range(curves), ordered=True)
    m.z = pyo.Var(m.J)
    hill = [j for j in range(curves) if not c.concave[j]]
    with_w = list(range(curves)) if recourse else hill
    wub = [float(u) if math.isfinite(u) else None for u in c.upper]
    m.Jw = pyo.Set(initialize=with_w, ordered=True)
    m.w = pyo.Var(m.Jw, bounds=lambda _m, j: (0.0, wub[j]), initialize=0.0)

    later_ok = sp.later_ok

    def ahead_rule(_m: pyo.ConcreteModel, j: int) -> object:
        """A scenario ends with at least the hours bought now; exactly those without recourse
        or for a source bought now only."""
        body = _linear([1.0, -1.0], [_m.w[j], _m.x[j % n]])
        return body >= 0 if recourse and later_ok[j % n] else body == 0

    m.ahead = pyo.Constraint(m.Jw, rule=ahead_rule)
    wset = set(with_w)
    arguments = [m.w[j] if j in wset else m.x[j % n] for j in range(curves)]
    paid = [i for i in range(n) if a.cost[i] > 0]
    fees = ([float(fee[i]) for i in m.B], [m.buy[i] for i in m.B])
    if recourse:
        later = float(sp.recourse_price_x or 1.0) * sp.later_cost

        def budget_rule(_m: pyo.ConcreteModel, k: int) -> object:
            """Scenario k's money: now at today's price, later at M times its own."""
            now = [(float(a.cost[i] - later[k, i]), _m.x[i]) for i in range(n) if a.cost[i] != later[k, i]]
            then = [(float(later[k, i]), _m.w[k * n + i]) for i in range(n) if later[k, i] > 0]
            coefs = [cf for cf, _ in now + then] + fees[0]
            return _linear(coefs, [v for _, v in now + then] + fees[1]) <= _m.budget

        m.budget_row = pyo.Constraint(m.K, rule=budget_rule)
        budget_rows = [m.budget_row[k] for k in m.K]
    else:
        spend = _linear([m.cost[i] for i in paid] + fees[0], [m.x[i] for i in paid] + fees[1])
        m.budget_row = pyo.Constraint(expr=spend <= m.budget)
        budget_rows = [m.budget_row]

    rows = [
        name for name, limit in problem.capacity.items() if math.isfinite(limit) and (problem.usage(name) > 0).any()
    ]
    m.R = pyo.Set(initialize=rows, ordered=True)
    per_scenario = list(m.K) if recourse else [0]
    m.Kc = pyo.Set(initialize=per_scenario, ordered=True)

    def capacity_rule(_m: pyo.ConcreteModel, r: str, k: int) -> object:
        """Capacity r in scenario k (once, on the hours bought now, without recourse)."""
        use = problem.usage(r)
        nz = np.flatnonzero(use).tolist()
        room = float(problem.capacity[r] - use @ a.held)
        variables = [arguments[k * n + i] if recourse else _m.x[i] for i in nz]
        return _linear([float(use[i]) for i in nz], variables) <= room

    m.capacity = pyo.Constraint(m.R, m.Kc, rule=capacity_rule)
    groups = list(problem.max_share)
    m.G = pyo.Set(initialize=range(len(groups)), ordered=True)

    def mix_rule(_m: pyo.ConcreteModel, g: int, k: int) -> object:
        """Mix bound g in scenario k: Σ_{s∈G} e_sω ≤ share · Σ_s e_sω."""
        key = groups[g]
        coef = sp.rate[k] * (problem.members(key).astype(float) - problem.max_share[key])
        nz = np.flatnonzero(coef).tolist()
        return _linear([float(coef[i]) for i in nz], [arguments[k * n + i] for i in nz]) <= float(-(coef @ a.held))

    m.mix = pyo.Constraint(m.G, m.K, rule=mix_rule)

    weight, alpha, prob = sp.risk_weight, sp.risk_alpha, sp.probability
    coefs = [float(c) for c in np.repeat((1 - weight) * prob, n)]
    variables: list[object] = list(m.z.values())
    if weight > 0:
        m.eta = pyo.Var()
        m.tail = pyo.Var(m.K, domain=pyo.NonNegativeReals)

        def tail_rule(_m: pyo.ConcreteModel, k: int) -> object:
            """u_k ≥ η − V_k: how far scenario k falls below η."""
            zs = [_m.z[k * n + i] for i in range(n)]
            return _linear([1.0, -1.0] + [1.0] * n, [_m.tail[k], _m.eta, *zs]) >= 0

        m.tail_row = pyo.Constraint(m.K, rule=tail_rule)
        coefs += [weight, *list(-weight * prob / alpha)]
        variables += [m.eta, *m.tail.values()]
    m.objective = pyo.Objective(expr=_linear(coefs, variables), sense=pyo.maximize)

    built = BuiltModel(
        m,
        c,
        float(problem.budget or 0.0),
        capacity_rows=rows,
        cuts_in_model=False,
        arguments=arguments,
        budget_rows=budget_rows,
        capacity_cons=[[m.capacity[r, k] for k in m.Kc] for r in m.R],
        mix_cons=[[m.mix[g, k] for k in m.K] for g in m.G],
        source_room=a.room,
        plan_upper=a.upper,
        objective_of=lambda v: sp.objective(np.asarray(v, dtype=float).reshape(count, n).sum(axis=1)),
    )
    add_curve_forms(built, cuts, hill_points, hill_breakpoints, m.w)
    return built
