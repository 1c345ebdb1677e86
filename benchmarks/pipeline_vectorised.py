"""Pipeline and bill: one vectorised call on N configurations against a per-row Python loop.

    python benchmarks/pipeline_vectorised.py [--rows 1000000] [--loop-rows 20000]

Prints the rows per second of each and their ratio. The loop calls the same pure formulas with
scalars, one row at a time, on a sample of the table.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from procure import bill, pipeline


def random_configs(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "width": rng.integers(320, 3841, n),
            "height": rng.integers(240, 2161, n),
            "bits_per_pixel": rng.uniform(0.05, 0.5, n),
            "extra_bytes_per_frame": rng.uniform(0, 1000, n),
            "stored": rng.choice(pipeline.STORED_MODES, n),
            "read": rng.choice(pipeline.READ_MODES, n),
            "params": rng.uniform(1e7, 1e10, n),
            "input_side": rng.choice([112, 224, 384], n),
            "patch": 14,
            "mfu": rng.uniform(0.2, 0.6, n),
            "peak_flops": rng.choice([312e12, 989.5e12], n),
            "cores": rng.integers(1, 65, n),
            "nvdec_engines": rng.choice([0, 5, 7], n),
            "core_fps_1080p": 120.0,
            "nvdec_fps_1080p": 771.0,
            "link_bytes_per_s": 1.5e9,
            "gop": 30,
            "decoded_bytes_per_pixel": 1.5,
            "cameras": rng.integers(1, 7, n),
            "fps": rng.choice([15, 30, 60], n),
            "extra_bytes_per_s": 0.0,
            "epochs": 10,
            "accelerator_usd_per_hour": 2.5,
            "core_usd_per_hour": 0.04,
            "byte_usd_per_gb": 0.44,
        }
    )


def vectorised(table: pd.DataFrame) -> pd.DataFrame:
    return bill.evaluate(pipeline.evaluate(table))


def loop(records: list[dict]) -> list[float]:
    """The same formulas, scalar by scalar, one row at a time."""
    out = []
    for c in records:
        n = pipeline.tokens_per_frame(c["input_side"], c["patch"])
        d = pipeline.demand_fps(c["mfu"], c["peak_flops"], c["params"], n)
        g = pipeline.frames_decoded_per_frame(c["read"], c["stored"], c["gop"])
        core = pipeline.decoder_fps(c["width"], c["height"], c["core_fps_1080p"])
        eng = pipeline.decoder_fps(c["width"], c["height"], c["nvdec_fps_1080p"])
        dec = pipeline.decode_supply_fps(c["cores"], core, c["nvdec_engines"], eng, g, c["stored"])
        bpf = pipeline.bytes_per_frame_read(
            c["width"],
            c["height"],
            c["bits_per_pixel"],
            g,
            c["stored"],
            c["decoded_bytes_per_pixel"],
            c["extra_bytes_per_frame"],
        )
        rd = pipeline.read_supply_fps(c["link_bytes_per_s"], bpf)
        s = pipeline.supply_fps(rd, dec)
        pipeline.busy(s, d)
        pipeline.binding_stage(d, rd, dec)
        pipeline.cores_needed(d, g, core, c["stored"])
        pipeline.pixels_per_token(g, c["width"], c["height"], n)
        frames = bill.frames_per_hour(c["cameras"], c["fps"])
        wall = bill.wall_seconds(frames, d, s)
        useful = bill.useful_seconds(frames, d)
        gb = bill.gb_stored_per_hour(
            frames,
            c["width"],
            c["height"],
            c["bits_per_pixel"],
            c["stored"],
            c["extra_bytes_per_s"],
            c["decoded_bytes_per_pixel"],
        )
        total = (
            bill.bytes_usd(gb, c["byte_usd_per_gb"])
            + bill.cores_usd(c["cores"], wall, c["epochs"], c["core_usd_per_hour"], c["stored"])
            + bill.idle_usd(wall, useful, c["epochs"], c["accelerator_usd_per_hour"])
        )
        out.append(float(total))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--loop-rows", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    table = random_configs(args.rows)
    vec_times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        result = vectorised(table)
        vec_times.append(time.perf_counter() - t0)
    vec = min(vec_times)

    sample = table.iloc[: args.loop_rows].to_dict("records")
    t0 = time.perf_counter()
    looped = loop(sample)
    loop_s = time.perf_counter() - t0
    assert np.allclose(looped, result["bill_usd"].to_numpy()[: args.loop_rows], rtol=1e-12)

    vec_rate, loop_rate = args.rows / vec, args.loop_rows / loop_s
    print(f"vectorised: {args.rows:,} rows in {vec:.3f} s (best of {args.repeat}) = {vec_rate:,.0f} rows/s")
    print(f"loop:       {args.loop_rows:,} rows in {loop_s:.3f} s = {loop_rate:,.0f} rows/s")
    print(f"ratio:      {vec_rate / loop_rate:,.0f}x")


if __name__ == "__main__":
    main()
