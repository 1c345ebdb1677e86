"""The program under uncertainty with EVPI, end to end, against what the structure allows.

    python benchmarks/evpi_scale.py [--samples 100 1000 5000] [--repeat 5] [--no-workers2] [--subset 200]

For each N, N scenarios sampled (seed 0) from the ranges of the shipped default ledger, a budget
of $100,000, side by side in one run (interleaved, repeated):

* procure end to end: ``procure solve --budget 100000 --samples N --workers 1`` in a fresh
  process (the ledger read, the scenarios drawn, the plan, EVPI and VSS solved, the tables
  printed); its output is read for the ``EVPI x.xx:`` line and otherwise discarded;
* the same with ``--workers 2`` (left out with ``--no-workers2``); its EVPI line must equal the
  one of ``--workers 1``;
* the library call: ``procure.solve(budget=100_000, samples=N, workers=1)`` in this process,
  its imports done once beforehand;
* the wait-and-see values alone, the structure's limit for EVPI's per-scenario solves:
  ``procure.program.solve.wait_and_see.wait_and_see_values`` on the same ScenarioProblem (the
  scenarios' duals minimised together);
* per-scenario baselines a capable user would write: each scenario's deterministic problem
  (``ScenarioProblem.scenario(k)``) solved one at a time, for the first min(N, ``--subset``)
  scenarios, by SciPy's SLSQP (the concave objective and its gradient through
  ``procure.program.numbers.value``, the budget and capacity rows, the availability bounds) and, where
  cvxpy is installed, by cvxpy with Clarabel (one parametrised problem, its parameters set per
  scenario); their times are extrapolated to N, and their values checked against the
  wait-and-see values (largest relative difference printed, goal ≤ 1e-3). The baselines' arrays
  are read from the problems before the timing.

Each figure is the median over the repeats with its min–max; each ratio is the median of the
per-repeat ratios with its min–max; each method's scaling exponent is the slope of log time
against log N (least squares). Goals: ``--samples 1000`` end to end under 5 s, ``--samples 5000``
under 20 s, and the same EVPI with ``--workers 2``.
"""

from __future__ import annotations

import argparse
import math
import re
import shutil
import statistics
import subprocess
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.optimize import minimize
from timing import interleaved, machine, ratio

import procure
from procure.ledger import load_ledger
from procure.ledger.scenarios import ledger_scenarios
from procure.program import from_ledger
from procure.program.numbers import value
from procure.program.numbers.scenarios import ScenarioProblem, scenario_problem
from procure.program.rows import capacity_rows_of, coupling_rows
from procure.program.solve.wait_and_see import wait_and_see_values

BUDGET = 100_000.0
TOLERANCE = 1e-4
#: Largest relative difference allowed between a baseline's values and the wait-and-see values [1].
AGREEMENT = 1e-3
#: The goals on the end-to-end median, by N [s].
GOALS = {1_000: 5.0, 5_000: 20.0}
EVPI_LINE = re.compile(r"^EVPI (-?[0-9][0-9,]*\.[0-9]+):", re.MULTILINE)


def procure_command() -> list[str]:
    """The ``procure`` console command of this interpreter's environment."""
    beside = Path(sys.executable).with_name("procure")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("procure")
    if found is None:
        sys.exit("the procure console command is not installed")
    return [found]


def evpi_of(stdout: str) -> str:
    """The EVPI figure of ``procure solve``'s output, as printed."""
    found = EVPI_LINE.search(stdout)
    if found is None:
        raise AssertionError("no 'EVPI x.xx:' line in the output of procure solve")
    return found.group(1)


def same_evpi(a: str, b: str) -> bool:
    """Printed EVPI figures equal, or within the rounding of two decimals."""
    x, y = float(a.replace(",", "")), float(b.replace(",", ""))
    return a == b or abs(x - y) <= 0.01 + 2e-4 * max(abs(x), abs(y))


def cli(argv: list[str], printed: list[str]):
    """A method that runs ``argv`` in a fresh process, checks it succeeds and keeps its EVPI."""

    def run() -> None:
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert done.returncode == 0, f"{' '.join(argv)} returned {done.returncode}"
        printed.append(evpi_of(done.stdout))

    return run


@dataclass(frozen=True)
class Scenario:
    """One scenario's deterministic problem as arrays: max Σ v(rate (held + x)) subject to
    A x ≤ b, 0 ≤ x ≤ upper."""

    rate: np.ndarray
    held: np.ndarray
    curve: np.ndarray
    k: np.ndarray
    shape: np.ndarray
    A: np.ndarray
    b: np.ndarray
    upper: np.ndarray


def scenario_arrays(sp: ScenarioProblem, k: int) -> Scenario:
    p = sp.scenario(k)
    rows = coupling_rows(p, float(p.budget), capacity_rows_of(p))
    return Scenario(
        rate=np.asarray(p.rate, dtype=float),
        held=np.asarray(p.held, dtype=float),
        curve=p.sources["curve"].to_numpy(str),
        k=p.column("saturation_hours"),
        shape=p.column("curve_shape"),
        A=rows.A,
        b=rows.b,
        upper=p.column("available_hours"),
    )


