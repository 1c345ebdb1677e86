"""A LeRobot dataset as a ledger row: its cameras, format, hours held and bytes.

Reads ``meta/info.json`` of codebase versions 2.0, 2.1 and 3.0: the video features are the
cameras (their shape read through the axis ``names``, channel-first or channel-last), the
frames and frame rate give the hours held, and the other features (dtype size × shape × fps)
the non-video bytes a second. A LeRobot v1.x folder (``meta_data/info.json``) is refused with
the version it has and the versions read.

Bits per pixel come from the video files on disk, each read with PyAV
(:func:`procure.pipeline.streams.read_stream`): their stream bytes over their own frames and
pixels, so a partly downloaded dataset gives the bits per pixel of the videos it has, not their
bytes spread over frames that are not there. What is on disk is counted against what
``info.json`` declares, and a note says when the row rests on part of the dataset: for v2.x,
the files of each episode and camera (``video_path``, ``total_episodes``, ``total_videos``);
for v3.0, whose files hold many episodes each, the frames of each camera (``total_frames``).
One file is then timed (:func:`procure.pipeline.calibrate.calibrate_file`, ``repeat`` runs) for
the keyframe interval and the 1080p decode rate, with a note when its runs disagree. Without
PyAV the bits per pixel are the video bytes over the declared frames when every declared file
is on disk (for v3.0, which cannot tell, with a note saying it assumes so), and blank (with a
note) when some are missing.

Every number read is checked against a documented range (:mod:`procure.ledger.lerobot_info`:
``MAX_FPS``, ``MAX_TOTAL_FRAMES``, ``MAX_EPISODES``, ``MAX_FRAME_SIDE``,
``MAX_FEATURE_VALUES``), in Python integers that do not wrap; a value out of range stops
the import with one line naming the file, the field, the value and what is allowed.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..install import install_command
from ..pipeline.bill import SECONDS_PER_HOUR
from ..pipeline.calibrate import DEFAULT_REPEAT, Progress, calibrate_file, calibration_steps, check_repeat
from ..pipeline.streams import Stream, read_stream, require_av
from .episode_rates import EpisodeRate, episode_rates
from .lerobot_coverage import v2_coverage, v3_coverage
from .lerobot_info import (
    DTYPE_BYTES,
    EPISODES_DIR,
    INFO_PATH,
    LEGACY_INFO_PATH,
    NO_BYTES,
    fail,
    feature_values,
    frame_size,
    read_info,
    video_info,
)
from .lerobot_v3 import Camera, apply_cameras, cameras_on_disk, hours_from_episodes, read_episodes
from .sources import check_source_value

#: Episodes a chunk when ``info.json`` gives no ``chunks_size`` (LeRobot's default) [episodes].
DEFAULT_CHUNK_SIZE = 1000
#: Most video files read for the bits per pixel; more are sampled evenly over their sorted paths.
MAX_PROBED_FILES = 200
#: Video file endings counted as a dataset's video bytes.
VIDEO_SUFFIXES = (".mp4", ".mkv", ".avi", ".mov", ".webm")
#: Ledger columns an import fills, in order.
IMPORT_COLUMNS = (
    "source", "kind", "price_usd_per_hour", "available_hours", "held_hours", "exchange_rate", "cameras", "width",
    "height", "fps", "codec", "bits_per_pixel", "extra_bytes_per_s", "gop", "core_fps_1080p",
)  # fmt: skip
#: Hours of an imported dataset that can be bought when no price is given [h]: none. A dataset
#: read from disk is held; what more of it costs is the team's to say (``--price`` with
#: ``--available-hours``), never a free, unlimited row.
IMPORT_AVAILABLE_HOURS = 0.0
#: The note on a row whose exchange rate was not given.
EXCHANGE_RATE_NOTE = (
    "exchange_rate not given: 1, an hour of this dataset worth one of your own hours; give --exchange-rate ρ "
    "(docs/program.md) if it is worth less"
)


@dataclass(frozen=True)
class DatasetImport:
    """A dataset read as a ledger row, and what to know about it.

    Attributes
    ----------
    row : dict
        The ledger row, keyed by ``sources.csv`` column (:data:`IMPORT_COLUMNS`).
    notes : tuple of str
        What the row rests on when it is not the whole dataset, or is uncertain: part of the
        videos on disk, files sampled, a variable frame rate, noisy decode rates.
    cameras : tuple of Camera
        Each camera's files on disk, measured (a v3.0 dataset with episodes tables).
    episodes : tuple of EpisodeRate
        Where asked (``per_episode``), each episode's bits per pixel per camera.
    """

    row: dict[str, Any]
    notes: tuple[str, ...] = ()
    cameras: tuple[Camera, ...] = ()
    episodes: tuple[EpisodeRate, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The row's columns, ``notes`` (a list) and, for a v3.0 dataset with episodes tables,
        ``per_camera`` (:class:`procure.ledger.lerobot_v3.Camera` each) and where asked
        ``per_episode`` (:class:`procure.ledger.episode_rates.EpisodeRate` each), JSON-ready."""
        out = {**self.row, "notes": list(self.notes)}
        if self.cameras:
            out["per_camera"] = [c.to_dict() for c in self.cameras]
        if self.episodes:
            out["per_episode"] = [e.to_dict() for e in self.episodes]
        return out


