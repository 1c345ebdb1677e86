"""The codec of a source's video: which decoders read it and how fast a core does.

A codec is named as ``ffprobe``'s ``codec_name`` names it (``h264``, ``hevc``, ``av1``,
``vp9``, …); the other names a dataset or a tool may give it (``avc1``, ``libsvtav1``,
``av01``, ``h265``, …) are read as that name (:data:`ALIASES`), and a blank is the lesson's
H.264 (:data:`DEFAULT_CODEC`), so a source that states no codec is priced as before.

* Frames stored as images (an RLDS dataset) are ``mjpeg`` (JPEG) or ``png``, each frame its own
  keyframe (``gop`` 1).
* A CPU core's 1080p decode rate depends on the codec: the cluster's ``[decode]
  core_fps_1080p`` is H.264's, and ``core_fps_1080p_<codec>`` the rate of each codec of
  :data:`RATED_CODECS`; a codec with no key of its own is decoded at H.264's rate.
* NVDEC engines decode only the codecs their accelerator card lists (``nvdec_codecs`` in
  ``models/accelerators.toml``): a source in any other codec gets no NVDEC supply, and
  :func:`nvdec_note` says so.

Pure, vectorised functions over arrays of codec names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

#: The codec of a source that names none: the lesson's H.264.
DEFAULT_CODEC = "h264"
#: Other names of a codec (lower case) and the name used here, ffprobe's ``codec_name``.
ALIASES = {
    "avc": "h264", "avc1": "h264", "h.264": "h264", "x264": "h264", "libx264": "h264", "libopenh264": "h264",
    "h265": "hevc", "h.265": "hevc", "hvc1": "hevc", "hev1": "hevc", "x265": "hevc", "libx265": "hevc",
    "av01": "av1", "libsvtav1": "av1", "libaom-av1": "av1", "librav1e": "av1", "libdav1d": "av1",
    "vp09": "vp9", "libvpx-vp9": "vp9", "vp08": "vp8", "libvpx": "vp8",
    "jpeg": "mjpeg", "jpg": "mjpeg",
}  # fmt: skip
#: Codecs with a core decode rate of their own, the cluster's ``[decode] core_fps_1080p_<codec>``;
#: H.264's is ``core_fps_1080p``.
RATED_CODECS = ("hevc", "av1", "vp9", "mjpeg", "png")
#: The cluster key of H.264's core rate, and the prefix of the other codecs' keys.
RATE_KEY = "core_fps_1080p"


def codec_name(value: object) -> str:
    """A codec's name as used here: lower case, aliases resolved, blank read as H.264.

    Parameters
    ----------
    value : object
        A codec as a ledger cell, a dataset or a stream gives it (None or NaN: blank).

    Returns
    -------
    str
        ``h264``, ``hevc``, ``av1``, ``vp9``, … (ffprobe's ``codec_name``).
    """
    if value is None or (isinstance(value, float) and value != value):
        return DEFAULT_CODEC
    text = str(value).strip().lower()
    return ALIASES.get(text, text) or DEFAULT_CODEC


def codec_names(values: Iterable[object]) -> np.ndarray:
    """:func:`codec_name` of each value, as an array of str (each distinct value read once)."""
    codes, distinct = pd.factorize(pd.Series(list(values), dtype=object), use_na_sentinel=False)
    return np.asarray([codec_name(v) for v in distinct], dtype=object)[codes]


def rate_key(codec: str) -> str:
    """The cluster key of one core's 1080p rate for ``codec``: ``core_fps_1080p_<codec>`` for the
    codecs of :data:`RATED_CODECS`, ``core_fps_1080p`` (H.264's) for any other."""
    name = codec_name(codec)
    return f"{RATE_KEY}_{name}" if name in RATED_CODECS else RATE_KEY


def core_fps_1080p(codecs: Iterable[object], rates: Mapping[str, float]) -> np.ndarray:
    """One core's 1080p decode rate for each codec [frames/s].

    Parameters
    ----------
    codecs : iterable
        Codec of each source (:func:`codec_name` reads each).
    rates : mapping
        The cluster's rates by key (:func:`rate_key`): ``core_fps_1080p`` and
        ``core_fps_1080p_<codec>`` [frames/s].

    Returns
    -------
    numpy.ndarray
        The rate of each codec's key [frames/s].
    """
    codes, distinct = pd.factorize(codec_names(codecs))
    return np.asarray([float(rates[rate_key(str(c))]) for c in distinct], dtype=float)[codes]


def nvdec_decodes(codecs: Iterable[object], supported: Iterable[str]) -> np.ndarray:
    """Whether the NVDEC engines decode each codec [bool]: it is one of ``supported``."""
    known = {codec_name(c) for c in supported}
    return np.asarray([c in known for c in codec_names(codecs)], dtype=bool)


def nvdec_note(source: str, codec: str, accelerator: str, supported: Iterable[str]) -> str:
    """The note on a source whose codec the accelerator's NVDEC engines cannot decode."""
    return (
        f"source {source!r} is {codec_name(codec)}, which the {accelerator}'s NVDEC engines cannot decode "
        f"(they decode {', '.join(supported) or 'nothing'}): its NVDEC supply is 0, its frames are decoded "
        "on the CPU cores"
    )
