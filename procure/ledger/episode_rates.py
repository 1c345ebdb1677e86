"""Bits per pixel of each episode of a LeRobot v3.0 dataset, camera by camera.

A v3.0 video file holds many episodes; its episodes table says where each lies in it
(``from_timestamp``, ``to_timestamp`` [s], from the file's first frame). The packets of the
file (read by PyAV, not decoded: :func:`procure.pipeline.streams.read_stream`) each have a
time and a size, so each episode's bytes are the sizes of the packets whose frames fall in its
span, and its bits per pixel ``8 · bytes / (frames · width · height)``: a camera's rate can
differ from episode to episode (a busy scene, a still one), which a file's mean hides.

A frame at time ``t`` belongs to the episode whose span holds ``t`` within half a frame
(:data:`FRAME_SHARE`): timestamps are written to the frame, and rounding puts an episode's first
frame a hair before its ``from_timestamp``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ..pipeline.streams import Stream
    from .lerobot_v3 import Camera, Episodes

#: Share of a frame's time within which a frame at an episode's edge belongs to it [1].
FRAME_SHARE = 0.5


@dataclass(frozen=True)
class EpisodeRate:
    """One episode of one camera, as its file's packets hold it.

    Attributes
    ----------
    episode : int
        Its row in the episodes tables, in order [index].
    camera : str
        The video feature's name.
    frames : int
        Frames of its span [frames].
    bytes : int
        Bytes of those frames' packets [B] (the stream's; the file adds its container's).
    bits_per_pixel : float
        ``8 · bytes / (frames · width · height)`` [bit/px]; NaN with no frames.
    """

    episode: int
    camera: str
    frames: int
    bytes: int
    bits_per_pixel: float

    def to_dict(self) -> dict[str, Any]:
        """The episode as a JSON-ready dict."""
        return asdict(self)


def episode_rates(episodes: Episodes, cameras: list[Camera], streams: dict[str, Stream]) -> list[EpisodeRate]:
    """Each episode's frames, bytes and bits per pixel, per camera whose files were read
    (``streams``, by path relative to the dataset folder; an episode in a file not read is
    left out)."""
    out: list[EpisodeRate] = []
    size = {c.camera: (c.width, c.height) for c in cameras}
    for camera, spans in episodes.spans.items():
        width, height = size.get(camera, (0, 0))
        for index, (rel, start, end) in enumerate(spans):
            s = streams.get(rel)
            if s is None or not s.sizes:
                continue
            times = (np.asarray(s.pts, dtype=float) - s.pts[0]) * s.time_base
            half = FRAME_SHARE / s.fps
            inside = (times >= start - half) & (times < end - half)
            frames = int(inside.sum())
            count = int(np.asarray(s.sizes, dtype=np.int64)[inside].sum())
            pixels = frames * width * height
            out.append(EpisodeRate(index, camera, frames, count, count * 8.0 / pixels if pixels else math.nan))
    return out
