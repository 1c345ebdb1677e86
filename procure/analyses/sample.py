"""Sample data to try the commands that read a team's own data on, made from synthetic frames.

:func:`write_sample` writes a folder of:

* ``cams/front.mp4`` and ``cams/wrist.mp4``: clips of two cameras of different sizes
  (``procure calibrate``);
* ``lerobot_v3/``: a LeRobot v3.0 dataset, 3 episodes in one mp4 per camera, two cameras of
  different sizes, its ``meta/info.json``, episodes table and data table (``procure import
  lerobot``);
* ``rlds/``: an Open X-Embodiment (RLDS) folder of 2 TFRecord shards with JPEG frames of two
  cameras, ``dataset_info.json`` and ``features.json`` (``procure import rlds --hz 5``);
* ``runs.csv``: 20 training runs simulated from known exchange rates of the default ledger's
  twin and simulated sources (``procure fit``);
* ``scenarios.csv``: three scenarios of the default ledger (``procure solve --scenarios``).

The frames are gradients that move from frame to frame, encoded with H.264 (PyAV's libx264) and
JPEG, so the files hold real video; every size and count is a named constant here. The folder
is written all or nothing: built beside its place and renamed there.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import tempfile
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..ledger.tfrecord import masked_crc32c

#: Frame rate of the clips and of the LeRobot dataset [frames/s].
SAMPLE_FPS = 30
#: Frames between keyframes of the clips and videos [frames].
SAMPLE_GOP = 15
#: The cameras: name → (width, height) [px] (two sizes, as a wrist view beside a scene view).
SAMPLE_CAMERAS = {"front": (192, 128), "wrist": (128, 96)}
#: Frames of each clip of ``cams/`` [frames] (3 s).
CLIP_FRAMES = 90
#: Frames of each episode of the LeRobot dataset [frames].
EPISODE_FRAMES = (30, 45, 25)
#: Steps of each RLDS episode, by shard [steps].
RLDS_STEPS = ((5, 7), (4,))
#: JPEG frame size of the RLDS cameras: name → (width, height) [px].
RLDS_CAMERAS = {"steps/observation/image": (64, 48), "steps/observation/wrist_image": (32, 24)}
#: The RLDS dataset's name (not one of the public datasets: its control rate is given by --hz).
RLDS_NAME = "sample_rlds"
#: The exchange rates the runs are simulated from (the ledger guesses 0.35 and 0.03) [1].
RUNS_TRUTH = {"twin.exchange_rate": 0.5, "sim.exchange_rate": 0.02}
#: The link the runs are simulated with (success between 0.1 and 0.85, value scale 300).
RUNS_LINK = {"p_min": 0.1, "p_max": 0.85, "value_scale": 300.0}
#: Runs simulated, and most hours of a source in one [runs, h].
RUNS = 20
RUNS_MOST_HOURS = {"own": 800.0, "twin": 3000.0, "sim": 20000.0}
#: The scenarios: name → (probability, the twin's exchange rate, the simulated source's
#: saturation [effective h]).
SCENARIOS = {"low": (0.25, 0.15, 100.0), "middle": (0.5, 0.35, 150.0), "high": (0.25, 0.55, 200.0)}
#: Seed of everything drawn.
SAMPLE_SEED = 0


def _frames(width: int, height: int, count: int, shift: int = 0) -> Any:
    """``count`` RGB frames of a gradient that moves a little each frame [uint8]."""
    y, x = np.mgrid[0:height, 0:width]
    for i in range(shift, shift + count):
        image = np.stack([(x * 4 + i * 3) % 256, (y * 4 + i * 5) % 256, ((x + y) * 2 + i) % 256], axis=-1)
        yield image.astype(np.uint8)


def encode_clip(path: Path, width: int, height: int, frames: int, fps: int = SAMPLE_FPS, gop: int = SAMPLE_GOP,
                shift: int = 0) -> Path:  # fmt: skip
    """An H.264 mp4 of ``frames`` frames (no B-frames, a keyframe every ``gop``)."""
    import av

    container = av.open(str(path), "w")
    stream = container.add_stream("libx264", rate=fps)
    stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
    stream.codec_context.gop_size = gop
    stream.codec_context.max_b_frames = 0
    stream.options = {"g": str(gop), "keyint_min": str(gop), "sc_threshold": "0", "bf": "0"}
    for image in _frames(width, height, frames, shift):
        for packet in stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")):
            container.mux(packet)
    for packet in stream.encode():
        container.mux(packet)
    container.close()
    return path


def _jpeg(width: int, height: int, shift: int) -> bytes:
    """One JPEG frame of the moving gradient."""
    import av

    encoder = av.CodecContext.create("mjpeg", "w")
    encoder.width, encoder.height, encoder.pix_fmt = width, height, "yuvj420p"
    encoder.time_base = Fraction(1, SAMPLE_FPS)
    encoder.open()
    image = next(iter(_frames(width, height, 1, shift)))
    frame = av.VideoFrame.from_ndarray(image, format="rgb24").reformat(format="yuvj420p")
    return b"".join(bytes(p) for p in [*encoder.encode(frame), *encoder.encode()])


def _lerobot(root: Path) -> None:
    """The LeRobot v3.0 dataset (see the module)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    video_path = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
    cameras = {f"observation.images.{name}": size for name, size in SAMPLE_CAMERAS.items()}
    features: dict[str, Any] = {
        camera: {"dtype": "video", "shape": [h, w, 3], "names": ["height", "width", "channels"],
                 "info": {"video.height": h, "video.width": w, "video.codec": "h264", "video.pix_fmt": "yuv420p",
                          "video.fps": SAMPLE_FPS, "video.channels": 3, "has_audio": False}}
        for camera, (w, h) in cameras.items()
    }  # fmt: skip
    features["observation.state"] = {"dtype": "float32", "shape": [6], "names": None}
    total = sum(EPISODE_FRAMES)
    info = {"codebase_version": "v3.0", "robot_type": "so101", "total_episodes": len(EPISODE_FRAMES),
            "total_frames": total, "total_tasks": 1, "chunks_size": 1000, "fps": SAMPLE_FPS,
            "data_files_size_in_mb": 100, "video_files_size_in_mb": 500,
            "data_path": "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet", "video_path": video_path,
            "features": features}  # fmt: skip
    (root / "meta" / "episodes" / "chunk-000").mkdir(parents=True)
    (root / "meta" / "info.json").write_text(json.dumps(info, indent=2), encoding="utf-8")
    starts = np.concatenate([[0], np.cumsum(EPISODE_FRAMES)[:-1]]) / SAMPLE_FPS
    n = len(EPISODE_FRAMES)
    table: dict[str, list[Any]] = {"episode_index": list(range(n)), "length": list(EPISODE_FRAMES)}
    for camera in cameras:
        table[f"videos/{camera}/chunk_index"] = [0] * n
        table[f"videos/{camera}/file_index"] = [0] * n
        table[f"videos/{camera}/from_timestamp"] = starts.tolist()
        table[f"videos/{camera}/to_timestamp"] = (starts + np.array(EPISODE_FRAMES) / SAMPLE_FPS).tolist()
    pq.write_table(pa.table(table), root / "meta" / "episodes" / "chunk-000" / "file-000.parquet")
    (root / "data" / "chunk-000").mkdir(parents=True)
    episode = np.repeat(np.arange(n), EPISODE_FRAMES)
    state = np.random.default_rng(SAMPLE_SEED).normal(size=(total, 6)).astype(np.float32)
    pq.write_table(pa.table({"episode_index": episode, "frame_index": np.arange(total),
                             "observation.state": list(state)}),
                   root / "data" / "chunk-000" / "file-000.parquet")  # fmt: skip
    for camera, (w, h) in cameras.items():
        path = root / video_path.format(video_key=camera, chunk_index=0, file_index=0)
        path.parent.mkdir(parents=True)
        encode_clip(path, w, h, total)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _field(number: int, body: bytes) -> bytes:
    """A length-delimited protocol-buffer field."""
    return _varint(number << 3 | 2) + _varint(len(body)) + body


