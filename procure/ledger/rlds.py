"""An Open X-Embodiment (RLDS) dataset as a ledger row, read without TensorFlow.

An RLDS dataset as TFDS prepares it is a folder of ``dataset_info.json`` (its ``name`` and,
per split, ``shardLengths``: the episodes of each shard), ``features.json`` (the features;
the cameras are the ``Image`` features of each step, with their ``shape`` and
``encodingFormat``) and TFRecord shards ``NAME-SPLIT.tfrecord-XXXXX-of-YYYYY``, one episode a
record (:mod:`procure.ledger.tfrecord`). The frames are stored as images, one encoded image
per step and camera: each is its own keyframe, so the row takes ``gop`` 1 (a random read
decodes one frame) and the image codec (``mjpeg`` for JPEG, ``png``) whose core rate is the
cluster's ``[decode] core_fps_1080p_mjpeg`` or ``_png``.

The steps are counted in the shards (``steps/is_first`` has one value a step); the hours need
the control frequency, which the dataset does not state: ``--hz``, else :data:`CONTROL_HZ`.
Bits per pixel are the images' bytes over their pixels; the other bytes of the records (actions,
states, language) over the recorded seconds are ``extra_bytes_per_s``.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

from ..errors import InputError, LedgerError
from ..pipeline.bill import SECONDS_PER_HOUR
from .lerobot import EXCHANGE_RATE_NOTE, IMPORT_AVAILABLE_HOURS, DatasetImport, check_row
from .lerobot_info import MAX_FRAME_SIDE
from .lerobot_v3 import Camera
from .sources import check_source_value
from .tfrecord import Feature, example_features, records

#: Control frequency of public Open X-Embodiment datasets [steps/s], by ``dataset_info.json``
#: name: the ``fps`` LeRobot's Open X-Embodiment conversion gives each
#: (huggingface/lerobot, ``lerobot/common/datasets/push_dataset_to_hub/openx/configs.yaml``).
CONTROL_HZ: dict[str, float] = {
    "fractal20220817_data": 3, "kuka": 10, "bridge": 5, "bridge_openx": 5, "taco_play": 15, "jaco_play": 10,
    "berkeley_cable_routing": 10, "roboturk": 10, "viola": 20, "berkeley_autolab_ur5": 5, "toto": 30,
    "language_table": 10, "stanford_hydra_dataset_converted_externally_to_rlds": 10,
    "austin_buds_dataset_converted_externally_to_rlds": 20, "furniture_bench_dataset_converted_externally_to_rlds": 10,
    "ucsd_kitchen_dataset_converted_externally_to_rlds": 2, "bc_z": 10, "robo_net": 1, "berkeley_rpt_converted_"
    "externally_to_rlds": 30, "utaustin_mutex": 20, "cmu_stretch": 10, "droid": 15, "droid_100": 15, "fmb": 10,
    "dobbe": 3.75,
}  # fmt: skip
#: Where :data:`CONTROL_HZ` comes from, as notes say it.
CONTROL_HZ_SOURCE = "LeRobot's Open X-Embodiment conversion table (openx/configs.yaml)"
#: Image encodings of TFDS ``Image`` features → the codec, as ffprobe names it (TFDS's default is png).
IMAGE_CODECS = {"jpeg": "mjpeg", "png": "png"}
#: The feature with one value a step, by which steps are counted.
STEP_KEY = "steps/is_first"
#: A TFDS image feature's class name ends so.
IMAGE_CLASS = "image_feature.Image"


def _json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise LedgerError(f"{path}: no such file: an RLDS dataset folder has dataset_info.json and features.json")
    try:
        data = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise LedgerError(f"{path}: not valid JSON ({type(exc).__name__})") from None
    if not isinstance(data, dict):
        raise LedgerError(f"{path}: is not a JSON object")
    return data


def _images(path: Path, node: Any, keys: tuple[str, ...] = ()) -> dict[str, tuple[int, int, str]]:
    """Every ``Image`` feature of ``features.json``: flattened key → (width, height, codec)."""
    found: dict[str, tuple[int, int, str]] = {}
    if not isinstance(node, dict):
        return found
    if str(node.get("pythonClassName", "")).endswith(IMAGE_CLASS):
        image = node.get("image", {})
        dims = image.get("shape", {}).get("dimensions", []) if isinstance(image, dict) else []
        name = "/".join(keys)
        try:
            height, width = int(dims[0]), int(dims[1])
        except (TypeError, ValueError, IndexError):
            height = width = 0
        if not (1 <= width <= MAX_FRAME_SIDE and 1 <= height <= MAX_FRAME_SIDE):
            raise LedgerError(f"{path}: {name}.shape = {dims!r} is invalid: an image is [height, width, channels], "
                              f"sides whole numbers ≥ 1 and ≤ {MAX_FRAME_SIDE:,}")  # fmt: skip
        encoding = str(image.get("encodingFormat", "png") or "png").lower()
        found[name] = (width, height, IMAGE_CODECS.get(encoding, encoding))
        return found
    if isinstance(node.get("featuresDict"), dict):
        for key, child in (node["featuresDict"].get("features") or {}).items():
            found.update(_images(path, child, (*keys, key)))
    if isinstance(node.get("sequence"), dict):
        found.update(_images(path, node["sequence"].get("feature"), keys))
    return found


def _shards(root: Path, info_path: Path, info: dict[str, Any]) -> tuple[str, list[Path], int, int]:
    """The dataset's name, its shards on disk, the shards and the episodes it declares."""
    name = info.get("name")
    splits = info.get("splits")
    if not isinstance(name, str) or not name or not isinstance(splits, list):
        raise LedgerError(f"{info_path}: needs name and splits (as TFDS writes them)")
    declared_shards = declared_episodes = 0
    for split in splits:
        lengths = split.get("shardLengths", []) if isinstance(split, dict) else []
        try:
            counts = [int(n) for n in lengths]
        except (TypeError, ValueError):
            raise LedgerError(
                f"{info_path}: shardLengths = {lengths!r} is invalid: episodes a shard, whole numbers"
            ) from None
        declared_shards += len(counts)
        declared_episodes += sum(counts)
    shards = sorted(p for p in root.glob(f"{name}-*.tfrecord-*") if p.is_file())
    return name, shards, declared_shards, declared_episodes


