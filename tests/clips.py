"""Small video clips the tests encode themselves, with PyAV or the ``ffmpeg`` tool, at known
settings; and ``ffprobe``'s reading of a clip, an oracle apart from procure."""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np


def encode(
    path: Path,
    *,
    codec: str = "libx264",
    width: int = 64,
    height: int = 48,
    fps: int = 30,
    frames: int = 48,
    gop: int = 8,
    pts_step: list[int] | None = None,
) -> Path:
    """Encode ``frames`` frames of a moving gradient with a keyframe every ``gop`` frames.

    ``pts_step`` gives each frame's time step in ticks of 1/(fps × 100) s, for a variable
    frame rate; evenly spaced otherwise. No B-frames, so decode order is display order.
    """
    import av

    container = av.open(str(path), "w")
    stream = container.add_stream(codec, rate=fps)
    stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
    stream.codec_context.gop_size = gop
    stream.codec_context.max_b_frames = 0
    if codec == "libx264":
        stream.options = {"g": str(gop), "keyint_min": str(gop), "sc_threshold": "0", "bf": "0"}
    tick = Fraction(1, fps * 100)
    stream.codec_context.time_base = tick
    y, x = np.mgrid[0:height, 0:width]
    pts = 0
    for i in range(frames):
        image = np.stack([(x * 4 + i * 3) % 256, (y * 4 + i * 5) % 256, ((x + y) * 2 + i) % 256], axis=-1)
        frame = av.VideoFrame.from_ndarray(image.astype(np.uint8), format="rgb24")
        frame.pts, frame.time_base = pts, tick
        pts += pts_step[i] if pts_step is not None else 100
        for packet in stream.encode(frame):
            container.mux(packet)
    for packet in stream.encode():
        container.mux(packet)
    container.close()
    return path


def stream_bytes(path: Path) -> tuple[int, int]:
    """Bytes of the video stream's packets and their count, read independently of procure."""
    import av

    with av.open(str(path)) as container:
        sizes = [p.size for p in container.demux(container.streams.video[0]) if p.size]
    return sum(sizes), len(sizes)


def audio_only(path: Path) -> Path:
    """A file with one audio stream and no video."""
    import av

    container = av.open(str(path), "w")
    stream = container.add_stream("mp2", rate=44_100)
    samples = np.zeros((1, 1152), dtype=np.int16)
    for i in range(20):
        frame = av.AudioFrame.from_ndarray(samples, format="s16", layout="mono")
        frame.sample_rate, frame.pts = 44_100, i * 1152
        for packet in stream.encode(frame):
            container.mux(packet)
    for packet in stream.encode():
        container.mux(packet)
    container.close()
    return path


#: The ``ffmpeg`` and ``ffprobe`` command-line tools, or None where they are not installed.
FFMPEG = shutil.which("ffmpeg")
FFPROBE = shutil.which("ffprobe")


@functools.cache
def ffmpeg_encoders() -> frozenset[str]:
    """Names of the video encoders the ``ffmpeg`` tool has (empty without it)."""
    if FFMPEG is None:
        return frozenset()
    listing = subprocess.run([FFMPEG, "-hide_banner", "-encoders"], capture_output=True, text=True, check=True).stdout
    return frozenset(
        line.split()[1] for line in listing.splitlines() if line.startswith(" V") and len(line.split()) > 1
    )


def ffmpeg(path: Path, *args: str) -> Path:
    """Run the ``ffmpeg`` tool with ``args`` and write ``path``."""
    assert FFMPEG is not None
    subprocess.run([FFMPEG, "-hide_banner", "-v", "error", "-y", *args, str(path)], check=True, capture_output=True)
    return path


def ffprobe(path: Path) -> dict:
    """``ffprobe``'s reading of the first video stream: its fields (``codec_name``,
    ``r_frame_rate``, ``nb_read_packets``, …) and its packets (``pts``, ``duration``, ``size``,
    ``flags``), read by FFmpeg's own tool, apart from PyAV and procure."""
    assert FFPROBE is not None
    out = subprocess.run(
        [FFPROBE, "-v", "error", "-select_streams", "v:0", "-count_packets", "-show_streams",
         "-show_entries", "packet=pts,duration,size,flags", "-of", "json", str(path)],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    found = json.loads(out)
    return {**found["streams"][0], "packets": found.get("packets", [])}
