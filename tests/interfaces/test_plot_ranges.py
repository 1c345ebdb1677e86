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


def test_each_curve_covers_the_plan_point_and_stops_at_availability(solved):
    problem, plan = solved
    cost = problem.cost
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
    assert np.all(dollars == 0.0)
    assert np.all(np.isfinite(value))
    hours = float(plan.sources["hours"].iloc[0])
    s = free.sources.iloc[0]
    top = min(max(plots.CURVE_PAST_PLAN * hours, plots.CURVE_LEAST_HOURS), float(s["available_hours"]))
    want = curves.value(s["rate"] * (s["held_hours"] + top), s["curve"], s["saturation_hours"], s["curve_shape"])
    assert value[-1] == pytest.approx(float(want), rel=1e-12)


def test_busy_vs_cores_draws_past_the_cores_needed():
    row = variant(load_ledger())[0]
    fig = pipeline_plots.busy_vs_cores(row)
    cores = fig.axes[0].lines[0].get_xdata()
    need = float(row["cores_needed"])
    assert cores[-1] >= max(need, float(row["cores"]), pipeline_plots.LEAST_CORES_DRAWN)
    past = pipeline_plots.CORES_PAST_NEED
    assert cores[-1] == pytest.approx(max(past * need, past * float(row["cores"]), pipeline_plots.LEAST_CORES_DRAWN))
