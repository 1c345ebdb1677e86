"""``procure import lerobot`` on datasets as they are found: partly downloaded, v1.x, or with
``info.json`` values that are out of range.

A dataset of several episodes is built here in the v2.1 layout (a file per episode and camera)
and the v3.0 layout (files holding episodes; here one each, as a small
``video_files_size_in_mb`` makes them), with episodes of different lengths. The bits per pixel
of the whole dataset are computed from the packets' bytes (read apart from procure) over the
frames each episode was made with.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from clips import encode, stream_bytes

from procure.errors import InputError
from procure.interfaces.cli import main
from procure.ledger import lerobot
from procure.ledger.lerobot import import_lerobot

pytest.importorskip("av")
from procure.pipeline import calibrate as calibration

FPS, W, H = 30, 160, 120  # large enough that x264's headers are a small part of each file
#: Frames of each episode: different lengths, so that dividing the bytes on disk by every
#: declared frame would be far off.
LENGTHS = (48, 96, 72, 120, 60)
CAMERAS = ("observation.images.top", "observation.images.wrist")
V2_VIDEO_PATH = "videos/chunk-{episode_chunk:03d}/{video_key}/episode_{episode_index:06d}.mp4"
V3_VIDEO_PATH = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"


def _video(version: str) -> dict:
    channel_first = version == "v3.0"
    return {
        "dtype": "video",
        "shape": [3, H, W] if channel_first else [H, W, 3],
        "names": ["channels", "height", "width"] if channel_first else ["height", "width", "channels"],
        "info": {"video.fps": FPS, "video.codec": "h264", "video.pix_fmt": "yuv420p"},
    }


def _info(version: str) -> dict:
    info = {
        "codebase_version": version, "robot_type": "so100", "total_episodes": len(LENGTHS),
        "total_frames": sum(LENGTHS), "total_tasks": 1, "chunks_size": 1000, "fps": FPS,
        "splits": {"train": f"0:{len(LENGTHS)}"},
        "features": {**{c: _video(version) for c in CAMERAS},
                     "observation.state": {"dtype": "float32", "shape": [6], "names": None},
                     "action": {"dtype": "float32", "shape": [6], "names": None}},
    }  # fmt: skip
    if version == "v3.0":
        info.update(video_path=V3_VIDEO_PATH, data_files_size_in_mb=100, video_files_size_in_mb=1)
    else:
        info.update(video_path=V2_VIDEO_PATH, total_videos=len(LENGTHS) * len(CAMERAS), total_chunks=1)
    return info


def _episode_file(version: str, camera: str, episode: int) -> str:
    if version == "v3.0":
        return V3_VIDEO_PATH.format(video_key=camera, chunk_index=0, file_index=episode)
    return V2_VIDEO_PATH.format(episode_chunk=0, video_key=camera, episode_index=episode)


def make_dataset(root: Path, version: str) -> Path:
    """A dataset of ``LENGTHS`` episodes and two cameras in the layout of ``version``."""
    (root / "meta").mkdir(parents=True)
    (root / "meta" / "info.json").write_text(json.dumps(_info(version)))
    for episode, frames in enumerate(LENGTHS):
        for camera in CAMERAS:
            path = root / _episode_file(version, camera, episode)
            path.parent.mkdir(parents=True, exist_ok=True)
            encode(path, width=W, height=H, gop=2, frames=frames)
    return root


def whole_bits_per_pixel(root: Path) -> float:
    """Bits per pixel of all the dataset's videos: packet bytes over the frames they were made with."""
    size = sum(stream_bytes(p)[0] for p in (root / "videos").rglob("*.mp4"))
    return size * 8 / (sum(LENGTHS) * len(CAMERAS) * W * H)


def _keep_only(root: Path, version: str, episodes: set[int]) -> None:
    for episode in range(len(LENGTHS)):
        if episode not in episodes:
            for camera in CAMERAS:
                (root / _episode_file(version, camera, episode)).unlink()


@pytest.fixture(scope="module", params=["v2.1", "v3.0"])
def dataset(request, tmp_path_factory):
    return request.param, make_dataset(tmp_path_factory.mktemp(request.param) / "pick_place", request.param)


@pytest.fixture
def partial(dataset, tmp_path):
    """The dataset with only one episode's videos on disk (the fourth: 120 of 396 frames)."""
    import shutil

    version, whole = dataset
    root = tmp_path / "pick_place"
    shutil.copytree(whole, root)
    _keep_only(root, version, {3})
    return version, root


