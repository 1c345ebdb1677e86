"""The ranges the figures draw: each source's curve reaches past the plan's point, stops at the
source's availability, and stays finite for a source that costs nothing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from procure import from_ledger
from procure.interfaces import pipeline_plots, plots
from procure.ledger import load_ledger, variant
from procure.program.numbers import value as curves
from procure.program.solve.program import Program


@pytest.fixture(scope="module")
def solved():
    problem = from_ledger(load_ledger(), budget=100_000.0)
    return problem, Program(problem).solve()


def _curves(fig):
    """The (dollars, value) of each drawn curve: the first line of each visible axes."""
    return [(ax.lines[0].get_xdata(), ax.lines[0].get_ydata()) for ax in fig.axes if ax.get_visible()]


def _all_in(problem, plan):
    """Dollars an hour takes on the figure's axis: all-in price and capacity charges [$ per h]."""
    return problem.cost + plan.sources["capacity_charge_usd_per_hour"].to_numpy(float)


def test_each_curve_covers_the_plan_point_and_stops_at_availability(solved):
    problem, plan = solved
    cost = _all_in(problem, plan)
    avail = problem.sources["available_hours"].to_numpy(float)
    for i, (dollars, value) in enumerate(_curves(plots.value_curves(plan, problem))):
        bought = float(plan.sources["hours"].iloc[i])
        assert np.all(np.isfinite(dollars)) and np.all(np.isfinite(value))
        assert dollars[-1] >= bought * cost[i] * (1 - 1e-12)
        if math.isfinite(avail[i]):
            assert dollars[-1] <= avail[i] * cost[i] * (1 + 1e-12)
        assert len(dollars) == plots.CURVE_POINTS


def test_a_free_source_is_drawn_over_finite_hours(solved):
    problem, plan = solved
    cost = problem.cost.copy()
    cost[0] = 0.0
    free = problem.with_cost(cost)
    dollars, value = _curves(plots.value_curves(plan, free))[0]
    charge = float(plan.sources["capacity_charge_usd_per_hour"].iloc[0])  # its hours still use the accelerators
    assert np.all(np.isfinite(dollars)) and np.all(np.isfinite(value))
    hours = float(plan.sources["hours"].iloc[0])
    s = free.sources.iloc[0]
    spend = plots.CURVE_SPEND_SHARE * float(plan.spent_usd) / charge if charge > 0 else 0.0
    top = min(max(plots.CURVE_PAST_PLAN * hours, spend, plots.CURVE_LEAST_HOURS), float(s["available_hours"]))
    assert dollars == pytest.approx(np.linspace(0.0, top, plots.CURVE_POINTS) * charge, rel=1e-12, abs=1e-12)
    want = curves.value(s["rate"] * (s["held_hours"] + top), s["curve"], s["saturation_hours"], s["curve_shape"])
    assert value[-1] == pytest.approx(float(want), rel=1e-12)


def test_the_lambda_line_touches_each_curve_bought_in_part(solved):
    # on the axis of all-in dollars, capacity charges included, a source bought in part has
    # slope λ at the plan's point (equal marginal value per dollar): the dotted line is its
    # tangent there. The slope is read from the drawn curve by a central difference.
    problem, plan = solved
    cost = _all_in(problem, plan)
    between = np.flatnonzero(plan.sources["position"].to_numpy() == "between")
    assert len(between) >= 2
    fig = plots.value_curves(plan, problem)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    for i in between.tolist():
        s = problem.sources.iloc[i]
        x = float(plan.sources["hours"].iloc[i])
        step = 1e-4 * max(x, 1.0)

        def v(h: float, s=s) -> float:
            return float(curves.value(s["rate"] * (s["held_hours"] + h), s["curve"], s["saturation_hours"],
                                      s["curve_shape"]))  # fmt: skip

        slope = (v(x + step) - v(x - step)) / (2 * step * cost[i])
        assert slope == pytest.approx(plan.lambda_, rel=1e-3)
        curve, point, line = axes[i].lines[:3]  # the curve, the plan's point, the λ line
        lx, ly = line.get_xdata(), line.get_ydata()
        assert (ly[-1] - ly[0]) / (lx[-1] - lx[0]) == pytest.approx(plan.lambda_, rel=1e-9)
        cx, cy = np.asarray(curve.get_xdata(), float), np.asarray(curve.get_ydata(), float)
        drawn = np.interp(float(point.get_xdata()[0]), (cx[2:] + cx[:-2]) / 2, (cy[2:] - cy[:-2]) / (cx[2:] - cx[:-2]))
        assert drawn == pytest.approx(plan.lambda_, rel=1e-2)  # the drawn curve's slope there, to its 200 points


def test_busy_vs_cores_draws_past_the_cores_needed():
    row = variant(load_ledger())[0]
    fig = pipeline_plots.busy_vs_cores(row)
    cores = fig.axes[0].lines[0].get_xdata()
    need = float(row["cores_needed"])
    assert cores[-1] >= max(need, float(row["cores"]), pipeline_plots.LEAST_CORES_DRAWN)
    past = pipeline_plots.CORES_PAST_NEED
    assert cores[-1] == pytest.approx(max(past * need, past * float(row["cores"]), pipeline_plots.LEAST_CORES_DRAWN))


def _sweep_frame(hours: list[list[float]]):
    """A byte-price sweep's frame: one row per (multiplier, source)."""
    import pandas as pd

    xs = [0.1, 1.0, 10.0]
    rows = [{"parameter": "byte_price_x", "x": x, "source": f"s{j}", "hours": h[k], "plan_value": 1.0}
            for j, h in enumerate(hours) for k, x in enumerate(xs)]  # fmt: skip
    return pd.DataFrame(rows)


def test_the_byte_price_axis_starts_at_the_decade_below_the_fewest_hours():
    ax = plots.sensitivity_hours(_sweep_frame([[20.0, 22.0, 76.0], [5800.0, 8000.0, 15_000.0]])).axes[0]
    assert ax.get_yscale() == "log" and ax.get_ylim()[0] == 10.0  # no empty decades below 20 h
    assert ax.get_ylim()[1] >= 15_000.0


def test_a_source_that_drops_out_is_drawn_at_zero():
    ax = plots.sensitivity_hours(_sweep_frame([[0.0, 3.5, 40.0], [900.0, 800.0, 0.0]])).axes[0]
    assert ax.get_yscale() == "symlog" and ax.get_ylim()[0] == 0.0
    assert ax.yaxis.get_transform().linthresh == 1.0  # one linear decade under the fewest hours, 3.5
