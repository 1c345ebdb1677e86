"""The pipeline from stored video to an accelerator, in closed form (seed §1–§3).

Pure, vectorised functions: every argument may be a scalar, a numpy array or a pandas
Series, and the result has the shape of the broadcast inputs (a Series keeps its index).
Rates are per accelerator; frames are camera frames of ``width × height`` pixels.

The stages, in the accelerator's unit (frames per second):

* demand, what the accelerator would train on if nothing made it wait:
  ``D = mfu · peak_flops / (6 · params · tokens_per_frame)``;
* decode supply, ``(cores · core_fps + engines · nvdec_fps) / g``, infinite when the frames
  are stored decoded or rendered in the loop;
* read supply, ``link_bytes_per_s / bytes_per_frame_read``, infinite when rendered;
* supply ``S = min(read, decode)``; the accelerator is busy ``min(1, S / D)``.

References
----------
Seed lesson "Moving the bits: the infrastructure bill", §2 (demand), §3 (decoders, pixels per
token, Little's law), §4 (the queue this closed form describes).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..arrays import ArrayLike
from ..arrays import like as _like
from ..errors import InputError

#: Pixels of the 1920 × 1080 frame in which decoder rates are quoted [px]. A definition of the
#: unit of ``core_fps_1080p`` and ``nvdec_fps_1080p``, not an assumption.
PIXELS_1080P = 1920 * 1080

#: FLOPs per parameter per token for one training step: 2 forward, 4 backward (seed §2).
FLOPS_PER_PARAM_TOKEN = 6

#: How the frames are stored: encoded video, decoded frames, or rendered in the loop (nothing read).
STORED_MODES = ("video", "decoded", "rendered")
#: How the frames are read: in recorded order, or in random order.
READ_MODES = ("order", "random")
#: The stages that can bind, in the order of :func:`binding_stage_code`.
STAGES = ("accelerator", "read", "decode")


def tokens_per_frame(input_side: ArrayLike, patch: ArrayLike) -> ArrayLike:
    """Tokens a model keeps of one frame, ``floor(side / patch)²``.

    Parameters
    ----------
    input_side : array_like
        Side of the square model input [px].
    patch : array_like
        Side of one square patch [px].

    Returns
    -------
    array_like
        Tokens per frame [tokens]. 256 for 224 px and 14 px patches; 729 for 384 px (seed §2).
    """
    return (np.floor_divide(input_side, patch)) ** 2


def demand_fps(mfu: ArrayLike, peak_flops: ArrayLike, params: ArrayLike, tokens: ArrayLike) -> ArrayLike:
    """Frames per second an accelerator trains on when nothing makes it wait.

    Parameters
    ----------
    mfu : array_like
        Share of the dense peak reached, μ [1].
    peak_flops : array_like
        Dense BF16 peak, Φ [FLOP/s].
    params : array_like
        Model parameters, P [1].
    tokens : array_like
        Tokens per frame, n [tokens].

    Returns
    -------
    array_like
        Demand D [frames/s].

    Notes
    -----
    ``D = μ Φ / (6 P n)`` (seed §2): 6 P FLOPs per token. 2,770.8 for an H100 at μ = 0.4,
    P = 93 M and n = 256.
    """
    return mfu * peak_flops / (FLOPS_PER_PARAM_TOKEN * params * tokens)


def frames_decoded_per_frame(read: ArrayLike, stored: ArrayLike, gop: ArrayLike) -> ArrayLike:
    """Frames decoded for each frame used, g.

    Parameters
    ----------
    read : array_like of str
        ``"order"`` or ``"random"``.
    stored : array_like of str
        ``"video"``, ``"decoded"`` or ``"rendered"``; only video is decoded.
    gop : array_like
        Frames between keyframes, G [frames].

    Returns
    -------
    array_like
        g [1]: 1 in order, ``(G + 1) / 2`` for random frames of stored video (seed §3).
    """
    random_video = (np.asarray(read) == "random") & (np.asarray(stored) == "video")
    g = np.where(random_video, (np.asarray(gop, dtype=float) + 1.0) / 2.0, 1.0)
    return _like(g, read, stored, gop)


def decoder_fps(width: ArrayLike, height: ArrayLike, fps_1080p: ArrayLike) -> ArrayLike:
    """Frames per second one decoder (a core or an NVDEC engine) decodes at this size.

    Parameters
    ----------
    width, height : array_like
        Frame size [px].
    fps_1080p : array_like
        The decoder's rate on 1920 × 1080 frames [frames/s].

    Returns
    -------
    array_like
        Rate [frames/s], ``fps_1080p · 1920·1080 / (W·H)``: decoding cost is proportional to
        pixels (seed §3).
    """
    return fps_1080p * PIXELS_1080P / (width * height)


def decode_supply_fps(
    cores: ArrayLike,
    core_fps: ArrayLike,
    engines: ArrayLike,
    engine_fps: ArrayLike,
    g: ArrayLike,
    stored: ArrayLike,
) -> ArrayLike:
    """Frames per second the decoders deliver, ``(c · core_fps + e · engine_fps) / g``.

    Parameters
    ----------
    cores : array_like
        CPU cores decoding for one accelerator [1].
    core_fps : array_like
        One core's rate at this frame size [frames/s].
    engines : array_like
        NVDEC engines used (0 when NVDEC is off) [1].
    engine_fps : array_like
        One engine's rate at this frame size [frames/s].
    g : array_like
        Frames decoded per frame used [1].
    stored : array_like of str
        Decoded and rendered frames need no decoding: infinite supply.

    Returns
    -------
    array_like
        Decode supply [frames/s].
    """
    rate = (cores * core_fps + engines * engine_fps) / g
    out = np.where(np.asarray(stored) == "video", rate, np.inf)
    return _like(out, cores, core_fps, engines, engine_fps, g, stored)


def bytes_per_frame_read(
    width: ArrayLike,
    height: ArrayLike,
    bits_per_pixel: ArrayLike,
    g: ArrayLike,
    stored: ArrayLike,
    decoded_bytes_per_pixel: ArrayLike = 1.5,
    extra_bytes_per_frame: ArrayLike = 0.0,
) -> ArrayLike:
    """Bytes the read stage moves for each frame used.

    Parameters
    ----------
    width, height : array_like
        Frame size [px].
    bits_per_pixel : array_like
        Encoded stream rate [bit/px].
    g : array_like
        Frames decoded per frame used [1]: random reads fetch the whole run from the keyframe.
    stored : array_like of str
        ``"video"`` reads the encoded stream, ``"decoded"`` raw frames, ``"rendered"`` nothing.
    decoded_bytes_per_pixel : array_like, default 1.5
        Size of a decoded pixel [B/px] (YUV 4:2:0).
    extra_bytes_per_frame : array_like, default 0
        Non-video channels read alongside each frame [B].

    Returns
    -------
    array_like
        Bytes per frame read [B]: 33,333 for 1080p at 8 Mbit/s and 30 fps (seed §3).
    """
    pixels = width * height
    encoded = g * pixels * bits_per_pixel / 8.0 + extra_bytes_per_frame
    decoded = decoded_bytes_per_pixel * pixels + extra_bytes_per_frame
    stored_arr = np.asarray(stored)
    out = np.where(stored_arr == "video", encoded, np.where(stored_arr == "decoded", decoded, 0.0))
    return _like(out, width, height, bits_per_pixel, g, stored)


def read_supply_fps(link_bytes_per_s: ArrayLike, bytes_per_frame: ArrayLike) -> ArrayLike:
    """Frames per second the storage link delivers; infinite when nothing is read.

    Parameters
    ----------
    link_bytes_per_s : array_like
        Read bandwidth per accelerator [B/s].
    bytes_per_frame : array_like
        Bytes read per frame used [B].

    Returns
    -------
    array_like
        Read supply [frames/s].
    """
    bpf = np.asarray(bytes_per_frame, dtype=float)
    with np.errstate(divide="ignore"):
        out = np.where(bpf > 0, np.asarray(link_bytes_per_s, dtype=float) / np.where(bpf > 0, bpf, 1.0), np.inf)
    return _like(out, link_bytes_per_s, bytes_per_frame)


def supply_fps(read_fps: ArrayLike, decode_fps: ArrayLike) -> ArrayLike:
    """Supply of the slowest stage before the accelerator, ``min(read, decode)`` [frames/s]."""
    return _like(np.minimum(read_fps, decode_fps), read_fps, decode_fps)


def busy(supply: ArrayLike, demand: ArrayLike) -> ArrayLike:
    """Busy fraction of the accelerator, ``min(1, S / D)`` [1]."""
    return _like(np.minimum(1.0, np.asarray(supply, dtype=float) / demand), supply, demand)


def binding_stage_code(demand: ArrayLike, read_fps: ArrayLike, decode_fps: ArrayLike) -> np.ndarray:
    """The binding stage as an index into :data:`STAGES` (0 accelerator, 1 read, 2 decode)."""
    read, decode = np.asarray(read_fps), np.asarray(decode_fps)
    return np.where(np.minimum(read, decode) >= np.asarray(demand), 0, np.where(read <= decode, 1, 2))


def binding_stage(demand: ArrayLike, read_fps: ArrayLike, decode_fps: ArrayLike) -> ArrayLike:
    """The stage that sets the pace: ``"accelerator"`` if ``S ≥ D``, else the slower of read
    and decode (read on a tie).

    Returns
    -------
    array_like of str
    """
    out = np.asarray(STAGES)[binding_stage_code(demand, read_fps, decode_fps)]
    return _like(out, demand, read_fps, decode_fps)


def cores_needed(demand: ArrayLike, g: ArrayLike, core_fps: ArrayLike, stored: ArrayLike) -> ArrayLike:
    """Cores that keep one accelerator at full speed, by Little's law.

    Parameters
    ----------
    demand : array_like
        D [frames/s], the arrival rate at the decoders.
    g : array_like
        Frames decoded per frame used [1].
    core_fps : array_like
        One core's rate at this frame size [frames/s]; a frame stays ``g / core_fps`` s.
    stored : array_like of str
        Only stored video needs decoders; the others need 0.

    Returns
    -------
    array_like
        ``L = λ τ = D · g / core_fps`` [cores]: 23.1 at the seed's defaults (seed §3).
    """
    need = demand * g / core_fps
    return _like(np.where(np.asarray(stored) == "video", need, 0.0), demand, g, core_fps, stored)


def pixels_per_token(g: ArrayLike, width: ArrayLike, height: ArrayLike, tokens: ArrayLike) -> ArrayLike:
    """Pixels decoded per token kept, ``π = g W H / n`` [px/token] (seed §3): 8,100 at 1080p."""
    return g * width * height / tokens


def stall_threshold_params(mfu: ArrayLike, peak_flops: ArrayLike, tokens: ArrayLike, supply: ArrayLike) -> ArrayLike:
    """Parameters of the smallest model the pipeline still feeds at full speed.

    A model of fewer parameters wants more frames than ``supply`` gives and stalls.

    Returns
    -------
    array_like
        ``P* = μ Φ / (6 n S)`` [parameters]: 268 M at 1080p in order with 8 cores (seed §3).
    """
    return mfu * peak_flops / (FLOPS_PER_PARAM_TOKEN * tokens * supply)


#: Columns :func:`evaluate` reads, with their units.
CONFIG_COLUMNS = {
    "width": "px",
    "height": "px",
    "bits_per_pixel": "bit/px",
    "extra_bytes_per_frame": "B",
    "stored": "video | decoded | rendered",
    "read": "order | random",
    "params": "parameters",
    "input_side": "px",
    "patch": "px",
    "mfu": "1",
    "peak_flops": "FLOP/s",
    "cores": "cores per accelerator",
    "nvdec_engines": "engines used (0 = off)",
    "core_fps_1080p": "frames/s",
    "nvdec_fps_1080p": "frames/s",
    "link_bytes_per_s": "B/s",
    "gop": "frames",
    "decoded_bytes_per_pixel": "B/px",
}

#: Columns :func:`evaluate` adds, with their units.
RESULT_COLUMNS = {
    "tokens_per_frame": "tokens",
    "demand_fps": "frames/s",
    "g": "frames decoded per frame used",
    "core_fps": "frames/s per core",
    "bytes_per_frame": "B",
    "read_fps": "frames/s",
    "decode_fps": "frames/s",
    "supply_fps": "frames/s",
    "busy": "1",
    "stage": "accelerator | read | decode",
    "cores_needed": "cores",
    "pixels_per_token": "px/token",
}


def evaluate(config: pd.DataFrame) -> pd.DataFrame:
    """Evaluate the pipeline for every row of a table of configurations.

    Parameters
    ----------
    config : pandas.DataFrame
        One row per configuration with the columns of :data:`CONFIG_COLUMNS`.

    Returns
    -------
    pandas.DataFrame
        The same rows with the columns of :data:`RESULT_COLUMNS` added.

    Raises
    ------
    InputError
        If a column is missing.
    """
    missing = [c for c in CONFIG_COLUMNS if c not in config.columns]
    if missing:
        raise InputError(
            f"config is missing column(s) {', '.join(missing)}: evaluate needs {', '.join(CONFIG_COLUMNS)}"
        )
    c = {name: config[name].to_numpy() for name in CONFIG_COLUMNS}  # numpy once: no pandas in the arithmetic
    n = tokens_per_frame(c["input_side"], c["patch"])
    demand = demand_fps(c["mfu"], c["peak_flops"], c["params"], n)
    g = frames_decoded_per_frame(c["read"], c["stored"], c["gop"])
    core = decoder_fps(c["width"], c["height"], c["core_fps_1080p"])
    engine = decoder_fps(c["width"], c["height"], c["nvdec_fps_1080p"])
    decode = decode_supply_fps(c["cores"], core, c["nvdec_engines"], engine, g, c["stored"])
    bpf = bytes_per_frame_read(
        c["width"],
        c["height"],
        c["bits_per_pixel"],
        g,
        c["stored"],
        c["decoded_bytes_per_pixel"],
        c["extra_bytes_per_frame"],
    )
    read = read_supply_fps(c["link_bytes_per_s"], bpf)
    supply = supply_fps(read, decode)
    out = config.copy(deep=False)  # copy-on-write: the caller's table is never changed
    out["tokens_per_frame"] = n
    out["demand_fps"] = demand
    out["g"] = g
    out["core_fps"] = core
    out["bytes_per_frame"] = bpf
    out["read_fps"] = read
    out["decode_fps"] = decode
    out["supply_fps"] = supply
    out["busy"] = busy(supply, demand)
    out["stage"] = pd.Categorical.from_codes(binding_stage_code(demand, read, decode), categories=STAGES)
    out["cores_needed"] = cores_needed(demand, g, core, c["stored"])
    out["pixels_per_token"] = pixels_per_token(g, c["width"], c["height"], n)
    return out