def _example(features: dict[str, tuple[str, list[Any]]]) -> bytes:
    """A serialized ``tf.train.Example`` (written from the protocol buffer's wire format)."""

    def feature(kind: str, values: list[Any]) -> bytes:
        if kind == "bytes":
            return _field(1, b"".join(_field(1, v) for v in values))
        if kind == "float":
            return _field(2, _field(1, struct.pack(f"<{len(values)}f", *values)))
        return _field(3, _field(1, b"".join(_varint(v) for v in values)))

    return _field(1, b"".join(_field(1, _field(1, k.encode()) + _field(2, feature(*v))) for k, v in features.items()))


def _rlds(root: Path) -> None:
    """The RLDS folder (see the module)."""
    root.mkdir(parents=True)
    record_bytes = 0
    for s, episodes in enumerate(RLDS_STEPS):
        records = []
        for e, steps in enumerate(episodes):
            feats: dict[str, tuple[str, list[Any]]] = {"steps/is_first": ("int64", [1] + [0] * (steps - 1)),
                                                       "steps/action": ("float", [0.5] * (7 * steps))}  # fmt: skip
            for key, (w, h) in RLDS_CAMERAS.items():
                feats[key] = ("bytes", [_jpeg(w, h, 100 * s + 10 * e + i) for i in range(steps)])
            records.append(_example(feats))
        record_bytes += sum(len(r) for r in records)
        with (root / f"{RLDS_NAME}-train.tfrecord-{s:05d}-of-{len(RLDS_STEPS):05d}").open("wb") as f:
            for data in records:
                head = struct.pack("<Q", len(data))
                f.write(head + struct.pack("<I", masked_crc32c(head)) + data + struct.pack("<I", masked_crc32c(data)))
    splits = [{"name": "train", "shardLengths": [str(len(e)) for e in RLDS_STEPS], "numBytes": str(record_bytes)}]
    (root / "dataset_info.json").write_text(json.dumps({"name": RLDS_NAME, "version": "0.1.0",
                                                        "fileFormat": "tfrecord", "splits": splits}))  # fmt: skip
    image = "tensorflow_datasets.core.features.image_feature.Image"
    observation = {key.split("/")[-1]: {"pythonClassName": image, "image": {
        "shape": {"dimensions": [str(h), str(w), "3"]}, "dtype": "uint8", "encodingFormat": "jpeg"}}
        for key, (w, h) in RLDS_CAMERAS.items()}  # fmt: skip
    step = {"observation": {"pythonClassName": "tensorflow_datasets.core.features.features_dict.FeaturesDict",
                            "featuresDict": {"features": observation}},
            "is_first": {"pythonClassName": "tensorflow_datasets.core.features.scalar.Scalar",
                         "tensor": {"shape": {}, "dtype": "bool"}}}  # fmt: skip
    features = {"pythonClassName": "tensorflow_datasets.core.features.features_dict.FeaturesDict",
                "featuresDict": {"features": {"steps": {
                    "pythonClassName": "tensorflow_datasets.core.features.dataset_feature.Dataset",
                    "sequence": {"feature": {"featuresDict": {"features": step}}, "length": "-1"}}}}}  # fmt: skip
    (root / "features.json").write_text(json.dumps(features))


