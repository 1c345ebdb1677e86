"""``procure calibrate`` on clips made by the ``ffmpeg`` tool, measured against ``ffprobe``.

Matroska and WebM keep time in milliseconds: 30 frames/s is steps of 33 and 34 ms, a spread of
3 %, yet ``ffprobe`` reads ``r_frame_rate = avg_frame_rate = 30/1``. Every reference value
here (codec name, size, rates, frames, packet bytes, keyframes, timestamps) is ``ffprobe``'s.
"""

from __future__ import annotations

import itertools
import json
import statistics
from fractions import Fraction
from pathlib import Path

import pytest
from clips import FFMPEG, FFPROBE, ffmpeg, ffmpeg_encoders, ffprobe

from procure.interfaces.cli import main

pytest.importorskip("av")
from procure.pipeline.calibrate import calibrate_file

pytestmark = pytest.mark.skipif(FFMPEG is None or FFPROBE is None, reason="the ffmpeg tool is not installed")

SIZE = "160x120"
SECONDS = "2"
GOP = 15
#: A test pattern at a frame rate, as the ``ffmpeg`` tool's input.
SOURCE = ["-f", "lavfi", "-i"]
#: Encoder options: a keyframe every GOP frames; VP9 and AV1 at their fastest settings.
ENCODERS = {
    "libx264": ["-c:v", "libx264", "-g", str(GOP), "-pix_fmt", "yuv420p"],
    "libvpx-vp9": ["-c:v", "libvpx-vp9", "-g", str(GOP), "-deadline", "realtime", "-cpu-used", "8"],
    "libaom-av1": ["-c:v", "libaom-av1", "-g", str(GOP), "-cpu-used", "8", "-row-mt", "1"],
    "libsvtav1": ["-c:v", "libsvtav1", "-g", str(GOP), "-preset", "12"],
}
#: Clips at a constant rate: name → (encoder, rate as ffmpeg's testsrc takes it).
CONSTANT = {
    "h264-30.mkv": ("libx264", "30"),
    "h264-29.97.mkv": ("libx264", "30000/1001"),
    "vp9-30.webm": ("libvpx-vp9", "30"),
    "vp9-29.97.webm": ("libvpx-vp9", "30000/1001"),
    "h264-30.mp4": ("libx264", "30"),
}


def _av1_encoder() -> str | None:
    return next((e for e in ("libaom-av1", "libsvtav1") if e in ffmpeg_encoders()), None)


def _need(encoder: str) -> None:
    if encoder not in ffmpeg_encoders():
        pytest.skip(f"this ffmpeg has no {encoder} encoder")


def _make(folder: Path, name: str, encoder: str, rate: str, seconds: str = SECONDS) -> Path:
    _need(encoder)
    return ffmpeg(folder / name, *SOURCE, f"testsrc=size={SIZE}:rate={rate}", "-t", seconds, *ENCODERS[encoder])


def _pts(probe: dict) -> list[int]:
    return sorted(int(p["pts"]) for p in probe["packets"])


def _reference(probe: dict) -> dict:
    """What a calibration should read, from ffprobe's fields and packets alone."""
    frames = int(probe["nb_read_packets"])
    size = sum(int(p["size"]) for p in probe["packets"])
    keys = [i for i, p in enumerate(sorted(probe["packets"], key=lambda p: int(p["pts"]))) if p["flags"][0] == "K"]
    return {
        "codec": probe["codec_name"],
        "width": probe["width"],
        "height": probe["height"],
        "frames": frames,
        "bits_per_pixel": size * 8 / (frames * probe["width"] * probe["height"]),
        "gop": statistics.median(b - a for a, b in itertools.pairwise(keys)),
    }


def _check_against_ffprobe(clip: Path) -> tuple:
    probe = ffprobe(clip)
    c = calibrate_file(clip, repeat=1, reads=10)
    ref = _reference(probe)
    assert (c.codec, c.width, c.height, c.frames) == (ref["codec"], ref["width"], ref["height"], ref["frames"])
    assert c.bits_per_pixel == pytest.approx(ref["bits_per_pixel"], rel=1e-12)
    assert c.gop == ref["gop"]
    return c, probe


@pytest.mark.parametrize("name", sorted(CONSTANT))
def test_a_constant_rate_reads_as_ffprobe_declares_it(tmp_path, name):
    encoder, rate = CONSTANT[name]
    clip = _make(tmp_path, name, encoder, rate)
    c, probe = _check_against_ffprobe(clip)
    declared = Fraction(probe["r_frame_rate"])
    assert declared == Fraction(rate)  # the oracle agrees with how the clip was made
    assert c.fps == float(declared) and c.constant_rate and c.fps_spread == 1.0 and c.notes == ()
    assert c.duration_s == pytest.approx(c.frames / float(declared), rel=1e-12)
    steps = [b - a for a, b in itertools.pairwise(_pts(probe))]
    if name.endswith((".mkv", ".webm")):  # the steps themselves are uneven: 33 and 34 ms
        assert probe["time_base"] == "1/1000" and sorted(set(steps)) == [33, 34]
        assert (max(steps) - min(steps)) / statistics.mean(steps) > 0.01


