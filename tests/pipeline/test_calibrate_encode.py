"""``procure calibrate --encode``: one core's H.264 encode rate, on clips made by PyAV and by
the ``ffmpeg`` tool, its 1080p equivalent checked by pixel count, and ``--write`` leaving it
out of ``sources.csv`` (it is a cluster key)."""

from __future__ import annotations

import csv
import io
import json
import math
import shutil
import statistics
from pathlib import Path

import pytest
from clips import FFMPEG, encode, ffmpeg, ffmpeg_encoders

from procure.errors import InputError
from procure.interfaces.cli import main

pytest.importorskip("av")
from procure.interfaces.commands import data as commands
from procure.pipeline import calibrate as calibration
from procure.pipeline.calibrate import (
    CALIBRATION_KEYS,
    ENCODE_FRAMES,
    ENCODE_KEYS,
    LEDGER_COLUMNS,
    calibrate_file,
    calibration_steps,
    check_encode_frames,
)

#: Frames a test clip has and a test encode takes: short, for speed.
FRAMES = 24
ENCODE = 12


def _pyav_clip(folder: Path, width: int = 64, height: int = 48) -> Path:
    return encode(folder / "pyav.mp4", width=width, height=height, frames=FRAMES, gop=8)


def _ffmpeg_clip(folder: Path) -> Path:
    if FFMPEG is None or "libx264" not in ffmpeg_encoders():
        pytest.skip("the ffmpeg tool with libx264 is not installed")
    return ffmpeg(folder / "cli.mkv", "-f", "lavfi", "-i", "testsrc=size=96x64:rate=25", "-frames:v", str(FRAMES),
                  "-c:v", "libx264", "-g", "8", "-pix_fmt", "yuv420p")  # fmt: skip


def _clip(folder: Path, made_by: str) -> Path:
    return _pyav_clip(folder) if made_by == "pyav" else _ffmpeg_clip(folder)


def _at_1080p(fps: float, width: int, height: int) -> float:
    """A rate at width × height as 1080p-equivalent frames per second, by pixel count."""
    return fps * (width * height) / (1920 * 1080)


@pytest.mark.parametrize("made_by", ["pyav", "ffmpeg"])
def test_the_encode_rate_is_measured_and_scaled_by_pixels(tmp_path, made_by):
    clip = _clip(tmp_path, made_by)
    c = calibrate_file(clip, repeat=2, reads=4, encode=True, encode_frames=ENCODE)
    assert c.encode_fps is not None and c.encode_fps_1080p is not None
    assert c.encode_fps > 0 and math.isfinite(c.encode_fps)
    assert c.encode_fps_min is not None and c.encode_fps_max is not None
    assert 0 < c.encode_fps_min <= c.encode_fps <= c.encode_fps_max < math.inf
    assert c.encode_fps_1080p == pytest.approx(_at_1080p(c.encode_fps, c.width, c.height), rel=1e-12)
    assert c.core_fps_1080p == pytest.approx(_at_1080p(c.decode_fps, c.width, c.height), rel=1e-12)
    assert c.encode_frames == ENCODE
    assert list(c.to_dict()) == [*list(CALIBRATION_KEYS)[:-1], *ENCODE_KEYS, "notes"]


def test_a_clip_shorter_than_the_frames_asked_is_encoded_whole(tmp_path):
    c = calibrate_file(_pyav_clip(tmp_path), repeat=1, reads=2, encode=True, encode_frames=10 * FRAMES)
    assert c.encode_frames == FRAMES


def test_an_odd_size_is_encoded_a_pixel_smaller_and_scaled_back(tmp_path):
    if FFMPEG is None or "libx264" not in ffmpeg_encoders():
        pytest.skip("the ffmpeg tool with libx264 is not installed")
    clip = ffmpeg(tmp_path / "odd.mkv", "-f", "lavfi", "-i", "testsrc=size=65x49:rate=30", "-frames:v", "12",
                  "-c:v", "libx264", "-pix_fmt", "yuv444p")  # fmt: skip
    c = calibrate_file(clip, repeat=1, reads=2, encode=True, encode_frames=ENCODE)
    assert (c.width, c.height) == (65, 49) and c.encode_fps is not None
    assert c.encode_fps_1080p == pytest.approx(_at_1080p(c.encode_fps, 65, 49), rel=1e-12)
    assert any(note.startswith("encoded at 64×48") for note in c.notes)


