"""A LeRobot dataset as a ledger row: its cameras, format, hours held and bytes.

Reads ``meta/info.json`` of codebase versions 2.0, 2.1 and 3.0: the video features are the
cameras (their shape read through the axis ``names``, channel-first or channel-last), the
frames and frame rate give the hours held, the video files on disk give the bits per pixel,
and the other features (dtype size × shape × fps) the non-video bytes a second. With PyAV,
one probe of a video file adds the keyframe interval and the 1080p decode rate.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, LedgerError

#: Codebase versions whose ``info.json`` is understood.
VERSIONS = ("v2.0", "v2.1", "v3.0")
#: Keys ``info.json`` must have.
REQUIRED_KEYS = ("codebase_version", "fps", "total_frames", "features")
#: Bytes of one value of each feature dtype [B].
DTYPE_BYTES = {
    "float64": 8, "float32": 4, "float16": 2, "int64": 8, "int32": 4, "int16": 2, "int8": 1,
    "uint8": 1, "uint16": 2, "uint32": 4, "uint64": 8, "bool": 1,
}  # fmt: skip
#: Feature dtypes that carry no per-frame bytes of their own here (text, or the video itself).
NO_BYTES = ("video", "image", "string")
#: Video file endings counted as a dataset's video bytes.
VIDEO_SUFFIXES = (".mp4", ".mkv", ".avi", ".mov", ".webm")
#: Ledger columns an import fills, in order.
IMPORT_COLUMNS = (
    "source", "kind", "price_usd_per_hour", "held_hours", "cameras", "width", "height", "fps",
    "codec", "bits_per_pixel", "extra_bytes_per_s", "gop", "core_fps_1080p",
)  # fmt: skip


def _fail(path: Path, what: str) -> LedgerError:
    return LedgerError(f"{path}: {what}")


def read_info(folder: str | Path) -> tuple[Path, dict[str, Any]]:
    """``meta/info.json`` of a dataset folder, checked for the keys and version procure reads."""
    root = Path(folder)
    path = root / "meta" / "info.json"
    if not root.is_dir():
        raise LedgerError(f"{root}: not a folder: a LeRobot dataset is a folder with meta/info.json")
    if not path.is_file():
        raise _fail(path, "no such file: a LeRobot dataset folder has meta/info.json")
    try:
        info = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise _fail(path, f"not valid JSON: {exc}") from None
    if not isinstance(info, dict):
        raise _fail(path, "is not a JSON object")
    missing = [k for k in REQUIRED_KEYS if k not in info]
    if missing:
        raise _fail(path, f"missing field(s) {', '.join(missing)}: required are {', '.join(REQUIRED_KEYS)}")
    version = str(info["codebase_version"])
    if version not in VERSIONS:
        raise _fail(path, f"codebase_version = {version!r} is unknown: procure reads {', '.join(VERSIONS)}")
    fps, frames = info["fps"], info["total_frames"]
    if not (isinstance(fps, int | float) and not isinstance(fps, bool) and 0 < fps <= 10_000):
        raise _fail(path, f"fps = {fps!r} is invalid: must be a number > 0 and ≤ 10000")
    if not (isinstance(frames, int) and not isinstance(frames, bool) and frames >= 0):
        raise _fail(path, f"total_frames = {frames!r} is invalid: must be a whole number ≥ 0")
    if not isinstance(info["features"], dict):
        raise _fail(path, "features is not an object")
    return path, info


def _size(path: Path, name: str, feature: dict[str, Any]) -> tuple[int, int]:
    """Width and height of a video feature, read through its axis names."""
    shape = feature.get("shape")
    names = feature.get("names")
    if not (isinstance(shape, list | tuple) and len(shape) == 3 and all(isinstance(v, int) for v in shape)):
        raise _fail(path, f"features.{name}.shape = {shape!r} is invalid: a video feature has 3 whole numbers")
    if isinstance(names, list | tuple) and len(names) == 3 and "height" in names and "width" in names:
        return int(shape[list(names).index("width")]), int(shape[list(names).index("height")])
    if shape[0] in (1, 3, 4) and shape[2] not in (1, 3, 4):  # channel-first, names not given
        return int(shape[2]), int(shape[1])
    return int(shape[1]), int(shape[0])  # channel-last: height, width, channels


def _video_info(feature: dict[str, Any]) -> dict[str, Any]:
    # v2.0 writes "video_info", v2.1 and v3.0 "info".
    info = feature.get("info") or feature.get("video_info") or {}
    return info if isinstance(info, dict) else {}


def import_lerobot(
    folder: str | Path,
    *,
    source: str | None = None,
    kind: str = "own",
    price: float | None = None,
    probe: bool = True,
) -> dict[str, Any]:
    """A ledger row (keyed by ``sources.csv`` column) for a LeRobot dataset folder.

    Parameters
    ----------
    folder : path-like
        The dataset's folder (with ``meta/info.json``; ``videos/`` for the video bytes).
    source : str, optional
        The row's name; the folder's name by default.
    kind : str, default "own"
        The row's kind.
    price : float, optional
        The price of an hour [$/h]; 0 by default (a dataset already held).
    probe : bool, default True
        Probe one video file with PyAV (when installed) for ``gop`` and ``core_fps_1080p``.

    Raises
    ------
    LedgerError
        Naming the file and field: no ``info.json``, a missing field, an unknown version, no
        video feature, a shape that is not a video's.
    """
    path, info = read_info(folder)
    root = Path(folder)
    fps = float(info["fps"])
    frames = int(info["total_frames"])
    videos = {k: f for k, f in info["features"].items() if isinstance(f, dict) and f.get("dtype") == "video"}
    if not videos:
        raise _fail(path, "has no video feature (dtype 'video'): procure prices video hours")
    sizes = [_size(path, k, f) for k, f in videos.items()]
    width, height = max(sizes, key=lambda wh: wh[0] * wh[1])
    codecs = [str(_video_info(f).get("video.codec", "")) for f in videos.values()]
    extra = 0.0
    for name, feature in info["features"].items():
        if not isinstance(feature, dict) or feature.get("dtype") in NO_BYTES:
            continue
        dtype = str(feature.get("dtype"))
        if dtype not in DTYPE_BYTES:
            raise _fail(path, f"features.{name}.dtype = {dtype!r} is unknown: known are {', '.join(DTYPE_BYTES)}")
        shape = feature.get("shape") or [1]
        extra += DTYPE_BYTES[dtype] * float(np.prod([int(v) for v in shape])) * fps
    files = sorted(p for p in (root / "videos").rglob("*") if p.suffix.lower() in VIDEO_SUFFIXES) if (
        root / "videos"
    ).is_dir() else []  # fmt: skip
    video_bytes = sum(p.stat().st_size for p in files)
    pixels = frames * sum(w * h for w, h in sizes)
    row: dict[str, Any] = {
        "source": source or root.resolve().name,
        "kind": kind,
        "price_usd_per_hour": 0.0 if price is None else float(price),
        "held_hours": frames / fps / 3600.0,
        "cameras": len(videos),
        "width": width,
        "height": height,
        "fps": fps,
        "codec": next((c for c in codecs if c), ""),
        "bits_per_pixel": video_bytes * 8.0 / pixels if video_bytes and pixels else math.nan,
        "extra_bytes_per_s": extra,
        "gop": math.nan,
        "core_fps_1080p": math.nan,
    }
    if probe and files:
        try:
            from ..pipeline.calibrate import calibrate_file, require_av

            require_av()
        except InputError:
            return row  # without PyAV the decoding columns stay blank: the cluster's values
        measured = calibrate_file(files[0], repeat=1)
        row["gop"] = measured.gop
        row["core_fps_1080p"] = measured.core_fps_1080p
        row["codec"] = row["codec"] or measured.codec
    return row
