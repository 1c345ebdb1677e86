"""Plans and timings of this checkout against an earlier commit, in one interleaved run.

    python benchmarks/against_commit.py [--ref HEAD~1] [--repeat 5] [--ledgers 100] [--no-timing]

Two worker processes, one importing ``procure`` from this checkout and one from a worktree of
``--ref``, are given the same work in turn:

* **numbers**: random ledgers across the row kinds and axes (plain concave ledgers of log, exp
  and power curves with capacities; linear sources with and without end; S-curves, lots,
  minimum orders and fees under a mix bound; expected value, recourse and CVaR over scenarios;
  EVPI's wait-and-see values; periods with a mix bound; a choice of formats). Each plan's value,
  λ, shadow prices and hours are compared: the largest difference, relative to the larger
  figure's size (or 1), is printed per family, and every plan that differs by more than the
  tolerance (1e-4).
* **timing**: the workloads of ``solve_scaling.py`` (a certified plan of 1,000, 10,000 and
  100,000 sources), ``evpi_scale.py`` (EVPI of the default ledger over 1,000 scenarios) and
  ``periods_scale.py`` (1,000 sources × 12 periods), each repeated ``--repeat`` times with the
  two commits interleaved; the median ratio now / before and its min–max.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
TOLERANCE = 1e-4
FAMILIES = ("concave", "linear", "integer", "expected", "recourse_cvar", "evpi", "periods", "formats")


# ---- the worker: runs in a process whose procure is one commit's ---------------------------


def _moved(name: str) -> Any:
    """``procure.program.numbers.<name>``, or ``procure.program.<name>`` in a commit from before
    the program's numbers had a folder of their own."""
    import importlib

    try:
        return importlib.import_module(f"procure.program.numbers.{name}")
    except ModuleNotFoundError:
        return importlib.import_module(f"procure.program.{name}")


def _plan_numbers(plan: Any) -> dict[str, Any]:
    hours = plan.sources["hours"].to_numpy(float).tolist() if "hours" in plan.sources else []
    prices = {k: float(v) for k, v in plan.shadow_prices.items()}
    if plan.shadow_prices_by_period:
        for t, by in plan.shadow_prices_by_period.items():
            prices.update({f"{t}:{k}": float(v) for k, v in by.items()})
    return {"value": float(plan.value), "lambda": float(plan.lambda_), "prices": prices, "hours": hours}


def numbers(family: str, seed: int) -> dict[str, Any]:
    """One random ledger of ``family`` solved at the default tolerance: its figures."""
    import numpy as np
    import prices_by_differences as fam

    import procure
    from procure.analyses.uncertainty import solve_uncertain
    from procure.ledger import load_ledger
    from procure.ledger.scenarios import ledger_scenarios
    from procure.ledger.synthetic import random_ledger
    from procure.program import from_ledger, solve_problem

    scenario_problem = _moved("scenarios").scenario_problem
    rng = np.random.default_rng(9_000 + seed)
    if family == "concave":
        ledger = random_ledger(int(rng.integers(5, 60)), seed, curves=("log", "exp", "power"))
        return _plan_numbers(
            solve_problem(from_ledger(ledger, budget=float(rng.uniform(50, 400)) * len(ledger.sources)))
        )
    if family in ("linear", "integer"):
        problem, _ = getattr(fam, family)(seed)
        return _plan_numbers(solve_problem(problem))
    if family == "recourse_cvar":
        return _plan_numbers(solve_problem(fam.scenarios(seed)[0]))
    default = load_ledger()
    if family in ("expected", "evpi"):
        samples = 10 if family == "expected" else 200
        sp = scenario_problem(from_ledger(default, budget=float(rng.uniform(3e4, 3e5))),
                              ledger_scenarios(default, samples=samples, seed=seed))  # fmt: skip
        if family == "expected":
            return _plan_numbers(solve_problem(sp))
        found = solve_uncertain(sp, tolerance=TOLERANCE)
        return {"value": float(found.wait_and_see), "lambda": float(found.evpi), "prices": {}, "hours": []}
    if family == "periods":
        spec, shares = fam.periods(seed)
        return _plan_numbers(procure.solve(periods=spec, max_share=shares))
    return _plan_numbers(procure.solve(budget=fam.formats(seed)[1], formats=["recorded", "model_side"]))


def workload(name: str) -> float:
    """Seconds of one timing workload."""
    import numpy as np

    from procure.analyses.uncertainty import solve_uncertain
    from procure.ledger import load_ledger
    from procure.ledger.periods import Periods
    from procure.ledger.scenarios import ledger_scenarios
    from procure.ledger.synthetic import random_ledger
    from procure.program import Program, from_ledger

    period_problem = _moved("periods").period_problem
    scenario_problem = _moved("scenarios").scenario_problem
    t0 = time.perf_counter()
    if name.startswith("plan "):
        n = int(name.split()[1].replace(",", ""))
        Program(from_ledger(random_ledger(n, 0, curves=("log", "exp")), budget=200.0 * n), tolerance=TOLERANCE).solve()
    elif name == "EVPI 1,000":
        ledger = load_ledger()
        sp = scenario_problem(from_ledger(ledger, budget=1e5), ledger_scenarios(ledger, samples=1_000, seed=0))
        solve_uncertain(sp, tolerance=TOLERANCE)
    elif name == "periods 1,000 × 12":
        n, T = 1_000, 12
        money = np.full(T, 2_000.0 * n / T)
        spec = Periods(tuple(f"M{t + 1}" for t in range(T)), np.ones(T), money, None, {}, np.full((T, n), np.nan),
                       np.full((T, n), np.inf), "benchmark")  # fmt: skip
        Program(period_problem(from_ledger(random_ledger(n, 0), budget=float(money.sum())), spec)).solve()
    else:
        raise ValueError(name)
    return time.perf_counter() - t0