def test_json_keys_per_file_and_in_the_summary(tmp_path, capsys):
    clips = [_pyav_clip(tmp_path), encode(tmp_path / "b.mp4", width=96, height=64, frames=FRAMES)]
    assert main(["calibrate", *map(str, clips), "--encode", "--repeat", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for f in out["files"]:
        assert set(ENCODE_KEYS) <= set(f) and f["encode_fps"] > 0
        assert f["encode_frames"] == FRAMES  # fewer than ENCODE_FRAMES: every frame
        assert f["encode_fps_1080p"] == pytest.approx(_at_1080p(f["encode_fps"], f["width"], f["height"]), rel=1e-12)
    median = statistics.median(f["encode_fps_1080p"] for f in out["files"])
    assert out["summary"]["encode_fps_1080p"] == pytest.approx(median, rel=1e-12)


def test_without_encode_the_encoder_is_not_run(tmp_path, capsys, monkeypatch):
    def refuse(*_args):
        raise AssertionError("the encoder ran")

    monkeypatch.setattr(calibration, "_encode_run", refuse)
    assert main(["calibrate", str(_pyav_clip(tmp_path)), "--repeat", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out["files"][0]) == list(CALIBRATION_KEYS)
    assert "encode_fps_1080p" not in out["summary"]
    assert calibration_steps(3) == 6 and calibration_steps(3, encode=True) == 6 + 4


def test_repeat_times_the_encode_too(tmp_path, monkeypatch):
    """``--repeat N``: an untimed warm-up, then N timed encodes; the median, min and max."""
    runs: list[int] = []
    real = calibration._encode_run
    seconds = [0.01, 0.02, 0.04]  # the timed runs in turn

    def timed(av, path, size, rate, frames):
        encoded, _ = real(av, path, size, rate, frames)
        runs.append(encoded)
        return encoded, seconds[(len(runs) - 2) % len(seconds)]

    monkeypatch.setattr(calibration, "_encode_run", timed)
    c = calibrate_file(_pyav_clip(tmp_path), repeat=3, reads=2, encode=True, encode_frames=ENCODE)
    assert runs == [calibration.WARMUP_FRAMES, ENCODE, ENCODE, ENCODE]
    rates = [ENCODE / s for s in seconds]
    assert (c.encode_fps, c.encode_fps_min, c.encode_fps_max) == pytest.approx(
        (statistics.median(rates), min(rates), max(rates)), rel=1e-12
    )
    assert any(note.startswith("encode rates spread 4.00× over 3 runs") for note in c.notes)


def _fixed_decode(monkeypatch) -> None:
    """Decoding runs that take 10 ms each, so that two calibrations write the same cells."""
    real = calibration._decode_run
    monkeypatch.setattr(calibration, "_decode_run", lambda *a: (real(*a)[0], 0.01))


def _records(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"))))


def _padded(row: list[str], header: list[str]) -> list[str]:
    """A record with its missing trailing cells blank (a ledger's rows may be shorter)."""
    return row + [""] * (len(header) - len(row))


def test_write_leaves_the_encode_rate_out_of_sources_csv(tmp_path, capsys, monkeypatch, ledger_copy):
    _fixed_decode(monkeypatch)
    clip = _pyav_clip(tmp_path, width=96, height=64)
    other = tmp_path / "other"
    other.mkdir()
    shutil.copytree(ledger_copy, other / "ledger")
    sources, cluster = ledger_copy / "sources.csv", ledger_copy / "cluster.toml"
    before, cluster_before = sources.read_bytes(), cluster.read_bytes()
    written = tmp_path / "out.json"
    code = main(["calibrate", str(clip), "--encode", "--repeat", "1", "--ledger", str(ledger_copy),
                 "--source", "twin", "--write", "--json", str(written)])  # fmt: skip
    assert code == 0
    said = capsys.readouterr().out
    summary = json.loads(written.read_text())["summary"]
    after = sources.read_bytes()
    # byte for byte what calibrate writes without --encode
    assert main(["calibrate", str(clip), "--repeat", "1", "--ledger", str(other / "ledger"), "--source", "twin",
                 "--write", "--json", str(tmp_path / "plain.json")]) == 0  # fmt: skip
    assert after == (other / "ledger" / "sources.csv").read_bytes()
    assert cluster.read_bytes() == cluster_before
    # and, against the file before, only the columns calibrate writes changed
    old, new = _records(before), _records(after)
    assert new[0][: len(old[0])] == old[0] and set(new[0][len(old[0]) :]) <= set(LEDGER_COLUMNS)
    assert not any("encode" in column for column in new[0])
    for old_row, new_row in zip(old[1:], new[1:], strict=True):
        cells = dict(zip(new[0], _padded(new_row, new[0]), strict=True))
        kept = {c: v for c, v in zip(old[0], _padded(old_row, old[0]), strict=True) if c not in LEDGER_COLUMNS}
        assert {c: cells[c] for c in kept} == kept
    untouched = [line for line in before.splitlines(keepends=True) if not line.startswith(b"twin,")]
    changed = [line for line in after.splitlines(keepends=True) if not line.startswith(b"twin,")]
    added = len(new[0]) - len(old[0])
    assert changed[1:] == [line.replace(b"\n", b"," * added + b"\n") for line in untouched[1:]]
    # one line saying the value and the cluster.toml line to set
    rate = commands._toml_number(summary["encode_fps_1080p"])
    lines = [line for line in said.splitlines() if "encode_fps_1080p" in line]
    assert len(lines) == 1 and f"measured {rate} frames/s" in lines[0]
    assert f"[decode] encode_fps_1080p = {rate}" in lines[0] and "cluster.toml" in lines[0]
    assert float(rate) == pytest.approx(summary["encode_fps_1080p"], rel=1e-3)


def test_the_table_shows_the_encode_rate_and_the_cluster_line(tmp_path, capsys):
    assert main(["calibrate", str(_pyav_clip(tmp_path)), "--encode", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "libx264 preset medium" in out and "1080p encode fps" in out
    assert "[decode] encode_fps_1080p = " in out


def test_a_file_that_is_not_a_video_is_one_line(tmp_path, capsys):
    path = tmp_path / "notes.mp4"
    path.write_text("not a video")
    assert main(["calibrate", str(path), "--encode", "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith(f"procure: error: {path}: not a video FFmpeg can read")


def test_no_libx264_in_pyav_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(calibration, "ENCODER", "libx264-not-built")
    assert main(["calibrate", str(_pyav_clip(tmp_path)), "--encode"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert "needs the libx264-not-built encoder" in captured.err


def test_encode_frames_out_of_range(tmp_path):
    assert check_encode_frames(ENCODE_FRAMES) == 100
    with pytest.raises(InputError, match="encode_frames = 0 is invalid"):
        calibrate_file(_pyav_clip(tmp_path), repeat=1, encode=True, encode_frames=0)


def test_the_option_help_names_the_frames_encoded():
    assert f"first {ENCODE_FRAMES} frames" in commands._ENCODE_HELP


def test_progress_counts_the_encode_steps(tmp_path):
    calls: list[tuple[int, int]] = []
    calibrate_file(_pyav_clip(tmp_path), repeat=2, reads=2, encode=True, encode_frames=4,
                   progress=lambda d, t: calls.append((d, t)))  # fmt: skip
    total = calibration_steps(2, encode=True)
    assert calls == [(k, total) for k in range(1, total + 1)]
