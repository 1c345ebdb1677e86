"""The queue simulation: frames per second of procure.pipeline.queue against the SimPy model.

    python benchmarks/simulate_queue.py [--frames 1000000] [--simpy-frames 100000]

Both run the seed's default state (3 × 1080p30, 93 M model, H100, 8 cores, buffer 64),
interleaved and repeated. Prints both busy fractions, the peak memory of a run (tracemalloc),
and the ratio of seconds per frame as a median with its min–max.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from simpy_queue import simpy_queue
from timing import interleaved, machine, ratio

from procure import load_ledger, variant
from procure.pipeline.queue import decoders_of, simulate_queue


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=1_000_000)
    parser.add_argument("--simpy-frames", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    row, _ = variant(load_ledger())
    rates, kinds = decoders_of(row)
    out: dict[str, object] = {}
    t = interleaved(
        {
            "procure": lambda: out.__setitem__(
                "procure",
                simulate_queue(row["demand_fps"], row["read_fps"], rates, decoder_kinds=kinds, frames=args.frames),
            ),
            "simpy": lambda: out.__setitem__(
                "simpy", simpy_queue(row["demand_fps"], row["read_fps"], rates, 64, args.simpy_frames)
            ),
        },
        args.repeat,
    )
    # Seconds per frame of each, so that the ratio compares rates.
    ours = [s / args.frames for s in t["procure"]]
    theirs = [s / args.simpy_frames for s in t["simpy"]]
    tracemalloc.start()
    simulate_queue(row["demand_fps"], row["read_fps"], rates, decoder_kinds=kinds, frames=args.frames)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(machine())
    print(
        f"busy: procure {out['procure'].busy:.4f}, SimPy {out['simpy'][0]:.4f}, closed form {row['busy']:.4f}"  # type: ignore[attr-defined,index]
    )
    print(f"procure: {args.frames:,} frames, median {statistics.median(t['procure']):.2f} s; "
          f"peak memory {peak / 1e6:,.0f} MB ({peak / args.frames:,.0f} B a frame)")  # fmt: skip
    print(ratio("SimPy / procure, seconds per frame", theirs, ours, "≥ 10x"))


if __name__ == "__main__":
    main()
