"""A LeRobot dataset's ``meta/info.json`` read and checked: versions, features, shapes, rates.

Every number read is checked against a documented range (:data:`MAX_FPS`,
:data:`MAX_TOTAL_FRAMES`, :data:`MAX_EPISODES`, :data:`MAX_FRAME_SIDE`,
:data:`MAX_FEATURE_VALUES`), in Python integers that do not wrap; a value out of range stops
the import with one line naming the file, the field, the value and what is allowed. A LeRobot
v1.x folder (``meta_data/info.json``) is refused with the version it has and the versions read.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

from ..errors import LedgerError
from .schema import SOURCE_COLUMNS

#: Codebase versions whose ``info.json`` is understood.
VERSIONS = ("v2.0", "v2.1", "v3.0")
#: Where a dataset's metadata is, from codebase version 2.0 on.
INFO_PATH = Path("meta") / "info.json"
#: Where a LeRobot v1.x dataset keeps its metadata (a layout procure does not read).
LEGACY_INFO_PATH = Path("meta_data") / "info.json"
#: Keys ``info.json`` must have.
REQUIRED_KEYS = ("codebase_version", "fps", "total_frames", "features")
#: Where a v3.0 dataset's episodes tables are (``chunk-XXX/file-XXX.parquet``).
EPISODES_DIR = Path("meta") / "episodes"
#: The frame rate's range: the ledger's ``fps`` column (above 0, at least ``LEAST``) [frames/s].
FPS_RANGE = SOURCE_COLUMNS["fps"]
#: Highest frame rate accepted [frames/s].
MAX_FPS = FPS_RANGE.high
#: Most frames a dataset may declare [frames]: 10¹² is 9 million hours at 30 frames/s.
MAX_TOTAL_FRAMES = 10**12
#: Most episodes, video files or episodes a chunk a dataset may declare [count].
MAX_EPISODES = 10**9
#: Largest width, height or channel count of a video feature [px]: 65,536 is the largest
#: frame side of H.265 and AV1.
MAX_FRAME_SIDE = 65_536
#: Most values one non-video feature may hold a frame (the product of its shape) [values].
MAX_FEATURE_VALUES = 10**9
#: Characters of a bad value shown in an error before it is shortened.
MAX_SHOWN_CHARS = 40
#: Bytes of one value of each feature dtype [B].
DTYPE_BYTES = {
    "float64": 8, "float32": 4, "float16": 2, "int64": 8, "int32": 4, "int16": 2, "int8": 1,
    "uint8": 1, "uint16": 2, "uint32": 4, "uint64": 8, "bool": 1,
}  # fmt: skip
#: Feature dtypes that carry no per-frame bytes of their own here (text, or the video itself).
NO_BYTES = ("video", "image", "string")


def fail(path: Path, what: str) -> LedgerError:
    """One line naming the dataset file and what is wrong."""
    return LedgerError(f"{path}: {what}")


def _shown(value: object) -> str:
    """``repr(value)``, shortened when long (a number of 400 digits)."""
    text = repr(value)
    if len(text) <= MAX_SHOWN_CHARS:
        return text
    return f"{text[: MAX_SHOWN_CHARS // 2]}…({len(text)} characters)"


def _in_range(value: object, spec: Any) -> bool:
    """Whether a JSON value is a number (not true/false) inside ``spec`` (a
    :class:`procure.spec.Range`); a whole number too large for a float is not."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        return bool(spec.mask(float(value)))
    except OverflowError:
        return False


def _is_whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def whole_number(path: Path, info: dict[str, Any], key: str, low: int, high: int) -> int | None:
    """``info[key]`` as a whole number from ``low`` to ``high``; None when absent."""
    value = info.get(key)
    if value is None:
        return None
    if not (_is_whole(value) and low <= value <= high):
        raise fail(path, f"{key} = {_shown(value)} is invalid: must be a whole number ≥ {low} and ≤ {high:,}")
    return int(value)


def _legacy_version(root: Path) -> str:
    """The ``codebase_version`` a v1.x folder's ``meta_data/info.json`` names, or "v1.x"."""
    try:
        version = json.loads((root / LEGACY_INFO_PATH).read_text()).get("codebase_version")
    except (OSError, ValueError, RecursionError, AttributeError):
        return "v1.x"
    return str(version) if version else "v1.x"


def _not_supported(version: str) -> str:
    advice = ": convert it to v2.1 or later with LeRobot's dataset conversion" if version.startswith("v1") else ""
    return f"codebase_version = {version!r} is not supported: procure reads {', '.join(VERSIONS)}{advice}"


