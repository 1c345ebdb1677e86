"""Calibration: a team's own video measured, so that its bill rests on its own numbers.

For each file, with PyAV (its wheels bundle FFmpeg): the codec, size, frame rate and frame count
from the container; the bits per pixel from the stream's packet bytes; the keyframe interval
from the packets' keyframe flags; the decode rate of one decoding thread, frames decoded and
converted to RGB as training would, after a warm-up, over ``repeat`` runs; and the frames a
random read decodes, by seeking to the keyframe before random frames and decoding up to them.

PyAV is an optional dependency (``pip install 'procure[video]'``); :func:`require_av` says so in
one line when it is missing.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from .formulas import PIXELS_1080P

#: Default timed decoding runs of each file.
DEFAULT_REPEAT = 5
#: Frames decoded, untimed, before the timed runs (caches, lazy initialisation) [frames].
WARMUP_FRAMES = 10
#: Random frames each file is read at to measure the frames a random read decodes; the mean's
#: standard error is about gop / √12 / √100 = 0.029 × gop (0.9 frames at a keyframe every 30).
RANDOM_READS = 100
#: Relative spread of the frame-to-frame time steps above which a stream counts as variable
#: frame rate [1].
VFR_TOLERANCE = 0.01
#: Most timed runs a calibration makes of a file.
MAX_REPEAT = 100

#: Keys of one file's calibration, with units.
CALIBRATION_KEYS = {
    "file": "path as given",
    "codec": "decoder name (h264, av1, mpeg4, …)",
    "width": "px",
    "height": "px",
    "fps": "frames/s",
    "frames": "frames",
    "duration_s": "s",
    "bits_per_pixel": "bit/px: stream bytes × 8 / (frames × width × height)",
    "gop": "frames between keyframes (median over the file)",
    "decode_fps": "frames/s, one thread, decoded and converted to RGB (median of the runs)",
    "decode_fps_min": "frames/s",
    "decode_fps_max": "frames/s",
    "core_fps_1080p": "frames/s at 1080p: decode_fps × width × height / (1920 × 1080)",
    "random_read_frames": "frames decoded to reach a random frame from the keyframe before it (mean)",
}


def require_av() -> Any:
    """PyAV, or an :class:`InputError` saying which extra installs it."""
    try:
        import av
    except ImportError:
        raise InputError("calibration needs PyAV: pip install 'procure[video]'") from None
    return av


@dataclass(frozen=True)
class Calibration:
    """What one file measured (keys and units in :data:`CALIBRATION_KEYS`)."""

    file: str
    codec: str
    width: int
    height: int
    fps: float
    frames: int
    duration_s: float
    bits_per_pixel: float
    gop: float
    decode_fps: float
    decode_fps_min: float
    decode_fps_max: float
    core_fps_1080p: float
    random_read_frames: float

    def to_dict(self) -> dict[str, Any]:
        """The file's calibration as a JSON-ready dict."""
        return asdict(self)


def _bad(path: str | Path, what: str) -> InputError:
    return InputError(f"{path}: {what}")


def _open(av: Any, path: str | Path) -> Any:
    if not Path(path).is_file():
        raise _bad(path, "no such file")
    try:
        return av.open(str(path))
    except av.error.FFmpegError as exc:
        raise _bad(path, f"not a video FFmpeg can read ({type(exc).__name__})") from None


def _packets(av: Any, path: str | Path) -> tuple[Any, list[int], list[bool], int]:
    """The stream's facts: its video stream, the packets' times in presentation order, their
    keyframe flags, and the stream's bytes."""
    container = _open(av, path)
    try:
        if not container.streams.video:
            raise _bad(path, "has no video stream" + (" (audio only)" if container.streams.audio else ""))
        stream = container.streams.video[0]
        packets = []
        size = 0
        try:
            for packet in container.demux(stream):
                if packet.size == 0 or packet.pts is None:
                    continue
                packets.append((int(packet.pts), bool(packet.is_keyframe)))
                size += packet.size
        except av.error.FFmpegError as exc:
            raise _bad(path, f"is corrupt or truncated: {type(exc).__name__} while reading packets") from None
        facts = (stream.codec_context.name, stream.width, stream.height, stream.average_rate, stream.time_base)
    finally:
        container.close()
    if not packets:
        raise _bad(path, "has a video stream with no frames")
    packets.sort()
    return facts, [p for p, _ in packets], [k for _, k in packets], size


