"""The scenario axis of the model: the hours each scenario ends with, its money, capacity and mix rows.

Components of the one model of :func:`procure.program.model.build.build`, each stated by the function
that adds it; the mix rows also serve a model of purchase options (one scenario). No I/O, no solve.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pyomo.environ as pyo

from ..numbers.problem import Problem
from ..numbers.scenarios import ScenarioProblem
from ..rows import ScenarioRows, capacity_rows_of, scenario_rows
from . import array_rows
from .array_rows import Arguments, Terms, items
from .read import timed_rows

if TYPE_CHECKING:
    from ..numbers.infrastructure import Infrastructure


def ahead_rows(m: pyo.ConcreteModel, sp: ScenarioProblem, deadline: float = math.inf) -> None:
    """``ahead[j]``: where a curve has hours of its own, they are the hours bought now
    (``w_j = x_s``), or with recourse, for a source that can be bought later, at least those
    (``w_j ≥ x_s``)."""
    n = sp.n
    recourse = sp.recourse_price_x is not None
    later_ok = sp.later_ok

    def ahead_rule(_m: pyo.ConcreteModel, j: int) -> object:
        body = array_rows.sum_of([1.0, -1.0], [_m.w[j], _m.x[j % n]])
        return body >= 0 if recourse and later_ok[j % n] else body == 0

    timed_rows(m, "ahead", (m.Jw,), ahead_rule, deadline)


def budget_rows(
    m: pyo.ConcreteModel, sp: ScenarioProblem, fees: np.ndarray, at: Arguments, deadline: float = math.inf
) -> None:
    """``budget_row[k]``: one row, or with recourse one per scenario; the costs are parameters
    (``fees``: of the sources bought on or off, in the order of ``B``)."""
    n = sp.n
    recourse = sp.recourse_price_x is not None
    m.Kb = pyo.Set(initialize=list(m.K) if recourse else [0], ordered=True)
    price_x, later_ok = float(sp.recourse_price_x or 1.0), sp.later_ok
    if recourse:
        later_cost = {(k, i): float(sp.later_cost[k, i]) for k in range(sp.count) for i in range(n)}
        # the scenarios' prices, checked where they were read: no domain check per item
        m.later = pyo.Param(m.K, m.S, mutable=True, within=pyo.Any, initialize=later_cost)

    def budget_rule(_m: pyo.ConcreteModel, k: int) -> object:
        """The money: Σ_s c_s x_s + Σ_s fee_s buy_s ≤ B (one row, k = 0); with recourse scenario
        k's, now at today's price, later at M times its own:
        Σ_s (c_s − M c'_sk) x_s + Σ_s M c'_sk w_sk + Σ_s fee_s buy_s ≤ B."""
        if not recourse:
            money = [Terms("x", np.arange(n), exprs=items(_m, "cost")), Terms("buy", np.arange(len(_m.B)), fees)]
            return array_rows.linear(_m, money) <= _m.budget
        later = [price_x * _m.later[k, i] if later_ok[i] else 0.0 for i in range(n)]
        ok = np.flatnonzero(later_ok)
        money = [
            Terms("x", np.arange(n), exprs=[_m.cost[i] - later[i] for i in range(n)]),
            *at.terms(k * n + ok, None, exprs=[later[i] for i in ok.tolist()]),
            Terms("buy", np.arange(len(_m.B)), fees),
        ]
        return array_rows.linear(_m, money) <= _m.budget

    timed_rows(m, "budget_row", (m.Kb,), budget_rule, deadline)


def coupling(sp: ScenarioProblem | Infrastructure, problem: Problem) -> ScenarioRows:
    """The coupling rows of every scenario of ``sp`` (:func:`procure.program.rows.scenario_rows`),
    which the capacity and mix rows are made from."""
    return scenario_rows(problem, sp.rate, float(problem.budget or 0.0), capacity_rows_of(problem))


def capacity_rows(
    m: pyo.ConcreteModel, sp: ScenarioProblem, rows: ScenarioRows, at: Arguments, deadline: float = math.inf
) -> list[str]:
    """``capacity[r, k]``: capacity r over the window, held hours counted, in scenario k (once,
    on the hours bought now, without recourse): Σ u_rs w_sk ≤ C_r − Σ u_rs h0_s, from ``rows``."""
    n = sp.n
    recourse = sp.recourse_price_x is not None
    row = {rows.names[r]: r for r in rows.of("capacity")}
    m.R = pyo.Set(initialize=list(row), ordered=True)
    m.Kc = pyo.Set(initialize=list(m.K) if recourse else [0], ordered=True)

    def capacity_rule(_m: pyo.ConcreteModel, r: str, k: int) -> object:
        coef = rows.A[k, row[r]]
        nz = np.flatnonzero(coef)
        return array_rows.linear(_m, at.terms(k * n + nz, coef[nz])) <= float(rows.b[k, row[r]])

    timed_rows(m, "capacity", (m.R, m.Kc), capacity_rule, deadline)
    return list(row)


def mix_rows(
    m: pyo.ConcreteModel, sp: ScenarioProblem | Infrastructure, rows: ScenarioRows, at: Arguments,
    deadline: float = math.inf,
) -> None:  # fmt: skip
    """``mix[g, k]``: mix bound g in scenario k as a row in w (:func:`procure.program.rows.mix_row`), from ``rows``."""
    n = sp.n
    mix = rows.of("mix")
    m.G = pyo.Set(initialize=range(len(mix)), ordered=True)

    def mix_rule(_m: pyo.ConcreteModel, g: int, k: int) -> object:
        coef = rows.A[k, mix[g]]
        nz = np.flatnonzero(coef)
        return array_rows.linear(_m, at.terms(k * n + nz, coef[nz])) <= float(rows.b[k, mix[g]])

    timed_rows(m, "mix", (m.G, m.K), mix_rule, deadline)
