"""Pipeline and bill: one vectorised call on N configurations against a plain-Python loop.

    python benchmarks/pipeline_vectorised.py [--rows 1000000] [--repeat 5]

The loop is what a capable user would write instead: the same formulas in plain Python floats,
one row at a time, over the same rows (the records are made once, outside the timing). The two
are interleaved and repeated; prints the median ratio with its min–max.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import pandas as pd
from timing import interleaved, machine, ratio

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


def plain_loop(records: list[dict]) -> list[float]:
    """What a capable user would write instead: the same formulas in plain Python, row by row.

    It repeats the pipeline's and the bill's arithmetic on purpose (seed §1–§3): it is the
    baseline the vectorised call is measured against, and its results are checked against it.
    """
    out = []
    px_1080p = 1920 * 1080
    for c in records:
        tokens = (c["input_side"] // c["patch"]) ** 2
        demand = c["mfu"] * c["peak_flops"] / (6 * c["params"] * tokens)
        video = c["stored"] == "video"
        g = (c["gop"] + 1) / 2 if (c["read"] == "random" and video) else 1.0
        pixels = c["width"] * c["height"]
        core = c["core_fps_1080p"] * px_1080p / pixels
        engine = c["nvdec_fps_1080p"] * px_1080p / pixels
        decode = (c["cores"] * core + c["nvdec_engines"] * engine) / g if video else math.inf
        if video:
            per_frame = g * pixels * c["bits_per_pixel"] / 8 + c["extra_bytes_per_frame"]
        elif c["stored"] == "decoded":
            per_frame = c["decoded_bytes_per_pixel"] * pixels + c["extra_bytes_per_frame"]
        else:
            per_frame = 0.0
        read = c["link_bytes_per_s"] / per_frame if per_frame > 0 else math.inf
        supply = min(read, decode)
        frames = c["cameras"] * c["fps"] * 3600
        wall = frames / min(demand, supply)
        useful = frames / demand
        if video:
            gb = (frames * pixels * c["bits_per_pixel"] / 8 + c["extra_bytes_per_s"] * 3600) / 1e9
        elif c["stored"] == "decoded":
            gb = (frames * pixels * c["decoded_bytes_per_pixel"] + c["extra_bytes_per_s"] * 3600) / 1e9
        else:
            gb = 0.0
        cores = 0.0 if c["stored"] == "rendered" else c["cores"] * wall * c["epochs"] / 3600 * c["core_usd_per_hour"]
        idle = (wall - useful) * c["epochs"] / 3600 * c["accelerator_usd_per_hour"]
        out.append(gb * c["byte_usd_per_gb"] + cores + idle)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    table = random_configs(args.rows)
    records = table.to_dict("records")
    out: dict[str, object] = {}
    t = interleaved(
        {
            "vectorised": lambda: out.__setitem__("vectorised", vectorised(table)),
            "loop": lambda: out.__setitem__("loop", plain_loop(records)),
        },
        args.repeat,
    )
    vec = out["vectorised"]["bill_usd"].to_numpy()  # type: ignore[index]
    agree = np.allclose(out["loop"], vec, rtol=1e-9)
    print(machine())
    print(f"{args.rows:,} configurations, pipeline and bill; the two agree to 1e-9: {agree}")
    print(ratio("plain-Python loop / pipeline.evaluate + bill.evaluate", t["loop"], t["vectorised"], "≥ 20x"))


if __name__ == "__main__":
    main()
