"""``procure import rlds``: an Open X-Embodiment folder made here (2 TFRecord shards of 3
episodes, two cameras of JPEG images of different sizes), read without TensorFlow; steps,
hours, bytes and bits per pixel against the values the folder was made with."""

from __future__ import annotations

import json
import struct
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from procure.errors import InputError, LedgerError
from procure.interfaces.cli import main
from procure.ledger.rlds import CONTROL_HZ, import_rlds
from procure.ledger.tfrecord import masked_crc32c

av = pytest.importorskip("av")

STEPS = ((5, 7), (4,))  # steps of each episode, by shard
CAMERAS = {"steps/observation/image": (64, 48), "steps/observation/wrist_image": (32, 24)}


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _len(field: int, body: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(body)) + body


def _feature(kind: str, values: list) -> bytes:
    if kind == "bytes":
        return _len(1, b"".join(_len(1, v) for v in values))
    if kind == "float":
        return _len(2, _len(1, struct.pack(f"<{len(values)}f", *values)))
    return _len(3, _len(1, b"".join(_varint(v) for v in values)))


def example(features: dict[str, tuple[str, list]]) -> bytes:
    """A serialized tf.train.Example, written by hand from the protocol buffer's wire format."""
    entries = b"".join(_len(1, _len(1, k.encode()) + _len(2, _feature(*v))) for k, v in features.items())
    return _len(1, entries)


def write_tfrecord(path: Path, records: list[bytes]) -> None:
    with path.open("wb") as f:
        for data in records:
            head = struct.pack("<Q", len(data))
            f.write(head + struct.pack("<I", masked_crc32c(head)) + data + struct.pack("<I", masked_crc32c(data)))


def jpeg(width: int, height: int, seed: int) -> bytes:
    encoder = av.CodecContext.create("mjpeg", "w")
    encoder.width, encoder.height, encoder.pix_fmt = width, height, "yuvj420p"
    encoder.time_base = Fraction(1, 30)
    encoder.open()
    image = np.random.default_rng(seed).integers(0, 256, (height, width, 3), dtype=np.uint8)
    frame = av.VideoFrame.from_ndarray(image, format="rgb24").reformat(format="yuvj420p")
    return b"".join(bytes(p) for p in [*encoder.encode(frame), *encoder.encode()])


def _features_json() -> dict:
    def image(w: int, h: int) -> dict:
        return {"pythonClassName": "tensorflow_datasets.core.features.image_feature.Image",
                "image": {"shape": {"dimensions": [str(h), str(w), "3"]}, "dtype": "uint8",
                          "encodingFormat": "jpeg"}}  # fmt: skip

    observation = {k.split("/")[-1]: image(*wh) for k, wh in CAMERAS.items()}
    step = {"observation": {"pythonClassName": "tensorflow_datasets.core.features.features_dict.FeaturesDict",
                            "featuresDict": {"features": observation}},
            "is_first": {"pythonClassName": "tensorflow_datasets.core.features.scalar.Scalar",
                         "tensor": {"shape": {}, "dtype": "bool"}}}  # fmt: skip
    return {"pythonClassName": "tensorflow_datasets.core.features.features_dict.FeaturesDict",
            "featuresDict": {"features": {"steps": {
                "pythonClassName": "tensorflow_datasets.core.features.dataset_feature.Dataset",
                "sequence": {"feature": {"featuresDict": {"features": step}}, "length": "-1"}}}}}  # fmt: skip


def make_rlds(root: Path, name: str = "toy_rlds") -> dict:
    """The folder, and what it was made with: steps, image bytes, record bytes."""
    root.mkdir(parents=True)
    made = {"steps": 0, "image_bytes": 0, "record_bytes": 0, "pixels": 0}
    for s, episodes in enumerate(STEPS):
        records = []
        for e, steps in enumerate(episodes):
            feats: dict[str, tuple[str, list]] = {"steps/is_first": ("int64", [1] + [0] * (steps - 1)),
                                                   "steps/action": ("float", [0.5] * (7 * steps))}  # fmt: skip
            for k, (w, h) in CAMERAS.items():
                images = [jpeg(w, h, seed=100 * s + 10 * e + i) for i in range(steps)]
                feats[k] = ("bytes", images)
                made["image_bytes"] += sum(len(i) for i in images)
                made["pixels"] += steps * w * h
            records.append(example(feats))
            made["steps"] += steps
        made["record_bytes"] += sum(len(r) for r in records)
        write_tfrecord(root / f"{name}-train.tfrecord-{s:05d}-of-{len(STEPS):05d}", records)
    splits = [{"name": "train", "shardLengths": [str(len(e)) for e in STEPS], "numBytes": str(made["record_bytes"])}]
    (root / "dataset_info.json").write_text(json.dumps({"name": name, "version": "0.1.0", "fileFormat": "tfrecord",
                                                        "splits": splits}))  # fmt: skip
    (root / "features.json").write_text(json.dumps(_features_json()))
    return made


