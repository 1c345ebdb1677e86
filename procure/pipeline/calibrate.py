"""Calibration: a team's own video measured, so that its bill rests on its own numbers.

For each file, with PyAV (its wheels bundle FFmpeg): the codec (its name, as ``ffprobe``'s
``codec_name`` gives it: ``av1``, never the decoder's ``libdav1d``), size, frame rate and frame
count from the container; the bits per pixel from the stream's packet bytes; the keyframe
interval from the packets' keyframe flags; the decode rate of one decoding thread, frames
decoded and converted to RGB as training would, after a warm-up, over ``repeat`` runs; and the
frames a random read decodes, by seeking to the keyframe before random frames and decoding up
to them.

The stream itself (codec, size, frame rate, packets) is read by :mod:`procure.pipeline.streams`;
what a calibration records, and what a ledger row takes from it, is
:mod:`procure.pipeline.calibration_record`.

With ``encode=True``, also one core's H.264 encode rate, the cluster's ``[decode]
encode_fps_1080p`` (what re-encoding a source's recorded video costs): the file's first
:data:`ENCODE_FRAMES` decoded frames (or all, if fewer) encoded by :data:`ENCODER` at its
preset :data:`ENCODE_PRESET` on one thread, at the file's size, after a warm-up, over ``repeat``
runs; only the encoder's calls are timed (not decoding, nor the conversion to 4:2:0). Both
rates are made 1080p-equivalent by pixels with one function, :func:`rate_1080p`.

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
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from ..defaults import DEFAULT_REPEAT, MAX_REPEAT
from ..errors import InputError
from .calibration_record import CALIBRATION_KEYS as CALIBRATION_KEYS
from .calibration_record import ENCODE_KEYS as ENCODE_KEYS
from .calibration_record import LEDGER_COLUMNS as LEDGER_COLUMNS
from .calibration_record import Calibration, rate_1080p
from .calibration_record import summary as summary
from .streams import Stream, bad_file, open_container, read_stream, require_av
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
#: The H.264 encoder timed by ``encode=True`` (FFmpeg's name; PyAV's build must have it).
ENCODER = "libx264"
#: x264 preset of the timed encode: its default, the speed a re-encoding would run at.
ENCODE_PRESET = "medium"
#: Frames of each file encoded per timed run, from its first [frames]; default 100, from 1 to
#: :data:`MAX_ENCODE_FRAMES` (a file with fewer frames is encoded whole). 100 frames take 4 s
#: at 1080p and 25 frames/s; x264's first frames (no reference yet, its lookahead filling) make
#: a few percent of the time.
ENCODE_FRAMES = 100
#: Most frames a timed encode run may take [frames].
MAX_ENCODE_FRAMES = 100_000

#: ``progress(done, total)``: called as the steps of a measurement finish.
Progress = Callable[[int, int], None]


def check_repeat(repeat: object) -> int:
    """``repeat`` as the number of timed runs, or an :class:`InputError` naming what is allowed."""
    if not (isinstance(repeat, int) and not isinstance(repeat, bool) and 1 <= repeat <= MAX_REPEAT):
        raise InputError(f"repeat = {repeat!r} is invalid: must be a whole number ≥ 1 and ≤ {MAX_REPEAT}")
    return repeat


def check_encode_frames(frames: object) -> int:
    """``frames`` as the frames a timed encode takes, or an :class:`InputError` naming what is allowed."""
    if not (isinstance(frames, int) and not isinstance(frames, bool) and 1 <= frames <= MAX_ENCODE_FRAMES):
        raise InputError(
            f"encode_frames = {frames!r} is invalid: must be a whole number ≥ 1 and ≤ {MAX_ENCODE_FRAMES:,}"
        )
    return frames


def require_encoder(av: Any) -> None:
    """An :class:`InputError` in one line when PyAV's FFmpeg has no :data:`ENCODER`."""
    try:
        av.Codec(ENCODER, "w")
    except (ValueError, av.error.FFmpegError):
        raise InputError(
            f"calibrate --encode needs the {ENCODER} encoder, which this PyAV's FFmpeg lacks "
            f"(PyAV {getattr(av, '__version__', '?')}): install a PyAV built with {ENCODER}"
        ) from None


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


def _encoder(av: Any, width: int, height: int, rate: Fraction) -> Any:
    """An open :data:`ENCODER` context at :data:`ENCODE_PRESET` on one thread, for 4:2:0 frames
    of ``width × height`` at ``rate``."""
    encoder = av.CodecContext.create(ENCODER, "w")
    encoder.width, encoder.height, encoder.pix_fmt = width, height, "yuv420p"
    encoder.framerate, encoder.time_base = rate, 1 / rate
    encoder.thread_count = 1
    encoder.options = {"threads": "1", "preset": ENCODE_PRESET}
    encoder.open()
    return encoder


def _encode_run(av: Any, path: str | Path, size: tuple[int, int], rate: Fraction, frames: int) -> tuple[int, float]:
    """Encode the file's first ``frames`` decoded frames at ``size`` on one thread; the frames
    encoded and the seconds the encoder's calls took (decoding and the conversion to 4:2:0
    are not timed)."""
    container = open_container(av, path)
    try:
        stream = container.streams.video[0]
        stream.thread_type = "NONE"
        stream.codec_context.thread_count = 1
        try:
            encoder = _encoder(av, *size, rate)
        except av.error.FFmpegError as exc:
            raise bad_file(path, f"{ENCODER} cannot open at {size[0]}×{size[1]}: {type(exc).__name__}") from None
        encoded, seconds = 0, 0.0
        try:
            for frame in container.decode(stream):
                image = frame.reformat(width=size[0], height=size[1], format="yuv420p")
                image.pts, image.time_base = encoded, encoder.time_base
                image.pict_type = 0  # x264 places its own keyframes, not the source's
                t0 = time.perf_counter()
                encoder.encode(image)
                seconds += time.perf_counter() - t0
                encoded += 1
                if encoded == frames:
                    break
            t0 = time.perf_counter()
            encoder.encode(None)  # the frames still in x264's lookahead
            seconds += time.perf_counter() - t0
        except av.error.FFmpegError as exc:
            raise bad_file(path, f"cannot be re-encoded: {type(exc).__name__} after {encoded} frames") from None
    finally:
        container.close()
    return encoded, seconds


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


