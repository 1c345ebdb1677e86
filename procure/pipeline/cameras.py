"""A source of cameras of different sizes as the one stream the pipeline prices.

Every formula of the pipeline and the bill reads a frame's size only through its pixels
``W·H``, and sums over frames. A source of camera groups ``c`` (``count`` cameras of
``P_c = W_c·H_c`` pixels at ``fps_c``, ``bits_per_pixel`` ``b_c`` and keyframe interval
``G_c``, one codec) is therefore one stream of:

* ``cameras = Σ count_c`` at ``fps = Σ count_c·fps_c / Σ count_c``: the frames an hour, exactly;
* the mean frame ``P̄ = Σ w_c P_c`` pixels, ``w_c = count_c·fps_c / Σ count·fps`` the share of
  frames (its ``width = P̄ / height``, ``height`` the largest camera's): decoded bytes, decode
  work in order and pixels per token, exactly;
* ``bits_per_pixel = Σ w_c P_c b_c / P̄``: the bytes stored, exactly;
* ``gop`` such that ``(gop + 1) / 2 = Σ w_c P_c (G_c + 1) / 2 / P̄``: the frames decoded at
  random, weighted by pixels, so random reads decode (and pixels per token count) exactly.

Random reads of cameras that differ in both ``G_c`` and ``b_c`` read
``Σ w_c g_c P_c · Σ w_c P_c b_c / P̄`` bytes a frame instead of ``Σ w_c g_c P_c b_c``
(:func:`read_bytes_gap` gives the difference).
"""

from __future__ import annotations

import numpy as np


def equivalent(
    count: np.ndarray,
    width: np.ndarray,
    height: np.ndarray,
    fps: np.ndarray,
    bits_per_pixel: np.ndarray,
    gop: np.ndarray,
) -> dict[str, float]:
    """The one stream that prices a source's camera groups as their sum.

    Parameters
    ----------
    count : array_like
        Cameras of each group [count].
    width, height : array_like
        Frame size of each group [px].
    fps : array_like
        Frames per second of each camera of each group [1/s].
    bits_per_pixel : array_like
        Encoded rate of each group [bit/px].
    gop : array_like
        Frames between keyframes of each group [frames].

    Returns
    -------
    dict
        ``cameras`` [count], ``fps`` [1/s], ``width`` and ``height`` [px], ``bits_per_pixel``
        [bit/px], ``gop`` [frames]: 3, 15, 995.6, 720 for DROID's 2 × 1280×720 + 640×480 at
        15 fps (a mean frame of 716,800 px).
    """
    count, width, height, fps, bpp, gop = (np.asarray(a, dtype=float) for a in
                                           (count, width, height, fps, bits_per_pixel, gop))  # fmt: skip
    frames = count * fps
    w = frames / frames.sum()
    pixels = width * height
    mean = float((w * pixels).sum())
    g_random = float((w * pixels * (gop + 1.0) / 2.0).sum()) / mean
    top = float(height.max())
    return {
        "cameras": float(count.sum()),
        "fps": float(frames.sum() / count.sum()),
        "width": mean / top,
        "height": top,
        "bits_per_pixel": float((w * pixels * bpp).sum()) / mean,
        "gop": 2.0 * g_random - 1.0,
    }


def read_bytes_gap(
    count: np.ndarray, width: np.ndarray, height: np.ndarray, fps: np.ndarray, bits_per_pixel: np.ndarray,
    gop: np.ndarray,
) -> float:  # fmt: skip
    """Bytes a random read of the equivalent stream reads beyond the cameras' own, per frame
    [B]: 0 unless the groups differ in both ``gop`` and ``bits_per_pixel``."""
    count, width, height, fps, bpp, gop = (np.asarray(a, dtype=float) for a in
                                           (count, width, height, fps, bits_per_pixel, gop))  # fmt: skip
    w = count * fps / (count * fps).sum()
    pixels = width * height
    g = (gop + 1.0) / 2.0
    mean = (w * pixels).sum()
    equivalent_bytes = (w * g * pixels).sum() * (w * pixels * bpp).sum() / mean / 8.0
    return float(equivalent_bytes - (w * g * pixels * bpp).sum() / 8.0)
