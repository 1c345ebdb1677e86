"""Plots, written atomically to PNG or SVG: the figures of a plan, and every figure by its name.

Here are a plan's figures: each source's value against the dollars spent on it
(:func:`value_curves`), the plan's value over the scenarios (:func:`scenario_values`), the plan
as one input moves (:func:`sensitivity_hours`) and a plan over periods (:func:`schedule`). The
figures of a format's pipeline and bill are in :mod:`procure.interfaces.pipeline_plots`, and how
every figure is made and written (a figure of its own, drawn without pyplot) in
:mod:`procure.interfaces.canvas`; their names are offered here too, so that
``procure.interfaces.plots`` reaches every figure.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from ..defaults import RANGING_LIMITS
from ..program.numbers import value
from .canvas import F as F
from .canvas import label, quiet_glyphs, subplots
from .canvas import save as save
from .canvas import write_figure as write_figure
from .colours import MONEY_COLOURS, source_colours
from .pipeline_plots import bill_split as bill_split
from .pipeline_plots import bill_terms as bill_terms
from .pipeline_plots import busy_vs_cores as busy_vs_cores
from .pipeline_plots import stage_rates as stage_rates
from .pipeline_plots import timeline as timeline
from .queue_view import TIMELINE_FRAMES as TIMELINE_FRAMES
from .queue_view import TIMELINE_LANES as TIMELINE_LANES

if TYPE_CHECKING:
    from ..analyses.solving import ScenarioPlan
    from ..program import Plan, Problem

#: How far :func:`value_curves` draws each source's curve: to this many times the plan's
#: hours [1], ...
CURVE_PAST_PLAN = 2.0
#: ... or to the hours this share of the plan's spend buys [1], whichever is more ...
CURVE_SPEND_SHARE = 0.25
#: ... and to at least this many hours [h] (never past the source's availability).
CURVE_LEAST_HOURS = 1.0
#: Points along each drawn curve [points].
CURVE_POINTS = 200
#: Most ticks on a value curve's dollar axis, so that six-digit labels do not run together [ticks].
CURVE_TICKS = 4


@quiet_glyphs
def value_curves(plan: Plan, problem: Problem) -> Figure:
    """Each source's value against the dollars its hours take, all in, the plan's point, and
    the λ line.

    The dollars of an hour are its price and transport bill and its use of the capacities and
    mix bounds that bind, at their shadow prices in budget dollars
    (``capacity_charge_usd_per_hour``): on that axis a source bought in part has slope λ at the
    plan's point, and its curve touches the line of slope λ drawn through it (equal marginal
    value per dollar).
    """
    s = problem.sources
    n = problem.n
    cols = min(3, n)
    rows = math.ceil(n / cols)
    fig, axes = subplots(rows, cols, figsize=(4.0 * cols, 3.0 * rows), squeeze=False)
    colours = source_colours(list(s["source"]))
    column = plan.sources.get("capacity_charge_usd_per_hour")  # plans over periods have none
    charge = np.zeros(problem.n) if column is None else column.to_numpy(dtype=float)
    cost = problem.cost + np.where(np.isfinite(charge), charge, 0.0)
    for i, ax in enumerate(axes.ravel()):
        if i >= n:
            ax.set_visible(False)
            continue
        r = s.iloc[i]
        x_plan = float(plan.sources["hours"].iloc[i])
        spend = CURVE_SPEND_SHARE * float(plan.spent_usd) / cost[i] if cost[i] > 0 else 0.0
        top = max(CURVE_PAST_PLAN * x_plan, spend, CURVE_LEAST_HOURS)
        if math.isfinite(r["available_hours"]):
            top = min(top, float(r["available_hours"]))
        hours = np.linspace(0, top, CURVE_POINTS)
        v = value.value(r["rate"] * (r["held_hours"] + hours), r["curve"], r["saturation_hours"], r["curve_shape"])
        dollars = hours * cost[i]
        ax.plot(dollars, v, color=colours[r["source"]])
        v_plan = float(plan.sources["value"].iloc[i])
        ax.plot([x_plan * cost[i]], [v_plan], "o", color="black")
        if plan.lambda_ > 0 and math.isfinite(plan.lambda_):
            ax.plot(dollars, v_plan + plan.lambda_ * (dollars - x_plan * cost[i]), ":", color="grey", linewidth=1)
        ax.set_title(f"{label(r['source'])}: {x_plan:,.0f} h, value {v_plan:,.1f}", loc="left", fontsize=9)
        ax.set_xlabel("$ all in, capacity charges included", fontsize=8)
        ax.xaxis.set_major_locator(MaxNLocator(CURVE_TICKS))  # six-digit dollars at 7 pt: few ticks
        ax.tick_params(labelsize=7)
        ax.spines[["top", "right"]].set_visible(False)
    axes[0, 0].set_ylabel("value")
    fig.suptitle(
        f"Value against dollars all in; dot: the plan; dotted: slope λ = {plan.lambda_:.3g} value per $",
        x=0.01, ha="left", fontsize=10,
    )  # fmt: skip
    fig.tight_layout()
    return fig


@quiet_glyphs
def scenario_values(plan: ScenarioPlan) -> Figure:
    """The distribution of the plan's value over the scenarios beside the mean-scenario plan's:
    cumulative probability against value, with each plan's expected value and CVaR marked."""
    fig, ax = subplots(figsize=(8, 4.5))
    a = plan.risk_alpha
    series = [("the plan", plan.scenario_values, "tab:blue")]
    if plan.mean_plan_values is not None:
        series.append(("the mean-scenario plan", plan.mean_plan_values, "tab:orange"))
    for name, table, color in series:
        order = table["value"].to_numpy().argsort(kind="stable")
        v = table["value"].to_numpy()[order]
        p = table["probability"].to_numpy()[order].cumsum()
        ax.step(np.concatenate([[v[0]], v]), np.concatenate([[0.0], p]), where="post", color=color,
                label=f"{name}: expected {float(table['probability'] @ table['value']):,.1f}")  # fmt: skip
        ax.axvline(float(table["probability"] @ table["value"]), color=color, linestyle=":", linewidth=1)
    ax.axhline(a, color="grey", linestyle="--", linewidth=1)
    ax.annotate(f"worst {100 * a:g} % (CVaR of the plan {plan.cvar:,.1f})", (ax.get_xlim()[0], a),
                xytext=(4, 4), textcoords="offset points", fontsize=8, color="grey")  # fmt: skip
    ax.set_xlabel("value of the plan in a scenario [own-hour equivalents]")
    ax.set_ylabel("probability of a value at most this")
    ax.set_ylim(0, 1.02)
    ax.set_title(f"The plan's value over {len(plan.scenario_values)} scenarios", loc="left")
    ax.legend(loc="lower right", fontsize=8, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig


@quiet_glyphs
def sensitivity_hours(frame: pd.DataFrame, span: tuple[float, float] | None = None) -> Figure:
    """Hours bought of each source against the varied input (log scale), and the plan's value;
    ``span`` (byte-price multipliers over which the plan keeps its shape) shaded."""
    parameter = str(frame["parameter"].iloc[0])
    fig, (ax, ax2) = subplots(2, 1, figsize=(8, 6), sharex=True, gridspec_kw={"height_ratios": [2, 1]})
    colours = source_colours(list(dict.fromkeys(frame["source"])))
    for source, part in frame.groupby("source", sort=False):
        ax.plot(part["x"], part["hours"], marker="o", markersize=3, label=label(source), color=colours[source])
    # a legend beside the axes: labels at the lines' ends overlap where two end close together
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=8)
    ax.set_xscale("log")
    # the axis starts at the decade below the fewest hours bought, so that no empty band of
    # decades sits under the lines; 0, where a source drops out, below one linear decade
    hours = frame["hours"].to_numpy(dtype=float)
    bought = hours[hours > 0]
    floor = 10.0 ** math.floor(math.log10(bought.min())) if bought.size else 1.0
    if (hours <= 0).any():
        ax.set_yscale("symlog", linthresh=floor)
        ax.set_ylim(bottom=0)
    else:
        ax.set_yscale("log")
        ax.set_ylim(bottom=floor)
    ax.set_ylabel("hours bought")
    ax.set_title(f"The plan as {parameter} moves", loc="left")
    if span is not None:
        lo, hi = max(span[0], float(frame["x"].min())), min(span[1], float(frame["x"].max()))
        for a in (ax, ax2):
            a.axvspan(lo, hi, color="tab:green", alpha=0.12, linewidth=0)
        low = f"below {RANGING_LIMITS[0]:g}" if span[0] <= RANGING_LIMITS[0] else f"{span[0]:.3g}"
        high = f"above {RANGING_LIMITS[1]:g}" if span[1] >= RANGING_LIMITS[1] else f"{span[1]:.3g}"
        ax.annotate(f"the plan keeps its shape from {low} to {high}", (lo, 1),
                    xycoords=("data", "axes fraction"), xytext=(3, -12), textcoords="offset points", fontsize=8,
                    color="tab:green")  # fmt: skip
    ax.spines[["top", "right"]].set_visible(False)
    plan = frame.groupby("x", sort=True).first()
    ax2.plot(plan.index, plan["plan_value"], color="black", marker="o", markersize=3)
    ax2.set_ylabel("plan value")
    ax2.set_xlabel(parameter)
    ax2.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig


#: Most sources a schedule's bars show by name; the rest are one "other" segment.
SCHEDULE_SOURCES = 12


@quiet_glyphs
def schedule(plan: Plan) -> Figure:
    """A plan over periods: bars of the hours bought in each period, stacked by source, and
    below them the money spent per period, split into purchases and the run's transport bill."""
    assert plan.schedule is not None and plan.periods is not None
    periods = [label(p) for p in plan.periods["period"]]
    from ..program.readout.periods import hours_by_period

    table = hours_by_period(plan.schedule).T.loc[list(plan.periods["period"])]
    order = table.sum(axis=0).sort_values(ascending=False).index
    named = [c for c in order[:SCHEDULE_SOURCES] if table[c].sum() > 0]
    fig, (top, low) = subplots(2, 1, figsize=(9.5, 6.4), sharex=True, layout="constrained")
    bottom = np.zeros(len(periods))
    colours = source_colours(list(plan.sources["source"]))
    for name in named:
        vals = table[name].to_numpy(float)
        top.bar(periods, vals, bottom=bottom, label=label(name), width=0.6, color=colours.get(name))
        bottom += vals
    rest = table[[c for c in order if c not in named]].sum(axis=1).to_numpy(float)
    if rest.sum() > 0:
        top.bar(periods, rest, bottom=bottom, label="other", color="0.7", width=0.6)
    top.set_ylabel("recorded hours bought")
    top.set_title("What to buy in each period" + (" (expected over the scenarios)" if "scenario" in plan.schedule
                                                  else ""), loc="left")  # fmt: skip
    top.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=8)
    purchase = plan.periods["purchase_usd"].to_numpy(float)
    bill = plan.periods["transport_usd"].to_numpy(float)
    low.bar(periods, purchase, label="purchases", width=0.6, color=MONEY_COLOURS["purchases"])
    low.bar(periods, bill, bottom=purchase, label="the run's transport bill", width=0.6,
            color=MONEY_COLOURS["transport"])  # fmt: skip
    low.plot(periods, plan.periods["money_usd"].to_numpy(float), "k_", markersize=28, label="money arriving")
    low.set_ylabel("$")
    low.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=8)
    for ax in (top, low):
        ax.spines[["top", "right"]].set_visible(False)
    return fig