def test_crc32c_of_the_standard_check_value():
    crc = 0xE3069283  # CRC-32C of b"123456789" (RFC 3720, iSCSI), masked as TFRecord masks it
    assert masked_crc32c(b"123456789") == (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def test_steps_hours_and_bytes(tmp_path, capsys):
    made = make_rlds(tmp_path / "toy")
    assert main(["import", "rlds", str(tmp_path / "toy"), "--hz", "5", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert made["steps"] == 16
    assert row["held_hours"] == pytest.approx(16 / 5 / 3600, rel=1e-12)
    assert (row["cameras"], row["width"], row["height"], row["fps"]) == (2, 64, 48, 5)
    assert (row["codec"], row["gop"]) == ("mjpeg", 1)
    assert row["bits_per_pixel"] == pytest.approx(made["image_bytes"] * 8 / made["pixels"], rel=1e-12)
    extra = (made["record_bytes"] - made["image_bytes"]) / (16 / 5)
    assert row["extra_bytes_per_s"] == pytest.approx(extra, rel=1e-12)
    assert (row["available_hours"], row["price_usd_per_hour"]) == (0, 0)
    assert any("cameras of different sizes" in n for n in row["notes"])


def test_the_control_frequency_of_a_public_dataset_comes_from_the_table(tmp_path):
    make_rlds(tmp_path / "fractal", name="fractal20220817_data")
    result = import_rlds(tmp_path / "fractal", exchange_rate=1.0)
    assert CONTROL_HZ["fractal20220817_data"] == 3 and result.row["fps"] == 3
    assert result.row["held_hours"] == pytest.approx(16 / 3 / 3600, rel=1e-12)
    assert any("3 Hz for fractal20220817_data" in n for n in result.notes)


def test_an_unknown_dataset_needs_hz(tmp_path, capsys):
    make_rlds(tmp_path / "toy")
    assert main(["import", "rlds", str(tmp_path / "toy")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "dataset_info.json: name = 'toy_rlds' has no known control frequency" in err


def test_a_missing_shard_is_noted(tmp_path):
    make_rlds(tmp_path / "toy")
    (tmp_path / "toy" / "toy_rlds-train.tfrecord-00001-of-00002").unlink()
    result = import_rlds(tmp_path / "toy", hz=5, exchange_rate=1.0)
    assert result.row["held_hours"] == pytest.approx(12 / 5 / 3600, rel=1e-12)
    assert any("1 of 2 shards on disk, 2 of 3 episodes" in n for n in result.notes)


def test_a_cut_shard_is_one_line(tmp_path, capsys):
    make_rlds(tmp_path / "toy")
    shard = tmp_path / "toy" / "toy_rlds-train.tfrecord-00000-of-00002"
    shard.write_bytes(shard.read_bytes()[:-10])
    with pytest.raises(InputError, match="cut short"):
        import_rlds(tmp_path / "toy", hz=5)
    shard.write_bytes(b"not a tfrecord file at all")
    assert main(["import", "rlds", str(tmp_path / "toy"), "--hz", "5"]) == 2
    assert "fails its check: not a TFRecord file" in capsys.readouterr().err


def test_no_image_feature_is_refused(tmp_path):
    make_rlds(tmp_path / "toy")
    (tmp_path / "toy" / "features.json").write_text(json.dumps({"featuresDict": {"features": {}}}))
    with pytest.raises(LedgerError, match=r"features\.json: has no Image feature"):
        import_rlds(tmp_path / "toy", hz=5)


def test_the_json_may_not_be_a_shard(tmp_path, capsys):
    make_rlds(tmp_path / "toy")
    shard = tmp_path / "toy" / "toy_rlds-train.tfrecord-00000-of-00002"
    before = shard.read_bytes()
    assert main(["import", "rlds", str(tmp_path / "toy"), "--hz", "5", "--json", str(shard)]) == 2
    assert "a file of the dataset this import reads" in capsys.readouterr().err
    assert shard.read_bytes() == before


def test_append_prices_each_camera(tmp_path, capsys, ledger_copy):
    from procure import load_ledger

    made = make_rlds(tmp_path / "toy")
    args = ["import", "rlds", str(tmp_path / "toy"), "--hz", "5", "--append", "--ledger", str(ledger_copy),
            "--saturation-hours", "100"]  # fmt: skip
    assert main(args) == 0
    capsys.readouterr()
    ledger = load_ledger(ledger_copy)
    row = ledger.source("toy_rlds")
    assert list(ledger.cameras["camera"]) == ["image", "wrist_image"]
    assert row["codec"] == "mjpeg" and row["gop"] == 1
    # Two cameras priced as their sum: their mean frame, and their bytes exactly.
    assert row["width"] * row["height"] == pytest.approx((64 * 48 + 32 * 24) / 2)
    stored = row["bits_per_pixel"] * row["width"] * row["height"] * row["cameras"] * made["steps"] / 8
    assert stored == pytest.approx(made["image_bytes"], rel=1e-9)
