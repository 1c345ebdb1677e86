"""The program under uncertainty at scale, and EVPI on Dask.

    python benchmarks/scenarios_scale.py [--sources 1000] [--scenarios 100] [--repeat 5]

1. A random ledger of 1,000 sources (``procure.ledger.synthetic.random_ledger``) with a ±50 %
   range on every exchange rate, 100 sampled scenarios: the certified expected-value plan and
   the certified CVaR plan (A = 0.1, W = 0.5), each against a deterministic certified solve
   with the same number of curves (a random ledger of 100,000 sources), interleaved and
   repeated.
2. EVPI of those 100 scenarios (100 deterministic certified solves of 1,000 sources): in this
   process against a local Dask cluster of 2 worker processes, interleaved and repeated; the
   cluster's start-up is timed and reported separately (the goal, ≥ 1.5× on 2 cores, counts it).
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time

from timing import interleaved, machine, ratio

from procure.analyses.scale import chunks, run_chunks
from procure.analyses.uncertainty import SCENARIOS_PER_CHUNK, best_values
from procure.ledger.scenarios import sample_scenarios
from procure.ledger.synthetic import random_ledger
from procure.program import from_ledger
from procure.program.numbers.scenarios import scenario_problem
from procure.program.solve.program import Program
from procure.program.solve.stochastic import solve_scenarios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=1000)
    parser.add_argument("--scenarios", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--parts", nargs="+", default=["program", "evpi"], choices=["program", "evpi"])
    parser.add_argument("--time-limit", type=float, default=600.0, help="Of each certified solve [s].")
    args = parser.parse_args()
    n, count = args.sources, args.scenarios
    print(machine())
    ledger = random_ledger(n, 0)
    s = ledger.sources.copy()
    s["exchange_rate_low"] = 0.5 * s["exchange_rate"]
    s["exchange_rate_high"] = 1.5 * s["exchange_rate"]
    sc = sample_scenarios(s, count, seed=0)
    problem = from_ledger(ledger, budget=200.0 * n)
    ev = scenario_problem(problem, sc)
    risk = scenario_problem(problem, sc, risk_alpha=0.1, risk_weight=0.5)
    big = random_ledger(n * count, 1)
    deterministic = from_ledger(big, budget=200.0 * n * count)
    info: dict[str, object] = {}
    limit = args.time_limit
    if "program" in args.parts:
        _program(args, n, count, ev, risk, deterministic, info, limit)
    if "evpi" in args.parts:
        _evpi(args, n, count, ev)


def _program(args, n, count, ev, risk, deterministic, info, limit) -> None:  # type: ignore[no-untyped-def]

    def run(name: str, make: object) -> object:
        def go() -> None:
            plan = make()  # type: ignore[operator]
            info[name] = plan

        return go

    times = interleaved(
        {
            "expected": run("expected", lambda: solve_scenarios(ev, time_limit=limit)),
            "cvar": run("cvar", lambda: solve_scenarios(risk, time_limit=limit)),
            "deterministic": run("deterministic", lambda: Program(deterministic, time_limit=limit).solve()),
        },
        args.repeat,
    )
    for name in ("expected", "cvar", "deterministic"):
        plan = info[name]
        p = getattr(plan, "plan", plan)
        print(f"{name}: median {statistics.median(times[name]):.2f} s (min {min(times[name]):.2f}, max "
              f"{max(times[name]):.2f}); rounds {p.rounds}, cuts {p.cuts}, gap {p.gap:.1e}")  # fmt: skip
    print(ratio(f"{n} sources x {count} scenarios, expected value / deterministic {n * count} sources",
                times["expected"], times["deterministic"]))  # fmt: skip
    print(ratio("CVaR (A = 0.1, W = 0.5) / deterministic", times["cvar"], times["deterministic"]))


def _evpi(args, n, count, ev) -> None:  # type: ignore[no-untyped-def]

    parts = chunks([ev.scenario(k) for k in range(count)], SCENARIOS_PER_CHUNK)
    options = {"tolerance": 1e-4, "time_limit": 600.0}
    from distributed import Client, LocalCluster

    starts: list[float] = []
    results: dict[str, list[float]] = {}

    def serial() -> None:
        results["serial"] = [v for part in parts for v in best_values(options, part)]

    def on_dask() -> None:
        t0 = time.perf_counter()
        loopback = {"host": "127.0.0.1", "dashboard_address": "127.0.0.1:0"}
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, silence_logs=logging.ERROR,
                          **loopback) as cluster, Client(cluster):  # fmt: skip
            starts.append(time.perf_counter() - t0)
            results["dask"] = run_chunks(best_values, parts, args=(options,), scheduler=cluster.scheduler_address)

    evpi = interleaved({"serial": serial, "dask": on_dask}, args.repeat)
    assert results["serial"] == results["dask"], "the Dask run differs from the serial one"
    print(f"EVPI, {count} scenario solves of {n} sources: serial median {statistics.median(evpi['serial']):.2f} s; "
          f"2 Dask workers median {statistics.median(evpi['dask']):.2f} s, of which cluster start-up median "
          f"{statistics.median(starts):.2f} s (min {min(starts):.2f}, max {max(starts):.2f})")  # fmt: skip
    print(ratio("EVPI serial / 2 Dask workers, start-up counted", evpi["serial"], evpi["dask"], "≥ 1.5x"))
    without = [d - s0 for d, s0 in zip(evpi["dask"], starts, strict=True)]
    print(ratio("EVPI serial / 2 Dask workers, start-up not counted", evpi["serial"], without))
    print("results identical to the serial run: yes")


if __name__ == "__main__":
    main()