def _files(root: Path) -> list[Path]:
    folder = root / "videos"
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.rglob("*") if p.suffix.lower() in VIDEO_SUFFIXES and p.is_file())


def _sample(files: list[Path]) -> list[Path]:
    """At most :data:`MAX_PROBED_FILES` files, evenly spaced over the sorted list."""
    if len(files) <= MAX_PROBED_FILES:
        return files
    picks = np.unique(np.linspace(0, len(files) - 1, MAX_PROBED_FILES).round().astype(int))
    return [files[i] for i in picks.tolist()]


def dataset_files(folder: str | Path) -> list[Path]:
    """Every file of a LeRobot dataset an import reads: ``meta/info.json`` (and a v1.x
    folder's ``meta_data/info.json``), the episodes tables under ``meta/episodes/`` and the
    video files under ``videos/``; those that exist, and the two ``info.json`` whether or not."""
    root = Path(folder)
    files = [root / INFO_PATH, root / LEGACY_INFO_PATH]
    episodes = root / EPISODES_DIR
    if episodes.is_dir():
        files.extend(sorted(p for p in episodes.rglob("*.parquet") if p.is_file()))
    return files + _files(root)


def _checked_text(name: str, value: str, option: str) -> str:
    """A text column given by an option, stripped; blank refused naming the option."""
    return str(check_source_value(name, value, option)).strip()


def check_row(path: Path, row: dict[str, Any]) -> None:
    """Every number of an imported row in its column's range (a blank, NaN, is left blank).

    Raises
    ------
    LedgerError
        Naming ``info.json``, the column, the value and what is allowed.
    """
    for name, value in row.items():
        if isinstance(value, float) and math.isnan(value):
            continue
        check_source_value(name, value, str(path))


