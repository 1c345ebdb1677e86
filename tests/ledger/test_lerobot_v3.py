"""``procure import lerobot`` on a LeRobot v3.0 dataset made here: 3 episodes in one mp4 per
camera, two cameras of different sizes, AV1 when PyAV's FFmpeg encodes it (else H.264), with
its episodes table. Hours, bytes, bits per pixel, codec and keyframe interval are checked
against the frames each episode was made with, ``os.path.getsize`` and ffprobe."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from clips import encode

from procure.interfaces.cli import main
from procure.ledger.lerobot import import_lerobot

av = pytest.importorskip("av")
pa = pytest.importorskip("pyarrow")
import pyarrow.parquet as pq  # noqa: E402

FPS, GOP = 30, 2
LENGTHS = (30, 45, 25)  # frames of each episode: 100 in each camera's one file
CAMERAS = {"observation.images.front": (192, 128), "observation.images.wrist": (128, 96)}
VIDEO_PATH = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"


def _encoder() -> tuple[str, str]:
    for name in ("libsvtav1", "libaom-av1", "librav1e"):
        try:
            av.codec.Codec(name, "w")
        except Exception:  # not in this FFmpeg
            continue
        return name, "av1"
    return "libx264", "h264"


ENCODER, CODEC = _encoder()


def _info() -> dict:
    features = {
        camera: {
            "dtype": "video", "shape": [h, w, 3], "names": ["height", "width", "channels"],
            "info": {"video.height": h, "video.width": w, "video.codec": CODEC, "video.pix_fmt": "yuv420p",
                     "video.fps": FPS, "video.channels": 3, "has_audio": False},
        }
        for camera, (w, h) in CAMERAS.items()
    }  # fmt: skip
    features["observation.state"] = {"dtype": "float32", "shape": [6], "names": None}
    return {
        "codebase_version": "v3.0", "robot_type": "so101", "total_episodes": len(LENGTHS),
        "total_frames": sum(LENGTHS), "total_tasks": 1, "chunks_size": 1000, "fps": FPS,
        "data_files_size_in_mb": 100, "video_files_size_in_mb": 500,
        "data_path": "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet", "video_path": VIDEO_PATH,
        "features": features,
    }  # fmt: skip


def _episodes_table(lengths=LENGTHS, stretch: float = 1.0) -> pa.Table:
    starts = [sum(lengths[:k]) / FPS for k in range(len(lengths))]
    columns: dict[str, list] = {"episode_index": list(range(len(lengths))), "length": list(lengths)}
    for camera in CAMERAS:
        columns[f"videos/{camera}/chunk_index"] = [0] * len(lengths)
        columns[f"videos/{camera}/file_index"] = [0] * len(lengths)
        columns[f"videos/{camera}/from_timestamp"] = starts
        columns[f"videos/{camera}/to_timestamp"] = [s + n * stretch / FPS for s, n in zip(starts, lengths, strict=True)]
    return pa.table(columns)


def make_v3(root: Path) -> Path:
    (root / "meta" / "episodes" / "chunk-000").mkdir(parents=True)
    (root / "meta" / "info.json").write_text(json.dumps(_info()))
    pq.write_table(_episodes_table(), root / "meta" / "episodes" / "chunk-000" / "file-000.parquet")
    for camera, (w, h) in CAMERAS.items():
        path = root / VIDEO_PATH.format(video_key=camera, chunk_index=0, file_index=0)
        path.parent.mkdir(parents=True)
        encode(path, codec=ENCODER, width=w, height=h, fps=FPS, frames=sum(LENGTHS), gop=GOP)
    return root


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    return make_v3(tmp_path_factory.mktemp("v3") / "so101_pick")


def ffprobe_stream(path: Path) -> dict:
    """Codec, size, frame count and keyframe positions of the video, by ffprobe."""
    if shutil.which("ffprobe") is None:
        pytest.skip("ffprobe not installed")
    run = lambda *a: subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", *a, str(path)],  # noqa: E731
                                    check=True, capture_output=True, text=True).stdout  # fmt: skip
    stream = json.loads(run("-count_packets", "-show_entries", "stream=codec_name,width,height,nb_read_packets",
                            "-of", "json"))["streams"][0]  # fmt: skip
    flags = run("-show_entries", "packet=flags", "-of", "csv=p=0").split()
    keys = [i for i, f in enumerate(flags) if f.startswith("K")]
    return {**stream, "frames": int(stream["nb_read_packets"]), "keys": keys}


def test_hours_bytes_codec_and_gop_per_camera(dataset, capsys):
    assert main(["import", "lerobot", str(dataset), "--json", "--exchange-rate", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["held_hours"] == pytest.approx(sum(LENGTHS) / FPS / 3600, rel=1e-12)
    assert out["cameras"] == 2 and (out["width"], out["height"]) == (192, 128)  # the largest camera
    per = {c["camera"]: c for c in out["per_camera"]}
    bits = 0
    pixels = 0
    for camera, (w, h) in CAMERAS.items():
        path = dataset / VIDEO_PATH.format(video_key=camera, chunk_index=0, file_index=0)
        probe = ffprobe_stream(path)
        size = os.path.getsize(path)
        c = per[camera]
        assert (c["width"], c["height"]) == (probe["width"], probe["height"]) == (w, h)
        assert c["frames"] == probe["frames"] == sum(LENGTHS)
        assert c["bytes"] == size and c["files"] == 1
        assert c["bits_per_pixel"] == pytest.approx(size * 8 / (sum(LENGTHS) * w * h), rel=1e-12)
        assert c["codec"] == probe["codec_name"] == CODEC
        assert c["gop"] == GOP == probe["keys"][1] - probe["keys"][0]
        bits, pixels = bits + size * 8, pixels + sum(LENGTHS) * w * h
    assert out["codec"] == CODEC and out["gop"] == GOP
    assert out["bits_per_pixel"] == pytest.approx(bits / pixels, rel=1e-12)
    assert any("cameras of different sizes" in n for n in out["notes"])
    assert not any("differ from length / fps" in n for n in out["notes"])


def test_hours_from_the_episodes_not_info(dataset, tmp_path):
    root = tmp_path / "ds"
    shutil.copytree(dataset, root)
    info = json.loads((root / "meta" / "info.json").read_text())
    info["total_frames"] = 999
    (root / "meta" / "info.json").write_text(json.dumps(info))
    result = import_lerobot(root, exchange_rate=1.0, repeat=1)
    assert result.row["held_hours"] == pytest.approx(100 / FPS / 3600, rel=1e-12)
    assert any("3 episodes of 100 frames, info.json declares 999" in n for n in result.notes)


def test_timestamps_off_the_lengths_are_noted(dataset, tmp_path):
    root = tmp_path / "ds"
    shutil.copytree(dataset, root)
    table = root / "meta" / "episodes" / "chunk-000" / "file-000.parquet"
    pq.write_table(_episodes_table(stretch=1.2), table)  # each span 20 % longer: 6 to 9 frames off
    result = import_lerobot(root, exchange_rate=1.0, repeat=1)
    notes = [n for n in result.notes if "differ from length / fps" in n]
    assert notes and notes[0].startswith("6 episode video span(s)")  # 3 episodes × 2 cameras
    assert result.row["held_hours"] == pytest.approx(100 / FPS / 3600, rel=1e-12)


def test_a_missing_column_is_one_line(dataset, tmp_path, capsys):
    root = tmp_path / "ds"
    shutil.copytree(dataset, root)
    table = root / "meta" / "episodes" / "chunk-000" / "file-000.parquet"
    pq.write_table(_episodes_table().drop_columns(["length"]), table)
    assert main(["import", "lerobot", str(root)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "file-000.parquet: missing column(s) length" in err


def test_a_negative_length_is_one_line(dataset, tmp_path, capsys):
    root = tmp_path / "ds"
    shutil.copytree(dataset, root)
    table = root / "meta" / "episodes" / "chunk-000" / "file-000.parquet"
    pq.write_table(_episodes_table(lengths=(30, -45, 25)), table)
    assert main(["import", "lerobot", str(root)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "row 1: length = -45 is invalid: must be a whole number ≥ 0" in err


def test_the_json_may_not_be_the_episodes_table(dataset, tmp_path, capsys):
    root = tmp_path / "ds"
    shutil.copytree(dataset, root)
    table = root / "meta" / "episodes" / "chunk-000" / "file-000.parquet"
    before = table.read_bytes()
    assert main(["import", "lerobot", str(root), "--json", str(table)]) == 2
    assert "a file of the dataset this import reads" in capsys.readouterr().err
    assert table.read_bytes() == before


def test_without_pyav_the_episodes_give_bytes_over_their_frames(dataset, monkeypatch):
    from procure.ledger import lerobot

    def no_av():
        raise lerobot.InputError("no PyAV")

    monkeypatch.setattr(lerobot, "require_av", no_av)
    result = import_lerobot(dataset, exchange_rate=1.0)
    per = {c.camera: c for c in result.cameras}
    for camera, (w, h) in CAMERAS.items():
        path = dataset / VIDEO_PATH.format(video_key=camera, chunk_index=0, file_index=0)
        assert per[camera].frames == sum(LENGTHS)  # from the episodes' lengths
        assert per[camera].bits_per_pixel == pytest.approx(os.path.getsize(path) * 8 / (sum(LENGTHS) * w * h))
        assert per[camera].codec == CODEC  # info.json's video.codec


def test_a_video_path_of_other_fields_is_one_line(dataset, tmp_path, capsys):
    root = tmp_path / "ds"
    shutil.copytree(dataset, root)
    info = json.loads((root / "meta" / "info.json").read_text())
    info["video_path"] = "videos/{video_key}/episode_{episode_index:06d}.mp4"
    (root / "meta" / "info.json").write_text(json.dumps(info))
    assert main(["import", "lerobot", str(root)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "info.json: video_path = " in err and "{file_index} only" in err


def test_append_writes_each_camera_to_cameras_csv(dataset, capsys, ledger_copy):
    from procure import load_ledger

    args = ["import", "lerobot", str(dataset), "--source", "so101", "--append", "--ledger", str(ledger_copy),
            "--saturation-hours", "500", "--repeat", "1"]  # fmt: skip
    assert main(args) == 0
    capsys.readouterr()
    ledger = load_ledger(ledger_copy)
    cams = ledger.cameras
    assert list(cams["camera"]) == list(CAMERAS) and list(cams["width"]) == [192, 128]
    row = ledger.source("so101")
    pixels = sum(w * h for w, h in CAMERAS.values())
    bits = sum(os.path.getsize(dataset / VIDEO_PATH.format(video_key=c, chunk_index=0, file_index=0)) * 8
               for c in CAMERAS)  # fmt: skip
    # The ledger prices the two cameras as their sum: a mean frame of their pixels, their bytes.
    assert row["cameras"] == 2 and row["width"] * row["height"] == pytest.approx(pixels / 2)
    assert row["bits_per_pixel"] * pixels * sum(LENGTHS) == pytest.approx(bits, rel=1e-9)
    before = [(ledger_copy / f).read_bytes() for f in ("sources.csv", "cameras.csv")]
    assert main(args) == 2  # the same source twice: neither file changes
    assert "source = 'so101' has cameras already" in capsys.readouterr().err
    assert [(ledger_copy / f).read_bytes() for f in ("sources.csv", "cameras.csv")] == before


def test_bits_per_pixel_of_each_episode_from_its_packets(dataset, capsys):
    # the oracle: ffprobe's packets sorted by time, cut at the episodes' frame counts made here
    assert main(["import", "lerobot", str(dataset), "--json", "--exchange-rate", "1", "--per-episode"]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = out["per_episode"]
    assert len(rows) == len(LENGTHS) * len(CAMERAS)
    if shutil.which("ffprobe") is None:
        pytest.skip("ffprobe not installed")
    for camera, (w, h) in CAMERAS.items():
        path = dataset / VIDEO_PATH.format(video_key=camera, chunk_index=0, file_index=0)
        lines = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                                "packet=pts,size", "-of", "csv=p=0", str(path)], check=True, capture_output=True,
                               text=True).stdout.split()  # fmt: skip
        sizes = [int(s) for _p, s in sorted((int(p), int(s)) for p, s in (line.split(",") for line in lines))]
        mine = [r for r in rows if r["camera"] == camera]
        at = 0
        for episode, n in enumerate(LENGTHS):
            r = mine[episode]
            want = sum(sizes[at : at + n])
            assert (r["episode"], r["frames"], r["bytes"]) == (episode, n, want)
            assert r["bits_per_pixel"] == pytest.approx(want * 8 / (n * w * h), rel=1e-12)
            at += n
        assert sum(r["bytes"] for r in mine) == sum(sizes)


def test_bits_per_pixel_of_each_episode_printed_per_camera(dataset, capsys):
    assert main(["import", "lerobot", str(dataset), "--exchange-rate", "1", "--per-episode"]) == 0
    out = capsys.readouterr().out
    assert out.count("per episode (3):") == len(CAMERAS)
