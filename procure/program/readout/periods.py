"""The plan over periods read out of a solved model: the schedule, the money by period, λ_t.

The plan's totals (:class:`procure.program.readout.plan.Plan`) are over all periods: a source's hours
are those bought in every period, its purchase and transport dollars those of every period, its
effective hours those at the last run and its value its weighted share of the objective,
``Σ_t w_t v_s(e_st)``. Its marginal value per dollar is that of one more hour bought in the
first period (worth ``Σ_t w_t v_s'(e_st) ρσ φ_s1t``, costing its price then and its bill at
every run). ``Plan.periods`` and ``Plan.schedule`` give the rest, by period.

Duals: ``λ_t`` sums the duals of the money rows a dollar arriving at ``t`` relaxes (with
carry-over, the rows are cumulative), the plan's λ is ``Σ_t share_t λ_t`` and a capacity's shadow
price the sum over the runs; see ``docs/program.md``, "Plans over periods".
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

from ..numbers.periods import PeriodProblem
from ..numbers.problem import CAPACITIES
from ..numbers.value import derivative, value
from .notes import UNSPENT_SHARE
from .plan import BINDING_TOLERANCE, Plan

#: Money left in a period smaller than this share of all the money is shown as 0: the solver's
#: feasibility tolerance (1e-7) at the scale of the money [1].
MONEY_NOISE = 1e-7
#: Columns of ``Plan.schedule`` with their units.
SCHEDULE_COLUMNS = {
    "period": "name",
    "source": "name",
    "hours": "h bought in the period",
    "purchase_usd": "$ (the period's price × hours, plus the fixed fee in period 1)",
    "transport_usd": "$ (the bill of every bought hour the period's run trains on)",
    "effective_hours": "effective h at the period's run, held and bought, aged",
    "value": "own-hour equivalents of the source at the period's run",
}
#: Columns of ``Plan.periods`` with their units.
PERIOD_COLUMNS = {
    "period": "name",
    "months": "months",
    "weight": "1 (of the run's value in the objective)",
    "money_usd": "$ arriving at the period's start",
    "purchase_usd": "$",
    "transport_usd": "$ (the run's bill)",
    "spent_usd": "$",
    "carried_usd": "$ left at the period's end (carried over, or lost without carry-over)",
    "value": "own-hour equivalents of the run",
    "lambda": "value per $ arriving at the period's start",
}


def _by_run(pp: PeriodProblem, dual: np.ndarray, found: list[int]) -> np.ndarray:
    """The duals of one kind of row, scenarios × periods (0 where there is no row)."""
    d = np.array([abs(float(dual[r])) if r >= 0 else 0.0 for r in found])
    return d.reshape(pp.scenarios, pp.periods)


def _budget_duals(pp: PeriodProblem, dual: np.ndarray, rows: dict[str, list[int]]) -> np.ndarray:
    """λ_t: the value of one more dollar arriving at the start of each period in every
    scenario [value per $] (the duals are of the expected value)."""
    d = _by_run(pp, dual, rows["budget"])
    per = np.cumsum(d[:, ::-1], axis=1)[:, ::-1] if pp.carry else d
    return per.sum(axis=0)


def budget_dual(pp: PeriodProblem, row_duals: np.ndarray, rows: dict[str, list[int]]) -> float:
    """λ: the value of one more budget dollar, split by the periods' shares [value per $]."""
    return float(pp.share @ _budget_duals(pp, np.asarray(row_duals, dtype=float), rows))


