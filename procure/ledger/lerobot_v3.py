"""A LeRobot v3.0 dataset's episodes tables and its cameras' video files.

LeRobot v3.0 keeps many episodes in each file: ``meta/episodes/chunk-XXX/file-XXX.parquet``
holds a row per episode with its ``length`` [frames] and, per camera, the video file that
holds it (``videos/<camera>/chunk_index``, ``file_index``) and where in that file
(``from_timestamp``, ``to_timestamp`` [s]). From them:

* the hours held, ``Σ length / fps / 3600``, each episode's ``length / fps`` checked against
  ``to_timestamp − from_timestamp`` of each camera (a note past
  :data:`TIMESTAMP_TOLERANCE_FRAMES` frames);
* per camera (:class:`Camera`): its files on disk, their bytes (the mp4 as stored), the frames
  they hold (from their packets with PyAV, else the lengths of the episodes they hold), bits
  per pixel ``8 · bytes / (frames · W · H)``, and with PyAV the codec and keyframe interval of
  the stream.

Reading parquet needs ``pyarrow`` (:data:`PARQUET_PACKAGE`); without it the episodes tables
are left unread, with a note, and the import goes on from ``info.json`` as for a dataset
without them.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..pipeline.bill import SECONDS_PER_HOUR
from .lerobot_info import EPISODES_DIR, INFO_PATH, MAX_EPISODES, MAX_TOTAL_FRAMES, fail

if TYPE_CHECKING:
    from ..pipeline.streams import Stream

#: The package that reads parquet files.
PARQUET_PACKAGE = "pyarrow"
#: Largest difference between an episode's ``length / fps`` and a camera's
#: ``to_timestamp − from_timestamp`` before a note says so [frames]: one frame, the rounding of
#: a timestamp to its frame.
TIMESTAMP_TOLERANCE_FRAMES = 1.0
#: Where a camera's file is when ``info.json`` has no ``video_path`` (LeRobot v3.0's template).
V3_VIDEO_PATH = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
#: Columns of an episodes table per camera, after ``videos/<camera>/``.
CAMERA_COLUMNS = ("chunk_index", "file_index", "from_timestamp", "to_timestamp")


@dataclass(frozen=True)
class Camera:
    """One camera of a dataset, as its files on disk hold it.

    Attributes
    ----------
    camera : str
        The video feature's name.
    width, height : int
        Frame size [px] (``info.json``'s; the stream's when read).
    codec : str
        The stream's codec as ffprobe names it (``info.json``'s ``video.codec`` without PyAV).
    gop : float
        Median frames between keyframes of its files [frames]; NaN without PyAV.
    files : int
        Its video files on disk [count].
    frames : int
        Frames those files hold [frames].
    bytes : int
        Bytes of those files on disk [B].
    bits_per_pixel : float
        ``8 · bytes / (frames · width · height)`` [bit/px]; NaN with no frames.
    """

    camera: str
    width: int
    height: int
    codec: str
    gop: float
    files: int
    frames: int
    bytes: int
    bits_per_pixel: float

    def to_dict(self) -> dict[str, Any]:
        """The camera as a JSON-ready dict."""
        return asdict(self)


@dataclass(frozen=True)
class Episodes:
    """What the episodes tables say: each episode's length [frames], per camera the frames each
    of its files should hold [frames], by path relative to the dataset folder, and per camera
    each episode's file and span in it, ``(path, from_timestamp, to_timestamp)`` [s]."""

    lengths: np.ndarray
    files: dict[str, dict[str, int]]
    notes: tuple[str, ...]
    spans: dict[str, list[tuple[str, float, float]]] = field(default_factory=dict)


def episode_tables(root: Path) -> list[Path]:
    """The episodes tables of a dataset folder, sorted (none for v2.x)."""
    folder = root / EPISODES_DIR
    return sorted(p for p in folder.rglob("*.parquet") if p.is_file()) if folder.is_dir() else []


