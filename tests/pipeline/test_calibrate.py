"""``procure calibrate``: clips encoded here at known settings, measured back exactly."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from clips import audio_only, encode, stream_bytes

from procure.errors import InputError
from procure.interfaces.cli import main

pytest.importorskip("av")
from procure.pipeline import calibrate as calibration
from procure.pipeline.calibrate import (
    CALIBRATION_KEYS,
    DECODE_SPREAD_LIMIT,
    calibrate_file,
    calibration_steps,
    decode_spread_note,
    frame_timing,
    summary,
)

SETTINGS = [
    ("libx264", "h264", 64, 48, 8),
    ("libx264", "h264", 96, 64, 4),
    ("libx264", "h264", 160, 90, 16),
    ("mpeg4", "mpeg4", 64, 48, 8),
    ("mpeg4", "mpeg4", 96, 64, 6),
]


@pytest.mark.parametrize(("encoder", "codec", "width", "height", "gop"), SETTINGS)
def test_a_clip_is_measured_back(tmp_path, encoder, codec, width, height, gop):
    frames = 3 * gop * (48 // (3 * gop)) or 48  # a whole number of keyframe intervals
    clip = encode(tmp_path / "clip.mp4", codec=encoder, width=width, height=height, gop=gop, frames=frames)
    c = calibrate_file(clip, repeat=3, reads=10_000)
    assert (c.codec, c.width, c.height, c.fps, c.frames, c.gop) == (codec, width, height, 30.0, frames, gop)
    assert c.duration_s == pytest.approx(frames / 30)
    size, packets = stream_bytes(clip)
    assert packets == frames
    assert c.bits_per_pixel == pytest.approx(size * 8 / (frames * width * height), rel=1e-12)
    assert c.random_read_frames == pytest.approx((gop + 1) / 2, rel=1e-12)  # every frame read once
    assert 0 < c.decode_fps_min <= c.decode_fps <= c.decode_fps_max
    assert c.core_fps_1080p == pytest.approx(c.decode_fps * width * height / (1920 * 1080))
    assert c.constant_rate and c.fps_spread == 1.0
    assert list(c.to_dict()) == list(CALIBRATION_KEYS)


def test_random_reads_sampled_are_near_the_formula(tmp_path):
    clip = encode(tmp_path / "clip.mp4", gop=8, frames=96)
    c = calibrate_file(clip, repeat=1, reads=30, seed=3)
    assert abs(c.random_read_frames - 4.5) < 1.5  # 30 reads of 1..8: standard error 0.42


def test_summary_over_files(tmp_path):
    a = calibrate_file(encode(tmp_path / "a.mp4", gop=8), repeat=1)
    b = calibrate_file(encode(tmp_path / "b.mp4", gop=4, width=96, height=64), repeat=1)
    s = summary([a, b])
    bits = a.bits_per_pixel * a.frames * 64 * 48 + b.bits_per_pixel * b.frames * 96 * 64
    assert s["bits_per_pixel"] == pytest.approx(bits / (a.frames * 64 * 48 + b.frames * 96 * 64))
    assert s["gop"] == 6 and s["codec"] == "h264" and s["frames"] == a.frames + b.frames


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.write_text("not a video"), "not a video FFmpeg can read"),
        (lambda p: audio_only(p), "has no video stream (audio only)"),
        (lambda p: p.write_bytes(encode(p.with_name("whole.mp4")).read_bytes()[:1200]), ""),
    ],
    ids=["text", "audio-only", "truncated"],
)
def test_bad_files_end_in_one_line(tmp_path, capsys, make, message):
    path = tmp_path / "bad.mp4"
    make(path)
    code = main(["calibrate", str(path), "--json"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.count("\n") == 1
    assert captured.err.startswith(f"procure: error: {path}: ")
    assert message in captured.err


def test_json_and_write_into_the_ledger(tmp_path, capsys, ledger_copy):
    clip = encode(tmp_path / "own.mp4", gop=8, width=96, height=64)
    sources = ledger_copy / "sources.csv"
    before = sources.read_text().splitlines()
    code = main(["calibrate", str(clip), "--repeat", "2", "--json", "--ledger", str(ledger_copy),
                 "--source", "twin", "--write"])  # fmt: skip
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out) == ["files", "summary"] and out["files"][0]["gop"] == 8
    after = sources.read_text().splitlines()
    header = after[0].split(",")
    assert header[: len(before[0].split(","))] == before[0].split(",")
    assert header[-3:] == ["codec", "gop", "core_fps_1080p"]
    for old, new in zip(before[1:], after[1:], strict=True):
        if old.startswith("twin,"):
            cells = dict(zip(header, new.split(","), strict=True))
            assert (cells["width"], cells["height"], cells["fps"], cells["codec"], cells["gop"]) == (
                "96", "64", "30", "h264", "8")  # fmt: skip
            assert float(cells["core_fps_1080p"]) == pytest.approx(out["summary"]["core_fps_1080p"], rel=1e-9)
        else:
            assert new == old + ",,,"  # every other cell as it was, empty new cells


def test_write_needs_a_row_that_exists(tmp_path, capsys, ledger_copy):
    clip = encode(tmp_path / "own.mp4")
    before = (ledger_copy / "sources.csv").read_text()
    assert main(["calibrate", str(clip), "--repeat", "1", "--ledger", str(ledger_copy), "--source", "nobody",
                 "--write"]) == 2  # fmt: skip
    assert "source = 'nobody' is not a row of the ledger" in capsys.readouterr().err
    assert (ledger_copy / "sources.csv").read_text() == before


def test_repeat_out_of_range(tmp_path):
    with pytest.raises(InputError, match="repeat = 0 is invalid"):
        calibrate_file(encode(tmp_path / "a.mp4"), repeat=0)


def test_missing_pyav_names_the_extra(monkeypatch, capsys, tmp_path):
    import builtins

    real = builtins.__import__

    def no_av(name, *args, **kwargs):
        if name == "av":
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_av)
    assert main(["calibrate", str(tmp_path / "x.mp4")]) == 2
    from procure.install import install_command

    err = capsys.readouterr().err
    assert err == f"procure: error: calibration needs PyAV: {install_command('video')}\n"
    assert "video]" in err  # a command that installs this project's extra


def test_a_path_that_is_not_there(capsys, tmp_path):
    assert main(["calibrate", str(Path(tmp_path) / "none.mp4")]) == 2
    assert "none.mp4: no such file" in capsys.readouterr().err


def test_a_variable_rate_clip_is_measured_at_its_mean_rate(tmp_path):
    steps = [100 if i % 2 else 170 for i in range(48)]  # ticks of 1/3000 s, the last one the last frame's duration
    c = calibrate_file(encode(tmp_path / "vfr.mp4", pts_step=steps), repeat=1, reads=10)
    seconds = sum(steps) / 3000
    assert not c.constant_rate and c.frames == 48
    assert c.duration_s == pytest.approx(seconds, rel=1e-12) and c.fps == pytest.approx(48 / seconds, rel=1e-12)
    assert c.fps_spread == pytest.approx(170 / 100, rel=1e-12)
    assert len(c.notes) == 1 and "variable frame rate" in c.notes[0] and "1.7×" in c.notes[0]


def _rounded(rate: Fraction, frames: int, tb: Fraction, start: int = 0, drop: tuple[int, ...] = ()) -> list[int]:
    """Presentation times of frames at ``rate`` rounded to ticks of ``tb``, some dropped."""
    return [start + round(Fraction(i) / (rate * tb)) for i in range(frames) if i not in drop]


@pytest.mark.parametrize(
    "rate", [Fraction(30), Fraction(30000, 1001), Fraction(25), Fraction(24000, 1001), Fraction(60)]
)
@pytest.mark.parametrize("tb", [Fraction(1, 1000), Fraction(1, 90000), Fraction(1, 15360)])
def test_timestamps_rounded_to_the_time_base_are_a_constant_rate(rate, tb):
    pts = _rounded(rate, 600, tb, start=7)
    fps, constant, spread, duration = frame_timing(pts, tb, [rate])
    assert (fps, constant, spread) == (float(rate), True, 1.0)
    assert duration == pytest.approx(600 / float(rate), rel=1e-12)


@pytest.mark.parametrize("tb", [Fraction(1, 1000), Fraction(1, 30), Fraction(1, 60), Fraction(1, 15360)])
def test_one_dropped_frame_is_a_variable_rate(tb):
    rate = Fraction(30)
    pts = _rounded(rate, 300, tb, drop=(150,))
    fps, constant, spread, duration = frame_timing(pts, tb, [rate])
    assert not constant
    steps = np.diff(pts)
    assert spread == pytest.approx(steps.max() / steps.min(), rel=1e-12) and spread >= 1.9
    assert duration == pytest.approx(float((pts[-1] + np.median(steps)) * tb), rel=1e-12)
    assert fps == pytest.approx(299 / duration, rel=1e-12)


def test_a_declared_rate_off_the_grid_falls_to_the_next():
    tb = Fraction(1, 1000)
    pts = _rounded(Fraction(25), 100, tb)
    fps, constant, _spread, _duration = frame_timing(pts, tb, [Fraction(30), Fraction(25)])
    assert (fps, constant) == (25.0, True)
    assert frame_timing(pts, tb, [Fraction(30)])[1] is False


def test_a_drift_of_one_frame_over_the_clip_is_not_the_declared_rate():
    tb = Fraction(1, 1000)
    pts = _rounded(Fraction(30) * Fraction(300, 299), 300, tb)  # one frame more than 30/s over 10 s
    assert frame_timing(pts, tb, [Fraction(30)])[1] is False


def test_decode_runs_that_agree_have_no_note():
    assert decode_spread_note([100.0, 110.0, 120.0, 140.0]) is None  # 1.4× ≤ 1.5×
    assert decode_spread_note([100.0]) is None


def test_decode_runs_that_spread_are_noted_with_the_runs_needed():
    rates = [100.0, 100.0, 95.0, 105.0, 60.0]
    cv = np.std(rates, ddof=1) / np.mean(rates)
    needed = math.ceil((math.sqrt(math.pi / 2) * cv / 0.05) ** 2)  # the median's standard error: 5 %
    note = decode_spread_note(rates)
    assert note is not None and max(rates) / min(rates) > DECODE_SPREAD_LIMIT and 5 < needed < 100
    assert "spread 1.75× over 5 runs" in note and f"--repeat {needed}" in note and "idle" in note
    wild = decode_spread_note([100.0, 100.0, 95.0, 105.0, 20.0])
    assert "spread 5.25× over 5 runs" in str(wild) and "more than 100 runs" in str(wild)


def _noisy_timer(monkeypatch, seconds: list[float]) -> list[int]:
    """Make the decoding runs take ``seconds`` in turn (the untimed pass first); return a list
    that counts the runs."""
    runs: list[int] = []
    real = calibration._decode_run

    def timed(av, path, frames_expected, warmup):
        decoded, _ = real(av, path, frames_expected, warmup)
        runs.append(decoded)
        return decoded, seconds[(len(runs) - 1) % len(seconds)]

    monkeypatch.setattr(calibration, "_decode_run", timed)
    return runs


def test_noisy_decode_rates_are_noted_in_json_and_table(tmp_path, capsys, monkeypatch):
    clip = encode(tmp_path / "own.mp4")
    runs = _noisy_timer(monkeypatch, [0.01, 0.01, 0.05, 0.01, 0.02])
    assert main(["calibrate", str(clip), "--repeat", "4", "--json"]) == 0
    f = json.loads(capsys.readouterr().out)["files"][0]
    assert len(runs) == 1 + 4
    assert f["decode_fps_max"] / f["decode_fps_min"] == pytest.approx(5.0)
    assert len(f["notes"]) == 1 and f["notes"][0].startswith("decode rates spread 5.00× over 4 runs")
    assert main(["calibrate", str(clip), "--repeat", "4"]) == 0
    assert f"Note: {clip}: decode rates spread 5.00× over 4 runs" in " ".join(
        capsys.readouterr().out.split()
    )  # a note wraps at its spaces


def test_progress_counts_every_step(tmp_path):
    calls: list[tuple[int, int]] = []
    calibrate_file(encode(tmp_path / "a.mp4"), repeat=3, reads=5, progress=lambda d, t: calls.append((d, t)))
    assert calls == [(k, calibration_steps(3)) for k in range(1, calibration_steps(3) + 1)]


def test_the_repeat_option_out_of_range_is_one_line(tmp_path, capsys):
    assert main(["calibrate", str(encode(tmp_path / "a.mp4")), "--repeat", "0"]) == 2
    assert capsys.readouterr().err == "procure: error: repeat = 0 is invalid: must be a whole number ≥ 1 and ≤ 100\n"


def test_write_clips_of_two_sizes_writes_a_camera_each(tmp_path, capsys, ledger_copy):
    from procure import load_ledger

    big = [encode(tmp_path / f"front{i}.mp4", gop=8, width=96, height=64, frames=24) for i in range(2)]
    small = encode(tmp_path / "wrist.mp4", gop=4, width=48, height=32, frames=24)
    args = ["calibrate", *map(str, [*big, small]), "--repeat", "1", "--ledger", str(ledger_copy), "--source",
            "twin", "--write", "--json"]  # fmt: skip
    assert main(args) == 0
    capsys.readouterr()
    cameras = (ledger_copy / "cameras.csv").read_text().splitlines()
    assert cameras[0] == "source,camera,count,width,height,fps,bits_per_pixel,gop"
    rows = [line.split(",") for line in cameras[1:]]
    assert [(r[0], r[1], r[3], r[4], r[7]) for r in rows] == [("twin", "96x64", "96", "64", "8"),
                                                              ("twin", "48x32", "48", "32", "4")]  # fmt: skip
    bits = {p: stream_bytes(p)[0] * 8 for p in [*big, small]}
    assert float(rows[0][6]) == pytest.approx(sum(bits[p] for p in big) / (2 * 24 * 96 * 64), rel=1e-6)
    assert float(rows[1][6]) == pytest.approx(bits[small] / (24 * 48 * 32), rel=1e-6)
    row = load_ledger(ledger_copy).source("twin")  # the sum of its cameras, not a size between them
    assert row["width"] * row["height"] == pytest.approx((96 * 64 + 48 * 32) / 2)
    assert main(args) == 0  # calibrated again: its cameras replaced, not added
    capsys.readouterr()
    assert (ledger_copy / "cameras.csv").read_text().splitlines() == cameras


def test_clips_of_two_sizes_are_named_in_the_summary_line(tmp_path, capsys, monkeypatch):
    # the row's size alone would read as if every clip were of it
    from procure.interfaces import terminal

    monkeypatch.setattr(terminal.console, "width", 200)
    clips = [encode(tmp_path / "front.mp4", gop=8, width=96, height=64, frames=24),
             encode(tmp_path / "wrist.mp4", gop=4, width=48, height=32, frames=24)]  # fmt: skip
    assert main(["calibrate", *map(str, clips), "--repeat", "1"]) == 0
    line = next(t for t in capsys.readouterr().out.splitlines() if t.startswith("For a ledger row"))
    assert "(the clips are of 2 sizes, 96×64, 48×32: with --write, a camera each in cameras.csv)" in line
    assert main(["calibrate", str(clips[0]), "--repeat", "1"]) == 0
    line = next(t for t in capsys.readouterr().out.splitlines() if t.startswith("For a ledger row"))
    assert "96×64 at" in line and "sizes" not in line