def _decode_run(av: Any, path: str | Path, frames_expected: int, warmup: int) -> tuple[int, float]:
    """Decode the whole stream on one thread, converting each frame to RGB; the seconds the
    frames after ``warmup`` took."""
    container = _open(av, path)
    try:
        stream = container.streams.video[0]
        stream.thread_type = "NONE"
        stream.codec_context.thread_count = 1
        decoded, t0 = 0, time.perf_counter()
        try:
            for frame in container.decode(stream):
                frame.to_ndarray(format="rgb24")
                decoded += 1
                if decoded == warmup:
                    t0 = time.perf_counter()
        except av.error.FFmpegError as exc:
            raise _bad(path, f"is corrupt or truncated: {type(exc).__name__} after {decoded} frames") from None
        seconds = time.perf_counter() - t0
    finally:
        container.close()
    if decoded < frames_expected:
        raise _bad(path, f"is truncated: {decoded} of {frames_expected} frames decode")
    return decoded - warmup, seconds


def _random_reads(av: Any, path: str | Path, pts: list[int], reads: int, seed: int) -> float:
    """Mean frames decoded to reach a random frame by seeking to the keyframe before it; with
    ``reads`` at least the frames, every frame once (the exact mean over the file)."""
    rng = np.random.default_rng(seed)
    targets = np.arange(len(pts)) if reads >= len(pts) else rng.integers(0, len(pts), size=reads)
    container = _open(av, path)
    counts = []
    try:
        stream = container.streams.video[0]
        for t in targets.tolist():
            container.seek(pts[t], stream=stream, backward=True, any_frame=False)
            decoded = 0
            for frame in container.decode(stream):
                decoded += 1
                if frame.pts is not None and frame.pts >= pts[t]:
                    break
            counts.append(decoded)
    finally:
        container.close()
    return float(np.mean(counts))


def calibrate_file(
    path: str | Path, *, repeat: int = DEFAULT_REPEAT, reads: int = RANDOM_READS, seed: int = 0
) -> Calibration:
    """Measure one video file.

    Parameters
    ----------
    path : path-like
        A video file FFmpeg reads (MP4, MKV, …).
    repeat : int, default 5
        Timed decoding runs; the decode rate is their median, with min and max.
    reads : int, default 100
        Random frames read to measure ``random_read_frames`` (every frame once if the file has
        no more frames than this).
    seed : int, default 0
        Seed of the random frames read.

    Raises
    ------
    InputError
        Naming the file: not a video, no video stream (audio only), no frames, corrupt or
        truncated, variable frame rate; or a ``repeat`` out of range.
    """
    if not (isinstance(repeat, int) and 1 <= repeat <= MAX_REPEAT):
        raise InputError(f"repeat = {repeat!r} is invalid: must be a whole number ≥ 1 and ≤ {MAX_REPEAT}")
    av = require_av()
    (codec, width, height, rate, time_base), pts, keys, size = _packets(av, path)
    frames = len(pts)
    steps = np.diff(np.asarray(pts, dtype=float))
    if len(steps) and (steps.min() <= 0 or (steps.max() - steps.min()) > VFR_TOLERANCE * steps.mean()):
        raise _bad(
            path, "has a variable frame rate: its frames are not evenly spaced in time; re-encode it at a constant rate"
        )
    fps = float(rate) if rate else (1.0 / (float(steps.mean()) * float(time_base)) if len(steps) else math.nan)
    if not (fps > 0 and math.isfinite(fps)):
        raise _bad(path, "has no frame rate")
    where = np.flatnonzero(np.asarray(keys))
    gop = float(np.median(np.diff(where))) if len(where) > 1 else float(frames)
    warmup = min(WARMUP_FRAMES, max(frames - 1, 0))
    _decode_run(av, path, frames, warmup)  # a first, untimed pass: caches and lazy set-up
    rates = []
    for _ in range(repeat):
        timed, seconds = _decode_run(av, path, frames, warmup)
        rates.append(timed / seconds if seconds > 0 else math.inf)
    decode = statistics.median(rates)
    return Calibration(
        file=str(path),
        codec=str(codec),
        width=int(width),
        height=int(height),
        fps=fps,
        frames=frames,
        duration_s=frames / fps,
        bits_per_pixel=size * 8.0 / (frames * width * height),
        gop=gop,
        decode_fps=decode,
        decode_fps_min=min(rates),
        decode_fps_max=max(rates),
        core_fps_1080p=decode * width * height / PIXELS_1080P,
        random_read_frames=_random_reads(av, path, pts, reads, seed),
    )


def summary(files: list[Calibration]) -> dict[str, Any]:
    """What a ledger row needs, over all files: the codec most files use, the median size,
    frame rate, keyframe interval and 1080p decode rate, and the bits per pixel of all the
    bytes over all the pixels."""
    if not files:
        raise InputError("calibration needs at least one video file")
    codecs = [f.codec for f in files]
    pixels = sum(f.frames * f.width * f.height for f in files)
    bits = sum(f.bits_per_pixel * f.frames * f.width * f.height for f in files)
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
    }


#: Ledger columns that :func:`summary` fills, in the order they are written.
LEDGER_COLUMNS = ("width", "height", "fps", "bits_per_pixel", "codec", "gop", "core_fps_1080p")
