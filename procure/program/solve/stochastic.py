"""Solving the program under uncertainty: one plan of hours to buy now, certified across scenarios.

A scenario problem is solved by the one :class:`procure.program.solve.program.Program`, on the one
model of :mod:`procure.program.model.build` with a curve per (scenario, source) pair: the same
refine-until-certified loop, the true objective the risk-adjusted value of the plan over the
scenarios. :class:`ScenarioPlan` is its answer: the plan (what to buy now), its value in each
scenario, the expected value and CVaR, and with recourse what each scenario would add later.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from ...errors import invalid
from ...output import jsonable
from ..numbers import value
from ..numbers.problem import BOUGHT_HOURS
from ..numbers.scenarios import ScenarioProblem, cvar
from ..readout.plan import BINDING_TOLERANCE, Plan
from .program import Program

#: Columns of ``ScenarioPlan.scenario_values`` with their units.
SCENARIO_VALUE_COLUMNS = {
    "scenario": "name",
    "probability": "1",
    "value": "own-hour equivalents: the plan's value in this scenario (later hours included)",
    "later_usd": "$ spent later in this scenario (recourse)",
}
#: Columns of ``ScenarioPlan.recourse`` with their units.
RECOURSE_COLUMNS = {"scenario": "name", "source": "name", "hours": "h bought later", "usd": "$ (all in, at M × price)"}


@dataclass(frozen=True)
class ScenarioPlan:
    """A plan under uncertainty.

    Attributes
    ----------
    plan : Plan
        What to buy now. Its ``value``, ``value_upper_bound`` and ``gap`` are the risk-adjusted
        objective's (the expected value when the risk weight is 0); its per-source ``value``
        and ``effective_hours`` are expectations over the scenarios, later hours included.
    expected_value : float
        E[V], the probability-weighted mean of the plan's value [own-hour equivalents].
    cvar : float
        CVaR at ``risk_alpha``: the mean value of the worst share of scenarios [own-hour eq.].
    risk_alpha, risk_weight : float
        The CVaR's share A and its weight W in the objective [1].
    recourse_price_x : float or None
        Later hours cost this times the scenario's all-in price; None without recourse.
    scenario_values : pandas.DataFrame
        Columns of :data:`SCENARIO_VALUE_COLUMNS`, one row per scenario.
    recourse : pandas.DataFrame
        Columns of :data:`RECOURSE_COLUMNS`: what each scenario adds later (empty without).
    evpi : float
        Expected value of perfect information: ``wait_and_see`` less this plan's objective
        (0 where that is negative within twice the tolerance) [own-hour equivalents]; NaN until
        computed (:func:`procure.analyses.uncertainty.solve_uncertain`).
    vss : float
        Value of the stochastic solution: this plan's objective less that of the plan made
        for the mean scenario (``mean_plan_objective``; 0 where slightly negative, as ``evpi``)
        [own-hour equivalents]; NaN until computed.
    wait_and_see : float
        The plan's objective (1 − W) E + W CVaR_A taken of the best values knowing each scenario:
        their probability-weighted mean only when W is 0 [own-hour equivalents]; NaN until
        computed. See ``docs/program.md``, "Under uncertainty".
    mean_plan_values : pandas.DataFrame or None
        The mean-scenario plan's value in each scenario (``scenario``, ``probability``,
        ``value``), and its hours (``mean_plan_hours``), for comparison.
    """

    plan: Plan
    expected_value: float
    cvar: float
    risk_alpha: float
    risk_weight: float
    recourse_price_x: float | None
    scenario_values: pd.DataFrame
    recourse: pd.DataFrame
    evpi: float = math.nan
    vss: float = math.nan
    wait_and_see: float = math.nan
    mean_plan_objective: float = math.nan
    mean_plan_values: pd.DataFrame | None = None
    mean_plan_hours: np.ndarray | None = None
    notes: list[str] = field(default_factory=list)
    ran_on: str = ""

    @property
    def value(self) -> float:
        """The plan's objective: risk-adjusted value [own-hour equivalents]."""
        return self.plan.value

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``procure solve`` with scenarios: the plan's keys, then these;
        ``objective`` is the plan's ``value`` named as what it is, (1 − W) E[V] + W CVaR."""
        out = self.plan.to_dict()
        out["notes"] = list(out.get("notes", [])) + self.notes
        out.update({
            "expected_value": self.expected_value, "cvar": self.cvar, "objective": self.value,
            "risk_alpha": self.risk_alpha, "risk_weight": self.risk_weight,
            "scenario_values": self.scenario_values.to_dict("records"), "evpi": self.evpi, "vss": self.vss,
            "wait_and_see": self.wait_and_see, "mean_plan_objective": self.mean_plan_objective,
            "recourse_price_x": self.recourse_price_x, "ran_on": self.ran_on,
        })  # fmt: skip
        if self.recourse_price_x is not None:
            out["recourse"] = self.recourse.to_dict("records")
        if self.mean_plan_values is not None:
            out["mean_plan_values"] = self.mean_plan_values.to_dict("records")
        return jsonable(out)


