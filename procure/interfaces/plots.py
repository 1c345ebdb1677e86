"""Plots, written atomically to PNG or SVG.

Every figure is a :class:`matplotlib.figure.Figure` of its own, drawn without pyplot: making
or writing one selects no backend and changes no setting of the caller's matplotlib (a
notebook keeps its backend), and no figure is left open in pyplot's list.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..defaults import RANGING_LIMITS
from ..output import check_plot_path, write_atomic
from ..pipeline import formulas
from ..program import value

if TYPE_CHECKING:
    from ..analyses.solving import ScenarioPlan
    from ..pipeline.queue import SimulationResult
    from ..program import Plan, Problem

#: Frames the timeline shows after the warm-up [frames].
TIMELINE_FRAMES = 200
#: Decoders drawn one lane each; more are summarised [decoders].
TIMELINE_LANES = 24


F = TypeVar("F", bound=Callable[..., Any])


def _subplots(
    *args: Any, figsize: tuple[float, float], layout: Literal["constrained"] | None = None, **kwargs: Any
) -> tuple[Figure, Any]:
    """A new figure of its own (no pyplot) and its axes, as ``pyplot.subplots`` would make them."""
    fig = Figure(figsize=figsize, layout=layout)
    return fig, fig.subplots(*args, **kwargs)


def quiet_glyphs(draw: F) -> F:
    """Draw without a warning per character the fonts here lack: a PNG shows such characters
    as boxes (README says so), an SVG keeps them as text."""

    @functools.wraps(draw)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"Glyph \d+ .* missing from font", category=UserWarning)
            return draw(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def label(text: object) -> str:
    """User text for a figure, shown exactly as given: matplotlib would read ``$…$`` as maths."""
    return str(text).replace("$", r"\$")


@quiet_glyphs
def write_figure(fig: Figure, path: Path) -> None:
    """Draw a figure into ``path``; its ending, ``.png`` or ``.svg``, gives the format.

    An SVG keeps text as text, so that a name is stored exactly as given whatever the fonts
    here draw (the setting holds for this write only).
    """
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        fig.savefig(path, format=path.suffix.lower()[1:], dpi=120, bbox_inches="tight")


def save(fig: Figure, path: Path | str) -> Path:
    """Save a figure to ``path`` (``.png`` or ``.svg``) atomically.

    Raises
    ------
    InputError
        A path that does not end in .png or .svg, or whose folder does not exist.
    """
    target = check_plot_path(path)
    return write_atomic(target, lambda tmp: write_figure(fig, tmp))


@quiet_glyphs
def timeline(result: SimulationResult, busy_formula: float | None = None, frames: int = TIMELINE_FRAMES) -> Figure:
    """The simulated pipeline over a window: decoders at work, the buffer, the accelerator.

    Parameters
    ----------
    result : SimulationResult
        A run of :func:`procure.pipeline.queue.simulate_queue`.
    busy_formula : float, optional
        The closed form's busy fraction, shown beside the simulated one.
    frames : int, default 200
        Frames after the warm-up the window covers.
    """
    tl = result.timeline
    order = np.argsort(tl["train_start_s"].to_numpy(), kind="stable")
    first = result.warmup_frames
    window = order[first : first + frames]
    t0 = float(tl["train_start_s"].to_numpy()[window].min())
    t1 = float(tl["train_end_s"].to_numpy()[window].max())
    ms = 1e3

    decoders = sorted(d for d in tl["decoder"].unique() if d >= 0)
    lanes = decoders[:TIMELINE_LANES]
    fig, axes = _subplots(
        3,
        1,
        figsize=(11, 2.0 + 0.18 * max(len(lanes), 4) + 3.2),
        sharex=True,
        gridspec_kw={"height_ratios": [max(len(lanes), 4) * 0.18 + 0.6, 1.4, 0.7]},
    )
    ax_dec, ax_buf, ax_acc = axes
    sel = tl[(tl["decode_end_s"] >= t0) & (tl["decode_start_s"] <= t1) & tl["decoder"].isin(lanes)]
    colours = {"core": "tab:blue", "nvdec": "tab:green"}
    for kind, part in sel.groupby("decoder_kind"):
        for lane, rows in part.groupby("decoder"):
            bars = [
                ((s - t0) * ms, (e - s) * ms) for s, e in zip(rows["decode_start_s"], rows["decode_end_s"], strict=True)
            ]
            ax_dec.broken_barh(
                bars,
                (lanes.index(lane) - 0.4, 0.8),
                facecolor=colours.get(str(kind), "grey"),
                edgecolor="white",
                linewidth=0.3,
            )
    ax_dec.set_yticks(range(len(lanes)), [f"{tl.loc[tl['decoder'] == d, 'decoder_kind'].iloc[0]} {d}" for d in lanes])
    ax_dec.invert_yaxis()
    more = len(decoders) - len(lanes)
    ax_dec.set_title(
        "decoders at work" + (f" (first {len(lanes)} of {len(decoders)}; {more} more not drawn)" if more else "")
        if decoders
        else "no decoders: frames are stored decoded or rendered",
        loc="left",
        fontsize=10,
    )

    level = result.buffer_level()
    inside = level[(level["time_s"] >= t0) & (level["time_s"] <= t1)]
    before = level[level["time_s"] < t0]
    start_level = float(before["frames"].iloc[-1]) if len(before) else 0.0
    xs = np.concatenate([[0.0], (inside["time_s"].to_numpy() - t0) * ms, [(t1 - t0) * ms]])
    ys = np.concatenate(
        [[start_level], inside["frames"].to_numpy(), [inside["frames"].iloc[-1] if len(inside) else start_level]]
    )
    ax_buf.step(xs, ys, where="post", color="tab:orange")
    ax_buf.axhline(result.buffer, color="grey", linestyle=":", linewidth=1)
    ax_buf.text(0, result.buffer, f" buffer holds {result.buffer}", va="bottom", fontsize=8, color="grey")
    ax_buf.set_ylim(0, result.buffer * 1.15)
    ax_buf.set_ylabel("frames")
    ax_buf.set_title(
        f"frames in the buffer (mean {result.mean_buffer:.1f} over the whole run)", loc="left", fontsize=10
    )

    acc = tl.iloc[window]
    bars = [((s - t0) * ms, (e - s) * ms) for s, e in zip(acc["train_start_s"], acc["train_end_s"], strict=True)]
    ax_acc.broken_barh(bars, (0, 1), facecolor="tab:red", edgecolor="white", linewidth=0.3)
    ax_acc.set_yticks([])
    shown = f"busy {100 * result.busy:.1f} % simulated"
    if busy_formula is not None:
        shown += f", {100 * busy_formula:.1f} % by the closed form"
    ax_acc.set_title(
        f"accelerator training (gaps: waiting for frames) — {shown}; binds: {result.stage}", loc="left", fontsize=10
    )
    ax_acc.set_xlabel(f"time since frame {first} was taken [ms]")
    fig.tight_layout()
    return fig


BILL_COLOURS = {"bytes": "tab:blue", "cores": "tab:green", "idle accelerator": "tab:red"}


@quiet_glyphs
def bill_split(table: pd.DataFrame) -> Figure:
    """The bill of one recorded hour per source, stacked: bytes, cores, idle accelerator.

    Parameters
    ----------
    table : pandas.DataFrame
        Rows of :func:`procure.ledger.transport` (``source``, ``bytes_usd``, ``cores_usd``,
        ``idle_usd``, ``bill_usd``, ``share``).
    """
    fig, ax = _subplots(figsize=(8, 4.2))
    names = [label(name) for name in table["source"]]
    bottom = np.zeros(len(table))
    for term, col in (("bytes", "bytes_usd"), ("cores", "cores_usd"), ("idle accelerator", "idle_usd")):
        vals = table[col].to_numpy(float)
        ax.bar(names, vals, bottom=bottom, color=BILL_COLOURS[term], label=term, width=0.6)
        bottom += vals
    for i, (total, share) in enumerate(zip(table["bill_usd"], table["share"], strict=True)):
        note = f"${total:,.2f}" + (f"\n{100 * share:.1f} % of price" if share == share and share > 0 else "")
        ax.annotate(note, (i, total), xytext=(0, 3), textcoords="offset points", ha="center", va="bottom", fontsize=8)
    ax.set_ylabel("$ per recorded hour")
    ax.set_ylim(0, max(bottom.max(), 1e-9) * 1.25)
    ax.set_title("Transport bill of one recorded hour, by source", loc="left")
    ax.legend(loc="upper right", frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig


@quiet_glyphs
def value_curves(plan: Plan, problem: Problem) -> Figure:
    """Each source's value against the dollars spent on it, the plan's point, and the λ line.

    A line of slope λ through each plan point: where a source is bought in part, its curve
    touches the line (equal marginal value per dollar, capacity charges aside).
    """
    s = problem.sources
    n = problem.n
    cols = min(3, n)
    rows = math.ceil(n / cols)
    fig, axes = _subplots(rows, cols, figsize=(4.0 * cols, 3.0 * rows), squeeze=False)
    cost = problem.cost
    for i, ax in enumerate(axes.ravel()):
        if i >= n:
            ax.set_visible(False)
            continue
        r = s.iloc[i]
        x_plan = float(plan.sources["hours"].iloc[i])
        top = max(2.0 * x_plan, 0.25 * float(plan.spent_usd) / max(cost[i], 1e-9), 1.0)
        if math.isfinite(r["available_hours"]):
            top = min(top, float(r["available_hours"]))
        hours = np.linspace(0, top, 200)
        v = value.value(r["rate"] * (r["held_hours"] + hours), r["curve"], r["saturation_hours"], r["curve_shape"])
        dollars = hours * cost[i]
        ax.plot(dollars, v, color="tab:blue")
        v_plan = float(plan.sources["value"].iloc[i])
        ax.plot([x_plan * cost[i]], [v_plan], "o", color="tab:red")
        if plan.lambda_ > 0 and math.isfinite(plan.lambda_):
            ax.plot(dollars, v_plan + plan.lambda_ * (dollars - x_plan * cost[i]), ":", color="grey", linewidth=1)
        ax.set_title(f"{label(r['source'])}: {x_plan:,.0f} h, value {v_plan:,.1f}", loc="left", fontsize=9)
        ax.set_xlabel("$ spent, all in", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.spines[["top", "right"]].set_visible(False)
    axes[0, 0].set_ylabel("value")
    fig.suptitle(
        f"Value against dollars spent; red: the plan; dotted: slope λ = {plan.lambda_:.3g} value per $",
        x=0.01, ha="left", fontsize=10,
    )  # fmt: skip
    fig.tight_layout()
    return fig


@quiet_glyphs
def scenario_values(plan: ScenarioPlan) -> Figure:
    """The distribution of the plan's value over the scenarios beside the mean-scenario plan's:
    cumulative probability against value, with each plan's expected value and CVaR marked."""
    fig, ax = _subplots(figsize=(8, 4.5))
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
def stage_rates(row: pd.Series) -> Figure:
    """The rates of the accelerator's demand, the read and the decode stage [frames/s], the
    binding stage marked: the slowest of read and decode, or the accelerator when both keep up."""
    names = ["accelerator", "read", "decode"]
    rates = [float(row["demand_fps"]), float(row["read_fps"]), float(row["decode_fps"])]
    binding = str(row["stage"])
    fig, ax = _subplots(figsize=(4.2, 2.8), layout="constrained")
    colors = ["tab:red" if n == binding else "tab:grey" for n in names]
    bars = ax.barh(names, rates, color=colors)
    for bar, rate, n in zip(bars, rates, names, strict=True):
        ax.annotate(f"{rate:,.0f}" + (" ← binds" if n == binding else ""), (bar.get_width(), bar.get_y() + 0.4),
                    xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)  # fmt: skip
    ax.set_xscale("log")
    ax.set_xlabel("frames/s (log scale)")
    ax.invert_yaxis()
    ax.set_xlim(right=max(rates) * 8)
    ax.set_title(f"busy {100 * float(row['busy']):.1f} %", loc="left", fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    return fig


@quiet_glyphs
def bill_terms(row: pd.Series) -> Figure:
    """The transport bill of one recorded hour as one stacked bar: bytes, cores, idle [$]."""
    fig, ax = _subplots(figsize=(4.2, 2.8), layout="constrained")
    left = 0.0
    for name, key, color in (("bytes", "bytes_usd", "tab:blue"), ("cores", "cores_usd", "tab:orange"),
                             ("idle accelerator", "idle_usd", "tab:red")):  # fmt: skip
        v = float(row[key])
        ax.barh([0], [v], left=left, color=color, label=f"{name} ${v:,.2f}")
        left += v
    ax.set_yticks([])
    ax.set_xlabel("$ per recorded hour")
    ax.set_title(f"bill ${float(row['bill_usd']):,.2f}, {100 * float(row['share']):.1f} % of the price",
                 loc="left", fontsize=10)  # fmt: skip
    ax.set_ylim(-0.5, 1.6)
    ax.legend(loc="upper left", ncol=1, fontsize=8, frameon=False)
    ax.spines[["top", "right", "left"]].set_visible(False)
    return fig


@quiet_glyphs
def sensitivity_hours(frame: pd.DataFrame, span: tuple[float, float] | None = None) -> Figure:
    """Hours bought of each source against the varied input (log scale), and the plan's value;
    ``span`` (byte-price multipliers over which the plan keeps its shape) shaded."""
    parameter = str(frame["parameter"].iloc[0])
    fig, (ax, ax2) = _subplots(2, 1, figsize=(8, 6), sharex=True, gridspec_kw={"height_ratios": [2, 1]})
    for source, part in frame.groupby("source", sort=False):
        ax.plot(part["x"], part["hours"], marker="o", markersize=3, label=label(source))
        ax.annotate(label(source), (part["x"].iloc[-1], part["hours"].iloc[-1]), xytext=(4, 0),
                    textcoords="offset points", fontsize=8, va="center")  # fmt: skip
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=1.0)
    ax.set_ylim(bottom=0)
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


