"""An independent model of the queue of seed §4, written with SimPy processes.

Used by the tests as an oracle for :mod:`procure.pipeline.queue` and by
``benchmarks/simulate_queue.py`` as the baseline. The semantics are those of the seed's
widget: a reader streams frames at the read rate; each decoder takes the next frame, decodes
it, and waits while the buffer is full (waiting decoders enter in the order they finished);
the accelerator takes a frame from the buffer and trains on it.
"""

from __future__ import annotations

import math

import simpy


def simpy_queue(demand, read_fps, rates, buffer, frames, warmup=0.1):
    """The queue of seed §4 as SimPy processes: a reader, decoders, a buffer, an accelerator.

    Returns (busy, throughput) measured, in take order, from the accelerator's take of frame
    ``warmup · frames`` to its take of frame ``frames − 1 − decoders``.
    """
    env = simpy.Environment()
    waiting = simpy.Store(env)  # read, not yet decoded
    buf = simpy.Store(env, capacity=buffer)
    takes, trains = [], []

    def reader():
        for i in range(frames):
            if not math.isinf(read_fps) and i > 0:
                yield env.timeout(1 / read_fps)
            yield waiting.put(i)

    def decoder(rate):
        while True:
            frame = yield waiting.get()
            yield env.timeout(1 / rate)
            yield buf.put(frame)  # held here while the buffer is full

    def passthrough():
        while True:
            frame = yield waiting.get()
            yield buf.put(frame)

    def accelerator():
        for _ in range(frames):
            yield buf.get()
            takes.append(env.now)
            yield env.timeout(1 / demand)
            trains.append(1 / demand)

    env.process(reader())
    for r in rates:
        env.process(decoder(r))
    if not rates:
        env.process(passthrough())
    done = env.process(accelerator())
    env.run(until=done)
    w, last = int(warmup * frames), frames - 1 - len(rates)  # the window of procure.pipeline.queue
    span = takes[last] - takes[w]
    return sum(trains[w:last]) / span, (last - w) / span