def true_value(s: Scenario, x: np.ndarray) -> float:
    return float(np.sum(value.value(s.rate * (s.held + x), s.curve, s.k, s.shape)))


def slsqp_value(s: Scenario) -> float:
    """The scenario's best value by SLSQP, at its hours clipped to their boxes."""

    def objective(x: np.ndarray) -> float:
        return -true_value(s, x)

    def gradient(x: np.ndarray) -> np.ndarray:
        return -s.rate * np.asarray(value.derivative(s.rate * (s.held + x), s.curve, s.k, s.shape), dtype=float)

    bounds = [(0.0, u if math.isfinite(u) else None) for u in s.upper]
    rows = {"type": "ineq", "fun": lambda x: s.b - s.A @ x, "jac": lambda x: -s.A}
    found = minimize(objective, np.zeros(len(s.rate)), jac=gradient, method="SLSQP", bounds=bounds,
                     constraints=[rows], options={"ftol": 1e-12, "maxiter": 1_000})  # fmt: skip
    return true_value(s, np.clip(found.x, 0.0, s.upper))


class CvxpyModel:
    """The scenarios' problem in cvxpy (log and exp curves as exponential cones), one model whose
    rates, scales and rows are parameters set per scenario, solved by Clarabel."""

    def __init__(self, first: Scenario) -> None:
        import cvxpy as cp

        self.cp = cp
        n, m = len(first.rate), len(first.b)
        self.x = cp.Variable(n, nonneg=True)
        self.scale = cp.Parameter(n, nonneg=True)  # rate / k
        self.k = cp.Parameter(n, nonneg=True)
        self.A = cp.Parameter((m, n))
        self.b = cp.Parameter(m)
        r = cp.multiply(self.scale, first.held + self.x)
        terms = []
        for name in ("log", "exp"):
            idx = np.flatnonzero(first.curve == name)
            if not len(idx):
                continue
            if name == "log":
                terms.append(self.k[idx] @ cp.log(1 + r[idx]))
            else:
                terms.append(cp.sum(self.k[idx]) - self.k[idx] @ cp.exp(-r[idx]))
        finite = np.flatnonzero(np.isfinite(first.upper))
        rows = [self.A @ self.x <= self.b, self.x[finite] <= first.upper[finite]]
        self.problem = cp.Problem(cp.Maximize(cp.sum(terms)), rows)

    @staticmethod
    def fits(s: Scenario) -> bool:
        return bool(np.isin(s.curve, ("log", "exp")).all())

    def value(self, s: Scenario) -> float:
        self.scale.value, self.k.value = s.rate / s.k, s.k
        self.A.value, self.b.value = s.A, s.b
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.problem.solve(solver=self.cp.CLARABEL)
        return true_value(s, np.clip(np.asarray(self.x.value, dtype=float), 0.0, s.upper))


def cvxpy_values(scenarios: list[Scenario]) -> list[float]:
    model = CvxpyModel(scenarios[0])  # the model's build counted
    return [model.value(s) for s in scenarios]


def keep(store: dict, key: str, fn):
    """A method that runs ``fn`` and keeps its answer under ``key``."""
    return lambda: store.__setitem__(key, fn())


def largest_difference(found: list[float], reference: list[float | None]) -> float:
    """Largest relative difference of ``found`` from the certified ``reference`` values."""
    pairs = [(a, b) for a, b in zip(found, reference, strict=True) if b is not None]
    return max((abs(a - b) / max(abs(b), 1e-12) for a, b in pairs), default=math.nan)


def exponent(sizes: list[int], seconds: list[float]) -> float:
    """Slope of log time against log size (least squares)."""
    if len(sizes) < 2:
        return math.nan
    return float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0])