def read_period_plan(pp: PeriodProblem, plan: Plan, y: np.ndarray, row_duals: np.ndarray,
                     rows: dict[str, list[int]]) -> Plan:  # fmt: skip
    """The plan over periods of a solve: ``plan`` with its totals, periods and schedule made
    those of the purchases ``y`` (scenarios × periods × sources in that order, flat or shaped)
    [h] and the duals ``row_duals`` of the model's rows (``rows``,
    :func:`procure.program.readout.solved.period_rows_of`). With scenarios the totals and the
    periods table are expected values; the schedule has a row per scenario, period and source
    (its first period the same in every scenario)."""
    p, T, n, K = pp.base, pp.periods, pp.n, pp.scenarios
    y = np.clip(np.asarray(y, dtype=float), 0.0, None).reshape(K, T, n)
    prob = pp.chance
    bought_by = np.cumsum(y, axis=1)  # hours bought held at each run
    purchase = pp.prices * y
    purchase[:, 0] += np.where(p.bought(y.sum(axis=1)), p.column("fixed_fee_usd")[None, :], 0.0)
    transport = pp.bill[None, None, :] * bought_by
    aged = np.einsum("uts,kus->kts", pp.age, y) + pp.age[0][None, :, :] * p.held[None, None, :]
    e = pp.qualities[:, None, :] * aged
    curve, shape = p.curves, p.column("curve_shape")
    scale = pp.scales[:, None, :]
    v = np.asarray(value(e, curve[None, None, :], scale, shape[None, None, :]), dtype=float)
    dual = np.abs(np.asarray(row_duals, dtype=float))
    lam_t = _budget_duals(pp, dual, rows)
    lam = float(pp.share @ lam_t)
    at_run = {name: _by_run(pp, dual, found).sum(axis=0) for name, found in rows.items() if name != "budget"}
    shadow = {name: float(d.sum()) for name, d in at_run.items()}
    for name in CAPACITIES:
        shadow.setdefault(name, 0.0)
    by_period = {period: {name: float(d[t]) for name, d in at_run.items()} for t, period in enumerate(pp.names)}
    by_period = by_period if at_run else {}
    money = pp.money

    def mean(a: np.ndarray) -> np.ndarray:
        return np.tensordot(prob, a, axes=1)

    spend = purchase.sum(axis=2) + transport.sum(axis=2)  # [k, t]
    carried = np.cumsum(money)[None, :] - np.cumsum(spend, axis=1) if pp.carry else money[None, :] - spend
    carried = np.where(np.abs(carried) <= MONEY_NOISE * max(1.0, float(money.sum())), 0.0, carried)
    periods = pd.DataFrame(
        {
            "period": list(pp.names),
            "months": pp.months,
            "weight": pp.weight,
            "money_usd": money,
            "purchase_usd": mean(purchase.sum(axis=2)),
            "transport_usd": mean(transport.sum(axis=2)),
            "spent_usd": mean(spend),
            "carried_usd": mean(carried),
            "value": mean(v.sum(axis=2)),
            "lambda": lam_t,
        }
    )
    columns = {
        "period": np.tile(np.repeat(list(pp.names), n), K),
        "source": np.tile(p.sources["source"].to_numpy(str), K * T),
        "hours": y.ravel(),
        "purchase_usd": purchase.ravel(),
        "transport_usd": transport.ravel(),
        "effective_hours": e.ravel(),
        "value": v.ravel(),
    }
    if K > 1:
        columns = {"scenario": np.repeat(list(pp.scenario_names), T * n),
                   "probability": np.repeat(prob, T * n)} | columns  # fmt: skip
    schedule = pd.DataFrame(columns)
    slope = np.asarray(derivative(e, curve[None, None, :], scale, shape[None, None, :]), dtype=float)
    gain = mean((pp.weight[None, :, None] * slope * pp.qualities[:, None, :] * pp.age[0][None]).sum(axis=1))
    # Its cost (see the module) in each period's money (λ_t) and capacity use (μ_rt), over λ; mix bounds left out.
    charged = lam_t[0] * pp.price[0] + lam_t.sum() * pp.bill
    for name in CAPACITIES:
        charged = charged + shadow[name] * p.usage(name)
    first_cost = pp.price[0] + T * pp.bill
    dollars = charged / lam if lam > 0 and math.isfinite(lam) else first_cost
    with np.errstate(divide="ignore", invalid="ignore"):
        per_usd = np.where(dollars > 0, gain / np.where(dollars > 0, dollars, 1.0), 0.0)
        price_only = np.where(first_cost > 0, gain / np.where(first_cost > 0, first_cost, 1.0), 0.0)
    totals = plan.sources.copy()
    totals["hours"] = mean(y.sum(axis=1))
    totals["purchase_usd"] = mean(purchase.sum(axis=1))
    totals["transport_usd"] = mean(transport.sum(axis=1))
    totals["effective_hours"] = mean(e[:, -1])
    totals["value"] = mean(np.einsum("t,kts->ks", pp.weight, v))
    totals["marginal_value_per_usd"] = per_usd
    totals["marginal_value_per_usd_price_only"] = price_only
    capacities = _capacities(pp, bought_by, at_run, lam)
    spent = float(mean(spend).sum())
    notes = [note for note in plan.notes if not note.startswith("the budget is more than anything can use")]
    if lam == 0 and money.sum() > 0 and spent < money.sum() * (1 - UNSPENT_SHARE):
        notes.append(
            f"the money is more than the schedule can use: it spends ${spent:,.2f} of ${money.sum():,.2f}; "
            "availability, capacities or the money of later periods (which pay their runs' bills) bind"
        )
    return replace(plan, lambda_=lam, shadow_prices=shadow, sources=totals, capacities=capacities, spent_usd=spent,
                   notes=notes, purchase_usd=float(mean(purchase.sum(axis=2)).sum()),
                   transport_usd=float(mean(transport.sum(axis=2)).sum()), periods=periods, schedule=schedule,
                   shadow_prices_by_period=by_period)  # fmt: skip