def _parquet() -> Any:
    """``pyarrow.parquet``, or None when it is not installed."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        return None
    return pq


def _column(path: Path, table: Any, name: str, low: float, high: float, whole: bool) -> np.ndarray:
    """A column of an episodes table as numbers, each checked from ``low`` to ``high``."""
    values = np.asarray(table.column(name).to_pylist(), dtype=object)
    for row, value in enumerate(values.tolist()):
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not (number and math.isfinite(value) and low <= value <= high and (not whole or float(value).is_integer())):
            kind = "a whole number" if whole else "a number"
            raise fail(path, f"row {row}: {name} = {value!r} is invalid: must be {kind} ≥ {low:g} and ≤ {high:g}")
    return values.astype(float)


def _video_file(root: Path, template: str, camera: str, chunk: int, file: int) -> str:
    """A camera's file by ``info.json``'s ``video_path`` template, relative to the dataset.

    Raises
    ------
    LedgerError
        A template that does not make a path from ``video_key``, ``chunk_index`` and
        ``file_index`` alone.
    """
    try:
        return template.format(video_key=camera, chunk_index=chunk, file_index=file)
    except (KeyError, IndexError, ValueError, AttributeError):
        raise fail(
            root / INFO_PATH,
            f"video_path = {template[:80]!r} is invalid: a v3.0 template uses {{video_key}}, {{chunk_index}} and "
            "{file_index} only",
        ) from None


def read_episodes(root: Path, info: dict[str, Any], cameras: list[str]) -> Episodes | str | None:
    """The episodes tables of a v3.0 dataset, checked; a note (str) when they cannot be read;
    None when there are none.

    Raises
    ------
    LedgerError
        Naming the table, the row, the column and the value: a missing column, a length or an
        index that is not a whole number in range, a timestamp below 0, or a ``to_timestamp``
        before its ``from_timestamp``.
    """
    tables = episode_tables(root)
    if not tables:
        return None
    pq = _parquet()
    if pq is None:
        return (
            f"the episodes tables under {EPISODES_DIR}/ are not read (reading parquet needs {PARQUET_PACKAGE}: "
            f"pip install {PARQUET_PACKAGE}): hours from info.json's total_frames"
        )
    fps = float(info["fps"])
    given = info.get("video_path")
    template: str = given if isinstance(given, str) and given else V3_VIDEO_PATH
    lengths: list[np.ndarray] = []
    files: dict[str, dict[str, int]] = {c: {} for c in cameras}
    spans: dict[str, list[tuple[str, float, float]]] = {c: [] for c in cameras}
    off: list[str] = []
    for path in tables:
        wanted = ["length", *(f"videos/{c}/{k}" for c in cameras for k in CAMERA_COLUMNS)]
        try:
            names = pq.read_schema(path).names
        except Exception as exc:  # pyarrow's errors on a file that is not parquet
            raise fail(path, f"not a parquet file pyarrow reads ({type(exc).__name__})") from None
        missing = [n for n in wanted if n not in names]
        if missing:
            raise fail(path, f"missing column(s) {', '.join(missing)}: a v3.0 episodes table has {', '.join(wanted)}")
        table = pq.read_table(path, columns=wanted)
        length = _column(path, table, "length", 0, MAX_TOTAL_FRAMES, True)
        lengths.append(length)
        for camera in cameras:
            col = {k: f"videos/{camera}/{k}" for k in CAMERA_COLUMNS}
            chunk = _column(path, table, col["chunk_index"], 0, MAX_EPISODES, True)
            index = _column(path, table, col["file_index"], 0, MAX_EPISODES, True)
            start = _column(path, table, col["from_timestamp"], 0, MAX_TOTAL_FRAMES / fps, False)
            end = _column(path, table, col["to_timestamp"], 0, MAX_TOTAL_FRAMES / fps, False)
            if (end < start).any():
                row = int(np.flatnonzero(end < start)[0])
                raise fail(path, f"row {row}: {col['to_timestamp']} = {end[row]:g} is invalid: must be at least "
                                 f"{col['from_timestamp']} = {start[row]:g}")  # fmt: skip
            gap = np.abs(length / fps - (end - start)) * fps
            for row in np.flatnonzero(gap > TIMESTAMP_TOLERANCE_FRAMES).tolist():
                off.append(f"{path.name} row {row}, {camera}: length {int(length[row]):,} frames is "
                           f"{length[row] / fps:.4g} s, its video {end[row] - start[row]:.4g} s")  # fmt: skip
            for c, f, n, a, b in zip(chunk.tolist(), index.tolist(), length.tolist(), start.tolist(), end.tolist(),
                                     strict=True):  # fmt: skip
                rel = _video_file(root, template, camera, int(c), int(f))
                files[camera][rel] = files[camera].get(rel, 0) + int(n)
                spans[camera].append((rel, float(a), float(b)))
    notes = []
    if off:
        notes.append(
            f"{len(off):,} episode video span(s) differ from length / fps by more than "
            f"{TIMESTAMP_TOLERANCE_FRAMES:g} frame; hours from length / fps (first: {off[0]})"
        )
    return Episodes(np.concatenate(lengths), files, tuple(notes), spans)


def hours_from_episodes(row: dict[str, Any], episodes: Episodes, declared_frames: int, path: Path) -> list[str]:
    """``row``'s hours held, ``Σ length / fps / 3600`` [h]; notes when the lengths disagree
    with ``info.json``'s ``total_frames`` (at ``path``) or with the videos' timestamps."""
    total = int(episodes.lengths.sum())
    row["held_hours"] = total / float(row["fps"]) / SECONDS_PER_HOUR
    notes = list(episodes.notes)
    if total != declared_frames:
        notes.append(
            f"the episodes tables hold {len(episodes.lengths):,} episodes of {total:,} frames, {path.name} declares "
            f"{declared_frames:,}: hours from the episodes"
        )
    return notes


def _gop(keyframes: tuple[bool, ...], frames: int) -> float:
    """Median frames between keyframes of a stream; its frames when it has one keyframe."""
    where = np.flatnonzero(np.asarray(keyframes))
    return float(np.median(np.diff(where))) if len(where) > 1 else float(frames)


def cameras_on_disk(
    root: Path,
    episodes: Episodes,
    sizes: dict[str, tuple[int, int]],
    declared: dict[str, str],
    with_av: bool,
    streams: dict[str, Stream] | None = None,
) -> tuple[list[Camera], list[str]]:
    """Each camera's files on disk, measured; notes on files missing or holding other frames
    than their episodes say.

    Parameters
    ----------
    root : Path
        The dataset folder.
    episodes : Episodes
        The episodes tables read (:func:`read_episodes`).
    sizes : dict
        Each camera's ``(width, height)`` from ``info.json`` [px].
    declared : dict
        Each camera's ``video.codec`` from ``info.json`` ("" if none).
    with_av : bool
        Read each file's packets with PyAV (frames, codec, keyframes, size).
    streams : dict, optional
        Gets each file read, by its path relative to ``root`` (for
        :func:`procure.ledger.episode_rates.episode_rates`).
    """
    from ..pipeline.streams import read_stream

    cameras: list[Camera] = []
    notes: list[str] = []
    for camera, files in episodes.files.items():
        on_disk = [rel for rel in files if (root / rel).is_file()]
        if len(on_disk) < len(files):
            notes.append(f"{camera}: {len(on_disk):,} of its {len(files):,} video files are on disk")
        width, height = sizes[camera]
        codec, gops, frames = declared.get(camera, ""), [], 0
        codecs: Counter[str] = Counter()
        for rel in on_disk:
            held = files[rel]
            if with_av:
                s = read_stream(root / rel)
                if streams is not None:
                    streams[rel] = s
                width, height, held = s.width, s.height, s.frames
                codecs[s.codec] += s.frames
                gops.append(_gop(s.keyframes, s.frames))
                if s.frames != files[rel]:
                    notes.append(f"{rel}: holds {s.frames:,} frames, its episodes {files[rel]:,}")
            frames += held
        size = sum((root / rel).stat().st_size for rel in on_disk)
        bpp = size * 8.0 / (frames * width * height) if frames else math.nan
        codec = codecs.most_common(1)[0][0] if codecs else codec
        gop = statistics.median(gops) if gops else math.nan
        cameras.append(Camera(camera, width, height, codec, gop, len(on_disk), frames, size, bpp))
    return cameras, notes


def apply_cameras(row: dict[str, Any], cameras: list[Camera]) -> list[str]:
    """``row``'s bits per pixel, codec and keyframe interval from its cameras' files; notes when
    its cameras differ in size or codec (the row prices every camera at its largest size)."""
    notes: list[str] = []
    pixels = sum(c.frames * c.width * c.height for c in cameras)
    if pixels:
        row["bits_per_pixel"] = sum(c.bytes for c in cameras) * 8.0 / pixels
    known = [c for c in cameras if c.frames]
    codecs = {c.codec for c in known if c.codec}
    if codecs:
        row["codec"] = Counter(c.codec for c in known for _ in range(c.frames)).most_common(1)[0][0]
    if len(codecs) > 1:
        notes.append(f"cameras in different codecs ({', '.join(sorted(codecs))}): the row takes {row['codec']}")
    gops = [c.gop for c in known if not math.isnan(c.gop)]
    if gops:
        row["gop"] = statistics.median(gops)
    sizes = {(c.width, c.height) for c in cameras}
    if len(sizes) > 1:
        shown = ", ".join(f"{c.camera} {c.width}×{c.height}" for c in cameras)
        notes.append(
            f"cameras of different sizes ({shown}): the row prices each at {row['width']}×{row['height']}, the largest"
        )
    return notes