def import_rlds(
    folder: str | Path,
    *,
    hz: float | None = None,
    source: str | None = None,
    kind: str = "own",
    price: float | None = None,
    available_hours: float | None = None,
    exchange_rate: float | None = None,
) -> DatasetImport:
    """A ledger row for an RLDS dataset folder, and notes.

    Parameters
    ----------
    folder : path-like
        The folder of ``dataset_info.json``, ``features.json`` and the shards.
    hz : float, optional
        Control frequency [steps/s] (the ``fps`` column's range); else :data:`CONTROL_HZ`.
    source, kind, price, available_hours, exchange_rate
        As :func:`procure.ledger.lerobot.import_lerobot`.

    Raises
    ------
    LedgerError
        A missing or bad ``dataset_info.json`` or ``features.json``, no image feature, a
        dataset whose control frequency is not known and no ``hz``.
    InputError
        A shard that is not TFRecord, is cut short, or whose records are not Examples.
    """
    root = Path(folder)
    info_path, features_path = root / "dataset_info.json", root / "features.json"
    info, features = _json(info_path), _json(features_path)
    if (price is None) != (available_hours is None):
        raise InputError("--price and --available-hours go together: give neither for a dataset held")
    name, shards, declared_shards, declared_episodes = _shards(root, info_path, info)
    if hz is None and name not in CONTROL_HZ:
        raise LedgerError(
            f"{info_path}: name = {name!r} has no known control frequency ({CONTROL_HZ_SOURCE}): give --hz"
        )
    rate = float(check_source_value("fps", hz if hz is not None else CONTROL_HZ[name], "--hz"))
    cameras = _images(features_path, features)
    if not cameras:
        raise LedgerError(f"{features_path}: has no Image feature: procure prices the frames of cameras")
    episodes, steps, record_bytes = 0, 0, 0
    held: Counter[str] = Counter()
    frames: Counter[str] = Counter()
    for shard in shards:
        for record in records(shard):
            try:
                feats: dict[str, Feature] = example_features(record)
            except (ValueError, UnicodeDecodeError):
                raise InputError(f"{shard}: record {episodes + 1:,} is not a tf.train.Example") from None
            episodes, record_bytes = episodes + 1, record_bytes + len(record)
            first = next(iter(cameras))
            steps += feats[STEP_KEY].values if STEP_KEY in feats else feats.get(first, Feature("bytes", 0, 0)).values
            for key in cameras:
                if key in feats:
                    held[key] += feats[key].bytes
                    frames[key] += feats[key].values
    image_bytes = sum(held.values())
    pixels = sum(frames[k] * w * h for k, (w, h, _c) in cameras.items())
    width, height, _ = max(cameras.values(), key=lambda c: c[0] * c[1])
    codecs = Counter(c for _w, _h, c in cameras.values())
    seconds = steps / rate
    given = {"price_usd_per_hour": price, "available_hours": available_hours, "exchange_rate": exchange_rate}
    option = {
        "price_usd_per_hour": "--price",
        "available_hours": "--available-hours",
        "exchange_rate": "--exchange-rate",
    }
    checked = {k: float(check_source_value(k, v, option[k])) for k, v in given.items() if v is not None}
    row: dict[str, Any] = {
        "source": str(check_source_value("source", source, "--source")).strip() if source is not None else name,
        "kind": str(check_source_value("kind", kind, "--kind")).strip(),
        "price_usd_per_hour": checked.get("price_usd_per_hour", 0.0),
        "available_hours": checked.get("available_hours", IMPORT_AVAILABLE_HOURS),
        "held_hours": seconds / SECONDS_PER_HOUR,
        "exchange_rate": checked.get("exchange_rate", 1.0),
        "cameras": len(cameras), "width": width, "height": height, "fps": rate,
        "codec": codecs.most_common(1)[0][0],
        "bits_per_pixel": image_bytes * 8.0 / pixels if pixels else math.nan,
        "extra_bytes_per_s": (record_bytes - image_bytes) / seconds if seconds else 0.0,
        "gop": 1.0, "core_fps_1080p": math.nan,
    }  # fmt: skip
    check_row(info_path, row)
    notes = [EXCHANGE_RATE_NOTE] if exchange_rate is None else []
    if hz is None:
        notes.append(f"control frequency {rate:g} Hz for {name} from {CONTROL_HZ_SOURCE}; --hz gives another")
    if len(shards) < declared_shards or episodes < declared_episodes:
        notes.append(f"{len(shards):,} of {declared_shards:,} shards on disk, {episodes:,} of {declared_episodes:,} "
                     "episodes: the hours and bytes are those on disk")  # fmt: skip
    if len({(w, h) for w, h, _c in cameras.values()}) > 1:
        shown = ", ".join(f"{k} {w}×{h}" for k, (w, h, _c) in cameras.items())
        notes.append(f"cameras of different sizes ({shown}): the row prices each at {width}×{height}, the largest")
    per_camera = tuple(
        Camera(key.rsplit("/", 1)[-1], w, h, c, 1.0, len(shards), frames[key], held[key],
               held[key] * 8.0 / (frames[key] * w * h) if frames[key] else math.nan)
        for key, (w, h, c) in cameras.items()
    )  # fmt: skip
    return DatasetImport(row, tuple(notes), per_camera)


def rlds_files(folder: str | Path) -> list[Path]:
    """Every file of an RLDS dataset an import reads: its two JSON files and its shards."""
    root = Path(folder)
    return [root / "dataset_info.json", root / "features.json", *sorted(root.glob("*.tfrecord-*"))]
