"""The pipeline as a queue (seed §4): a simulation that checks the closed form.

The queue, per accelerator:

* **read** — the link streams frame ``i`` at ``a_i = i / R`` (R the read supply, frames/s);
* **decode** — ``m`` decoders (CPU cores and, with NVDEC, the accelerator's engines). A
  decoder that is free takes the next frame in order and decodes it for ``g / r_k`` seconds
  (``r_k`` its rate in frames/s at this size, ``g`` frames decoded per frame used), then holds
  it until there is room in the buffer;
* **buffer** — ``K`` frames; decoded frames enter as soon as there is room, those held the
  longest first;
* **accelerator** — takes the oldest frame in the buffer and trains on it for ``1 / D`` s;
  taking it frees its slot.

Frames enter the buffer in the order their decoding ends, so the run is a recurrence over
entries ``j = 0, 1, …`` in that order, driven by one heap of the decoders' finish times::

    f_(j) = the earliest finish among the decoders still decoding
    e_j   = max(f_(j), e_{j-1}, T_{j-K})     # enters; its decoder takes the next frame
    T_j   = max(e_j, T_{j-1} + x_{j-1})      # the accelerator takes it

and the decoder freed at ``e_j`` starts its next frame ``i`` at ``max(a_i, e_j)``. Frames
stored decoded or rendered skip the decoders (``f_i = a_i``). With ``decode_cv`` or
``train_cv`` > 0 the decode and train times are gamma-distributed with that coefficient of
variation and the same means; at 0 the queue is the seed's deterministic one.

The loop is plain Python over floats (a recurrence is sequential): about a microsecond a
frame (``benchmarks/simulate_queue.py``).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..defaults import DEFAULT_BUFFER, DEFAULT_FRAMES, DEFAULT_WARMUP
from ..errors import invalid

#: Overshoot of 1 in a busy fraction that is float rounding, not a fault [1].
ROUNDING = 1e-12
#: A busy fraction at least this close to 1 counts as the accelerator binding [1].
FULL_SPEED_TOLERANCE = 1e-3
#: Most frames one run simulates: it holds about 330 B a frame in memory (the timeline and the
#: per-frame times; 333 B measured by benchmarks/simulate_queue.py), so 3 million take about
#: 1 GB. The busy fraction settles within a few thousand frames; a longer run adds digits, not
#: accuracy [frames].
MAX_FRAMES = 3_000_000
#: Largest buffer [frames] and coefficient of variation [1] a run takes.
MAX_BUFFER = 1_000_000
MAX_CV = 10.0
#: Most decoders (cores and NVDEC engines) a run simulates.
MAX_DECODERS = 10_000
#: A run measures steady state when its window holds at least this many frames and this many
#: times the frames the buffer and the decoders hold [frames, 1].
STEADY_FRAMES = 1_000
STEADY_MULTIPLE = 20


@dataclass(frozen=True)
class SimulationResult:
    """What a run of the queue measured after its warm-up.

    Attributes
    ----------
    busy : float
        Share of the measured window the accelerator trains [1].
    throughput_fps : float
        Frames the accelerator took per second [frames/s].
    mean_buffer : float
        Time-averaged frames in the buffer [frames].
    decoder_utilisation : numpy.ndarray
        Share of the window each decoder spends decoding [1], cores first, then engines.
    stage : str
        The binding stage as the run sees it: ``"accelerator"`` when busy is within
        :data:`FULL_SPEED_TOLERANCE` of 1, else the busier of ``"read"`` and ``"decode"``.
    read_utilisation : float
        Throughput over the read rate [1] (0 when reading is unlimited).
    timeline : pandas.DataFrame
        One row per frame: ``frame``, ``read_s``, ``decoder`` (−1: none), ``decoder_kind``
        (``core``, ``nvdec`` or ``none``), ``decode_start_s``, ``decode_end_s``,
        ``buffer_in_s``, ``train_start_s``, ``train_end_s`` [s].
    window : tuple of float
        Start and end of the measured window [s]: the accelerator's take of the first frame
        after the warm-up to its take of frame ``frames − 1 − m`` (m decoders), in take order.
    frames, warmup_frames, buffer : int
        The run's size, frames left out, buffer capacity.
    note : str
        Empty, or why the run may not show the steady state (a window too short).
    """

    busy: float
    throughput_fps: float
    mean_buffer: float
    decoder_utilisation: np.ndarray
    stage: str
    read_utilisation: float
    timeline: pd.DataFrame
    window: tuple[float, float]
    frames: int
    warmup_frames: int
    buffer: int
    note: str = ""

    def buffer_level(self) -> pd.DataFrame:
        """The buffer's level after each change: columns ``time_s`` and ``frames``."""
        tl = self.timeline
        rank = np.empty(len(tl), dtype=np.int64)  # j, the frame's place in entry (= take) order
        rank[np.argsort(tl["train_start_s"].to_numpy(), kind="stable")] = np.arange(len(tl))
        times = np.concatenate([tl["buffer_in_s"].to_numpy(), tl["train_start_s"].to_numpy()])
        steps = np.concatenate([np.ones(len(tl)), -np.ones(len(tl))])
        # At one instant: entry j after the departure that freed its slot (frame j - K), and
        # before its own departure.
        seq = np.concatenate([2 * rank + 1, 2 * rank + 2])
        order = np.lexsort((seq, times))
        return pd.DataFrame({"time_s": times[order], "frames": np.cumsum(steps[order])})


