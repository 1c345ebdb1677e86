"""What a calibration records: the keys and units of one file's measurement
(:data:`CALIBRATION_KEYS`, and :data:`ENCODE_KEYS` when the encode rate is timed), the record of
one file (:class:`Calibration`), the 1080p-equivalent rate both decode and encode rates are kept
at (:func:`rate_1080p`), and what a ledger row takes from the files measured
(:func:`summary`, into the :data:`LEDGER_COLUMNS`).
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import InputError
from .formulas import PIXELS_1080P

#: Keys of one file's calibration, with units.
CALIBRATION_KEYS = {
    "file": "path as given",
    "codec": "codec name, as ffprobe's codec_name (h264, av1, vp9, mpeg4, …)",
    "width": "px",
    "height": "px",
    "fps": "frames/s: the declared rate when the timestamps lie on its grid, else frames / duration_s",
    "frames": "frames",
    "duration_s": "s",
    "constant_rate": "true when the timestamps lie on the grid of the declared rate (within one tick)",
    "fps_spread": "longest over shortest step between frames [1]; 1 at a constant rate",
    "bits_per_pixel": "bit/px: stream bytes × 8 / (frames × width × height)",
    "gop": "frames between keyframes (median over the file)",
    "decode_fps": "frames/s, one thread, decoded and converted to RGB (median of the runs)",
    "decode_fps_min": "frames/s",
    "decode_fps_max": "frames/s",
    "core_fps_1080p": "frames/s at 1080p: decode_fps × width × height / (1920 × 1080)",
    "random_read_frames": "frames decoded to reach a random frame from the keyframe before it (mean)",
    "notes": "what to know about the numbers: a variable frame rate, noisy decode rates",
}
#: Keys a calibration with ``encode=True`` adds (before ``notes``), with units.
ENCODE_KEYS = {
    "encode_frames": "frames encoded in each timed run: the first ENCODE_FRAMES (100) or all",
    "encode_fps": "frames/s at the file's size, one thread, libx264 preset medium (median of the runs)",
    "encode_fps_min": "frames/s",
    "encode_fps_max": "frames/s",
    "encode_fps_1080p": "frames/s at 1080p: encode_fps × width × height / (1920 × 1080)",
}


def rate_1080p(fps: float, width: int, height: int) -> float:
    """A rate at ``width × height`` as 1080p-equivalent frames per second, ``fps × W·H /
    (1920·1080)``: decoding and encoding cost are taken as proportional to pixels (the inverse
    of :func:`procure.pipeline.formulas.decoder_fps`)."""
    return fps * width * height / PIXELS_1080P


@dataclass(frozen=True)
class Calibration:
    """What one file measured (keys and units in :data:`CALIBRATION_KEYS`; the encode rate's,
    None unless measured, in :data:`ENCODE_KEYS`)."""

    file: str
    codec: str
    width: int
    height: int
    fps: float
    frames: int
    duration_s: float
    constant_rate: bool
    fps_spread: float
    bits_per_pixel: float
    gop: float
    decode_fps: float
    decode_fps_min: float
    decode_fps_max: float
    core_fps_1080p: float
    random_read_frames: float
    encode_frames: int | None = None
    encode_fps: float | None = None
    encode_fps_min: float | None = None
    encode_fps_max: float | None = None
    encode_fps_1080p: float | None = None
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The file's calibration as a JSON-ready dict (``notes`` a list); the encode keys only
        when the encode rate was measured."""
        out = asdict(self)
        if self.encode_fps is None:
            for key in ENCODE_KEYS:
                del out[key]
        out["notes"] = list(self.notes)
        return out


def summary(files: list[Calibration]) -> dict[str, Any]:
    """What a ledger row needs, over all files: the codec most files use, the median size,
    frame rate, keyframe interval and 1080p decode rate, and the bits per pixel of all the
    bytes over all the pixels; and, when every file's encode rate was measured, the median
    1080p encode rate, ``encode_fps_1080p``, a key of the cluster (``[decode]``), not of a row."""
    if not files:
        raise InputError("calibration needs at least one video file")
    codecs = [f.codec for f in files]
    pixels = sum(f.frames * f.width * f.height for f in files)
    bits = sum(f.bits_per_pixel * f.frames * f.width * f.height for f in files)
    rates = [f.encode_fps_1080p for f in files if f.encode_fps_1080p is not None]
    encoded = {"encode_fps_1080p": statistics.median(rates)} if rates and len(rates) == len(files) else {}
    return {
        "files": len(files),
        "codec": max(set(codecs), key=codecs.count),
        "width": int(statistics.median(f.width for f in files)),
        "height": int(statistics.median(f.height for f in files)),
        "fps": statistics.median(f.fps for f in files),
        "bits_per_pixel": bits / pixels,
        "gop": statistics.median(f.gop for f in files),
        "core_fps_1080p": statistics.median(f.core_fps_1080p for f in files),
        "frames": sum(f.frames for f in files),
        **encoded,
    }


#: Ledger columns that :func:`summary` fills, in the order they are written.
LEDGER_COLUMNS = ("width", "height", "fps", "bits_per_pixel", "codec", "gop", "core_fps_1080p")


def by_camera(files: list[Calibration]) -> list[dict[str, Any]]:
    """The files grouped by frame size, one group a camera (a dataset's cameras differ in size;
    files of one size are taken as one camera's), largest first: each group's ``camera`` name
    (``WxH``), ``width``, ``height`` [px], ``codec`` (most of its files'), ``gop`` (median)
    [frames], ``files`` [count], ``frames`` [frames], ``bytes`` (its streams', from their bits
    per pixel) [B] and ``bits_per_pixel`` (its bytes over its pixels) [bit/px]."""
    groups: dict[tuple[int, int], list[Calibration]] = {}
    for f in files:
        groups.setdefault((f.width, f.height), []).append(f)
    out = []
    for (width, height), group in sorted(groups.items(), key=lambda kv: -kv[0][0] * kv[0][1]):
        frames = sum(f.frames for f in group)
        bits = sum(f.bits_per_pixel * f.frames * f.width * f.height for f in group)
        codecs = [f.codec for f in group]
        out.append({
            "camera": f"{width}x{height}", "width": width, "height": height,
            "codec": max(set(codecs), key=codecs.count), "gop": statistics.median(f.gop for f in group),
            "files": len(group), "frames": frames, "bytes": round(bits / 8),
            "bits_per_pixel": bits / (frames * width * height),
        })  # fmt: skip
    return out
