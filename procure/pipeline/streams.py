"""A video file's stream read from its container and packets, without decoding.

The codec by its own name (as ``ffprobe``'s ``codec_name`` gives it: ``av1``, never the
decoder's ``libdav1d``), the size, the frame rate and the packets' bytes, times and keyframe
flags, for :mod:`procure.pipeline.calibrate` and the dataset import.

Frame rate. Containers keep time in ticks of the stream's ``time_base``; Matroska and WebM in
milliseconds, so 30 frames/s is steps of 33 and 34 ms. A stream is at a constant rate when its
timestamps lie on the grid of a rate the stream declares (FFmpeg's ``r_frame_rate``, then
``avg_frame_rate``) to within one tick of the time resolution: every frame's offset from the
grid, max minus min, is at most one tick (each time rounded to a tick), or none at all when a
frame lasts a whole number of ticks (nothing to round). The tick is the coarsest resolution the
timestamps show, the greatest common divisor of their offsets from the first (an MP4 remuxed
from Matroska keeps millisecond steps in a finer ``time_base``). A stream off every declared
grid (a robot log with dropped frames) is measured at its mean rate, frames over duration (the
last frame's time plus its duration, less the first frame's time), with its spread (longest
over shortest frame step) and a note.

Still images (one frame, an image container such as ``png_pipe``, or an image codec such as
PNG) are refused: a picture has no frame rate, keyframe interval or decode rate to measure.

PyAV is an optional dependency; :func:`require_av` says so in one line when it is missing.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..install import install_command

#: FFmpeg demuxers of still images (besides every ``*_pipe`` demuxer: ``png_pipe``, ``jpeg_pipe``, …).
IMAGE_FORMATS = ("image2", "image2pipe")
#: Suffix of the names of FFmpeg's single-image demuxers.
IMAGE_PIPE_SUFFIX = "_pipe"
#: Codecs (FFmpeg names) of still images.
IMAGE_CODECS = (
    "png", "bmp", "tiff", "webp", "jpeg2000", "jpegls", "qoi", "pam", "pbm", "pgm", "pgmyuv", "ppm",
    "sgi", "targa", "pcx", "exr", "dpx", "xbm", "xpm", "xwd", "sunrast", "hdr",
)  # fmt: skip


def require_av() -> Any:
    """PyAV, or an :class:`InputError` saying which extra installs it."""
    try:
        import av
    except ImportError:
        raise InputError(f"calibration needs PyAV: {install_command('video')}") from None
    return av


@dataclass(frozen=True)
class Stream:
    """A file's video stream as its packets tell it, without decoding (units in
    :data:`procure.pipeline.calibrate.CALIBRATION_KEYS`)."""

    file: str
    codec: str
    width: int
    height: int
    fps: float
    frames: int
    duration_s: float
    constant_rate: bool
    fps_spread: float
    stream_bytes: int
    notes: tuple[str, ...]
    pts: tuple[int, ...] = field(repr=False, compare=False)
    keyframes: tuple[bool, ...] = field(repr=False, compare=False)
    #: Each packet's bytes, in the order of ``pts`` [B].
    sizes: tuple[int, ...] = field(default=(), repr=False, compare=False)
    #: Seconds per unit of ``pts`` [s].
    time_base: float = field(default=0.0, repr=False, compare=False)

    @property
    def bits_per_pixel(self) -> float:
        """Stream bytes × 8 / (frames × width × height) [bit/px]."""
        return self.stream_bytes * 8.0 / (self.frames * self.width * self.height)


def bad_file(path: str | Path, what: str) -> InputError:
    """One line naming the file and what is wrong with it."""
    return InputError(f"{path}: {what}")


def open_container(av: Any, path: str | Path) -> Any:
    """The file opened by PyAV (``av``), or one line saying why it cannot be."""
    if not Path(path).is_file():
        raise bad_file(path, "no such file")
    try:
        return av.open(str(path))
    except av.error.FFmpegError as exc:
        raise bad_file(path, f"not a video FFmpeg can read ({type(exc).__name__})") from None


def _codec_name(stream: Any) -> str:
    """The codec's name as ``ffprobe`` gives it (``av1``), not the decoder's (``libdav1d``)."""
    codec = stream.codec_context.codec
    return str(getattr(codec, "canonical_name", None) or codec.name)


def _rates(stream: Any) -> list[Fraction]:
    """The frame rates the stream declares [frames/s], most trusted first, without repeats."""
    out: list[Fraction] = []
    for rate in (stream.base_rate, stream.average_rate, stream.guessed_rate):
        if rate and rate > 0 and Fraction(rate) not in out:
            out.append(Fraction(rate))
    return out


def frame_timing(
    pts: Sequence[int], time_base: Fraction, declared: Sequence[Fraction], last_duration: int = 0
) -> tuple[float, bool, float, float]:
    """The frame rate of a stream from its presentation times.

    Parameters
    ----------
    pts : sequence of int
        The frames' presentation times in ticks, ascending, at least two, all different.
    time_base : Fraction
        Seconds a tick [s].
    declared : sequence of Fraction
        Frame rates the stream declares [frames/s], most trusted first.
    last_duration : int, default 0
        The last frame's duration [ticks]; 0 when unknown (the median step is taken).

    Returns
    -------
    tuple of (float, bool, float, float)
        The rate [frames/s]; whether the times lie on the grid of a declared rate (then the
        rate is that one); the spread, longest over shortest step [1] (1 on a grid); and the
        duration [s], frames over the rate.
    """
    frames = len(pts)
    offsets = [int(p) - int(pts[0]) for p in pts]
    tick = math.gcd(*offsets)  # the coarsest time resolution the timestamps show [ticks]
    for rate in declared:
        period = 1 / (rate * time_base)  # ticks a frame, exact
        scaled = [o * period.denominator - i * period.numerator for i, o in enumerate(offsets)]
        spread = max(scaled) - min(scaled)  # of the offsets from the grid [ticks / period.denominator]
        rounded = (period / tick).denominator != 1  # frames fall between ticks, each rounded to one
        if spread == 0 or (rounded and spread <= tick * period.denominator):
            return float(rate), True, 1.0, float(frames / rate)
    steps = np.diff(np.asarray(offsets, dtype=np.int64))
    last = last_duration if last_duration > 0 else int(np.median(steps))
    duration = float((offsets[-1] + last) * time_base)
    return frames / duration, False, float(steps.max() / steps.min()), duration


def read_stream(path: str | Path) -> Stream:
    """A file's video stream from its packets, without decoding: codec, size, frame rate,
    frames, stream bytes and keyframes.

    Raises
    ------
    InputError
        Naming the file: not a video, no video stream (audio only), no frames, a still image,
        frames sharing a timestamp, no frame rate, or corrupt packets.
    """
    av = require_av()
    container = open_container(av, path)
    try:
        if not container.streams.video:
            raise bad_file(path, "has no video stream" + (" (audio only)" if container.streams.audio else ""))
        stream = container.streams.video[0]
        packets = []
        size = 0
        try:
            for packet in container.demux(stream):
                if packet.size == 0 or packet.pts is None:
                    continue
                packets.append((int(packet.pts), bool(packet.is_keyframe), int(packet.duration or 0), int(packet.size)))
                size += packet.size
        except av.error.FFmpegError as exc:
            raise bad_file(path, f"is corrupt or truncated: {type(exc).__name__} while reading packets") from None
        codec, form = _codec_name(stream), str(container.format.name)
        width, height, time_base, declared = stream.width, stream.height, stream.time_base, _rates(stream)
    finally:
        container.close()
    if not packets:
        raise bad_file(path, "has a video stream with no frames")
    if form in IMAGE_FORMATS or form.endswith(IMAGE_PIPE_SUFFIX) or codec in IMAGE_CODECS or len(packets) == 1:
        what = f"{len(packets)} frame" + ("s" if len(packets) > 1 else "")
        raise bad_file(path, f"is a still image ({codec} in {form}, {what}), not a video: calibrate a video file")
    packets.sort()
    pts = [p for p, _, _, _ in packets]
    shared = sum(1 for a, b in itertools.pairwise(pts) if b <= a)
    if shared:
        raise bad_file(path, f"has {shared} frames sharing a timestamp with another: their times cannot be read")
    if not time_base:
        raise bad_file(path, "has no time base: its frames have no times")
    fps, constant, spread, duration = frame_timing(pts, Fraction(time_base), declared, packets[-1][2])
    if not (fps > 0 and math.isfinite(fps)):
        raise bad_file(path, "has no frame rate")
    notes: tuple[str, ...] = ()
    if not constant:
        notes = (
            f"variable frame rate: steps between frames spread {spread:.3g}× (longest over shortest); "
            f"measured at its mean rate, {len(pts):,} frames over {duration:.6g} s = {fps:.6g} frames/s",
        )
    return Stream(
        file=str(path), codec=codec, width=int(width), height=int(height), fps=fps, frames=len(pts),
        duration_s=duration, constant_rate=constant, fps_spread=spread, stream_bytes=size, notes=notes,
        pts=tuple(pts), keyframes=tuple(k for _, k, _, _ in packets), sizes=tuple(b for _, _, _, b in packets),
        time_base=float(time_base),
    )  # fmt: skip
