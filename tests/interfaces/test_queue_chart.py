"""The simulated queue's window and its two drawings (the static figure, the app's Plotly chart),
checked against the simulation's own timeline by counts written apart from the window's code."""

from __future__ import annotations

import re

import numpy as np
import pytest

from procure.interfaces.pipeline_plots import timeline
from procure.interfaces.queue_view import MS, queue_window
from procure.pipeline.queue import simulate_queue

go = pytest.importorskip("plotly.graph_objects", reason="Plotly is not installed (procure-robotics[app])")


def run(decoders: int = 3, frames: int = 1500, seed: int = 4):
    """A queue whose decode binds (three slow cores), noisy, so the buffer moves."""
    return simulate_queue(3000.0, 40_000.0, np.full(decoders, 300.0), frames=frames, decode_cv=0.5, train_cv=0.3,
                          seed=seed)  # fmt: skip


def level_at(tl, t: float) -> int:
    """Frames in the buffer at time ``t`` [s]: entered (at or before t) and not yet taken."""
    inside = (tl["buffer_in_s"].to_numpy() <= t) & (tl["train_start_s"].to_numpy() > t)
    return int(inside.sum())


def test_the_window_holds_the_frames_after_the_warm_up_in_take_order():
    result = run()
    w = queue_window(result, frames=120)
    tl = result.timeline.sort_values("train_start_s", kind="stable")
    after = tl.iloc[result.warmup_frames : result.warmup_frames + 120]
    t0 = after["train_start_s"].min()
    assert list(w.trains["frame"]) == list(after["frame"])
    np.testing.assert_allclose(w.trains["start_ms"], (after["train_start_s"] - t0) * 1e3)
    np.testing.assert_allclose(w.trains["end_ms"], (after["train_end_s"] - t0) * 1e3)
    assert w.trains["start_ms"].iloc[0] == 0.0 and w.first == result.warmup_frames


def test_the_buffers_steps_are_the_frames_entered_and_not_yet_taken():
    result = run()
    w = queue_window(result, frames=120)
    t0 = result.timeline.sort_values("train_start_s")["train_start_s"].iloc[result.warmup_frames]
    xs, ys = w.buffer_ms, w.buffer_frames
    assert ys.max() > 1  # the buffer moves in this run
    for k in range(len(xs) - 1):
        if xs[k + 1] > xs[k]:  # between two changes the level is the step's
            middle = t0 + (xs[k] + xs[k + 1]) / 2 / MS
            assert ys[k] == level_at(result.timeline, middle), k


def test_every_decode_that_overlaps_the_window_is_on_its_lane():
    result = run()
    w = queue_window(result, frames=120)
    tl = result.timeline
    take = tl.sort_values("train_start_s")
    t0 = take["train_start_s"].iloc[result.warmup_frames]
    t1 = take["train_end_s"].iloc[result.warmup_frames : result.warmup_frames + 120].max()
    seen = (tl["decode_end_s"] >= t0) & (tl["decode_start_s"] <= t1) & (tl["decoder"] >= 0)
    assert len(w.decodes) == int(seen.sum())
    assert w.lanes == ["core 0", "core 1", "core 2"] and w.decoders == 3
    assert set(w.decodes["lane"]) == set(w.lanes)


def test_more_decoders_than_lanes_are_named():
    w = queue_window(run(decoders=30, frames=2000), lanes=24)
    assert len(w.lanes) == 24 and w.decoders_title == "decoders at work (first 24 of 30; 6 more not drawn)"


def test_the_chart_hovers_with_the_windows_times_and_titles_the_busy_fraction():
    from procure.interfaces.pipeline_charts import queue_chart

    result = run()
    w = queue_window(result, frames=120)
    fig = queue_chart(w, busy_formula=0.3)
    training = next(t for t in fig.data if t.name == "training")
    first = w.trains.iloc[0]
    assert training.customdata[0] == f"frame {int(first['frame'])} trains: 0.00–{first['end_ms']:.2f} ms"
    assert len(training.customdata) == 120
    core = next(t for t in fig.data if t.name == "core")
    assert all(re.fullmatch(r"core \d decodes frame \d+: -?[\d.]+–[\d.]+ ms", t) for t in core.customdata)
    titles = [a.text for a in fig.layout.annotations]
    assert f"busy {100 * result.busy:.1f} % simulated, 30.0 % by the closed form" in " ".join(titles)


def test_the_figure_draws_the_same_lanes_and_titles():
    result = run()
    w = queue_window(result)
    fig = timeline(result, busy_formula=0.3)
    dec, _buf, acc = fig.axes
    assert [t.get_text() for t in dec.get_yticklabels()] == w.lanes
    assert acc.get_title(loc="left") == w.accelerator_title(0.3)


def test_the_charts_lanes_are_the_windows_in_order_even_when_idle():
    # a category axis orders lanes as they first appear in the data; the chart sets the order
    from procure.interfaces.pipeline_charts import queue_chart

    for seed in range(3):
        w = queue_window(run(decoders=8, seed=seed), frames=120)
        fig = queue_chart(w)
        axis = fig.layout.yaxis
        assert list(axis.categoryarray) == w.lanes == [f"core {d}" for d in range(8)]
        assert axis.categoryorder == "array" and tuple(axis.range) == (7.5, -0.5)