def import_lerobot(
    folder: str | Path,
    *,
    source: str | None = None,
    kind: str = "own",
    price: float | None = None,
    available_hours: float | None = None,
    exchange_rate: float | None = None,
    probe: bool = True,
    repeat: int = DEFAULT_REPEAT,
    progress: Progress | None = None,
    per_episode: bool = False,
) -> DatasetImport:
    """A ledger row (keyed by ``sources.csv`` column) for a LeRobot dataset folder, and notes.

    Parameters
    ----------
    folder : path-like
        The dataset's folder (with ``meta/info.json``; ``videos/`` for the video files).
    source : str, optional
        The row's name; the folder's name by default. Blank is refused.
    kind : str, default "own"
        The row's kind. Blank is refused.
    price, available_hours : float, optional
        The price of an hour [$/h] and the hours that can be bought at it [h], given both or
        neither. Neither: the row holds the dataset's hours and has nothing to buy (price 0,
        ``available_hours`` :data:`IMPORT_AVAILABLE_HOURS`).
    exchange_rate : float, optional
        ρ, the row's own-hours per hour [own-hours/h]; 1 when not given, with a note
        (:data:`EXCHANGE_RATE_NOTE`).
    probe : bool, default True
        Read the video files with PyAV (when installed): each file's frames and stream bytes
        for ``bits_per_pixel``, and one file timed for ``gop`` and ``core_fps_1080p``.
    repeat : int, default 5
        Timed decoding runs of that file (:data:`procure.pipeline.calibrate.DEFAULT_REPEAT`),
        1 to :data:`procure.pipeline.calibrate.MAX_REPEAT`.
    progress : callable, optional
        ``progress(done, total)``, called as each file is read and each timed run ends.
    per_episode : bool, default False
        Also each episode's bits per pixel per camera, from the packets in its span (a v3.0
        dataset with episodes tables, read with PyAV; :mod:`procure.ledger.episode_rates`).

    Returns
    -------
    DatasetImport
        The row and its notes.

    Raises
    ------
    LedgerError
        Naming the file and field: no ``info.json``, a v1.x dataset, a missing field, a
        version not read, no video feature, a shape that is not a video's, a number out of
        range.
    InputError
        A ``repeat`` out of range, or a video file that cannot be read (naming it).
    """
    runs = check_repeat(repeat)
    if (price is None) != (available_hours is None):
        raise InputError(
            "--price and --available-hours go together: the price of the hours that can be bought, and how many; "
            "give neither for a dataset held with nothing to buy"
        )
    if price is not None:
        price = float(check_source_value("price_usd_per_hour", price, "--price"))
        available_hours = float(check_source_value("available_hours", available_hours, "--available-hours"))
    if exchange_rate is not None:
        exchange_rate = float(check_source_value("exchange_rate", exchange_rate, "--exchange-rate"))
    if source is not None:
        source = _checked_text("source", source, "--source")
    kind = _checked_text("kind", kind, "--kind")
    path, info = read_info(folder)
    root = Path(folder)
    fps = float(info["fps"])
    frames = int(info["total_frames"])
    videos = {k: f for k, f in info["features"].items() if f.get("dtype") == "video"}
    if not videos:
        raise fail(path, "has no video feature (dtype 'video'): procure prices video hours")
    cameras = list(videos)
    sizes = [frame_size(path, k, f) for k, f in videos.items()]
    width, height = max(sizes, key=lambda wh: wh[0] * wh[1])
    declared_codecs = [str(video_info(f).get("video.codec", "")) for f in videos.values()]
    extra = 0.0
    for name, feature in info["features"].items():
        if feature.get("dtype") in NO_BYTES:
            continue
        dtype = str(feature.get("dtype"))
        if dtype not in DTYPE_BYTES:
            raise fail(path, f"features.{name}.dtype = {dtype!r} is unknown: known are {', '.join(DTYPE_BYTES)}")
        extra += DTYPE_BYTES[dtype] * feature_values(path, name, feature) * fps
    row: dict[str, Any] = {
        "source": source or root.resolve().name,
        "kind": kind,
        "price_usd_per_hour": 0.0 if price is None else float(price),
        "available_hours": IMPORT_AVAILABLE_HOURS if available_hours is None else float(available_hours),
        "held_hours": frames / fps / SECONDS_PER_HOUR,
        "exchange_rate": 1.0 if exchange_rate is None else float(exchange_rate),
        "cameras": len(videos),
        "width": width,
        "height": height,
        "fps": fps,
        "codec": next((c for c in declared_codecs if c), ""),
        "bits_per_pixel": math.nan,
        "extra_bytes_per_s": extra,
        "gop": math.nan,
        "core_fps_1080p": math.nan,
    }
    first = [EXCHANGE_RATE_NOTE] if exchange_rate is None else []
    episodes = read_episodes(root, info, cameras) if str(info["codebase_version"]) == "v3.0" else None
    if isinstance(episodes, str):
        first.append(episodes)
        episodes = None
    files = _files(root)
    with_av = probe and bool(files)
    if with_av:
        try:
            require_av()
        except InputError:
            with_av = False
    if not files:
        notes = ["no video files under videos/: bits_per_pixel, gop and core_fps_1080p left blank"]
    elif not with_av:
        notes = (
            [] if episodes else _from_file_bytes(row, root, info, cameras, files, frames * sum(w * h for w, h in sizes))
        )
        if probe:
            notes.append("gop and core_fps_1080p left blank: timing a video file needs PyAV")
    else:
        notes = _from_probes(row, root, info, cameras, files, runs, progress)
    per_camera: tuple[Camera, ...] = ()
    rates: tuple[EpisodeRate, ...] = ()
    if per_episode and not (episodes is not None and with_av):
        why = "reading the packets needs PyAV" if episodes is not None else "it needs a v3.0 dataset's episodes tables"
        notes.append(f"bits per pixel per episode not read: {why}")
    if episodes is not None:
        notes[:0] = hours_from_episodes(row, episodes, frames, path)
        declared = {c: str(video_info(videos[c]).get("video.codec", "")) for c in cameras}
        streams: dict[str, Stream] = {}
        measured, on_disk = cameras_on_disk(root, episodes, dict(zip(cameras, sizes, strict=True)), declared, with_av,
                                            streams)  # fmt: skip
        notes.extend([*on_disk, *apply_cameras(row, measured)])
        per_camera = tuple(measured)
        if per_episode and with_av:
            rates = tuple(episode_rates(episodes, measured, streams))
    check_row(path, row)
    return DatasetImport(row, (*first, *notes), per_camera, rates)


