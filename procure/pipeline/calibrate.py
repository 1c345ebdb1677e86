"""Calibration: a team's own video measured, so that its bill rests on its own numbers.

For each file, with PyAV (its wheels bundle FFmpeg): the codec (its name, as ``ffprobe``'s
``codec_name`` gives it: ``av1``, never the decoder's ``libdav1d``), size, frame rate and frame
count from the container; the bits per pixel from the stream's packet bytes; the keyframe
interval from the packets' keyframe flags; the decode rate of one decoding thread, frames
decoded and converted to RGB as training would, after a warm-up, over ``repeat`` runs; and the
frames a random read decodes, by seeking to the keyframe before random frames and decoding up
to them.

The stream itself (codec, size, frame rate, packets) is read by :mod:`procure.pipeline.streams`.

Decode rates vary with the machine's load. When the timed runs spread more than
:data:`DECODE_SPREAD_LIMIT` (fastest over slowest, 1.5×), the calibration notes it, with the
runs the median would need to be within :data:`DECODE_PRECISION` (5 %) of the machine's rate:
``(√(π/2) × cv / 0.05)²`` for a coefficient of variation ``cv`` of the runs (the standard error
of a median is √(π/2) times that of a mean).

PyAV is an optional dependency (the extra ``video``); :func:`require_av` says so, with the command that installs it, in
one line when it is missing.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..defaults import DEFAULT_REPEAT, MAX_REPEAT
from ..errors import InputError
from .formulas import PIXELS_1080P
from .streams import bad_file, open_container, read_stream, require_av
from .streams import frame_timing as frame_timing  # also offered here, beside the calibration

#: Frames decoded, untimed, before the timed runs (caches, lazy initialisation) [frames].
WARMUP_FRAMES = 10
#: Random frames each file is read at to measure the frames a random read decodes; the mean's
#: standard error is about gop / √12 / √100 = 0.029 × gop (0.9 frames at a keyframe every 30).
RANDOM_READS = 100
#: Fastest over slowest timed decoding run [1] above which the decode rate is noted as
#: uncertain (a busy machine; 1 ≤ bound).
DECODE_SPREAD_LIMIT = 1.5
#: Relative standard error of the median decode rate that the runs advised in the note reach [1].
DECODE_PRECISION = 0.05
#: Standard error of the median of normal samples over that of their mean, √(π/2) [1].
MEDIAN_EFFICIENCY = math.sqrt(math.pi / 2)
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

#: ``progress(done, total)``: called as the steps of a measurement finish.
Progress = Callable[[int, int], None]


def check_repeat(repeat: object) -> int:
    """``repeat`` as the number of timed runs, or an :class:`InputError` naming what is allowed."""
    if not (isinstance(repeat, int) and not isinstance(repeat, bool) and 1 <= repeat <= MAX_REPEAT):
        raise InputError(f"repeat = {repeat!r} is invalid: must be a whole number ≥ 1 and ≤ {MAX_REPEAT}")
    return repeat


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
    constant_rate: bool
    fps_spread: float
    bits_per_pixel: float
    gop: float
    decode_fps: float
    decode_fps_min: float
    decode_fps_max: float
    core_fps_1080p: float
    random_read_frames: float
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The file's calibration as a JSON-ready dict (``notes`` a list)."""
        out = asdict(self)
        out["notes"] = list(self.notes)
        return out


def _decode_run(av: Any, path: str | Path, frames_expected: int, warmup: int) -> tuple[int, float]:
    """Decode the whole stream on one thread, converting each frame to RGB; the seconds the
    frames after ``warmup`` took."""
    container = open_container(av, path)
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
            raise bad_file(path, f"is corrupt or truncated: {type(exc).__name__} after {decoded} frames") from None
        seconds = time.perf_counter() - t0
    finally:
        container.close()
    if decoded < frames_expected:
        raise bad_file(path, f"is truncated: {decoded} of {frames_expected} frames decode")
    return decoded - warmup, seconds


def _random_reads(av: Any, path: str | Path, pts: Sequence[int], reads: int, seed: int) -> float:
    """Mean frames decoded to reach a random frame by seeking to the keyframe before it; with
    ``reads`` at least the frames, every frame once (the exact mean over the file)."""
    rng = np.random.default_rng(seed)
    targets = np.arange(len(pts)) if reads >= len(pts) else rng.integers(0, len(pts), size=reads)
    container = open_container(av, path)
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


