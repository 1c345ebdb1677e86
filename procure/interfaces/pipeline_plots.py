"""The figures of a format's pipeline and of its transport bill: the simulated queue over a
window (:func:`timeline`), each source's bill of one recorded hour (:func:`bill_split`), the
stages' rates (:func:`stage_rates`), one hour's bill as a bar (:func:`bill_terms`) and the
accelerator's busy fraction against the cores decoding for it (:func:`busy_vs_cores`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..pipeline import formulas
from .canvas import label, quiet_glyphs, subplots
from .queue_view import TIMELINE_FRAMES, queue_window

if TYPE_CHECKING:
    from ..pipeline.queue import SimulationResult

#: Room above the tallest thing a figure draws (the buffer, a bill's bar) [1].
HEADROOM = {"buffer": 1.15, "bill": 1.25}
#: :func:`busy_vs_cores` draws the cores to this many times the cores needed or the cores
#: the cluster has [1], whichever is more, and to at least :data:`LEAST_CORES_DRAWN`.
CORES_PAST_NEED = 2.0
#: The fewest cores :func:`busy_vs_cores` draws [cores].
LEAST_CORES_DRAWN = 4.0


@quiet_glyphs
def timeline(result: SimulationResult, busy_formula: float | None = None, frames: int = TIMELINE_FRAMES) -> Figure:
    """The simulated pipeline over a window: decoders at work, the buffer, the accelerator
    (the window of :func:`procure.interfaces.queue_view.queue_window`).

    Parameters
    ----------
    result : SimulationResult
        A run of :func:`procure.pipeline.queue.simulate_queue`.
    busy_formula : float, optional
        The closed form's busy fraction, shown beside the simulated one.
    frames : int, default 200
        Frames after the warm-up the window covers.
    """
    w = queue_window(result, frames)
    rows = max(len(w.lanes), 4)
    fig, axes = subplots(3, 1, figsize=(11, 2.0 + 0.18 * rows + 3.2), sharex=True,
                         gridspec_kw={"height_ratios": [rows * 0.18 + 0.6, 1.4, 0.7]})  # fmt: skip
    ax_dec, ax_buf, ax_acc = axes
    colours = {"core": "tab:blue", "nvdec": "tab:green"}
    for (kind, lane), part in w.decodes.groupby(["kind", "lane"], sort=False):
        bars = list(zip(part["start_ms"], part["end_ms"] - part["start_ms"], strict=True))
        ax_dec.broken_barh(bars, (w.lanes.index(str(lane)) - 0.4, 0.8), facecolor=colours.get(str(kind), "grey"),
                           edgecolor="white", linewidth=0.3)  # fmt: skip
    ax_dec.set_yticks(range(len(w.lanes)), w.lanes)
    ax_dec.invert_yaxis()
    ax_dec.set_title(w.decoders_title, loc="left", fontsize=10)

    ax_buf.step(w.buffer_ms, w.buffer_frames, where="post", color="tab:orange")
    ax_buf.axhline(w.buffer, color="grey", linestyle=":", linewidth=1)
    ax_buf.text(0, w.buffer, f" buffer holds {w.buffer}", va="bottom", fontsize=8, color="grey")
    ax_buf.set_ylim(0, w.buffer * HEADROOM["buffer"])
    ax_buf.set_ylabel("frames")
    ax_buf.set_title(w.buffer_title, loc="left", fontsize=10)

    bars = list(zip(w.trains["start_ms"], w.trains["end_ms"] - w.trains["start_ms"], strict=True))
    ax_acc.broken_barh(bars, (0, 1), facecolor="tab:red", edgecolor="white", linewidth=0.3)
    ax_acc.set_yticks([])
    ax_acc.set_title(w.accelerator_title(busy_formula), loc="left", fontsize=10)
    ax_acc.set_xlabel(w.time_label)
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
    fig, ax = subplots(figsize=(8, 4.2))
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
    ax.set_ylim(0, (bottom.max() or 1.0) * HEADROOM["bill"])
    ax.set_title("Transport bill of one recorded hour, by source", loc="left")
    ax.legend(loc="upper right", frameon=False)
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
    fig, ax = subplots(figsize=(4.2, 2.8), layout="constrained")
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
    fig, ax = subplots(figsize=(4.2, 2.8), layout="constrained")
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
def busy_vs_cores(row: pd.Series, most: float | None = None) -> Figure:
    """The accelerator's busy fraction against the cores decoding for it, for one format."""
    need = float(row["cores_needed"])
    top = most or max(CORES_PAST_NEED * need, CORES_PAST_NEED * float(row["cores"]), LEAST_CORES_DRAWN)
    cores = np.linspace(0, top, 400)
    engine = formulas.decoder_fps(row["width"], row["height"], row["nvdec_fps_1080p"])
    decode = formulas.decode_supply_fps(cores, row["core_fps"], row["nvdec_engines"], engine, row["g"], row["stored"])
    busy = formulas.busy(np.minimum(decode, row["read_fps"]), row["demand_fps"])
    fig, ax = subplots(figsize=(7, 4))
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
