"""The queue simulation (seed §4) against the closed form, an independent SimPy model of the
same queue, and its properties."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conftest import seed_state
from hypothesis import given, settings
from hypothesis import strategies as st
from simpy_queue import simpy_queue

from procure import InputError
from procure.interfaces.cli import main
from procure.pipeline.queue import simulate, simulate_queue

# Every state the seed lists in "What to try" (seed §4).
SEED_STATES = {
    "defaults": {},
    "2160p": {"width": 3840, "height": 2160},
    "480p": {"width": 854, "height": 480},
    "23 cores": {"cores": 23},
    "24 cores": {"cores": 24},
    "411 M": {"model": "411m"},
    "25 M": {"model": "25m"},
    "25 M with NVDEC": {"model": "25m", "nvdec": True},
    "4K with NVDEC": {"width": 3840, "height": 2160, "nvdec": True},
    "stored decoded": {"read": "decoded"},
    "random frames": {"read": "random"},
}


@pytest.mark.parametrize("changes", SEED_STATES.values(), ids=SEED_STATES.keys())
def test_simulation_agrees_with_closed_form(changes):
    """Seed §4: the simulated busy fraction agrees with the formula's to about a point."""
    row = seed_state(**changes)
    result = simulate(row, frames=40_000)
    assert abs(result.busy - row["busy"]) < 0.01
    assert result.stage == row["stage"]


# ----------------------------------------------------------------------------- SimPy oracle


ORACLE_CASES = {
    # (demand fps, read fps, decoder rates, buffer)
    "decode binds": (2770.8, 45_000.0, [120.0] * 8, 64),
    "accelerator binds, full buffer": (500.0, 45_000.0, [120.0] * 8, 4),
    "buffer of one": (900.0, math.inf, [120.0] * 8, 1),
    "mixed CPU and NVDEC": (10_307.0, 45_000.0, [120.0] * 8 + [771.0] * 7, 64),
    "mixed, small buffer, accelerator binds": (5_000.0, math.inf, [120.0] * 3 + [771.0] * 7, 2),
    "read binds": (2770.8, 482.25, [], 64),
    "read binds with decoders": (2770.8, 300.0, [120.0] * 4, 8),
    "uneven rates": (1_000.0, 2_000.0, [37.0, 120.0, 411.0], 3),
}


@pytest.mark.parametrize("case", ORACLE_CASES.values(), ids=ORACLE_CASES.keys())
def test_agrees_with_simpy(case):
    demand, read, rates, buffer = case
    frames = 6_000
    ours = simulate_queue(demand, read, rates, buffer=buffer, frames=frames)
    busy, throughput = simpy_queue(demand, read, rates, buffer, frames)
    assert ours.busy == pytest.approx(busy, rel=1e-6)
    assert ours.throughput_fps == pytest.approx(throughput, rel=1e-6)


def test_full_buffer_when_accelerator_binds():
    result = simulate_queue(500.0, math.inf, [120.0] * 8, buffer=16, frames=5_000)
    assert result.busy == pytest.approx(1.0)
    assert result.mean_buffer > 14  # the decoders keep it (nearly) full
    assert result.stage == "accelerator"
    level = result.buffer_level()
    assert level["frames"].max() == 16 and level["frames"].min() >= 0


def test_timeline_is_consistent():
    r = simulate_queue(
        1_000.0, 5_000.0, [120.0] * 4 + [771.0], buffer=8, frames=3_000, decoder_kinds=["core"] * 4 + ["nvdec"]
    )
    tl = r.timeline
    assert (tl["decode_end_s"] >= tl["decode_start_s"]).all()
    assert (tl["decode_start_s"] >= tl["read_s"] - 1e-12).all()
    assert (tl["buffer_in_s"] >= tl["decode_end_s"]).all()
    assert (tl["train_start_s"] >= tl["buffer_in_s"]).all()
    starts = np.sort(tl["train_start_s"].to_numpy())
    ends = np.sort(tl["train_end_s"].to_numpy())
    assert (starts[1:] >= ends[:-1] - 1e-12).all()  # one frame at a time
    assert set(tl["decoder_kind"]) == {"core", "nvdec"}
    assert r.buffer_level()["frames"].max() <= 8


def test_jitter_moves_busy_below_the_formula():
    """With variable decode and train times and a small buffer the queue loses throughput."""
    exact = simulate_queue(1_000.0, math.inf, [130.0] * 8, buffer=2, frames=20_000)
    jittery = simulate_queue(1_000.0, math.inf, [130.0] * 8, buffer=2, frames=20_000, decode_cv=1.0, train_cv=1.0)
    assert exact.busy == pytest.approx(1.0)
    assert jittery.busy < 0.98
    big = simulate_queue(1_000.0, math.inf, [130.0] * 8, buffer=256, frames=20_000, decode_cv=1.0, train_cv=1.0)
    assert big.busy > jittery.busy