def line(name: str, times: list[float]) -> str:
    return f"  {name}: median {statistics.median(times):.3f} s (min {min(times):.3f}, max {max(times):.3f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, nargs="+", default=[100, 1_000, 5_000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-workers2", action="store_true", help="Leave out procure solve --workers 2.")
    parser.add_argument("--subset", type=int, default=200, help="Scenarios of the per-scenario baselines.")
    args = parser.parse_args()
    print(machine())
    command = procure_command()
    ledger = load_ledger()
    base = from_ledger(ledger, budget=BUDGET)
    medians: dict[str, list[float]] = {}
    evpi_same: list[bool] = []
    goals: dict[int, float] = {}
    for n in args.samples:
        sp = scenario_problem(base, ledger_scenarios(ledger, samples=n, seed=0))
        m = min(n, args.subset)
        subset = [scenario_arrays(sp, k) for k in range(m)]
        with_cvxpy = CvxpyModel.fits(subset[0])
        try:
            import cvxpy  # noqa: F401
        except ImportError:
            with_cvxpy = False
        out: dict[str, object] = {}
        one: list[str] = []
        two: list[str] = []
        argv = [*command, "solve", "--budget", f"{BUDGET:.0f}", "--samples", str(n)]
        methods = {
            "procure solve, --workers 1 (fresh process)": cli([*argv, "--workers", "1"], one),
        }
        if not args.no_workers2:
            methods["procure solve, --workers 2 (fresh process)"] = cli([*argv, "--workers", "2"], two)
        methods["procure.solve, workers=1 (in process)"] = keep(
            out, "library", lambda n=n: procure.solve(budget=BUDGET, samples=n, workers=1)
        )
        methods["wait_and_see_values alone"] = keep(out, "together", lambda sp=sp: wait_and_see_values(sp, TOLERANCE))
        methods[f"SLSQP per scenario, {m} scenarios"] = keep(
            out, "slsqp", lambda subset=subset: [slsqp_value(s) for s in subset]
        )
        if with_cvxpy:
            methods[f"cvxpy + Clarabel per scenario, {m} scenarios"] = keep(
                out, "cvxpy", lambda subset=subset: cvxpy_values(subset)
            )
        t = interleaved(methods, args.repeat)
        for name in list(t):
            if " per scenario, " in name:
                t[f"{name.split(',')[0]}, extrapolated to {n:,}"] = [s * n / m for s in t[name]]

        plan = out["library"]
        together: list[float | None] = out["together"]  # type: ignore[assignment]
        certified = [v for v in together if v is not None]
        print(f"{n:,} scenarios, budget ${BUDGET:,.0f}")
        print(f"  library: value {plan.value:,.4f}, EVPI {plan.evpi:.4f}, wait-and-see {plan.wait_and_see:,.4f}, "  # type: ignore[attr-defined]
              f"VSS {plan.vss:.4f}; ran on: {plan.ran_on or '-'}")  # type: ignore[attr-defined]  # fmt: skip
        mean = float(np.mean(certified)) if len(certified) == n else math.nan
        print(f"  wait_and_see_values: {len(certified):,} of {n:,} certified; their mean {mean:,.4f}")
        printed = sorted(set(one))
        print(f"  procure solve --workers 1 printed EVPI {', '.join(printed)} (library {plan.evpi:.2f})")  # type: ignore[attr-defined]
        assert len(printed) == 1, "procure solve --workers 1 printed different EVPIs between repeats"
        alike = same_evpi(printed[0], f"{plan.evpi:.2f}")  # type: ignore[attr-defined]
        print(f"  command and library EVPI: {'the same' if alike else 'DIFFERENT'}")
        if two:
            agree = all(same_evpi(one[0], e) for e in two)
            evpi_same.append(agree)
            print(f"  procure solve --workers 2 printed EVPI {', '.join(sorted(set(two)))}: "
                  f"{'the same' if agree else 'DIFFERENT'}")  # fmt: skip
            assert agree, "procure solve --workers 2 printed an EVPI other than --workers 1's"
        for key, label in (("slsqp", "SLSQP"), ("cvxpy", "cvxpy + Clarabel")):
            if key in out:
                diff = largest_difference(out[key], together[:m])  # type: ignore[arg-type]
                verdict = "agree" if diff <= AGREEMENT else "DISAGREE"
                print(f"  {label} against wait_and_see_values, {m} scenarios: largest relative difference "
                      f"{diff:.1e} ({verdict}, goal ≤ {AGREEMENT:.0e})")  # fmt: skip
        for name, times in t.items():
            if " per scenario, " in name and "extrapolated" not in name:
                print(line(name, times) + f", {statistics.median(times) / m * 1e3:.2f} ms a scenario")
            else:
                print(line(name, times))
                medians.setdefault(name.replace(f" to {n:,}", " to N"), []).append(statistics.median(times))
        e2e = t["procure solve, --workers 1 (fresh process)"]
        library = t["procure.solve, workers=1 (in process)"]
        alone = t["wait_and_see_values alone"]
        print("  " + ratio("end to end (workers 1) / library call", e2e, library))
        if not args.no_workers2:
            two_t = t["procure solve, --workers 2 (fresh process)"]
            print("  " + ratio("end to end, workers 2 / workers 1", two_t, e2e))
        print("  " + ratio("library call / wait_and_see_values alone", library, alone))
        for name in t:
            if "extrapolated" in name:
                print("  " + ratio(f"{name} / wait_and_see_values alone", t[name], alone))
        goals[n] = statistics.median(e2e)
    if len(args.samples) > 1:
        for name, m_ in medians.items():
            print(f"scaling exponent over N = {', '.join(f'{n:,}' for n in args.samples)}, {name}: "
                  f"{exponent(args.samples, m_):.2f}")  # fmt: skip
    for n, limit in GOALS.items():
        if n in goals:
            met = "met" if goals[n] < limit else "NOT met"
            print(f"goal: --samples {n:,} end to end under {limit:.0f} s: median {goals[n]:.2f} s, {met}")
        else:
            print(f"goal: --samples {n:,} end to end under {limit:.0f} s: not measured (not in --samples)")
    if evpi_same:
        met = "met" if all(evpi_same) else "NOT met"
        print(f"goal: the same EVPI with --workers 2: {met} ({sum(evpi_same)} of {len(evpi_same)} N alike)")
    else:
        print("goal: the same EVPI with --workers 2: not measured (--no-workers2)")


if __name__ == "__main__":
    main()