def test_the_whole_dataset_reads_its_bits_per_pixel(dataset):
    _version, root = dataset
    result = import_lerobot(root, repeat=1)
    assert result.row["bits_per_pixel"] == pytest.approx(whole_bits_per_pixel(root), rel=1e-12)
    assert result.row["held_hours"] == pytest.approx(sum(LENGTHS) / FPS / 3600, rel=1e-12)
    assert not [n for n in result.notes if "on disk" in n]


def test_one_episode_on_disk_gives_the_whole_dataset_bits_per_pixel(dataset, partial):
    version, root = partial
    whole = whole_bits_per_pixel(dataset[1])
    result = import_lerobot(root, repeat=1)
    bpp = result.row["bits_per_pixel"]
    assert abs(bpp / whole - 1) < 0.05
    # dividing the bytes on disk by every declared frame would be 396 / 120 = 3.3 times too low
    on_disk = sum(stream_bytes(p)[0] for p in (root / "videos").rglob("*.mp4")) * 8
    assert bpp > 3 * on_disk / (sum(LENGTHS) * len(CAMERAS) * W * H)
    assert result.row["held_hours"] == pytest.approx(sum(LENGTHS) / FPS / 3600, rel=1e-12)  # the dataset's hours
    if version == "v3.0":
        expected = "the videos on disk hold 240 of the 792 frames info.json declares (2 cameras × 396)"
    else:
        expected = "1 of 5 episodes have every camera's video on disk (2 of 10 files)"
    assert f"{expected}; bits per pixel from those" in result.notes


