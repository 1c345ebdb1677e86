"""The program at scale: procure (Pyomo + HiGHS) against the same algorithm in raw highspy.

    python benchmarks/solve_scaling.py [--sizes 1000 10000 100000] [--repeat 5]

For each size, on a random ledger (``procure.ledger.synthetic.random_ledger``) with a budget of
$200 a source:

* procure: ``Program(problem).solve()`` — build the Pyomo model, solve, refine the tangent
  cuts until the bounds agree within 1e-4, read the duals;
* highspy, adaptive: the same algorithm (same first cuts, same refinement rule, same
  tolerance), the LP built from numpy arrays and re-solved warm in one ``highspy.Highs``;
* highspy, 16 cuts: a fixed grid of 16 tangents per source, one solve (the formulation the
  design notes measured), its gap to the true value reported.

The methods are interleaved and repeated; each ratio is the median of the per-repeat ratios
with its min–max (goal: procure ≤ 2× raw adaptive). Then the integer case: 1,000 sources of
which a tenth have S-shaped hill curves, lots or fees, procure alone (its certified time).
"""

from __future__ import annotations

import argparse
import statistics

import highspy
import numpy as np
from timing import interleaved, machine, ratio

from procure import Ledger, from_ledger
from procure.ledger.synthetic import random_ledger
from procure.program import value
from procure.program.bounds import source_arrays
from procure.program.forms import initial_points
from procure.program.plan import VALUE_ABS_TOLERANCE
from procure.program.refine import CUT_MIN_EXCESS, CUT_THRESHOLD
from procure.program.solve import Program

TOLERANCE = 1e-4


def _highs() -> highspy.Highs:
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    return h


def _base_lp(problem, st):
    """Columns x (0..n-1) and z (n..2n-1), the budget and capacity rows."""
    n = problem.n
    h = _highs()
    inf = highspy.kHighsInf
    upper = np.where(np.isfinite(st.upper), st.upper, inf)
    h.addVars(n, np.zeros(n), upper)
    h.addVars(n, np.full(n, -inf), np.full(n, inf))
    h.changeColsCost(n, np.arange(n, 2 * n, dtype=np.int32), np.full(n, -1.0))  # maximise Σ z
    idx = np.arange(n, dtype=np.int32)
    h.addRow(-inf, float(problem.budget), n, idx, problem.cost.astype(float))
    for name, limit in problem.capacity.items():
        use = problem.usage(name)
        if np.isfinite(limit) and (use > 0).any():
            nz = np.flatnonzero(use).astype(np.int32)
            h.addRow(-inf, float(limit - use @ st.held), len(nz), nz, use[nz])
    return h


def _add_cuts(h, st, n, sources, points) -> int:
    slope, intercept = value.tangent(points, st.curve[sources], st.k[sources], st.shape[sources])
    a = st.rate[sources]
    m = len(sources)
    starts = np.arange(0, 2 * m, 2, dtype=np.int32)
    index = np.empty(2 * m, dtype=np.int32)
    index[0::2], index[1::2] = n + sources, sources
    coef = np.empty(2 * m)
    coef[0::2], coef[1::2] = 1.0, -slope * a
    upper = slope * a * st.held[sources] + intercept
    h.addRows(m, np.full(m, -highspy.kHighsInf), upper, 2 * m, starts, index, coef)
    return m


def first_cuts(h, st, n) -> int:
    """procure's first tangents, as rows of ``h``."""
    sources, points = initial_points(st)
    pairs = np.unique(np.column_stack([sources, points]), axis=0)  # one cut per point, as procure keeps
    return _add_cuts(h, st, n, pairs[:, 0].astype(np.int64), pairs[:, 1])


def refine(h, st, n) -> tuple[float, int, int]:
    """Solve ``h`` warm and add cuts at the plan until certified, as ``Program.solve`` does.

    Returns the plan's true value, the rounds and the cuts added.
    """
    rounds = added = 0
    while True:
        rounds += 1
        h.run()
        col = np.asarray(h.getSolution().col_value)
        x, z = np.clip(col[:n], 0, st.upper), col[n:]
        e = st.rate * (st.held + x)
        v = np.asarray(value.value(e, st.curve, st.k, st.shape))
        upper = -h.getInfo().objective_function_value
        gap = upper - v.sum()
        if gap / abs(upper) <= TOLERANCE or gap <= VALUE_ABS_TOLERANCE:
            h.getSolution().row_dual  # duals, as procure reads them  # noqa: B018
            return float(v.sum()), rounds, added
        over = np.flatnonzero(((z - v) > max(CUT_THRESHOLD * max(1.0, abs(upper)), CUT_MIN_EXCESS)) & st.concave)
        added += _add_cuts(h, st, n, over, e[over])


