"""The queue simulation: frames per second of procure.pipeline.queue against the SimPy model.

    python benchmarks/simulate_queue.py [--frames 1000000] [--simpy-frames 100000]

Both run the seed's default state (3 × 1080p30, 93 M model, H100, 8 cores, buffer 64).
Prints each one's frames per second, their ratio, and both busy fractions.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from simpy_queue import simpy_queue

from procure import load_ledger, variant
from procure.pipeline.queue import decoders_of, simulate_queue


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=1_000_000)
    parser.add_argument("--simpy-frames", type=int, default=100_000)
    args = parser.parse_args()

    row, _ = variant(load_ledger())
    rates, kinds = decoders_of(row)

    t0 = time.perf_counter()
    ours = simulate_queue(row["demand_fps"], row["read_fps"], rates, decoder_kinds=kinds, frames=args.frames)
    ours_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    busy, _ = simpy_queue(row["demand_fps"], row["read_fps"], rates, 64, args.simpy_frames)
    simpy_s = time.perf_counter() - t0

    ours_rate, simpy_rate = args.frames / ours_s, args.simpy_frames / simpy_s
    print(
        f"procure.pipeline.queue: {args.frames:,} frames in {ours_s:.2f} s = "
        f"{ours_rate:,.0f} frames/s, busy {ours.busy:.4f}"
    )
    print(
        f"SimPy:            {args.simpy_frames:,} frames in {simpy_s:.2f} s = "
        f"{simpy_rate:,.0f} frames/s, busy {busy:.4f}"
    )
    print(f"closed form busy {row['busy']:.4f}; ratio {ours_rate / simpy_rate:.1f}x")


if __name__ == "__main__":
    main()