def _from_file_bytes(
    row: dict[str, Any], root: Path, info: dict[str, Any], cameras: list[str], files: list[Path], pixels: int
) -> list[str]:
    """Without PyAV: ``row``'s bits per pixel from the files' bytes over the declared pixels
    (when every declared file is on disk); the notes."""
    v3 = str(info["codebase_version"]) == "v3.0"
    coverage = None if v3 else v2_coverage(root, info, cameras, files)
    if coverage is not None or not pixels:
        reason = f"{coverage}; counting their frames needs PyAV ({install_command('video')})" if coverage else (
            "the dataset declares no frames"
        )  # fmt: skip
        return [f"bits_per_pixel left blank: {reason}"]
    row["bits_per_pixel"] = sum(p.stat().st_size for p in files) * 8.0 / pixels
    if v3:
        return [
            "bits per pixel: the video bytes on disk over every declared frame, as if every video were on disk "
            "(counting the frames of each file needs PyAV: " + install_command("video") + ")"
        ]
    return []


def _from_probes(
    row: dict[str, Any], root: Path, info: dict[str, Any], cameras: list[str], files: list[Path], runs: int,
    progress: Progress | None,
) -> list[str]:  # fmt: skip
    """With PyAV: ``row``'s codec and bits per pixel from the files on disk, each read (at most
    :data:`MAX_PROBED_FILES`), and its keyframe interval and 1080p decode rate from the first
    one timed; the notes."""
    chosen = _sample(files)
    steps = len(chosen) + calibration_steps(runs)

    def tick(done: int) -> None:
        if progress is not None:
            progress(done, steps)

    probed: list[Stream] = []
    for k, p in enumerate(chosen, start=1):
        probed.append(read_stream(p))
        tick(k)
    bits = sum(s.stream_bytes * 8.0 for s in probed)
    row["bits_per_pixel"] = bits / sum(s.frames * s.width * s.height for s in probed)
    row["codec"] = Counter(s.codec for s in probed).most_common(1)[0][0]
    notes: list[str] = []
    if str(info["codebase_version"]) == "v3.0":
        coverage = v3_coverage(root, info, cameras, probed) if len(chosen) == len(files) else None
    else:
        coverage = v2_coverage(root, info, cameras, files)
    if coverage:
        notes.append(f"{coverage}; bits per pixel from those")
    if len(chosen) < len(files):
        notes.append(f"bits per pixel from {len(chosen):,} of the {len(files):,} video files on disk, evenly spaced")
    variable = [s for s in probed if not s.constant_rate]
    if variable:
        notes.append(
            f"{len(variable):,} of {len(probed):,} video files have a variable frame rate (steps between frames "
            f"spread up to {max(s.fps_spread for s in variable):.3g}×)"
        )
    measured = calibrate_file(chosen[0], repeat=runs, progress=lambda done, _total: tick(len(chosen) + done))
    row["gop"] = measured.gop
    row["core_fps_1080p"] = measured.core_fps_1080p
    notes.extend(f"{measured.file}: {n}" for n in measured.notes if n not in probed[0].notes)  # the decode rates
    return notes