def highspy_adaptive(problem) -> tuple[float, int, int]:
    st = source_arrays(problem)
    h = _base_lp(problem, st)
    rows = first_cuts(h, st, problem.n)
    value, rounds, added = refine(h, st, problem.n)
    return value, rounds, rows + added


def highspy_fixed(problem, cuts: int = 16) -> tuple[float, float, int]:
    st = source_arrays(problem)
    n = problem.n
    h = _base_lp(problem, st)
    lo = st.rate * st.held
    hi = st.rate * (st.held + np.where(np.isfinite(st.upper), st.upper, 1e6))
    grid = lo[:, None] + (hi - lo)[:, None] * np.linspace(0, 1, cuts)[None, :] ** 2
    src = np.repeat(np.arange(n), cuts)
    rows = _add_cuts(h, st, n, src, grid.ravel())
    h.run()
    col = np.asarray(h.getSolution().col_value)
    x = np.clip(col[:n], 0, st.upper)
    v = float(np.sum(value.value(st.rate * (st.held + x), st.curve, st.k, st.shape)))
    upper = -h.getInfo().objective_function_value
    return v, (upper - v) / abs(upper), rows


def integer_ledger(n: int, seed: int = 1) -> Ledger:
    """A random ledger of ``n`` sources, a tenth of them with S-shaped hill curves, lots or fees."""
    ledger = random_ledger(n, seed=seed)
    rows = ledger.sources.copy()
    rng = np.random.default_rng(seed)
    pick = rng.choice(n, size=max(n // 10, 3), replace=False)
    kinds = np.arange(len(pick)) % 3
    hill, lots, fees = pick[kinds == 0], pick[kinds == 1], pick[kinds == 2]
    rows.loc[hill, "curve"] = "hill"
    rows.loc[hill, "curve_shape"] = rng.uniform(1.5, 3.0, len(hill))
    rows.loc[lots, "lot_hours"] = 25.0
    rows.loc[fees, "fixed_fee_usd"] = rng.uniform(100, 1_000, len(fees))
    rows.loc[fees, "min_order_hours"] = 10.0
    return Ledger(rows, ledger.cluster, ledger.path)


def _keep(store: dict, key: str, fn, problem):
    """A method that solves ``problem`` with ``fn`` and keeps the answer under ``key``."""
    return lambda: store.__setitem__(key, fn(problem))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--integer", type=int, default=1_000, help="Sources of the integer case (0: skip).")
    args = parser.parse_args()
    print(machine())
    for n in args.sizes:
        problem = from_ledger(random_ledger(n, seed=1), budget=200.0 * n)
        out: dict[str, object] = {}
        t = interleaved(
            {
                "procure": _keep(out, "procure", lambda p: Program(p, tolerance=TOLERANCE).solve(), problem),
                "raw": _keep(out, "raw", highspy_adaptive, problem),
                "fixed": _keep(out, "fixed", highspy_fixed, problem),
            },
            args.repeat,
        )
        plan = out["procure"]
        v_h, rounds_h, rows_h = out["raw"]  # type: ignore[misc]
        v_f, gap_f, rows_f = out["fixed"]  # type: ignore[misc]
        print(f"{n:,} sources")
        print(
            f"  procure: {statistics.median(t['procure']):6.2f} s  build {plan.build_seconds:.2f} s, "  # type: ignore[attr-defined]
            f"{plan.rounds} rounds, {plan.cuts:,} cuts, value {plan.value:,.3f}, gap {plan.gap:.1e}"  # type: ignore[attr-defined]
        )
        print(f"  raw highspy, adaptive: {statistics.median(t['raw']):6.2f} s  {rounds_h} rounds, {rows_h:,} cuts, "
              f"value {v_h:,.3f}")  # fmt: skip
        print(f"  raw highspy, 16 fixed cuts: {statistics.median(t['fixed']):6.2f} s  {rows_f:,} cuts, "
              f"value {v_f:,.3f}, gap {gap_f:.1e}")  # fmt: skip
        print("  " + ratio("procure / raw highspy adaptive", t["procure"], t["raw"], "≤ 2x"))
        print("  " + ratio("procure / raw highspy 16 fixed cuts", t["procure"], t["fixed"]))
    if args.integer:
        problem = from_ledger(integer_ledger(args.integer), budget=200.0 * args.integer)
        plans = []
        t = interleaved({"procure": lambda: plans.append(Program(problem, tolerance=TOLERANCE).solve())}, args.repeat)
        plan = plans[-1]
        print(
            f"integer case, {args.integer:,} sources (a tenth with hill curves, lots or fees): median "
            f"{statistics.median(t['procure']):.2f} s (min {min(t['procure']):.2f}, max {max(t['procure']):.2f}), "
            f"{plan.rounds} rounds, value {plan.value:,.3f}, gap {plan.gap:.1e}"
        )


if __name__ == "__main__":
    main()
