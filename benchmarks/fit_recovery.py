"""Parameter recovery of ``procure fit``: runs simulated from known numbers, fitted, and how often
the 90 % interval holds the truth.

For each data set the true exchange rates and saturation scales of the twin and the simulated
hour (and the own hour's scale) are drawn from the fit's priors (log-normal around the default
ledger's values), the link's from p_min ~ U(0.02, 0.2), p_max ~ U(0.6, 0.95) and V0 within a
factor 2 of the runs' median value; the runs' mixes are drawn, each run is evaluated on 20 to
50 trials (binomial), and the fit frees exchange_rate and saturation_hours. Coverage is the
share of (data set, parameter) pairs whose 90 % interval holds the truth (goal 80–97 %); the
width is the median ratio q95 / q05 of the ledger numbers, which shrinks as runs are added.

    python benchmarks/fit_recovery.py [--sets 50] [--runs 8 30] [--steps 800] [--burn-in 600]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

import procure
from procure.analyses.fit.settings import default
from procure.analyses.fit.simulate import run_values, simulate_runs

MOST_HOURS = {"own": 800.0, "twin": 3000.0, "sim": 20000.0}
FREED = ("own.saturation_hours", "twin.exchange_rate", "twin.saturation_hours", "sim.exchange_rate",
         "sim.saturation_hours")  # fmt: skip


def one(ledger, runs: int, seed: int, steps: int, burn_in: int) -> list[tuple[str, float, float, float]]:
    rng = np.random.default_rng(10_000 + seed)
    s = ledger.sources.set_index("source")
    truth = {}
    for name in FREED:
        source, _, column = name.partition(".")
        sd = default(f"prior_sd_{column}")
        truth[name] = float(s.loc[source, column] * math.exp(sd * rng.standard_normal()))
    probe = simulate_runs(ledger.sources, truth, {"p_min": 0.1, "p_max": 0.9, "value_scale": 1.0}, runs=runs,
                          most_hours=MOST_HOURS, seed=seed)  # fmt: skip
    v = run_values(ledger.sources, probe.hours, truth)
    link = {"p_min": rng.uniform(0.02, 0.2), "p_max": rng.uniform(0.6, 0.95),
            "value_scale": float(np.median(v[v > 0])) * math.exp(rng.uniform(-math.log(2), math.log(2)))}  # fmt: skip
    data = simulate_runs(ledger.sources, truth, link, runs=runs, most_hours=MOST_HOURS, seed=seed)
    f = procure.fit(data, ledger, steps=steps, burn_in=burn_in, seed=seed)
    out = [(f"{r.source}.{r.parameter}", truth[f"{r.source}.{r.parameter}"], r.q05, r.q95)
           for r in f.parameters.itertuples()]  # fmt: skip
    out += [(f"link.{r.parameter}", link[r.parameter], r.q05, r.q95) for r in f.link_table.itertuples()]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=50)
    parser.add_argument("--runs", type=int, nargs="+", default=[8, 30])
    parser.add_argument("--steps", type=int, default=800)
    parser.add_argument("--burn-in", type=int, default=600)
    args = parser.parse_args()
    ledger = procure.load_ledger()
    print(f"{'runs':>5} {'sets':>5} {'coverage':>9} {'ledger':>7} {'link':>6} {'width q95/q05':>14} {'s/fit':>6}")
    for runs in args.runs:
        began = time.perf_counter()
        rows = [r for k in range(args.sets) for r in one(ledger, runs, k, args.steps, args.burn_in)]
        seconds = (time.perf_counter() - began) / args.sets
        inside = np.array([lo <= t <= hi for _n, t, lo, hi in rows])
        ledger_rows = np.array([not n.startswith("link.") for n, *_ in rows])
        width = np.median([hi / lo for n, _t, lo, hi in rows if not n.startswith("link.")])
        print(f"{runs:>5} {args.sets:>5} {inside.mean():>9.1%} {inside[ledger_rows].mean():>7.1%} "
              f"{inside[~ledger_rows].mean():>6.1%} {width:>14.2f} {seconds:>6.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