@quiet_glyphs
def busy_vs_cores(row: pd.Series, most: float | None = None) -> Figure:
    """The accelerator's busy fraction against the cores decoding for it, for one format."""
    need = float(row["cores_needed"])
    top = most or max(2.0 * need, 2.0 * float(row["cores"]), 4.0)
    cores = np.linspace(0, top, 400)
    engine = formulas.decoder_fps(row["width"], row["height"], row["nvdec_fps_1080p"])
    decode = formulas.decode_supply_fps(cores, row["core_fps"], row["nvdec_engines"], engine, row["g"], row["stored"])
    busy = formulas.busy(np.minimum(decode, row["read_fps"]), row["demand_fps"])
    fig, ax = _subplots(figsize=(7, 4))
    ax.plot(cores, 100 * np.asarray(busy), color="tab:blue")
    ax.plot([row["cores"]], [100 * row["busy"]], "o", color="tab:red")
    ax.annotate(f"{row['cores']:g} cores: {100 * row['busy']:.1f} %", (row["cores"], 100 * row["busy"]),
                xytext=(6, -12), textcoords="offset points", fontsize=8)  # fmt: skip
    if need > 0:
        ax.axvline(need, color="grey", linestyle=":", linewidth=1)
        ax.annotate(f"needed: {need:.1f}", (need, 5), xytext=(4, 0), textcoords="offset points", fontsize=8)
    ax.set_xlabel("CPU cores decoding per accelerator")
    ax.set_ylabel("accelerator busy [%]")
    ax.set_ylim(0, 105)
    ax.set_title(f"{label(row['source'])}: busy against cores", loc="left")
    ax.spines[["top", "right"]].set_visible(False)
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
    from ..program.period_plan import hours_by_period

    table = hours_by_period(plan.schedule).T.loc[list(plan.periods["period"])]
    order = table.sum(axis=0).sort_values(ascending=False).index
    named = [c for c in order[:SCHEDULE_SOURCES] if table[c].sum() > 0]
    fig, (top, low) = _subplots(2, 1, figsize=(9.5, 6.4), sharex=True, layout="constrained")
    bottom = np.zeros(len(periods))
    for name in named:
        vals = table[name].to_numpy(float)
        top.bar(periods, vals, bottom=bottom, label=label(name), width=0.6)
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
    low.bar(periods, purchase, label="purchases", width=0.6, color=BILL_COLOURS["bytes"])
    low.bar(periods, bill, bottom=purchase, label="the run's transport bill", width=0.6, color=BILL_COLOURS["cores"])
    low.plot(periods, plan.periods["money_usd"].to_numpy(float), "k_", markersize=28, label="money arriving")
    low.set_ylabel("$")
    low.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=8)
    for ax in (top, low):
        ax.spines[["top", "right"]].set_visible(False)
    return fig
