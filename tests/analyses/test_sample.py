"""``procure sample DIR``: the data it writes is what each command that reads it finds, checked
against the counts the sample is made of (written out here), ``os.path.getsize`` and ffprobe;
the folder is written all or nothing, and never over a folder that holds anything."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from procure.analyses import sample
from procure.interfaces.cli import main

pytest.importorskip("av")
pytest.importorskip("pyarrow")

#: What the sample is made of, written out apart from the module: 30 + 45 + 25 frames at 30 fps in
#: the LeRobot dataset, 5 + 7 + 4 steps in the RLDS one, 90 frames in each clip.
LEROBOT_FRAMES, FPS, RLDS_STEPS, CLIP_FRAMES = 100, 30, 16, 90


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("sample") / "my_data"
    assert main(["sample", str(folder)]) == 0
    return folder


def _json(capsys, *argv: str) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_lerobot_dataset_is_read_as_made(made, capsys):
    row = _json(capsys, "import", "lerobot", str(made / "lerobot_v3"), "--exchange-rate", "1")
    assert row["held_hours"] == pytest.approx(LEROBOT_FRAMES / FPS / 3600, rel=1e-12)
    assert (row["cameras"], row["width"], row["height"], row["codec"]) == (2, 192, 128, "h264")
    for camera in row["per_camera"]:
        name = camera["camera"].split(".")[-1]
        path = made / "lerobot_v3" / "videos" / camera["camera"] / "chunk-000" / "file-000.mp4"
        assert camera["bytes"] == os.path.getsize(path) and camera["frames"] == LEROBOT_FRAMES
        assert (camera["width"], camera["height"]) == {"front": (192, 128), "wrist": (128, 96)}[name]


def test_the_rlds_dataset_is_read_as_made(made, capsys):
    row = _json(capsys, "import", "rlds", str(made / "rlds"), "--hz", "5", "--exchange-rate", "1")
    assert row["held_hours"] == pytest.approx(RLDS_STEPS / 5 / 3600, rel=1e-12)
    assert (row["cameras"], row["codec"]) == (2, "mjpeg")


def test_the_clips_are_two_cameras_of_different_sizes(made, capsys):
    out = _json(capsys, "calibrate", str(made / "cams" / "front.mp4"), str(made / "cams" / "wrist.mp4"))
    sizes = sorted((f["width"], f["height"]) for f in out["files"])
    assert sizes == [(128, 96), (192, 128)]
    if shutil.which("ffprobe") is None:
        pytest.skip("ffprobe not installed")
    for name in ("front", "wrist"):
        probe = subprocess.run(["ffprobe", "-v", "error", "-count_packets", "-select_streams", "v:0", "-show_entries",
                                "stream=nb_read_packets,codec_name", "-of", "json", str(made / "cams" / f"{name}.mp4")],
                               check=True, capture_output=True, text=True).stdout  # fmt: skip
        stream = json.loads(probe)["streams"][0]
        assert (int(stream["nb_read_packets"]), stream["codec_name"]) == (CLIP_FRAMES, "h264")


def test_the_runs_fit_and_the_scenarios_plan(made, capsys):
    pytest.importorskip("emcee")
    fitted = _json(capsys, "fit", str(made / "runs.csv"), "--fit", "twin.exchange_rate", "--steps", "400",
                   "--burn-in", "300")  # fmt: skip
    twin = next(p for p in fitted["parameters"] if p["source"] == "twin")
    assert twin["q05"] < 0.5 < twin["q95"]  # the runs were simulated with the twin's rate at 0.5
    plan = _json(capsys, "solve", "--budget", "100000", "--scenarios", str(made / "scenarios.csv"))
    assert plan["status"] == "optimal" and len(plan["scenario_values"]) == 3


def test_a_folder_that_holds_anything_is_refused(tmp_path, capsys):
    (tmp_path / "mine.txt").write_text("keep")
    assert main(["sample", str(tmp_path)]) == 2
    assert "not an empty folder" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["mine.txt"]


def test_a_failure_leaves_nothing(tmp_path, monkeypatch, capsys):
    def broken(root: Path) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(sample, "_rlds", broken)
    assert main(["sample", str(tmp_path / "my_data")]) == 2
    assert list(tmp_path.iterdir()) == []  # neither the folder nor what was staged for it