def decode_spread_note(rates: Sequence[float]) -> str | None:
    """A note when timed decoding runs spread more than :data:`DECODE_SPREAD_LIMIT` (fastest
    over slowest), with the runs the median would need to be within :data:`DECODE_PRECISION`;
    None when they agree (or there is one run).

    Parameters
    ----------
    rates : sequence of float
        The runs' decode rates [frames/s], each > 0.
    """
    if len(rates) < 2:
        return None
    spread = max(rates) / min(rates)
    if spread <= DECODE_SPREAD_LIMIT:
        return None
    cv = statistics.stdev(rates) / statistics.mean(rates)
    needed = math.ceil((MEDIAN_EFFICIENCY * cv / DECODE_PRECISION) ** 2)
    advice = (
        f"about {needed} runs (--repeat {needed}) would put the median within {100 * DECODE_PRECISION:g} %"
        if needed <= MAX_REPEAT
        else f"more than {MAX_REPEAT} runs would be needed to put the median within {100 * DECODE_PRECISION:g} %"
    )
    return (
        f"decode rates spread {spread:.2f}× over {len(rates)} runs (fastest over slowest; trusted up to "
        f"{DECODE_SPREAD_LIMIT:g}×): {advice}; a busy machine spreads them, so run on an idle one"
    )


def calibration_steps(repeat: int) -> int:
    """Steps :func:`calibrate_file` reports to its ``progress``: reading the packets, the
    untimed pass, ``repeat`` timed runs and the random reads."""
    return repeat + 3


def calibrate_file(
    path: str | Path,
    *,
    repeat: int = DEFAULT_REPEAT,
    reads: int = RANDOM_READS,
    seed: int = 0,
    progress: Progress | None = None,
) -> Calibration:
    """Measure one video file.

    Parameters
    ----------
    path : path-like
        A video file FFmpeg reads (MP4, MKV, WebM, …).
    repeat : int, default 5
        Timed decoding runs, 1 to :data:`MAX_REPEAT`; the decode rate is their median, with min
        and max (and a note when they spread more than :data:`DECODE_SPREAD_LIMIT`).
    reads : int, default 100
        Random frames read to measure ``random_read_frames`` (every frame once if the file has
        no more frames than this).
    seed : int, default 0
        Seed of the random frames read.
    progress : callable, optional
        ``progress(done, total)``, called after each of :func:`calibration_steps` steps.

    Raises
    ------
    InputError
        Naming the file: not a video, no video stream (audio only), no frames, a still image,
        corrupt or truncated; or a ``repeat`` out of range.
    """
    check_repeat(repeat)
    av = require_av()
    total = calibration_steps(repeat)

    def tick(done: int) -> None:
        if progress is not None:
            progress(done, total)

    s = read_stream(path)
    tick(1)
    where = np.flatnonzero(np.asarray(s.keyframes))
    gop = float(np.median(np.diff(where))) if len(where) > 1 else float(s.frames)
    warmup = min(WARMUP_FRAMES, s.frames - 1)
    _decode_run(av, path, s.frames, warmup)  # a first, untimed pass: caches and lazy set-up
    tick(2)
    rates = []
    for k in range(repeat):
        timed, seconds = _decode_run(av, path, s.frames, warmup)
        rates.append(timed / seconds if seconds > 0 else math.inf)
        tick(3 + k)
    decode = statistics.median(rates)
    reads_mean = _random_reads(av, path, s.pts, reads, seed)
    tick(total)
    note = decode_spread_note(rates)
    return Calibration(
        file=s.file,
        codec=s.codec,
        width=s.width,
        height=s.height,
        fps=s.fps,
        frames=s.frames,
        duration_s=s.duration_s,
        constant_rate=s.constant_rate,
        fps_spread=s.fps_spread,
        bits_per_pixel=s.bits_per_pixel,
        gop=gop,
        decode_fps=decode,
        decode_fps_min=min(rates),
        decode_fps_max=max(rates),
        core_fps_1080p=decode * s.width * s.height / PIXELS_1080P,
        random_read_frames=reads_mean,
        notes=s.notes + ((note,) if note else ()),
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