def _gamma(rng: np.random.Generator, cv: float, n: int) -> np.ndarray:
    """``n`` factors of mean 1 and coefficient of variation ``cv`` (ones when cv = 0)."""
    if cv == 0:
        return np.ones(n)
    shape = 1.0 / cv**2
    return rng.gamma(shape, 1.0 / shape, n)


def _check(
    name: str,
    value: float,
    *,
    low: float = 0.0,
    allow_low: bool = False,
    whole: bool = False,
    high: float = math.inf,
    why: str = "",
) -> None:
    ok = isinstance(value, int | float | np.integer | np.floating) and not math.isnan(value)
    ok = ok and (value >= low if allow_low else value > low) and value <= high
    if ok and whole:
        ok = float(value).is_integer()
    if not ok:
        rel = "≥" if allow_low else ">"
        kind = "a whole number" if whole else "a number"
        top = f" and ≤ {high:,.0f}" if math.isfinite(high) else ""
        raise invalid(name, value, f"must be {kind} {rel} {low:g}{top}{why}")


def simulate_queue(
    demand_fps: float,
    read_fps: float,
    decoder_fps: np.ndarray | list[float],
    *,
    decoder_kinds: list[str] | None = None,
    buffer: int = DEFAULT_BUFFER,
    frames: int = DEFAULT_FRAMES,
    warmup: float = DEFAULT_WARMUP,
    decode_cv: float = 0.0,
    train_cv: float = 0.0,
    seed: int = 0,
) -> SimulationResult:
    """Run the queue of seed §4 for ``frames`` frames.

    Parameters
    ----------
    demand_fps : float
        D, frames per second the accelerator trains on [frames/s]; a frame takes 1 / D s.
    read_fps : float
        R, frames per second the read stage streams [frames/s]; ``inf`` for no limit.
    decoder_fps : array_like
        Each decoder's rate in frames used per second, ``rate / g`` [frames/s]. Empty when
        the frames need no decoding.
    decoder_kinds : list of str, optional
        A label per decoder for the timeline (``"core"``, ``"nvdec"``).
    buffer : int, default 64
        K, frames the buffer holds.
    frames : int, default 100,000
        Frames simulated.
    warmup : float, default 0.1
        Share of the frames before the measured window, in [0, 1).
    decode_cv, train_cv : float, default 0
        Coefficient of variation of decode and train times [1].
    seed : int, default 0
        Seed of the jitter's random numbers.

    Returns
    -------
    SimulationResult

    Raises
    ------
    InputError
        Naming the argument: a buffer below 1, frames below 1, a rate ≤ 0, a CV < 0, warm-up
        outside [0, 1).
    """
    _check("buffer", buffer, low=1, allow_low=True, whole=True, high=MAX_BUFFER)
    _check(
        "frames", frames, low=2, allow_low=True, whole=True, high=MAX_FRAMES,
        why=" (a run holds about 330 B a frame in memory; the busy fraction settles within a few thousand)",
    )  # fmt: skip
    _check("demand_fps", demand_fps, high=1e12)
    _check("read_fps", read_fps)
    rates = np.asarray(decoder_fps, dtype=float).ravel()
    if len(rates) > MAX_DECODERS:
        raise invalid("decoders", len(rates), f"a run simulates at most {MAX_DECODERS:,} cores and NVDEC engines")
    for k, r in enumerate(rates):
        _check(f"decoder_fps[{k}]", r)
    _check("decode_cv", decode_cv, allow_low=True, high=MAX_CV)
    _check("train_cv", train_cv, allow_low=True, high=MAX_CV)
    if not (0 <= warmup < 1):
        raise invalid("warmup", warmup, "must be a number ≥ 0 and < 1")
    n, size = int(frames), int(buffer)
    kinds = list(decoder_kinds) if decoder_kinds is not None else ["core"] * len(rates)

    rng = np.random.default_rng(seed)
    decode_work = _gamma(rng, decode_cv, n).tolist()  # × 1/r_k seconds
    train = (_gamma(rng, train_cv, n) / demand_fps).tolist()
    read_dt = 0.0 if math.isinf(read_fps) else 1.0 / read_fps
    inv = (1.0 / rates).tolist()
    m = len(inv)

    start = [0.0] * n
    end = [0.0] * n
    enter = [0.0] * n
    take = [0.0] * n
    who = [-1] * n
    taken: list[float] = []  # T_j, the accelerator's take times in entry order
    e_prev = 0.0
    acc_free = 0.0
    if m:
        # (finish, decoder, frame) of the frames being decoded; decoder k starts with frame k.
        decoding = []
        for k in range(min(m, n)):
            start[k] = k * read_dt
            decoding.append((start[k] + decode_work[k] * inv[k], k, k))
        heapq.heapify(decoding)
        following = min(m, n)
    for j in range(n):
        if m:
            fi, k, i = decoding[0]
        else:
            i = j
            fi = start[i] = i * read_dt
        end[i] = fi
        ei = fi if fi > e_prev else e_prev
        if j >= size:
            slot = taken[j - size]
            if slot > ei:
                ei = slot
        enter[i] = ei
        ti = ei if ei > acc_free else acc_free
        take[i] = ti
        taken.append(ti)
        acc_free = ti + train[i]
        e_prev = ei
        if m:
            who[i] = k
            if following < n:
                ai = following * read_dt
                si = ai if ai > ei else ei
                start[following] = si
                heapq.heapreplace(decoding, (si + decode_work[following] * inv[k], k, following))
                following += 1
            else:
                heapq.heappop(decoding)

    a = np.arange(n) * read_dt
    s, f, b, t = (np.asarray(v) for v in (start, end, enter, take))
    x = np.asarray(train)
    # The window: from the accelerator's take of frame w (after the warm-up) to its take of
    # frame n - 1 - m, in take order. The last m frames are left out: once no frame is left to
    # hand out, a slow decoder finishing the last one stretches the run (a list-scheduling
    # effect of the finite run, not of the steady state the closed form describes).
    order = np.argsort(t, kind="stable")  # frames in the order the accelerator took them
    ts, xs = t[order], x[order]
    w = min(int(warmup * n), n - 1)
    last = n - 1 - m
    if last > w:
        t0, t1 = float(ts[w]), float(ts[last])
        counted = slice(w, last)
    else:  # too few frames for a steady window: the whole run
        w, t0, t1 = 0, float(ts[0]), float(ts[-1] + xs[-1])
        counted = slice(0, n)
    span = t1 - t0
    busy = float(xs[counted].sum() / span)
    throughput = (counted.stop - counted.start) / span
    in_buffer = np.clip(np.minimum(t, t1) - np.maximum(b, t0), 0.0, None).sum() / span
    d = np.asarray(who)
    util = np.zeros(m)
    if m:
        overlap = np.clip(np.minimum(f, t1) - np.maximum(s, t0), 0.0, None)
        util = np.bincount(d, weights=overlap, minlength=m) / span
    read_util = 0.0 if math.isinf(read_fps) else throughput / read_fps
    if busy >= 1 - FULL_SPEED_TOLERANCE:
        stage = "accelerator"
    elif m and float(util.max()) >= read_util:
        stage = "decode"
    else:
        stage = "read"
    labels = np.array([*kinds, "none"], dtype=object)
    timeline = pd.DataFrame(
        {
            "frame": np.arange(n),
            "read_s": a,
            "decoder": d,
            "decoder_kind": labels[d],  # −1 picks "none"
            "decode_start_s": s,
            "decode_end_s": f,
            "buffer_in_s": b,
            "train_start_s": t,
            "train_end_s": t + x,
        }
    )
    return SimulationResult(
        busy=min(busy, 1.0) if busy - 1.0 < ROUNDING else busy,  # a sum of float times may overshoot 1
        throughput_fps=float(throughput),
        mean_buffer=float(in_buffer),
        decoder_utilisation=util,
        stage=stage,
        read_utilisation=float(read_util),
        timeline=timeline,
        window=(float(t0), float(t1)),
        frames=n,
        warmup_frames=w,
        buffer=size,
        note=_steady_note(n - w, size, m),
    )


