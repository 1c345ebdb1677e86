"""``procure import lerobot``: dataset folders of layouts 2.1 and 3.0, built here with small videos."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clips import encode, stream_bytes

from procure import load_ledger
from procure.interfaces.cli import main

pytest.importorskip("av")

FPS, FRAMES, W, H = 30, 48, 64, 48


def _features(channel_first: bool, version: str) -> dict:
    video = {
        "dtype": "video",
        "shape": [3, H, W] if channel_first else [H, W, 3],
        "names": ["channels", "height", "width"] if channel_first else ["height", "width", "channels"],
        ("video_info" if version == "v2.0" else "info"): {"video.fps": FPS, "video.codec": "h264",
                                                          "video.pix_fmt": "yuv420p"},
    }  # fmt: skip
    return {
        "observation.images.top": video,
        "observation.images.wrist": json.loads(json.dumps(video)),
        "observation.state": {"dtype": "float32", "shape": [6], "names": None},
        "action": {"dtype": "float32", "shape": [6], "names": None},
        "timestamp": {"dtype": "float32", "shape": [1], "names": None},
        "frame_index": {"dtype": "int64", "shape": [1], "names": None},
        "episode_index": {"dtype": "int64", "shape": [1], "names": None},
    }


#: Bytes a second of the non-video features above: 6 + 6 + 1 float32 and 2 int64, at 30 fps.
EXTRA_BYTES_PER_S = (6 * 4 + 6 * 4 + 4 + 8 + 8) * FPS


def make_dataset(root: Path, version: str) -> Path:
    (root / "meta").mkdir(parents=True)
    v3 = version == "v3.0"
    info = {"codebase_version": version, "robot_type": "so100", "total_episodes": 1, "total_frames": FRAMES,
            "fps": FPS, "features": _features(channel_first=v3, version=version)}  # fmt: skip
    (root / "meta" / "info.json").write_text(json.dumps(info))
    for camera in ("observation.images.top", "observation.images.wrist"):
        folder = root / "videos" / (f"{camera}/chunk-000" if v3 else f"chunk-000/{camera}")
        folder.mkdir(parents=True)
        encode(folder / ("file-000.mp4" if v3 else "episode_000000.mp4"), width=W, height=H, gop=2, frames=FRAMES)
    return root


@pytest.mark.parametrize("version", ["v2.0", "v2.1", "v3.0"])
def test_every_column_is_imported(tmp_path, capsys, version):
    root = make_dataset(tmp_path / "pick_place", version)
    assert main(["import", "lerobot", str(root), "--json", "--price", "40", "--available-hours", "100"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["available_hours"] == 100 and row["exchange_rate"] == 1
    assert any("exchange_rate not given" in n for n in row["notes"])
    videos = sorted((root / "videos").rglob("*.mp4"))
    video_bytes = sum(stream_bytes(p)[0] for p in videos)  # the packets' bytes, read apart from procure
    assert row["source"] == "pick_place" and row["kind"] == "own" and row["price_usd_per_hour"] == 40
    assert (row["cameras"], row["width"], row["height"], row["fps"], row["codec"]) == (2, W, H, FPS, "h264")
    assert row["held_hours"] == pytest.approx(FRAMES / FPS / 3600, rel=1e-12)
    assert row["bits_per_pixel"] == pytest.approx(video_bytes * 8 / (FRAMES * 2 * W * H), rel=1e-12)
    assert row["extra_bytes_per_s"] == pytest.approx(EXTRA_BYTES_PER_S)
    assert row["gop"] == 2  # probed from the first video file
    assert row["core_fps_1080p"] > 0
    assert stream_bytes(videos[0])[1] == FRAMES
    assert not [n for n in row["notes"] if "on disk" in n]  # every declared video is there


def test_append_adds_one_valid_row_and_refuses_a_name_twice(tmp_path, capsys, ledger_copy):
    root = make_dataset(tmp_path / "pick_place", "v2.1")
    args = ["import", "lerobot", str(root), "--source", "arm2", "--kind", "older_arm", "--price", "20",
            "--available-hours", "300", "--exchange-rate", "0.5", "--saturation-hours", "500", "--ledger", str(ledger_copy), "--append"]  # fmt: skip
    assert main(args) == 0
    capsys.readouterr()
    ledger = load_ledger(ledger_copy)
    row = ledger.source("arm2")
    assert row["kind"] == "older_arm" and row["cameras"] == 2 and row["gop"] == 2 and row["saturation_hours"] == 500
    assert (row["price_usd_per_hour"], row["available_hours"], row["exchange_rate"]) == (20, 300, 0.5)
    assert len(ledger.sources) == 6
    before = (ledger_copy / "sources.csv").read_text()
    assert main(args) == 2
    assert "source = 'arm2' exists already" in capsys.readouterr().err
    assert (ledger_copy / "sources.csv").read_text() == before


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda i: i.pop("fps"), "missing field(s) fps: required are codebase_version, fps, total_frames, features"),
        (lambda i: i.update(codebase_version="v1.6"), "codebase_version = 'v1.6' is not supported: procure reads v2.0"),
        (lambda i: i.update(codebase_version="v9"), "codebase_version = 'v9' is not supported: procure reads v2.0"),
        (lambda i: i.update(features={"a": {"dtype": "float32", "shape": [1]}}), "has no video feature"),
        (lambda i: i.update(fps=-3), "fps = -3 is invalid"),
    ],
)
def test_bad_info_json(tmp_path, capsys, change, message):
    root = make_dataset(tmp_path / "d", "v2.1")
    info = json.loads((root / "meta" / "info.json").read_text())
    change(info)
    (root / "meta" / "info.json").write_text(json.dumps(info))
    assert main(["import", "lerobot", str(root)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "info.json" in err


def test_a_folder_without_info(tmp_path, capsys):
    assert main(["import", "lerobot", str(tmp_path)]) == 2
    assert "meta/info.json: no such file" in capsys.readouterr().err


def test_append_asks_for_the_value_scale(tmp_path, capsys, ledger_copy):
    root = make_dataset(tmp_path / "d", "v2.1")
    assert main(["import", "lerobot", str(root), "--ledger", str(ledger_copy), "--append"]) == 2
    assert "--append needs --saturation-hours H" in capsys.readouterr().err