def worker(tree: str) -> None:
    """Answer one JSON request a line: ``["numbers", family, seed]`` or ``["time", name]``."""
    sys.path.insert(0, tree)
    sys.path.insert(0, str(Path(tree) / "benchmarks"))  # that commit's families (its module paths)
    import warnings

    warnings.simplefilter("ignore")
    from procure.errors import ProcureError

    for line in sys.stdin:
        kind, *args = json.loads(line)
        try:
            out: Any = numbers(*args) if kind == "numbers" else workload(*args)
        except ProcureError as exc:
            out = {"error": str(exc).splitlines()[0]}
        print(json.dumps(out), flush=True)


# ---- the parent: two workers, interleaved ----------------------------------------------------


class Worker:
    def __init__(self, tree: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, __file__, "--worker", str(tree)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, cwd=tree)  # fmt: skip

    def ask(self, *request: Any) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait()


def difference(a: dict[str, Any], b: dict[str, Any]) -> tuple[float, str]:
    """The largest relative difference between two plans' figures, and which figure it is."""
    if "error" in a or "error" in b:
        return (0.0, "") if a.get("error") == b.get("error") else (math.inf, f"{a.get('error')} / {b.get('error')}")
    pairs = [("value", a["value"], b["value"]), ("λ", a["lambda"], b["lambda"])]
    pairs += [
        (k, a["prices"].get(k, math.nan), b["prices"].get(k, math.nan)) for k in set(a["prices"]) | set(b["prices"])
    ]
    scale = max([1.0, *(abs(h) for h in a["hours"] + b["hours"])])
    worst, where = 0.0, ""
    for name, x, y in pairs:
        if x == y or (math.isnan(x) and math.isnan(y)) or (math.isinf(x) and x == y):
            continue
        d = abs(x - y) / max(1.0, abs(x), abs(y)) if math.isfinite(x) and math.isfinite(y) else math.inf
        if d > worst:
            worst, where = d, f"{name} {x:.8g} / {y:.8g}"
    if len(a["hours"]) == len(b["hours"]):
        for i, (x, y) in enumerate(zip(a["hours"], b["hours"], strict=True)):
            d = abs(x - y) / scale
            if d > worst:
                worst, where = d, f"hours[{i}] {x:.6g} / {y:.6g}"
    elif a["hours"] or b["hours"]:
        return math.inf, "hours of different lengths"
    return worst, where


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--ref", default="HEAD~1")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--ledgers", type=int, default=100, help="Random ledgers of each family.")
    parser.add_argument("--family", nargs="+", default=list(FAMILIES), choices=FAMILIES)
    parser.add_argument("--no-timing", action="store_true")
    parser.add_argument("--no-numbers", action="store_true")
    args = parser.parse_args()
    if args.worker:
        worker(args.worker)
        return
    sys.path.insert(0, str(HERE / "benchmarks"))
    from timing import machine, ratio

    commit = subprocess.run(["git", "rev-parse", "--short", args.ref], cwd=HERE, capture_output=True, text=True,
                            check=True).stdout.strip()  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        before_tree = Path(tmp) / "before"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(before_tree), commit], cwd=HERE, check=True)
        try:
            now, before = Worker(HERE), Worker(before_tree)
            print(machine())
            print(f"this checkout against {commit}")
            if not args.no_numbers:
                for family in args.family:
                    worst, where, over = 0.0, "", []
                    for seed in range(args.ledgers):
                        d, at = difference(now.ask("numbers", family, seed), before.ask("numbers", family, seed))
                        if d > worst:
                            worst, where = d, f"seed {seed}: {at}"
                        if d > TOLERANCE:
                            over.append(f"    seed {seed}: {at}")
                    print(f"{family:14s} {args.ledgers} ledgers, largest difference {worst:.1e} ({where or 'none'}); "
                          f"{len(over)} above {TOLERANCE:g}", flush=True)  # fmt: skip
                    print("\n".join(over[:10]), flush=True) if over else None
            if not args.no_timing:
                for name in ("plan 1,000", "plan 10,000", "plan 100,000", "EVPI 1,000", "periods 1,000 × 12"):
                    a, b = [], []
                    now.ask("time", name), before.ask("time", name)  # warm: imports and caches
                    for r in range(args.repeat):
                        first, second = (now, before) if r % 2 == 0 else (before, now)
                        t1, t2 = first.ask("time", name), second.ask("time", name)
                        (a if first is now else b).append(t1)
                        (b if first is now else a).append(t2)
                    print(ratio(f"{name}: now / {commit}", a, b), flush=True)
            now.close()
            before.close()
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(before_tree)], cwd=HERE, check=False)


if __name__ == "__main__":
    main()
