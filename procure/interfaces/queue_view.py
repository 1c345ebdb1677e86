"""The window of a simulated queue that its figures draw: the decoders' lanes, the buffer's
level and the accelerator's training over a stretch of frames after the warm-up.

:func:`queue_window` is the one statement of what the window holds; the static figure
(:func:`procure.interfaces.pipeline_plots.timeline`) and the app's interactive chart
(:func:`procure.interfaces.pipeline_charts.queue_chart`) both draw it. Times are in ms from
the accelerator's take of the window's first frame.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from ..pipeline.queue import SimulationResult

#: Frames the window shows after the warm-up [frames].
TIMELINE_FRAMES = 200
#: Decoders drawn one lane each; more are summarised [decoders].
TIMELINE_LANES = 24
#: Milliseconds per second, the window's unit of time [ms/s].
MS = 1e3


@dataclass(frozen=True)
class QueueWindow:
    """A stretch of a simulated queue, ready to draw.

    Attributes
    ----------
    first : int
        Frames left out as warm-up before the window (its first frame's place in take order).
    lanes : list of str
        The decoders drawn, one lane each: ``"core 3"``, ``"nvdec 25"``.
    decoders : int
        Decoders the run has (more than ``len(lanes)`` when some are not drawn).
    decodes : pandas.DataFrame
        One row per decode in the window on a drawn lane: ``lane``, ``kind``, ``frame``,
        ``start_ms``, ``end_ms``.
    buffer_ms, buffer_frames : numpy.ndarray
        The buffer's level as steps: from each time [ms] on, that many frames [frames].
    trains : pandas.DataFrame
        The window's frames in take order: ``frame``, ``start_ms``, ``end_ms``.
    buffer : int
        The buffer's capacity [frames].
    mean_buffer : float
        Mean frames in the buffer over the whole run [frames].
    busy : float
        The accelerator's simulated busy fraction [1].
    stage : str
        The stage the run finds binding.
    """

    first: int
    lanes: list[str]
    decoders: int
    decodes: pd.DataFrame
    buffer_ms: np.ndarray
    buffer_frames: np.ndarray
    trains: pd.DataFrame
    buffer: int
    mean_buffer: float
    busy: float
    stage: str

    @property
    def decoders_title(self) -> str:
        """The lanes' title: what they show, and how many decoders are not drawn."""
        if not self.decoders:
            return "no decoders: frames are stored decoded or rendered"
        more = self.decoders - len(self.lanes)
        return "decoders at work" + (f" (first {len(self.lanes)} of {self.decoders}; {more} more not drawn)"
                                     if more else "")  # fmt: skip

    def accelerator_title(self, busy_formula: float | None = None) -> str:
        """The accelerator's title: its simulated busy fraction, the closed form's beside it
        when given [1], and the binding stage."""
        shown = f"busy {100 * self.busy:.1f} % simulated"
        if busy_formula is not None:
            shown += f", {100 * busy_formula:.1f} % by the closed form"
        return f"accelerator training (gaps: waiting for frames) — {shown}; binds: {self.stage}"

    @property
    def buffer_title(self) -> str:
        """The buffer's title, with its mean over the whole run."""
        return f"frames in the buffer (mean {self.mean_buffer:.1f} over the whole run)"

    @property
    def time_label(self) -> str:
        """The time axis' label."""
        return f"time since frame {self.first} was taken [ms]"


def queue_window(result: SimulationResult, frames: int = TIMELINE_FRAMES, lanes: int = TIMELINE_LANES) -> QueueWindow:
    """The window of ``frames`` frames after the warm-up of a queue run, its first ``lanes``
    decoders drawn.

    Parameters
    ----------
    result : SimulationResult
        A run of :func:`procure.pipeline.queue.simulate_queue`.
    frames : int, default 200
        Frames the window covers [frames].
    lanes : int, default 24
        Decoders drawn one lane each [decoders].
    """
    tl = result.timeline
    take = tl["train_start_s"].to_numpy()
    order = np.argsort(take, kind="stable")
    first = result.warmup_frames
    window = order[first : first + frames]
    t0, t1 = float(take[window].min()), float(tl["train_end_s"].to_numpy()[window].max())
    numbers = sorted(int(d) for d in tl["decoder"].unique() if d >= 0)
    drawn = numbers[:lanes]
    kind_of = tl.drop_duplicates("decoder").set_index("decoder")["decoder_kind"]
    names = {d: f"{kind_of[d]} {d}" for d in drawn}
    sel = tl[(tl["decode_end_s"] >= t0) & (tl["decode_start_s"] <= t1) & tl["decoder"].isin(drawn)]
    decodes = pd.DataFrame({"lane": [names[int(d)] for d in sel["decoder"]], "kind": sel["decoder_kind"].astype(str),
                            "frame": sel["frame"].astype(int), "start_ms": (sel["decode_start_s"] - t0) * MS,
                            "end_ms": (sel["decode_end_s"] - t0) * MS}).reset_index(drop=True)  # fmt: skip
    level = result.buffer_level()
    inside = level[(level["time_s"] >= t0) & (level["time_s"] <= t1)]
    before = level[level["time_s"] < t0]
    start_level = float(before["frames"].iloc[-1]) if len(before) else 0.0
    last = float(inside["frames"].iloc[-1]) if len(inside) else start_level
    xs = np.concatenate([[0.0], (inside["time_s"].to_numpy() - t0) * MS, [(t1 - t0) * MS]])
    ys = np.concatenate([[start_level], inside["frames"].to_numpy(dtype=float), [last]])
    acc = tl.iloc[window]
    trains = pd.DataFrame({"frame": acc["frame"].astype(int), "start_ms": (acc["train_start_s"] - t0) * MS,
                           "end_ms": (acc["train_end_s"] - t0) * MS}).reset_index(drop=True)  # fmt: skip
    return QueueWindow(first=first, lanes=[names[d] for d in drawn], decoders=len(numbers), decodes=decodes,
                       buffer_ms=xs, buffer_frames=ys, trains=trains, buffer=int(result.buffer),
                       mean_buffer=float(result.mean_buffer), busy=float(result.busy),
                       stage=str(result.stage))  # fmt: skip