def _steady_note(measured: int, buffer: int, decoders: int) -> str:
    """Why a window of ``measured`` frames may not show the steady state, or ``""``."""
    least = max(STEADY_FRAMES, STEADY_MULTIPLE * (buffer + decoders))
    if measured >= least:
        return ""
    return (
        f"the measured window holds {measured:,} frames, fewer than the {least:,} that steady state needs "
        f"here (at least {STEADY_FRAMES:,}, and {STEADY_MULTIPLE} times the buffer and the decoders): "
        "raise --frames"
    )


def decoders_of(row: pd.Series) -> tuple[list[float], list[str]]:
    """Decoder rates [frames used/s] and kinds of one evaluated pipeline row.

    ``cores`` CPU decoders of ``core_fps / g`` and ``nvdec_engines`` engines of
    ``nvdec_fps / g``; none when the frames are stored decoded or rendered.

    Raises
    ------
    InputError
        Cores that are not a whole number, or stored video with no decoder at all.
    """
    if row["stored"] != "video":
        return [], []
    cores, engines = row["cores"], row["nvdec_engines"]
    _check("cores", cores, allow_low=True, whole=True, high=MAX_DECODERS)
    if cores + engines == 0:
        raise invalid("cores", cores, "encoded frames need a decoder: give cores ≥ 1 or turn NVDEC on")
    g = row["g"]
    engine_fps = row["nvdec_fps_1080p"] * row["core_fps"] / row["core_fps_1080p"]
    rates = [row["core_fps"] / g] * int(cores) + [engine_fps / g] * int(engines)
    return rates, ["core"] * int(cores) + ["nvdec"] * int(engines)


def simulate(row: pd.Series, **options: object) -> SimulationResult:
    """Simulate the queue of one evaluated pipeline row (a row of :func:`procure.pipeline.evaluate`).

    ``options`` are those of :func:`simulate_queue` (buffer, frames, warmup, decode_cv,
    train_cv, seed).
    """
    rates, kinds = decoders_of(row)
    return simulate_queue(row["demand_fps"], row["read_fps"], rates, decoder_kinds=kinds, **options)  # type: ignore[arg-type]
