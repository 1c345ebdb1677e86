"""The transport bill of one recorded hour (seed §3, §5, §6).

Pure, vectorised functions, like :mod:`procure.pipeline`. Every term is linear in the hours
moved, so the bill of one recorded hour is a price per hour (seed §6, "a fixed share").

A recorded hour of ``cameras`` streams at ``fps`` is ``frames = cameras · fps · 3600`` frames.
Over ``E`` epochs it occupies an accelerator ``E · frames / min(D, S)`` seconds, of which
``E · frames / D`` train; the rest is the stall.

=========== ================================================================
term        formula
=========== ================================================================
bytes       GB stored × byte price [$/GB]
cores       cores × wall s × E / 3600 × core price [$/core-hour]
idle        (wall − useful) s × E / 3600 × accelerator price [$/accelerator-hour]
=========== ================================================================
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..arrays import ArrayLike
from ..arrays import like as _like
from ..errors import InputError
from .formulas import PIXELS_1080P

#: Seconds in an hour [s/h]; a unit conversion.
SECONDS_PER_HOUR = 3600.0
#: Bytes in a gigabyte [B/GB] (decimal, as storage is billed).
BYTES_PER_GB = 1e9


def frames_per_hour(cameras: ArrayLike, fps: ArrayLike) -> ArrayLike:
    """Frames in one recorded hour, ``cameras · fps · 3600`` [frames]: 324,000 for 3 × 30 fps."""
    return cameras * fps * SECONDS_PER_HOUR


def gb_stored_per_hour(
    frames: ArrayLike,
    width: ArrayLike,
    height: ArrayLike,
    bits_per_pixel: ArrayLike,
    stored: ArrayLike,
    extra_bytes_per_s: ArrayLike = 0.0,
    decoded_bytes_per_pixel: ArrayLike = 1.5,
) -> ArrayLike:
    """Gigabytes one recorded hour occupies on disk.

    Parameters
    ----------
    frames : array_like
        Frames per recorded hour [frames].
    width, height : array_like
        Frame size [px].
    bits_per_pixel : array_like
        Encoded stream rate [bit/px].
    stored : array_like of str
        ``"video"`` (encoded), ``"decoded"`` (raw frames) or ``"rendered"`` (nothing stored).
    extra_bytes_per_s : array_like, default 0
        Non-video channels [B/s of recording].
    decoded_bytes_per_pixel : array_like, default 1.5
        Size of a decoded pixel [B/px].

    Returns
    -------
    array_like
        [GB]: 10.8 for three 1080p30 cameras at 8 Mbit/s, 1,008 decoded (seed §1).
    """
    pixels = frames * width * height
    extra = extra_bytes_per_s * SECONDS_PER_HOUR
    encoded = pixels * bits_per_pixel / 8.0 + extra
    decoded = pixels * decoded_bytes_per_pixel + extra
    s = np.asarray(stored)
    out = np.where(s == "video", encoded, np.where(s == "decoded", decoded, 0.0)) / BYTES_PER_GB
    return _like(out, frames, width, height, bits_per_pixel, stored)


def gb_decoded_per_hour(
    frames: ArrayLike, width: ArrayLike, height: ArrayLike, decoded_bytes_per_pixel: ArrayLike = 1.5
) -> ArrayLike:
    """Gigabytes of decoded pixels in one recorded hour [GB]: 1,008 at the defaults (seed §1)."""
    return frames * width * height * decoded_bytes_per_pixel / BYTES_PER_GB


def wall_seconds(frames: ArrayLike, demand: ArrayLike, supply: ArrayLike) -> ArrayLike:
    """Accelerator seconds one epoch over the hour takes, stalls included, ``frames / min(D, S)``."""
    return _like(frames / np.minimum(demand, supply), frames, demand, supply)


def useful_seconds(frames: ArrayLike, demand: ArrayLike) -> ArrayLike:
    """Accelerator seconds one epoch over the hour trains, ``frames / D``: 116.9 s (seed §1)."""
    return frames / demand


def bytes_usd(gb: ArrayLike, byte_usd_per_gb: ArrayLike) -> ArrayLike:
    """Dollars of bytes, ``GB × byte price`` [$]: $4.75 for 10.8 GB at $0.44/GB."""
    return gb * byte_usd_per_gb


def cores_usd(
    cores: ArrayLike,
    wall: ArrayLike,
    epochs: ArrayLike,
    core_usd_per_hour: ArrayLike,
    stored: ArrayLike,
) -> ArrayLike:
    """Dollars of the decode cores held while the hour is trained on [$].

    ``cores × wall × E / 3600 × core price``; cores are held whether they decode or wait, and
    a rendered hour holds none (it is made in the loop). $0.30 at the defaults (seed §3).
    """
    cost = cores * wall * epochs / SECONDS_PER_HOUR * core_usd_per_hour
    out = np.where(np.asarray(stored) == "rendered", 0.0, cost)
    return _like(out, cores, wall, epochs, core_usd_per_hour, stored)


def idle_usd(wall: ArrayLike, useful: ArrayLike, epochs: ArrayLike, accelerator_usd_per_hour: ArrayLike) -> ArrayLike:
    """Dollars of accelerator time spent waiting, ``(wall − useful) × E / 3600 × price`` [$]."""
    return (wall - useful) * epochs / SECONDS_PER_HOUR * accelerator_usd_per_hour


def accelerator_hours(wall: ArrayLike, epochs: ArrayLike) -> ArrayLike:
    """Accelerator-hours one recorded hour takes over E epochs, stalls included [h]."""
    return wall * epochs / SECONDS_PER_HOUR


def core_hours(
    frames: ArrayLike,
    g: ArrayLike,
    width: ArrayLike,
    height: ArrayLike,
    core_fps_1080p: ArrayLike,
    epochs: ArrayLike,
    stored: ArrayLike,
) -> ArrayLike:
    """Core-hours of decoding one recorded hour takes over E epochs [core-h].

    ``E · frames · g · W·H / (core_fps_1080p · 1920·1080) / 3600``; 0 for frames stored decoded
    or rendered. 7.5 core-hours for the seed's own hour.
    """
    work = epochs * frames * g * width * height / (core_fps_1080p * PIXELS_1080P) / SECONDS_PER_HOUR
    return _like(np.where(np.asarray(stored) == "video", work, 0.0), frames, g, width, height, stored)


def share_of_price(bill: ArrayLike, price: ArrayLike) -> ArrayLike:
    """Transport bill as a share of the purchase price, ``t / p`` [1]; NaN for a free hour."""
    p = np.asarray(price, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(p > 0, np.asarray(bill, dtype=float) / np.where(p > 0, p, 1.0), np.nan)
    return _like(out, bill, price)


def split(bytes_: ArrayLike, cores: ArrayLike, idle: ArrayLike) -> tuple[ArrayLike, ArrayLike, ArrayLike]:
    """Shares of the bill taken by bytes, cores and the stall [1]: 72 %, 5 %, 23 % (seed §6)."""
    total = bytes_ + cores + idle
    with np.errstate(divide="ignore", invalid="ignore"):
        return bytes_ / total, cores / total, idle / total


def epoch_hours(hours: ArrayLike, accelerators: ArrayLike, wall: ArrayLike) -> ArrayLike:
    """Wall-clock hours of one epoch over ``hours`` recorded hours on ``accelerators`` [h].

    ``hours · wall / accelerators / 3600``: 11.7 h for 1,000 hours on 8 H100 at 8 cores,
    4.1 h at 24 cores (seed §5).
    """
    return hours * wall / accelerators / SECONDS_PER_HOUR


def predecode_break_even(
    gb_encoded: ArrayLike,
    gb_decoded: ArrayLike,
    storage_usd_per_gb_month: ArrayLike,
    decode_usd_per_epoch: ArrayLike,
) -> ArrayLike:
    """Epochs a month above which storing decoded frames pays for itself [epochs/month].

    The extra storage, ``(GB decoded − GB encoded) × storage price``, against the decoding it
    saves each epoch: 665 epochs a month at the defaults (seed §5).
    """
    return (gb_decoded - gb_encoded) * storage_usd_per_gb_month / decode_usd_per_epoch


def budget_split(budget: ArrayLike, price: ArrayLike, bill: ArrayLike) -> tuple[ArrayLike, ArrayLike]:
    """Hours a budget buys at a price, and what moving them costs.

    Returns
    -------
    hours : array_like
        ``B / p`` [h].
    moving : array_like
        ``(B / p) · t`` [$]; ``t / p`` of the budget whatever B is (seed §6).
    """
    hours = budget / price
    return hours, hours * bill


#: Columns :func:`evaluate` reads beyond the pipeline's result columns.
BILL_COLUMNS = {
    "cameras": "count",
    "fps": "1/s",
    "extra_bytes_per_s": "B/s",
    "epochs": "1",
    "accelerator_usd_per_hour": "$/accelerator-hour",
    "core_usd_per_hour": "$/core-hour",
    "byte_usd_per_gb": "$/GB",
}


#: Columns of the pipeline's table (its configuration and results) the bill reads.
_FROM_PIPELINE = (
    "width", "height", "bits_per_pixel", "stored", "decoded_bytes_per_pixel", "cores", "g", "core_fps_1080p",
    "demand_fps", "supply_fps",
)  # fmt: skip


def evaluate(frame: pd.DataFrame) -> pd.DataFrame:
    """Add the bill of one recorded hour to a table already evaluated by the pipeline.

    Parameters
    ----------
    frame : pandas.DataFrame
        Output of :func:`procure.pipeline.evaluate` with the columns of :data:`BILL_COLUMNS`.

    Returns
    -------
    pandas.DataFrame
        The same rows with ``frames_per_hour`` [frames], ``gb_per_hour`` and
        ``gb_decoded_per_hour`` [GB], ``wall_seconds`` and ``useful_seconds`` [s per epoch],
        ``bytes_usd``, ``cores_usd``, ``idle_usd``, ``bill_usd`` [$ per recorded hour],
        ``accelerator_hours`` and ``core_hours`` [h per recorded hour over all epochs].
    """
    missing = [c for c in (*BILL_COLUMNS, *_FROM_PIPELINE) if c not in frame.columns]
    if missing:
        raise InputError(f"bill table is missing column(s) {', '.join(missing)}")
    c = {name: frame[name].to_numpy() for name in (*BILL_COLUMNS, *_FROM_PIPELINE)}  # numpy once
    frames = frames_per_hour(c["cameras"], c["fps"])
    wall = wall_seconds(frames, c["demand_fps"], c["supply_fps"])
    useful = useful_seconds(frames, c["demand_fps"])
    gb = gb_stored_per_hour(frames, c["width"], c["height"], c["bits_per_pixel"], c["stored"],
                            c["extra_bytes_per_s"], c["decoded_bytes_per_pixel"])  # fmt: skip
    bytes_ = bytes_usd(gb, c["byte_usd_per_gb"])
    cores = cores_usd(c["cores"], wall, c["epochs"], c["core_usd_per_hour"], c["stored"])
    idle = idle_usd(wall, useful, c["epochs"], c["accelerator_usd_per_hour"])
    f = frame.copy(deep=False)  # copy-on-write: the caller's table is never changed
    f["frames_per_hour"] = frames
    f["gb_per_hour"] = gb
    f["gb_decoded_per_hour"] = gb_decoded_per_hour(frames, c["width"], c["height"], c["decoded_bytes_per_pixel"])
    f["wall_seconds"] = wall
    f["useful_seconds"] = useful
    f["bytes_usd"] = bytes_
    f["cores_usd"] = cores
    f["idle_usd"] = idle
    f["bill_usd"] = bytes_ + cores + idle
    f["accelerator_hours"] = accelerator_hours(wall, c["epochs"])
    f["core_hours"] = core_hours(frames, c["g"], c["width"], c["height"], c["core_fps_1080p"], c["epochs"], c["stored"])
    return f


def at_byte_price_x(bytes_usd_: ArrayLike, cores_usd_: ArrayLike, idle_usd_: ArrayLike,
                    multiplier: ArrayLike) -> tuple[ArrayLike, ArrayLike]:  # fmt: skip
    """The bytes term and the bill of an hour with the byte price multiplied by ``multiplier``
    [$ per recorded hour]: the bytes term scales, the cores and idle terms do not (seed §6).

    The one route by which a byte-price multiplier reaches a price: a problem repriced
    (:meth:`procure.program.numbers.problem.Problem.with_byte_price_x`) and each purchase option
    of the infrastructure (:func:`procure.program.numbers.infrastructure.infrastructure`).
    """
    scaled = multiplier * bytes_usd_
    return scaled, scaled + cores_usd_ + idle_usd_


def reformat_core_hours(
    frames: ArrayLike,
    width: ArrayLike,
    height: ArrayLike,
    core_fps_1080p: ArrayLike,
    new_width: ArrayLike,
    new_height: ArrayLike,
    encode_fps_1080p: ArrayLike,
) -> ArrayLike:
    """Core-hours of keeping one recorded hour in another format, once [core-h].

    Decoding the recorded stream, ``frames · W·H / (core_fps_1080p · 1920·1080) / 3600``, plus
    encoding the new one at ``W'·H'`` (0 when it is stored decoded: ``encode_fps_1080p`` inf),
    ``frames · W'·H' / (encode_fps_1080p · 1920·1080) / 3600``. Both rates are one core's at
    1080p, scaled by pixels as decoding is (:func:`core_hours`).
    """
    decode = frames * width * height / (core_fps_1080p * PIXELS_1080P)
    encode = frames * new_width * new_height / (encode_fps_1080p * PIXELS_1080P)
    return (decode + encode) / SECONDS_PER_HOUR