def _runs(path: Path) -> None:
    """``runs.csv``: runs simulated from :data:`RUNS_TRUTH` on the default ledger."""
    from ..ledger.load import load_ledger
    from .fit.simulate import runs_frame, simulate_runs

    ledger = load_ledger()
    runs = simulate_runs(ledger.sources, RUNS_TRUTH, RUNS_LINK, runs=RUNS, most_hours=RUNS_MOST_HOURS,
                         seed=SAMPLE_SEED)  # fmt: skip
    runs_frame(runs).to_csv(path, index=False)


def _scenarios(path: Path) -> None:
    """``scenarios.csv``: :data:`SCENARIOS` of the default ledger's twin and simulated source."""
    lines = ["scenario,source,exchange_rate,saturation_hours,probability"]
    for name, (p, twin_rate, sim_scale) in SCENARIOS.items():
        lines.append(f"{name},twin,{twin_rate:g},,{p:g}")
        lines.append(f"{name},sim,,{sim_scale:g},{p:g}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


#: What the folder holds, and the command that reads each.
CONTENTS = (
    ("cams/", "procure calibrate {d}/cams/*.mp4"),
    ("lerobot_v3/", "procure import lerobot {d}/lerobot_v3 --json"),
    ("rlds/", "procure import rlds {d}/rlds --hz 5 --json"),
    ("runs.csv", "procure fit {d}/runs.csv"),
    ("scenarios.csv", "procure solve --budget 100000 --scenarios {d}/scenarios.csv"),
)


def write_sample(folder: str | Path) -> list[tuple[str, str]]:
    """Write the sample data into ``folder`` (new, or an empty folder), all or nothing; what it
    holds and the command that reads each (see the module).

    Raises
    ------
    InputError
        ``folder`` is a file or a folder that is not empty; PyAV or pyarrow is not installed
        (naming the command that installs them).
    """
    from ..install import install_command

    target = Path(folder)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise InputError(f"{target}: exists and is not an empty folder: give a new folder for the sample data")
    try:
        import av  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError:
        raise InputError(f"procure sample encodes video and writes parquet: {install_command('video')}") from None
    parent = target.resolve().parent
    if not parent.is_dir():
        raise InputError(f"{target}: its folder {parent} does not exist")
    staged = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=parent))
    try:
        (staged / "cams").mkdir()
        for name, (w, h) in SAMPLE_CAMERAS.items():
            encode_clip(staged / "cams" / f"{name}.mp4", w, h, CLIP_FRAMES)
        _lerobot(staged / "lerobot_v3")
        _rlds(staged / "rlds")
        _runs(staged / "runs.csv")
        _scenarios(staged / "scenarios.csv")
        os.chmod(staged, 0o777 & ~_umask())
        if target.exists():
            target.rmdir()  # empty, checked above
        os.rename(staged, target)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise
    return [(what, command.format(d=str(folder).rstrip("/"))) for what, command in CONTENTS]


def _umask() -> int:
    """The process's umask (read by setting it and setting it back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask
