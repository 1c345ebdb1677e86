"""Properties of the closed form over random formats, models and clusters (hypothesis)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from procure import bill, pipeline

FAST = settings(max_examples=150, deadline=None)

sides = st.integers(min_value=64, max_value=4096)
config = st.fixed_dictionaries(
    {
        "width": sides,
        "height": sides,
        "bits_per_pixel": st.floats(0.01, 2.0),
        "extra_bytes_per_frame": st.floats(0, 1e4),
        "stored": st.sampled_from(pipeline.STORED_MODES),
        "read": st.sampled_from(pipeline.READ_MODES),
        "params": st.floats(1e6, 1e11),
        "input_side": st.integers(28, 1024),
        "patch": st.integers(4, 28),
        "mfu": st.floats(0.05, 1.0),
        "peak_flops": st.floats(1e13, 5e15),
        "cores": st.integers(0, 512),
        "nvdec_engines": st.integers(0, 8),
        "core_fps_1080p": st.floats(10, 1000),
        "nvdec_fps_1080p": st.floats(100, 3000),
        "link_bytes_per_s": st.floats(1e7, 1e11),
        "gop": st.integers(1, 300),
        "decoded_bytes_per_pixel": st.floats(1.0, 4.0),
    }
).filter(lambda c: c["input_side"] >= c["patch"])


def evaluate(c: dict) -> pd.Series:
    return pipeline.evaluate(pd.DataFrame([c])).iloc[0]


def has_a_decoder(c: dict) -> bool:
    return c["stored"] != "video" or c["cores"] + c["nvdec_engines"] > 0


@FAST
@given(config)
def test_busy_in_unit_interval(c):
    assume(has_a_decoder(c))
    r = evaluate(c)
    assert 0 < r["busy"] <= 1


@FAST
@given(config)
def test_pixels_per_token_identity(c):
    r = evaluate(c)
    assert np.isclose(r["pixels_per_token"] * r["tokens_per_frame"], r["g"] * c["width"] * c["height"], rtol=1e-12)


@FAST
@given(config)
def test_full_speed_exactly_when_cores_suffice(c):
    """Encoded, in order, no NVDEC, read not binding: busy = 1 exactly when cores ≥ needed."""
    c = {**c, "stored": "video", "read": "order", "nvdec_engines": 0}
    r = evaluate(c)
    assume(r["read_fps"] >= r["demand_fps"])
    assume(abs(c["cores"] - r["cores_needed"]) > 1e-9 * max(1.0, r["cores_needed"]))  # not on the edge
    assert (r["busy"] == 1.0) == (c["cores"] >= r["cores_needed"])


@FAST
@given(config, st.integers(1, 64))
def test_more_cores_never_lower_busy(c, more):
    assume(has_a_decoder(c))
    fewer, extra = evaluate(c), evaluate({**c, "cores": c["cores"] + more})
    assert extra["busy"] >= fewer["busy"]


@FAST
@given(config, st.floats(0.01, 1e4), st.floats(1, 16), st.floats(1, 120), st.floats(1, 50))
def test_bill_is_linear_in_hours(c, hours, cameras, fps, epochs):
    """The bill of h hours, computed from h hours of frames, is h times the bill of one."""
    assume(has_a_decoder(c))
    r = evaluate(c)
    prices = {"byte": 0.44, "core": 0.04, "acc": 2.5}

    def bill_of(frames: float, extra_bytes_per_s: float) -> float:
        gb = bill.gb_stored_per_hour(
            frames,
            c["width"],
            c["height"],
            c["bits_per_pixel"],
            c["stored"],
            extra_bytes_per_s,
            c["decoded_bytes_per_pixel"],
        )
        wall = bill.wall_seconds(frames, r["demand_fps"], r["supply_fps"])
        useful = bill.useful_seconds(frames, r["demand_fps"])
        return (
            bill.bytes_usd(gb, prices["byte"])
            + bill.cores_usd(c["cores"], wall, epochs, prices["core"], c["stored"])
            + bill.idle_usd(wall, useful, epochs, prices["acc"])
        )

    one = bill_of(bill.frames_per_hour(cameras, fps), 100.0)
    many = bill_of(hours * bill.frames_per_hour(cameras, fps), hours * 100.0)
    assert np.isclose(many, hours * one, rtol=1e-9)


@FAST
@given(st.lists(config, min_size=1, max_size=20))
def test_vectorised_equals_scalar(configs):
    """A table of configurations gives, row by row, what the scalar formulas give."""
    table = pipeline.evaluate(pd.DataFrame(configs))
    for c, (_, row) in zip(configs, table.iterrows(), strict=True):
        n = pipeline.tokens_per_frame(c["input_side"], c["patch"])
        d = pipeline.demand_fps(c["mfu"], c["peak_flops"], c["params"], n)
        g = pipeline.frames_decoded_per_frame(c["read"], c["stored"], c["gop"])
        core = pipeline.decoder_fps(c["width"], c["height"], c["core_fps_1080p"])
        assert row["demand_fps"] == d and row["g"] == g and row["core_fps"] == core