def decode_spread_note(rates: Sequence[float], what: str = "decode") -> str | None:
    """A note when timed runs spread more than :data:`DECODE_SPREAD_LIMIT` (fastest over
    slowest), with the runs the median would need to be within :data:`DECODE_PRECISION`;
    None when they agree (or there is one run).

    Parameters
    ----------
    rates : sequence of float
        The runs' rates [frames/s], each > 0.
    what : str, default "decode"
        What the runs timed, as the note names it (``"encode"``).
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
        f"{what} rates spread {spread:.2f}× over {len(rates)} runs (fastest over slowest; trusted up to "
        f"{DECODE_SPREAD_LIMIT:g}×): {advice}; a busy machine spreads them, so run on an idle one"
    )


def calibration_steps(repeat: int, encode: bool = False) -> int:
    """Steps :func:`calibrate_file` reports to its ``progress``: reading the packets, the
    untimed pass, ``repeat`` timed runs and the random reads; with ``encode``, an untimed
    encode and ``repeat`` timed ones more."""
    return repeat + 3 + (repeat + 1 if encode else 0)


def _median_rate(runs: Sequence[tuple[int, float]]) -> tuple[float, list[float]]:
    """The median of timed runs' rates, frames over seconds [frames/s], and the rates."""
    rates = [frames / seconds if seconds > 0 else math.inf for frames, seconds in runs]
    return statistics.median(rates), rates


def calibrate_file(
    path: str | Path,
    *,
    repeat: int = DEFAULT_REPEAT,
    reads: int = RANDOM_READS,
    seed: int = 0,
    progress: Progress | None = None,
    encode: bool = False,
    encode_frames: int = ENCODE_FRAMES,
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
    encode : bool, default False
        Also time one core's H.264 encode (:data:`ENCODER` at :data:`ENCODE_PRESET`, one
        thread) of the first ``encode_frames`` frames, ``repeat`` times after an untimed
        warm-up: ``encode_fps`` (median, min, max) and ``encode_fps_1080p``. libx264 needs even
        sides: a file with an odd side is encoded a pixel smaller, its rate scaled by pixels.
    encode_frames : int, default 100
        Frames each timed encode takes (:data:`ENCODE_FRAMES`), 1 to :data:`MAX_ENCODE_FRAMES`.

    Raises
    ------
    InputError
        Naming the file: not a video, no video stream (audio only), no frames, a still image,
        corrupt or truncated; a ``repeat`` or ``encode_frames`` out of range; or, with
        ``encode``, no :data:`ENCODER` in PyAV's FFmpeg.
    """
    check_repeat(repeat)
    av = require_av()
    if encode:
        check_encode_frames(encode_frames)
        require_encoder(av)
    total = calibration_steps(repeat, encode)

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
    runs = []
    for k in range(repeat):
        runs.append(_decode_run(av, path, s.frames, warmup))
        tick(3 + k)
    decode, rates = _median_rate(runs)
    reads_mean = _random_reads(av, path, s.pts, reads, seed)
    tick(3 + repeat)
    notes = [note] if (note := decode_spread_note(rates)) else []
    encoded: dict[str, Any] = {}
    if encode:
        encoded, encode_notes = _encode_rates(av, path, s, repeat, encode_frames, lambda k: tick(4 + repeat + k))
        notes += encode_notes
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
        core_fps_1080p=rate_1080p(decode, s.width, s.height),
        random_read_frames=reads_mean,
        **encoded,
        notes=s.notes + tuple(notes),
    )


def _encode_rates(
    av: Any, path: str | Path, s: Stream, repeat: int, frames: int, tick: Callable[[int], None]
) -> tuple[dict[str, Any], list[str]]:
    """The encode keys of :class:`Calibration` (an untimed warm-up, then ``repeat`` timed runs
    of ``frames`` frames), and notes; ``tick(k)`` after the warm-up (0) and each run."""
    size = (max(2, s.width - s.width % 2), max(2, s.height - s.height % 2))  # 4:2:0 needs even sides
    rate = Fraction(s.fps).limit_denominator(100_000)
    _encode_run(av, path, size, rate, min(frames, WARMUP_FRAMES))
    tick(0)
    runs = []
    for k in range(repeat):
        runs.append(_encode_run(av, path, size, rate, frames))
        tick(1 + k)
    measured, rates = _median_rate(runs)
    at_1080p = rate_1080p(measured, *size)
    # the rate at the file's own size: as measured, or, encoded a pixel smaller, scaled by pixels
    scale = 1.0 if size == (s.width, s.height) else rate_1080p(1.0, *size) / rate_1080p(1.0, s.width, s.height)
    notes = [note] if (note := decode_spread_note(rates, "encode")) else []
    if scale != 1.0:
        notes.append(
            f"encoded at {size[0]}×{size[1]} ({ENCODER}'s 4:2:0 needs even sides); encode_fps scaled to "
            f"{s.width}×{s.height} by pixels"
        )
    values = {
        "encode_frames": runs[0][0],
        "encode_fps": measured * scale,
        "encode_fps_min": min(rates) * scale,
        "encode_fps_max": max(rates) * scale,
        "encode_fps_1080p": at_1080p,
    }
    return values, notes