def test_the_partial_note_is_in_the_table_and_the_json(partial, capsys):
    _version, root = partial
    assert main(["import", "lerobot", str(root), "--repeat", "1", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert any("bits per pixel from those" in n for n in row["notes"])
    assert main(["import", "lerobot", str(root), "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "Note: " in out and "bits per pixel from those" in out and "notes" not in out.split("Note: ")[0]


def test_an_episode_missing_one_camera_is_not_on_disk(tmp_path):
    root = make_dataset(tmp_path / "d", "v2.1")
    (root / _episode_file("v2.1", CAMERAS[1], 0)).unlink()
    notes = import_lerobot(root, repeat=1).notes
    assert "4 of 5 episodes have every camera's video on disk (9 of 10 files); bits per pixel from those" in notes


def test_files_off_the_declared_paths_are_counted_as_files(tmp_path):
    root = make_dataset(tmp_path / "d", "v2.1")
    info = json.loads((root / "meta" / "info.json").read_text())
    info["video_path"] = "videos/{video_key}/{episode_index:06d}.mp4"  # matches none of the files
    (root / "meta" / "info.json").write_text(json.dumps(info))
    _keep_only(root, "v2.1", {0, 1})
    assert "4 of 10 video files on disk; bits per pixel from those" in import_lerobot(root, repeat=1).notes


def test_without_pyav_a_partial_dataset_leaves_bits_per_pixel_blank(partial, monkeypatch):
    version, root = partial

    def no_av():
        raise InputError("calibration needs PyAV: pip install 'procure[video]'")

    monkeypatch.setattr(lerobot, "require_av", no_av)
    result = import_lerobot(root)
    assert math.isnan(result.row["gop"]) and math.isnan(result.row["core_fps_1080p"])
    if version == "v2.1":
        assert math.isnan(result.row["bits_per_pixel"])
        assert any(n.startswith("bits_per_pixel left blank: 1 of 5 episodes have every") for n in result.notes)
    else:  # v3.0 files do not say which episodes they hold: the bytes over every frame, and a note saying so
        assert any("as if every video were on disk" in n for n in result.notes)


def test_without_pyav_a_whole_v2_dataset_uses_its_file_bytes(tmp_path, monkeypatch):
    root = make_dataset(tmp_path / "d", "v2.1")
    monkeypatch.setattr(lerobot, "require_av", lambda: (_ for _ in ()).throw(InputError("no PyAV")))
    result = import_lerobot(root)
    size = sum(p.stat().st_size for p in (root / "videos").rglob("*.mp4"))
    assert result.row["bits_per_pixel"] == pytest.approx(size * 8 / (sum(LENGTHS) * len(CAMERAS) * W * H), rel=1e-12)


def test_many_files_are_sampled_evenly_and_said_so(dataset, monkeypatch):
    _version, root = dataset
    monkeypatch.setattr(lerobot, "MAX_PROBED_FILES", 4)
    result = import_lerobot(root, repeat=1)
    assert "bits per pixel from 4 of the 10 video files on disk, evenly spaced" in result.notes
    assert abs(result.row["bits_per_pixel"] / whole_bits_per_pixel(root) - 1) < 0.05


def test_no_videos_on_disk_is_said(tmp_path):
    root = make_dataset(tmp_path / "d", "v2.1")
    _keep_only(root, "v2.1", set())
    result = import_lerobot(root, exchange_rate=1.0)
    assert math.isnan(result.row["bits_per_pixel"])
    assert result.notes == ("no video files under videos/: bits_per_pixel, gop and core_fps_1080p left blank",)


def test_progress_goes_from_the_first_file_to_the_last_run(dataset):
    _version, root = dataset
    calls: list[tuple[int, int]] = []
    import_lerobot(root, repeat=2, progress=lambda done, total: calls.append((done, total)))
    total = 10 + calibration.calibration_steps(2)  # every file read, then one file timed
    assert calls == [(k, total) for k in range(1, total + 1)]


def test_repeat_reaches_the_timed_runs_and_noisy_runs_are_noted(tmp_path, capsys, monkeypatch):
    root = make_dataset(tmp_path / "d", "v2.1")
    runs: list[int] = []
    real = calibration._decode_run

    def timed(av, path, frames_expected, warmup):
        decoded, _ = real(av, path, frames_expected, warmup)
        runs.append(decoded)
        return decoded, [0.01, 0.01, 0.04, 0.01][(len(runs) - 1) % 4]  # the untimed pass, then 3 runs

    monkeypatch.setattr(calibration, "_decode_run", timed)
    assert main(["import", "lerobot", str(root), "--repeat", "3", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert len(runs) == 1 + 3
    first = sorted((root / "videos").rglob("*.mp4"))[0]
    assert f"{first}: decode rates spread 4.00× over 3 runs" in "\n".join(row["notes"])
    assert main(["import", "lerobot", str(root), "--repeat", "3"]) == 0
    printed = " ".join(capsys.readouterr().out.split())  # a note wraps at its spaces to the terminal
    assert "Note: " + str(first) + ": decode rates spread 4.00×" in printed


def test_the_repeat_default_is_calibrate_s_and_the_ledger_has_no_default(capsys):
    assert main(["import", "lerobot", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert f"--repeat INTEGER Timed decoding runs of one video file (1 to 100); a note when they spread. " \
           f"[default: {calibration.DEFAULT_REPEAT}]" in text  # fmt: skip
    ledger = text.split("--ledger DIR", 1)[1].split("--append Add", 1)[0]
    assert "needed with --append; no default" in ledger and "Default:" not in ledger


def test_bad_repeat_is_one_line(tmp_path, capsys):
    root = make_dataset(tmp_path / "d", "v2.1")
    assert main(["import", "lerobot", str(root), "--repeat", "0"]) == 2
    assert capsys.readouterr().err == "procure: error: repeat = 0 is invalid: must be a whole number ≥ 1 and ≤ 100\n"


# v1.x and info.json values out of range: one line, exit 2


def _one_line(capsys, args: list[str]) -> str:
    code = main(args)
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "" and captured.err.count("\n") == 1, captured.err
    assert captured.err.startswith("procure: error: ")
    return captured.err


def test_a_v1_folder_names_its_version_and_the_versions_read(tmp_path, capsys):
    root = tmp_path / "old"
    (root / "meta_data").mkdir(parents=True)
    (root / "meta_data" / "info.json").write_text(json.dumps({"codebase_version": "v1.6", "fps": 30, "video": True}))
    (root / "videos").mkdir()
    encode(root / "videos" / "observation.images.top_episode_000000.mp4")
    err = _one_line(capsys, ["import", "lerobot", str(root)])
    assert f"{root / 'meta_data' / 'info.json'}: a LeRobot v1.x dataset" in err
    assert "codebase_version = 'v1.6' is not supported: procure reads v2.0, v2.1, v3.0" in err
    assert "convert it to v2.1 or later" in err


def test_a_v1_folder_without_a_version_says_v1x(tmp_path, capsys):
    (tmp_path / "meta_data").mkdir()
    (tmp_path / "meta_data" / "info.json").write_text("{}")
    assert "codebase_version = 'v1.x' is not supported" in _one_line(capsys, ["import", "lerobot", str(tmp_path)])


def _with(change):
    def edit(info: dict) -> str:
        change(info)
        return json.dumps(info)

    return edit


def _raw(text: str):
    return lambda info: json.dumps(info).replace('"total_frames": 1', f'"total_frames": {text}')


def _feature(name: str, **values):
    return _with(lambda i: i["features"][name].update(values))


CRASHES = {
    "total_frames 10^400": (_raw("1" + "0" * 400), "total_frames = 1" + "0" * 19 + "…(401 characters) is invalid"),
    "total_frames 1e400": (_raw("1e400"), "total_frames = inf is invalid: must be a whole number ≥ 0 and ≤ 1e+12"),
    "total_frames of 5000 digits": (_raw("9" * 5000), "not valid JSON: a number has more than 4300 digits"),
    "total_frames 1.5": (_raw("1.5"), "total_frames = 1.5 is invalid"),
    "shape six": (_feature("action", shape=["six"]), "features.action.shape = ['six'] is invalid: must be a list"),
    "shape 6": (_feature("action", shape=6), "features.action.shape = 6 is invalid"),
    "shape true": (_feature("action", shape=[True]), "features.action.shape = [True] is invalid"),
    "shape 2^32 x 2^32": (
        _feature("action", shape=[2**32, 2**32]),
        "features.action.shape = [4294967296, 4294967296] is invalid: must be a list of whole numbers ≥ 0 whose "
        "product is ≤ 1e+09",
    ),
    "video shape 6": (_feature(CAMERAS[0], shape=6), f"features.{CAMERAS[0]}.shape = 6 is invalid"),
    "video side 2^40": (
        _feature(CAMERAS[0], shape=[2**40, W, 3]),
        f"features.{CAMERAS[0]}.shape = [1099511627776, {W}, 3] is invalid: a video feature has 3 whole numbers ≥ 1 "
        "and ≤ 65,536",
    ),
    "video side 0": (_feature(CAMERAS[0], shape=[0, W, 3]), "is invalid: a video feature has 3 whole numbers ≥ 1"),
    "fps 0": (_with(lambda i: i.update(fps=0)), "fps = 0 is invalid: must be a number ≥ 1e-06 and ≤ 10000"),
    "fps -30": (_with(lambda i: i.update(fps=-30)), "fps = -30 is invalid"),
    "fps NaN": (_with(lambda i: i.update(fps=float("nan"))), "fps = nan is invalid"),
    "fps true": (_with(lambda i: i.update(fps=True)), "fps = True is invalid"),
    "no features": (_with(lambda i: i.pop("features")), "missing field(s) features"),
    "features a list": (_with(lambda i: i.update(features=[])), "features = [] is invalid: must be an object"),
    "a feature not an object": (_with(lambda i: i["features"].update(action=4)), "features.action = 4 is invalid"),
    "total_episodes -1": (_with(lambda i: i.update(total_episodes=-1)), "total_episodes = -1 is invalid"),
    "chunks_size 0": (
        _with(lambda i: i.update(chunks_size=0)),
        "chunks_size = 0 is invalid: must be a whole number ≥ 1",
    ),
    "total_videos 1e20": (_with(lambda i: i.update(total_videos=10**20)), "total_videos = 100000000000000000000 is"),
    "not an object": (lambda info: "[1, 2]", "is not a JSON object"),
    "deeply nested": (lambda info: "[" * 100_000 + "]" * 100_000, "not valid JSON"),
}


@pytest.mark.parametrize("case", sorted(CRASHES))
def test_info_json_out_of_range_is_one_line(tmp_path, capsys, case):
    write, message = CRASHES[case]
    root = tmp_path / "d"
    (root / "meta").mkdir(parents=True)
    info = _info("v2.1")
    info["total_frames"] = 1
    (root / "meta" / "info.json").write_text(write(info))
    err = _one_line(capsys, ["import", "lerobot", str(root)])
    assert f"{root / 'meta' / 'info.json'}: " in err and message in err, err


def test_big_shapes_are_counted_exactly(tmp_path):
    root = tmp_path / "d"
    (root / "meta").mkdir(parents=True)
    info = _info("v2.1")
    info["features"] = {CAMERAS[0]: _video("v2.1"), "cloud": {"dtype": "float64", "shape": [1000, 1000, 3]}}
    (root / "meta" / "info.json").write_text(json.dumps(info))
    result = import_lerobot(root)
    assert result.row["extra_bytes_per_s"] == 8 * 3_000_000 * FPS  # 720 MB/s, no wrap-around
