"""Plots, written atomically to PNG or SVG (matplotlib, no screen needed)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from .errors import invalid
from .output import write_atomic

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .simulate import SimulationResult

PLOT_FORMATS = (".png", ".svg")
#: Frames the timeline shows after the warm-up [frames].
TIMELINE_FRAMES = 200
#: Decoders drawn one lane each; more are summarised [decoders].
TIMELINE_LANES = 24


def check_path(path: Path | str) -> Path:
    """Check a plot's path before any work: it ends in .png or .svg, its folder exists."""
    target = Path(path)
    if target.suffix.lower() not in PLOT_FORMATS:
        raise invalid("plot", str(path), "the file must end in .png or .svg")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise invalid("plot", str(path), f"folder {str(folder)!r} does not exist")
    return target


def save(fig: Figure, path: Path | str) -> Path:
    """Save a figure to ``path`` (``.png`` or ``.svg``) atomically and close it."""
    try:
        target = check_path(path)
    except Exception:
        plt.close(fig)
        raise
    suffix = target.suffix.lower()
    try:
        write_atomic(target, lambda tmp: fig.savefig(tmp, format=suffix[1:], dpi=120, bbox_inches="tight"))
    finally:
        plt.close(fig)
    return target


def timeline(result: SimulationResult, busy_formula: float | None = None, frames: int = TIMELINE_FRAMES) -> Figure:
    """The simulated pipeline over a window: decoders at work, the buffer, the accelerator.

    Parameters
    ----------
    result : SimulationResult
        A run of :func:`procure.simulate.simulate_queue`.
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
    fig, axes = plt.subplots(
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
