"""How far past ``--time-limit`` the heaviest requests end, against the loading they start with.

    python benchmarks/time_limit.py [--repeat 5] [--limit 5]

Two requests that cannot be certified in the limit, each run as the ``procure`` command:

* 1,000 sources, about half of them S-shaped (hill, shape 1.5–3), at $200,000;
* 200 periods of a month, 50 scenarios drawn from the default ledger's ranges.

Each is timed from the command's start to its exit (the one line "out of time"), beside
``procure bill --json`` on the same ledger, which loads what the request loads and stops; the
limit allows 3 s past it, loading not counted (docs/ledger.md). Goal: each ends within
``limit + 3`` s (8 s at 5 s).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
from timing import machine

from procure.ledger import load_ledger
from procure.ledger.synthetic import random_ledger


def hill_ledger(folder: Path) -> Path:
    """1,000 random sources of the default ledger's kinds, half with an S-shaped hill curve."""
    ledger = random_ledger(1000, 7, curves=("hill", "log"))
    s = ledger.sources.copy()
    hill = s["curve"] == "hill"
    s.loc[hill, "curve_shape"] = np.random.default_rng(1).uniform(1.5, 3.0, int(hill.sum()))
    s["shelf_life_months"] = s["shelf_life_months"].where(np.isfinite(s["shelf_life_months"]), np.nan)
    folder.mkdir()
    s.to_csv(folder / "sources.csv", index=False)
    cluster = (Path(load_ledger().path) / "cluster.toml").read_text()
    (folder / "cluster.toml").write_text(cluster.replace("count = 8 ", "count = 80"))
    return folder


def periods_file(path: Path, count: int) -> Path:
    path.write_text("period,months,money_usd\n" + "".join(f"P{t:03d},1,500\n" for t in range(count)))
    return path


def seconds(argv: list[str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    out = subprocess.run(argv, capture_output=True, text=True, check=False)
    return time.perf_counter() - t0, out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "ok"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--limit", type=float, default=5.0)
    args = parser.parse_args()
    procure = shutil.which("procure") or "procure"
    limit = f"{args.limit:g}"
    print(machine())
    with tempfile.TemporaryDirectory() as tmp:
        hill = hill_ledger(Path(tmp) / "hill1000")
        periods = periods_file(Path(tmp) / "periods.csv", 200)
        requests = {
            "1,000 sources, half S-shaped": (
                [procure, "solve", "--ledger", str(hill), "--budget", "200000", "--time-limit", limit],
                [procure, "bill", "--ledger", str(hill), "--json"],
            ),
            "200 periods x 50 scenarios": (
                [procure, "solve", "--budget", "100000", "--periods", str(periods), "--samples", "50",
                 "--time-limit", limit],
                [procure, "bill", "--json"],
            ),
        }  # fmt: skip
        times: dict[str, list[float]] = {name: [] for name in requests}
        loads: dict[str, list[float]] = {name: [] for name in requests}
        said: dict[str, str] = {}
        for r in range(args.repeat):
            for name in requests if r % 2 == 0 else reversed(list(requests)):
                solve, load = requests[name]
                t, said[name] = seconds(solve)
                times[name].append(t)
                loads[name].append(seconds(load)[0])
        for name in requests:
            t, b = times[name], loads[name]
            print(
                f"{name}: --time-limit {limit}: median {statistics.median(t):.2f} s (min {min(t):.2f}, max "
                f"{max(t):.2f}, {len(t)} repeats); loading alone {statistics.median(b):.2f} s; goal <= "
                f"{args.limit + 3:g} s; said: {said[name]}"
            )


if __name__ == "__main__":
    main()
