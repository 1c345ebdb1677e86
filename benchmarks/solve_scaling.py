"""The program at scale: procure (Pyomo + HiGHS) against the same LPs built in raw highspy.

    python benchmarks/solve_scaling.py [--sizes 1000 10000] [--repeat 2]

For each size, on a random ledger (``procure.ledger.synthetic.random_ledger``) with a budget of
$200 a source:

* procure: ``Program(problem).solve()`` — build the Pyomo model, solve, refine the tangent
  cuts until the bounds agree within 1e-4, read the duals;
* highspy, adaptive: the same algorithm (same first cuts, same refinement rule, same
  tolerance), the LP built from numpy arrays and re-solved warm in one ``highspy.Highs``;
* highspy, 16 cuts: a fixed grid of 16 tangents per source, one solve (the formulation the
  design notes measured), its gap to the true value reported.

Prints seconds, rounds, rows and the ratio procure / highspy-adaptive.
"""

from __future__ import annotations

import argparse
import time

import highspy
import numpy as np

from procure import from_ledger
from procure.ledger.synthetic import random_ledger
from procure.program import value
from procure.program.model import initial_points, source_arrays
from procure.program.plan import VALUE_ABS_TOLERANCE
from procure.program.solve import CUT_THRESHOLD, Program

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
    h.addRow(-inf, float(problem.budget), n, idx, st.cost.astype(float))
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
    first = [(i, p) for i in range(n) if st.concave[i] for p in initial_points(st, i)]
    return _add_cuts(h, st, n, np.array([i for i, _ in first], dtype=np.int64), np.array([p for _, p in first]))


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
        over = np.flatnonzero(((z - v) > CUT_THRESHOLD * max(1.0, abs(upper))) & st.concave)
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


def best_of(repeat, fn, *args):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn(*args)
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    for n in args.sizes:
        problem = from_ledger(random_ledger(n, seed=1), budget=200.0 * n)
        t_p, plan = best_of(args.repeat, lambda p: Program(p, tolerance=TOLERANCE).solve(), problem)
        t_h, (v_h, rounds_h, rows_h) = best_of(args.repeat, highspy_adaptive, problem)
        t_f, (v_f, gap_f, rows_f) = best_of(args.repeat, highspy_fixed, problem)
        print(f"{n:,} sources")
        print(
            f"  procure (Pyomo+HiGHS), adaptive: {t_p:6.2f} s  build {plan.build_seconds:.2f} s, "
            f"{plan.rounds} rounds, {plan.cuts:,} cuts, value {plan.value:,.3f}, gap {plan.gap:.1e}"
        )
        print(f"  raw highspy, adaptive:           {t_h:6.2f} s  {rounds_h} rounds, {rows_h:,} cuts, value {v_h:,.3f}")
        print(f"  raw highspy, 16 fixed cuts:      {t_f:6.2f} s  {rows_f:,} cuts, value {v_f:,.3f}, gap {gap_f:.1e}")
        print(f"  ratio procure / raw adaptive: {t_p / t_h:.1f}x;  procure / raw 16 cuts: {t_p / t_f:.1f}x")


if __name__ == "__main__":
    main()
