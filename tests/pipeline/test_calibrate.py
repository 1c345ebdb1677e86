"""``procure calibrate``: clips encoded here at known settings, measured back exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clips import audio_only, encode, stream_bytes

from procure.errors import InputError
from procure.interfaces.cli import main

pytest.importorskip("av")
from procure.pipeline.calibrate import calibrate_file, summary

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
        (lambda p: encode(p, pts_step=[100 if i % 2 else 170 for i in range(48)]), "has a variable frame rate"),
        (lambda p: p.write_bytes(encode(p.with_name("whole.mp4")).read_bytes()[:1200]), ""),
    ],
    ids=["text", "audio-only", "variable-frame-rate", "truncated"],
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
    assert capsys.readouterr().err == "procure: error: calibration needs PyAV: pip install 'procure[video]'\n"


def test_a_path_that_is_not_there(capsys, tmp_path):
    assert main(["calibrate", str(Path(tmp_path) / "none.mp4")]) == 2
    assert "none.mp4: no such file" in capsys.readouterr().err