def read_info(folder: str | Path) -> tuple[Path, dict[str, Any]]:
    """``meta/info.json`` of a dataset folder, checked for the keys, version and ranges
    procure reads.

    Raises
    ------
    LedgerError
        Naming the file and field: not a folder, no ``meta/info.json`` (a v1.x dataset says
        its version), not JSON, a missing field, a version not read, a value out of range.
    """
    root = Path(folder)
    path = root / INFO_PATH
    if not root.is_dir():
        raise LedgerError(f"{root}: not a folder: a LeRobot dataset is a folder with meta/info.json")
    if not path.is_file():
        if (root / LEGACY_INFO_PATH).is_file():
            raise fail(root / LEGACY_INFO_PATH, f"a LeRobot v1.x dataset: {_not_supported(_legacy_version(root))}")
        raise fail(path, f"no such file: a LeRobot dataset folder ({', '.join(VERSIONS)}) has meta/info.json")
    try:
        info = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise fail(path, f"not valid JSON: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    except ValueError:  # an integer longer than Python converts
        raise fail(path, f"not valid JSON: a number has more than {sys.get_int_max_str_digits()} digits") from None
    if not isinstance(info, dict):
        raise fail(path, "is not a JSON object")
    missing = [k for k in REQUIRED_KEYS if k not in info]
    if missing:
        raise fail(path, f"missing field(s) {', '.join(missing)}: required are {', '.join(REQUIRED_KEYS)}")
    version = str(info["codebase_version"])
    if version not in VERSIONS:
        raise fail(path, _not_supported(version))
    fps, frames = info["fps"], info["total_frames"]
    if not _in_range(fps, FPS_RANGE):
        raise fail(path, f"fps = {_shown(fps)} is invalid: must be {FPS_RANGE.rule().removeprefix('must be ')}")
    if not (_is_whole(frames) and 0 <= frames <= MAX_TOTAL_FRAMES):
        raise fail(
            path, f"total_frames = {_shown(frames)} is invalid: must be a whole number ≥ 0 and ≤ {MAX_TOTAL_FRAMES:.0e}"
        )
    if not isinstance(info["features"], dict):
        raise fail(path, f"features = {_shown(info['features'])} is invalid: must be an object of features")
    for name, feature in info["features"].items():
        if not isinstance(feature, dict):
            raise fail(path, f"features.{name} = {_shown(feature)} is invalid: must be an object with dtype and shape")
    for key in ("total_episodes", "total_videos", "chunks_size"):
        whole_number(path, info, key, 1 if key == "chunks_size" else 0, MAX_EPISODES)
    return path, info


def frame_size(path: Path, name: str, feature: dict[str, Any]) -> tuple[int, int]:
    """Width and height of a video feature, read through its axis names."""
    shape = feature.get("shape")
    names = feature.get("names")
    if not (
        isinstance(shape, list | tuple)
        and len(shape) == 3
        and all(_is_whole(v) and 1 <= v <= MAX_FRAME_SIDE for v in shape)
    ):
        raise fail(
            path,
            f"features.{name}.shape = {_shown(shape)} is invalid: a video feature has 3 whole numbers ≥ 1 and "
            f"≤ {MAX_FRAME_SIDE:,} (height, width and channels)",
        )
    if isinstance(names, list | tuple) and len(names) == 3 and "height" in names and "width" in names:
        return int(shape[list(names).index("width")]), int(shape[list(names).index("height")])
    if shape[0] in (1, 3, 4) and shape[2] not in (1, 3, 4):  # channel-first, names not given
        return int(shape[2]), int(shape[1])
    return int(shape[1]), int(shape[0])  # channel-last: height, width, channels


def feature_values(path: Path, name: str, feature: dict[str, Any]) -> int:
    """Values a frame of a non-video feature holds: the product of its shape (1 if none)."""
    shape = feature.get("shape")
    if shape is None or (isinstance(shape, list | tuple) and not shape):
        return 1
    allowed = f"a list of whole numbers ≥ 0 whose product is ≤ {MAX_FEATURE_VALUES:.0e}"
    if not (isinstance(shape, list | tuple) and all(_is_whole(v) and 0 <= v <= MAX_FEATURE_VALUES for v in shape)):
        raise fail(path, f"features.{name}.shape = {_shown(shape)} is invalid: must be {allowed}")
    values = math.prod(int(v) for v in shape)  # Python integers: no wrap-around
    if values > MAX_FEATURE_VALUES:
        raise fail(path, f"features.{name}.shape = {_shown(shape)} is invalid: must be {allowed}, not {values:,}")
    return values


def video_info(feature: dict[str, Any]) -> dict[str, Any]:
    # v2.0 writes "video_info", v2.1 and v3.0 "info".
    info = feature.get("info") or feature.get("video_info") or {}
    return info if isinstance(info, dict) else {}
