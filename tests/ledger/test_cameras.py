"""``cameras.csv``: a DROID-like source of 2 × 1280×720 + 1 × 640×480 cameras at 15 fps,
priced as the sum of its cameras, against a hand computation and against single-size sources."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from procure.errors import LedgerError
from procure.interfaces.cli import main
from procure.ledger import load_ledger

# The lesson's cluster by hand: H100 at μ = 0.4, 93 M parameters, 256 tokens, 8 cores of 120 fps at 1080p.
DEMAND = 0.4 * 989.5e12 / (6 * 93e6 * 256)
BPP = 8e6 / (1920 * 1080 * 30)  # the default bits per pixel
P1080 = 1920 * 1080
CAMERAS = "source,camera,count,width,height,fps,bits_per_pixel,gop\n"


def add_source(ledger: Path, name: str, cameras: int, width: int, height: int, fps: int = 15) -> None:
    """A row like ``own`` (its price, curve, …) with another name, kind and format."""
    path = ledger / "sources.csv"
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    own = dict(rows[0])
    own.update(source=name, kind=name, cameras=str(cameras), width=str(width), height=str(height), fps=str(fps))
    with path.open("a", newline="") as f:
        csv.DictWriter(f, list(rows[0])).writerow(own)


def bill(capsys, ledger: Path, kind: str, *args: str) -> dict:
    assert main(["bill", "--ledger", str(ledger), "--kind", kind, *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def droid(ledger_copy: Path) -> Path:
    add_source(ledger_copy, "droid", 1, 1, 1)  # its format comes from cameras.csv
    (ledger_copy / "cameras.csv").write_text(CAMERAS + "droid,exterior,2,1280,720,,,\ndroid,wrist,1,640,480,,,\n")
    return ledger_copy


def test_droid_by_hand(droid, capsys):
    out = bill(capsys, droid, "droid")
    pixels = 2 * 1280 * 720 + 640 * 480  # a moment of all three cameras: 2,150,400 px
    frames = 3 * 15 * 3600
    mean = pixels / 3  # 716,800 px a frame
    gb = 15 * 3600 * pixels * BPP / 8 / 1e9
    core_fps = 120 * P1080 / mean  # 347.1 frames/s a core
    assert out["frames_per_hour"] == frames
    assert out["gb_per_hour"] == pytest.approx(gb, rel=1e-12)
    assert out["pixels_per_token"] == pytest.approx(mean / 256, rel=1e-12) == 2800
    assert out["cores_needed"] == pytest.approx(DEMAND / core_fps, rel=1e-12)  # 7.98: 8 cores keep up
    assert out["decode_fps"] == pytest.approx(8 * core_fps, rel=1e-12)
    assert out["busy"] == 1.0
    useful = frames / DEMAND
    assert out["bill_usd"] == pytest.approx(gb * 0.44 + 8 * useful * 10 / 3600 * 0.04, rel=1e-12)


def test_droid_is_the_sum_of_single_size_sources(droid, capsys):
    add_source(droid, "exterior", 2, 1280, 720)
    add_source(droid, "wrist", 1, 640, 480)
    whole = bill(capsys, droid, "droid", "--read", "random")
    parts = [bill(capsys, droid, k, "--read", "random") for k in ("exterior", "wrist")]
    for key in ("gb_per_hour", "gb_decoded_per_hour", "frames_per_hour", "core_hours"):
        assert whole[key] == pytest.approx(sum(p[key] for p in parts), rel=1e-12), key
    assert whole["g"] == 15.5


def test_cameras_of_other_keyframes_decode_by_pixels(droid, capsys):
    (droid / "cameras.csv").write_text(CAMERAS + "droid,exterior,2,1280,720,,,2\ndroid,wrist,1,640,480,,,30\n")
    out = bill(capsys, droid, "droid", "--read", "random")
    g = (2 * 1280 * 720 * 1.5 + 640 * 480 * 15.5) / (2 * 1280 * 720 + 640 * 480)  # pixel-weighted (G + 1) / 2
    assert out["g"] == pytest.approx(g, rel=1e-12)
    assert out["pixels_per_token"] == pytest.approx((2 * 1280 * 720 * 1.5 + 640 * 480 * 15.5) / 3 / 256, rel=1e-12)


def test_a_source_without_cameras_is_as_before(droid, capsys):
    plain = bill(capsys, droid, "own")
    (droid / "cameras.csv").unlink()
    assert bill(capsys, droid, "own") == plain


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("droid,exterior,2,0,720,,,\n", "cameras.csv: line 2: width = 0 is invalid"),
        ("droid,exterior,2,1280,720,,,\ndroid,exterior,1,640,480,,,\n",
         "cameras.csv: line 3: camera = 'exterior' of source 'droid' is a duplicate of line 2"),
        ("robot9,exterior,2,1280,720,,,\n", "cameras.csv: line 2: source = 'robot9' is not in sources.csv"),
        ("droid,exterior,2,1280,720,1e-9,,\n", "cameras.csv: line 2: fps = 1e-09 is invalid: must be a number ≥ 1e-06"),
    ],
)  # fmt: skip
def test_bad_cameras_are_one_line(droid, capsys, text, message):
    (droid / "cameras.csv").write_text(CAMERAS + text)
    with pytest.raises(LedgerError, match=message.replace("(", r"\(")):
        load_ledger(droid)
    assert main(["bill", "--ledger", str(droid), "--json"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_an_unknown_column_is_named(droid):
    (droid / "cameras.csv").write_text("source,camera,count,width,height,codec\ndroid,a,1,64,48,av1\n")
    with pytest.raises(LedgerError, match=r"cameras\.csv: column 'codec' is unknown: columns are source, camera"):
        load_ledger(droid)


def test_bill_lists_each_camera(droid, capsys):
    out = bill(capsys, droid, "droid")
    per = {c["camera"]: c for c in out["per_camera"]}
    assert per["exterior"]["gb_per_hour"] == pytest.approx(2 * 15 * 3600 * 1280 * 720 * BPP / 8 / 1e9, rel=1e-12)
    assert per["wrist"]["decode_share"] == pytest.approx(640 * 480 / (2 * 1280 * 720 + 640 * 480), rel=1e-12)
    assert main(["bill", "--ledger", str(droid), "--kind", "droid"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "camera exterior: 2 × 1280×720 at 15 fps" in text and "camera wrist: 1 × 640×480" in text