# ----------------------------------------------------------------------------- properties

queue = st.fixed_dictionaries(
    {
        "demand": st.floats(10, 5_000),
        "read": st.one_of(st.just(math.inf), st.floats(10, 10_000)),
        "core": st.floats(5, 1_000),
        "cores": st.integers(0, 10),
        "buffer": st.integers(1, 32),
    }
).map(lambda q: q | {"rates": [q["core"]] * q["cores"]})


def take_times(result) -> np.ndarray:
    return np.sort(result.timeline["train_start_s"].to_numpy())


@settings(max_examples=60, deadline=None)
@given(queue, st.integers(1, 6), st.integers(1, 16))
def test_monotone_and_bounded(q, more_cores, more_buffer):
    """Busy never exceeds 1; more cores or a larger buffer never delay the accelerator.

    Deterministic queue, a pool of identical cores: the accelerator's j-th take is never
    later, for every frame before the run's tail (the last m frames, m decoders), so the frames
    delivered by any time, and the throughput, are never lower. (With decoders of different
    speeds, first-free dispatch has scheduling anomalies: a frame can go to a slow decoder.)
    """
    n = 1_500
    run = lambda rates, buffer: simulate_queue(q["demand"], q["read"], rates, buffer=buffer, frames=n, warmup=0.0)  # noqa: E731
    base = run(q["rates"], q["buffer"])
    assert 0 < base.busy <= 1
    variants = [run(q["rates"], q["buffer"] + more_buffer)]
    if q["rates"]:
        variants.append(run(q["rates"] + [q["rates"][0]] * more_cores, q["buffer"]))
    for other in variants:
        assert 0 < other.busy <= 1
        steady = n - 1 - len(q["rates"]) - more_cores
        assert (take_times(other)[:steady] <= take_times(base)[:steady] * (1 + 1e-12) + 1e-12).all()


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"buffer": 0}, "buffer = 0 is invalid: must be a whole number ≥ 1"),
        ({"frames": 0}, "frames = 0 is invalid: must be a whole number ≥ 2 and ≤ 3,000,000"),
        ({"frames": 10**9}, "frames = 1000000000 is invalid: must be a whole number ≥ 2 and ≤ 3,000,000 (a run holds"),
        ({"decode_cv": 100.0}, "decode_cv = 100.0 is invalid: must be a number ≥ 0 and ≤ 10"),
        ({"demand_fps": 0.0}, "demand_fps = 0.0 is invalid: must be a number > 0"),
        ({"read_fps": -1.0}, "read_fps = -1.0 is invalid: must be a number > 0"),
        ({"decoder_fps": [120.0, 0.0]}, "decoder_fps[1] = 0.0 is invalid: must be a number > 0"),
        ({"decode_cv": -0.5}, "decode_cv = -0.5 is invalid: must be a number ≥ 0"),
        ({"warmup": 1.0}, "warmup = 1.0 is invalid: must be a number ≥ 0 and < 1"),
    ],
)
def test_bad_input(kwargs, message):
    args = {"demand_fps": 100.0, "read_fps": 1_000.0, "decoder_fps": [120.0]} | kwargs
    with pytest.raises(InputError) as info:
        simulate_queue(args.pop("demand_fps"), args.pop("read_fps"), args.pop("decoder_fps"), **args)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--buffer", "0"], "buffer = 0 is invalid: must be a whole number ≥ 1"),
        (["--frames", "0"], "frames = 0 is invalid"),
        (
            ["--cores", "0"],
            "cores_per_accelerator = 0 with NVDEC off: nothing decodes the video of source 'own'",
        ),
        (["--frames", "1000000000"], "frames = 1000000000 is invalid: must be a whole number ≥ 2 and ≤ 3,000,000"),
        (["--cores", "2.5"], "cores = 2.5 is invalid: must be a whole number ≥ 0"),
        (["--plot", "timeline.jpg"], "plot = 'timeline.jpg' is invalid: the file must end in .png or .svg"),
    ],
)
def test_cli_bad_input(args, message, capsys):
    assert main(["simulate", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_cli_json_and_plot(tmp_path, capsys):
    plot = tmp_path / "timeline.svg"
    assert main(["simulate", "--frames", "20000", "--json", "--plot", str(plot)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert abs(out["busy_simulated"] - out["busy_formula"]) < 0.01
    assert round(out["busy_formula"], 3) == 0.346 and out["stage"] == "decode"
    assert plot.read_text().lstrip().startswith("<?xml") and "accelerator training" in plot.read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["timeline.svg"]  # no temporary file left


def test_cli_readable(capsys):
    assert main(["simulate", "--frames", "20000", "--cores", "24"]) == 0
    text = capsys.readouterr().out
    assert "simulated" in text and "closed form" in text and "100.0 %" in text