def solve_scenarios(problem: ScenarioProblem, *, fixed_hours: np.ndarray | None = None, **options: Any) -> ScenarioPlan:
    """Build and solve a scenario problem, without EVPI or VSS.

    Parameters
    ----------
    problem : ScenarioProblem
        The scenarios, risk measure and recourse.
    fixed_hours : numpy.ndarray, optional
        Hours bought now of each source, fixed: only what each scenario adds later is chosen
        (to value a given plan with recourse).
    **options
        ``tolerance``, ``time_limit``, ``hill_points`` of :class:`procure.program.solve.program.Program`.
    """
    program = Program(problem, fixed_hours=fixed_hours, **options)
    return scenario_plan(program, program.solve())


def scenario_plan(program: Program, plan: Plan) -> ScenarioPlan:
    """The plan of a solved scenario program, read per scenario.

    Parameters
    ----------
    program : Program
        Solved (its :attr:`~procure.program.solve.program.Program.last` holds the hours per curve).
    plan : Plan
        What its :meth:`~procure.program.solve.program.Program.solve` returned.
    """
    assert program.last is not None
    sp = program.formulation
    if not isinstance(sp, ScenarioProblem):
        raise invalid("program", "periods", "a scenario plan is read from a program over scenarios")
    x, w = program.last.hours, program.last.curve_hours
    n, count = sp.n, sp.count
    a = program.built.arrays
    e, v = a.value_of(w)
    values = v.reshape(count, n)
    totals = values.sum(axis=1)
    hours = w.reshape(count, n)
    later = np.maximum(hours - x[None, :], 0.0) if sp.recourse_price_x is not None else np.zeros((count, n))
    later = np.where(later > BOUGHT_HOURS, later, 0.0)
    later_usd = (sp.recourse_price_x or 0.0) * sp.later_cost * later
    prob = sp.probability
    s = plan.sources.copy()
    s["value"] = prob @ values
    s["effective_hours"] = prob @ e.reshape(count, n)
    if plan.lambda_ > 0 and math.isfinite(plan.lambda_):
        # The value per dollar of the next hour, over the same all-in cost (capacity charges
        # included) as the plan read at the ledger's numbers, at the slope of the plan's own objective.
        expected_slope = objective_weights(totals, sp) @ a.slope_of(w).reshape(count, n)
        ledger_slope = program.problem.marginal_value(x)
        ratio = np.where(ledger_slope > 0, expected_slope / np.where(ledger_slope > 0, ledger_slope, 1.0), 0.0)
        for column in ("marginal_value_per_usd", "marginal_value_per_usd_price_only"):
            s[column] = s[column].to_numpy() * ratio
    plan = replace(plan, sources=s, capacities=_capacities_over_scenarios(program, plan, hours))
    scenario_values = pd.DataFrame(
        {"scenario": list(sp.names), "probability": prob, "value": totals, "later_usd": later_usd.sum(axis=1)}
    )
    k_idx, i_idx = np.nonzero(later)
    names = [sp.names[k] for k in k_idx.tolist()]
    sources = sp.base.sources["source"].to_numpy()[i_idx]
    recourse = pd.DataFrame({"scenario": names, "source": sources, "hours": later[k_idx, i_idx],
                             "usd": later_usd[k_idx, i_idx]}, columns=list(RECOURSE_COLUMNS))  # fmt: skip
    return ScenarioPlan(plan=plan, expected_value=float(prob @ totals), cvar=cvar(totals, prob, sp.risk_alpha),
                        risk_alpha=sp.risk_alpha, risk_weight=sp.risk_weight, recourse_price_x=sp.recourse_price_x,
                        scenario_values=scenario_values, recourse=recourse)  # fmt: skip


def objective_weights(values: np.ndarray, sp: ScenarioProblem) -> np.ndarray:
    """Each scenario's weight in the plan's objective at scenario values ``values``: the
    derivative of (1 − W) E[V] + W CVaR_A[V] with respect to V_ω [1]."""
    prob = sp.probability
    if sp.risk_weight == 0:
        return prob
    order = np.argsort(values, kind="stable")
    p = prob[order]
    taken = np.minimum(p, np.maximum(0.0, sp.risk_alpha - (np.cumsum(p) - p)))
    tail = np.empty_like(prob)
    tail[order] = taken / sp.risk_alpha
    return (1 - sp.risk_weight) * prob + sp.risk_weight * tail


def _capacities_over_scenarios(program: Program, plan: Plan, hours: np.ndarray) -> pd.DataFrame:
    """The capacity table of a scenario plan: with recourse, each capacity's use is the most any
    scenario uses (hours held, bought now and later), and it binds where that scenario fills it."""
    if program.formulation.recourse_price_x is None:
        return plan.capacities
    p = program.problem
    caps = plan.capacities.copy()
    for row, name in enumerate(caps["capacity"]):
        if name not in p.capacity:
            continue
        used = float(np.max((p.held[None, :] + hours) @ p.usage(name)))
        limit = float(p.capacity[name])
        caps.loc[row, "used"] = used
        caps.loc[row, "slack"] = limit - used
        caps.loc[row, "binding"] = bool(np.isfinite(limit) and limit - used <= BINDING_TOLERANCE * max(1.0, limit))
    return caps


def scenario_values(problem: ScenarioProblem, hours: np.ndarray) -> np.ndarray:
    """The true value of buying ``hours`` now in each scenario, with no later hours
    [own-hour equivalents per scenario]."""
    e = problem.rate * (problem.base.held + np.asarray(hours, dtype=float))[None, :]
    v = value.value(e, problem.base.curves[None, :], problem.saturation_hours,
                    problem.base.column("curve_shape")[None, :])  # fmt: skip
    return np.asarray(v, dtype=float).sum(axis=1)