def hours_by_period(schedule: pd.DataFrame) -> pd.DataFrame:
    """Hours bought of each source (rows) in each period (columns) [h]: with scenarios, their
    expectation (the first period's are the same in every scenario)."""
    if "scenario" in schedule:
        weighted = schedule.assign(hours=schedule["hours"] * schedule["probability"])
        return weighted.pivot_table(index="source", columns="period", values="hours", aggfunc="sum", sort=False)
    return schedule.pivot(index="source", columns="period", values="hours")


def single_period_plan(pp: PeriodProblem, plan: Plan) -> Plan:
    """The plan of a one-period problem solved as today's program (its hours, λ and shadow
    prices exact), with its period and schedule."""
    names = [name for name, price in plan.shadow_prices.items() if name not in CAPACITIES or price != 0]
    duals = np.array([plan.lambda_] + [plan.shadow_prices[name] for name in names])
    rows = {"budget": [0]} | {name: [q + 1] for q, name in enumerate(names)}
    hours = plan.sources["hours"].to_numpy(dtype=float)[None, :]
    out = read_period_plan(pp, plan, hours, duals, rows)
    return replace(out, sources=plan.sources, capacities=plan.capacities, lambda_=plan.lambda_,
                   shadow_prices=plan.shadow_prices)  # fmt: skip


def _capacities(pp: PeriodProblem, bought_by: np.ndarray, at_run: dict[str, np.ndarray], lam: float) -> pd.DataFrame:
    """One row per capacity at one run: the run where its shadow price (``at_run``, by period)
    is highest, else where it is tightest (least slack for its limit), with that run's shadow
    price and the number of runs at which it binds."""
    p = pp.base
    out = []
    pricing = lam > 0 and math.isfinite(lam)
    for name, (_col, unit) in CAPACITIES.items():
        use = p.usage(name)
        used = ((bought_by + p.held[None, None, :]) @ use).max(axis=0)  # the most any scenario uses
        limit = pp.capacity[name]
        prices = at_run.get(name, np.zeros(pp.periods))
        with np.errstate(invalid="ignore"):
            room = np.where(np.isfinite(limit), (limit - used) / np.maximum(1.0, np.abs(limit)), np.inf)
        tight = np.isfinite(limit) & (limit - used <= BINDING_TOLERANCE * np.maximum(1.0, np.abs(limit)))
        binds = (prices > 0) | tight
        t = int(np.argmax(prices)) if (prices > 0).any() else int(np.argmin(room))
        price = float(prices[t])
        out.append({"capacity": name, "unit": unit, "used": float(used[t]), "limit": float(limit[t]),
                    "slack": float(limit[t] - used[t]), "binding": bool(binds[t]), "shadow_price": price,
                    "shadow_usd": price / lam if pricing else 0.0, "period": pp.names[t],
                    "binding_runs": int(binds.sum())})  # fmt: skip
    return pd.DataFrame(out)