def test_an_mp4_remuxed_from_matroska_keeps_its_rate(tmp_path):
    mkv = _make(tmp_path, "a.mkv", "libx264", "30")
    mp4 = ffmpeg(tmp_path / "a.mp4", "-i", str(mkv), "-c", "copy")
    c, probe = _check_against_ffprobe(mp4)
    # the remux keeps the millisecond steps in a finer time base; ffprobe's mean rate is off 30
    assert probe["time_base"] != "1/1000" and Fraction(probe["avg_frame_rate"]) != 30
    assert Fraction(probe["r_frame_rate"]) == 30
    assert c.fps == 30.0 and c.constant_rate and c.notes == ()
    assert c.frames == calibrate_file(mkv, repeat=1, reads=10).frames


@pytest.mark.parametrize("suffix", [".mkv", ".mp4"])
def test_a_truly_variable_rate_is_measured_at_its_mean_rate(tmp_path, suffix):
    _need("libx264")
    clip = ffmpeg(
        tmp_path / f"dropped{suffix}", *SOURCE, f"testsrc=size={SIZE}:rate=30", "-t", SECONDS,
        "-vf", "select='not(between(n,10,19))*not(between(n,40,42))'", "-fps_mode", "vfr", *ENCODERS["libx264"],
    )  # fmt: skip
    c, probe = _check_against_ffprobe(clip)
    assert c.frames == 60 - 10 - 3
    tb = Fraction(probe["time_base"])
    packets = sorted(probe["packets"], key=lambda p: int(p["pts"]))
    pts = _pts(probe)
    steps = [b - a for a, b in itertools.pairwise(pts)]
    duration = (pts[-1] + int(packets[-1]["duration"]) - pts[0]) * tb  # the last frame's time plus its duration
    assert not c.constant_rate
    assert c.fps == pytest.approx(c.frames / float(duration), rel=1e-9)
    assert c.duration_s == pytest.approx(float(duration), rel=1e-9)
    assert c.fps_spread == pytest.approx(max(steps) / min(steps), rel=1e-12) and c.fps_spread > 10
    assert len(c.notes) == 1 and c.notes[0].startswith("variable frame rate")


def test_a_variable_rate_is_noted_in_json_and_table(tmp_path, capsys):
    _need("libx264")
    clip = ffmpeg(
        tmp_path / "dropped.mkv", *SOURCE, f"testsrc=size={SIZE}:rate=30", "-t", SECONDS,
        "-vf", "select='not(between(n,10,19))'", "-fps_mode", "vfr", *ENCODERS["libx264"],
    )  # fmt: skip
    assert main(["calibrate", str(clip), "--repeat", "1", "--json"]) == 0
    f = json.loads(capsys.readouterr().out)["files"][0]
    assert f["constant_rate"] is False and f["fps"] == pytest.approx(50 / 2.0) and f["fps_spread"] > 10
    assert f["notes"][0].startswith("variable frame rate")
    assert main(["calibrate", str(clip), "--repeat", "1"]) == 0
    assert f"Note: {clip}: variable frame rate" in " ".join(
        capsys.readouterr().out.split()
    )  # a note wraps at its spaces


def test_av1_is_named_av1_and_written_so(tmp_path, capsys, ledger_copy):
    encoder = _av1_encoder()
    if encoder is None:
        pytest.skip("this ffmpeg has no AV1 encoder")
    clip = _make(tmp_path, "av1.mkv", encoder, "30", seconds="1")
    c, probe = _check_against_ffprobe(clip)
    assert probe["codec_name"] == "av1" and c.codec == "av1" and c.fps == 30.0 and c.constant_rate
    assert main(["calibrate", str(clip), "--repeat", "1", "--ledger", str(ledger_copy), "--source", "twin",
                 "--write", "--json"]) == 0  # fmt: skip
    assert json.loads(capsys.readouterr().out)["summary"]["codec"] == "av1"
    lines = (ledger_copy / "sources.csv").read_text().splitlines()
    header = lines[0].split(",")
    twin = next(dict(zip(header, line.split(","), strict=True)) for line in lines if line.startswith("twin,"))
    assert twin["codec"] == "av1"


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("still.png", ["-frames:v", "1"]),
        ("still.jpg", ["-frames:v", "1"]),
        ("one-frame.mp4", ["-frames:v", "1", "-c:v", "libx264"]),
        ("one-frame.mkv", ["-frames:v", "1", "-c:v", "libx264"]),
    ],
)
def test_a_still_image_is_refused_in_one_line(tmp_path, capsys, name, args):
    if "libx264" in args:
        _need("libx264")
    still = ffmpeg(tmp_path / name, *SOURCE, f"testsrc=size={SIZE}:rate=30", *args)
    assert int(ffprobe(still)["nb_read_packets"]) == 1
    assert main(["calibrate", str(still), "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith(f"procure: error: {still}: is a still image (") and "not a video" in captured.err
