"""The program at scale, against the structure's limit and what a capable user would write.

    python benchmarks/solve_scaling.py [--sizes 1000 10000 100000] [--repeat 5] [--integer 1000] [--no-raw]

For each size, on a random concave ledger (``procure.ledger.synthetic.random_ledger``) with a
budget of $200 a source (log and exp curves, see :data:`CURVES`), side by side in one run (interleaved, repeated):

* procure end to end: read and validate the ledger's ``sources.csv`` (written once), ``from_ledger``,
  ``Program(problem).solve()`` (the Pyomo model built, its cuts placed at the optimum the dual
  gives, one HiGHS solve, exact hours, duals, the plan read);
* procure's solve alone: ``Program(problem).solve()`` on the loaded problem;
* the Pyomo program built alone: ``Program(problem)``, the model built and handed to HiGHS but
  not solved, the least time of any run in which the Pyomo model is the program solved (its
  ratio to the independent dual is the least procure end to end can reach);
* the same LP by ``pyomo.kernel`` (:func:`kernel_route`): the variables and rows that
  ``Program(problem)`` builds (each source's hours in its box, the value credited, the budget
  and capacity rows, the objective), the rows as one ``matrix_constraint`` over a SciPy CSR
  matrix, handed to HiGHS from that matrix and the variables' bounds: the fastest Pyomo route
  measured, against which the build and hand-over is measured (goal at 100,000 sources:
  at most 1.5×);
* the ledger read and priced alone (:func:`read_and_price`): ``sources.csv`` read and
  validated and ``from_ledger``, the part of procure end to end that comes before any program
  and that the independent dual does not do;
* the barest Pyomo model (:func:`barest_pyomo`): one variable per source in its box, one
  ``LinearExpression`` row per coupling row, a linear objective, built and not even handed to
  HiGHS, in the fastest form Pyomo 6 offers; any Pyomo model of the n sources holds at least
  this much, so its ratio to the independent dual is the least any run can reach in which a
  Pyomo model is the program solved, whoever writes it;
* the tangent LP alone (:func:`tangent_lp`): HiGHS on the LP a leaner formulation would hand
  over, one tangent per source at the dual's hours as the objective coefficient of its hours and
  no credited value or cut row, built in raw highspy and solved by interior point; with the
  ledger read and the barest Pyomo model it is the least such a formulation could reach;
* the dual alone: ``procure.program.dual.solve_dual`` on the problem's arrays, a certificate
  with no LP (the structure's limit: a few dozen evaluations of closed forms);
* an independent dual certificate (:func:`independent_dual`), what a capable user would write
  with numpy, pandas and SciPy: it reads a CSV file of priced sources with ``pandas.read_csv``
  (the read is part of its timing), minimises the Lagrangian dual g(μ) of the coupling rows
  (budget and finite capacities) with SciPy's L-BFGS-B from the budget multiplier found by
  root-finding, and reports g(μ*), a proven upper bound (weak duality), the value of the hours
  x(μ*) scaled down into feasibility, a lower bound, and their relative gap, which must reach
  the tolerance procure certifies to (1e-4); procure's value must lie between the two.
  What is independent of procure: the file reading, the curve formulas (log and exp, written
  here from their definitions), the inner maximisation in closed form, the root-finding, the
  minimisation, the feasible hours and their value, the gap; no function of procure runs inside
  its timing. What is not: the numbers in the file, which are procure's ``from_ledger`` of the
  same ledger, taken once per size outside the timing and written to ``priced.csv`` (rate, held,
  avail, k, curve, cost, use_<capacity>; floats in full precision) and ``capacities.csv``. The
  effective rate (exchange rate × survival × shelf-life factor), the all-in cost per hour (price
  + the transport bill procure computes from the ledger's cluster), each capacity's use per hour
  and the capacities (the cluster's) are procure's pricing; held hours, availability, saturation
  hours and curve are the ledger's columns as procure reads them. So the independent dual
  checks procure's program and its solve, not its pricing or validation, and its timing
  includes reading the priced file, not reading, validating and pricing ``sources.csv``;
* raw highspy with adaptive cuts: the cutting-plane algorithm written directly in highspy;
* cvxpy with Clarabel (exponential and power cones), the general convex solver a capable
  user would reach for, where cvxpy is installed (``pip install '.[bench]'``).

A full collection of Python's collector runs before each method, outside its time, so that
none pays for freeing the garbage another left (a dropped Pyomo model is millions of objects in
cycles, which would otherwise be freed during whichever method runs next); what freeing procure's
own model costs after a run end to end is printed beside it. Each ratio is the median of the
per-repeat ratios with its min–max; each method's scaling
exponent is the slope of log time against log size. Goals (see :data:`GOALS`): at 100,000
sources procure end to end under 10 s and within 8× the independent dual (CSV read included);
at 10,000 within 4×. Then the integer case: 1,000 sources of which a tenth have S-shaped hill
curves, lots or fees (budget mode), and 40 sources with lots, minimum orders and fees in target
mode.
"""

from __future__ import annotations

import argparse
import math
import statistics
import tempfile
import warnings
from pathlib import Path
from typing import NamedTuple

import highspy
import numpy as np
import pandas as pd
import pyomo.environ as pyo
from pyomo.common.gc_manager import PauseGC
from pyomo.core.expr.numeric_expr import LinearExpression
from scipy import optimize
from timing import freeing, interleaved, machine, ratio

from procure import Ledger, from_ledger
from procure.ledger import read_sources
from procure.ledger.synthetic import random_ledger
from procure.program.dual import solve_dual
from procure.program.model.forms import initial_points
from procure.program.numbers import value
from procure.program.numbers.bounds import source_arrays
from procure.program.readout.plan import VALUE_ABS_TOLERANCE
from procure.program.rows import capacity_rows_of, coupling_rows
from procure.program.solve.program import Program
from procure.program.solve.refine import CUT_MIN_EXCESS, CUT_THRESHOLD

TOLERANCE = 1e-4
#: Curves of the scaling ledgers: log and exp, which cvxpy takes as exponential cones (a power
#: curve with its own exponent per source is one cone atom per exponent for cvxpy).
CURVES = ("log", "exp")
#: Goals by size: the most ``procure end to end / independent dual`` may be [×] and the most
#: procure end to end may take [s] (None: no goal on time).
GOALS: dict[int, tuple[float, float | None]] = {10_000: (4.0, None), 100_000: (8.0, 10.0)}
#: The Pyomo program built (variables, rows, the hand-over to HiGHS) and not solved: the floor
#: of every run in which the Pyomo model is the program solved.
BUILD_ALONE = "Pyomo program built alone"
#: The same LP built with ``pyomo.kernel`` and handed over (see :func:`kernel_route`).
KERNEL = "pyomo.kernel route, built and handed over"
#: The ledger read, validated and priced, no program.
READ_AND_PRICE = "ledger read and priced alone"
#: The barest Pyomo model of the sources (see :func:`barest_pyomo`).
BAREST = "barest Pyomo model"
#: The files the independent dual reads: priced sources and capacities.
PRICED, CAPACITIES_FILE = "priced.csv", "capacities.csv"
#: HiGHS on the LP of one tangent per source at the dual's hours, alone (see :func:`tangent_lp`).
TANGENT_LP = "tangent LP alone (raw highspy, interior point)"
#: The independent dual's name among the methods.
INDEPENDENT = "independent dual"
#: Agreement allowed between the independent dual's bounds and procure's value [1].
AGREEMENT = 1e-9


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
    _coupling(h, problem, st)
    return h


def _coupling(h, problem, st) -> None:
    """The budget and finite capacity rows over the columns x (0..n-1)."""
    n, inf = problem.n, highspy.kHighsInf
    h.addRow(-inf, float(problem.budget), n, np.arange(n, dtype=np.int32), problem.cost.astype(float))
    for name, limit in problem.capacity.items():
        use = problem.usage(name)
        if np.isfinite(limit) and (use > 0).any():
            nz = np.flatnonzero(use).astype(np.int32)
            h.addRow(-inf, float(limit - use @ st.held), len(nz), nz, use[nz])


def tangent_lp(problem, hours: np.ndarray) -> float:
    """The LP a leaner formulation would give HiGHS, alone: no credited value and no cut row,
    each source's tangent at ``hours`` (the dual's, found beforehand) as the objective
    coefficient of its hours, the budget and capacity rows; solved by interior point without
    crossover (its bound is what would certify). Every source strictly inside its box has the
    same reduced cost 0 there, so the LP is degenerate and the plan is no vertex of it (in
    procure's program each source's cut row makes it one). Returns the bound."""
    st = source_arrays(problem)
    n, inf = problem.n, highspy.kHighsInf
    slope, intercept = value.tangent(st.rate * (st.held + hours), st.curve, st.k, st.shape)
    coef = np.asarray(slope, dtype=float) * st.rate
    h = _highs()
    h.addVars(n, np.zeros(n), np.where(np.isfinite(st.upper), st.upper, inf))
    h.changeColsCost(n, np.arange(n, dtype=np.int32), -coef)  # maximise Σ slope · a · x
    _coupling(h, problem, st)
    h.setOptionValue("solver", "ipm")
    h.setOptionValue("run_crossover", "off")
    h.run()
    return -float(h.getInfo().objective_function_value) + float(np.sum(intercept + coef * st.held))


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


def _drop(fn, problem):
    """A method that runs ``fn`` on ``problem`` and keeps nothing: a built model left alive
    would be hundreds of thousands of objects that Python's collector walks during every other
    method's run, which a user's process, building one model, does not carry."""
    return lambda: fn(problem)


def dual_alone(problem) -> float:
    """The dual's bound g(μ*) from the problem's arrays: no model, no LP."""
    a = source_arrays(problem)
    return solve_dual(a, coupling_rows(problem, float(problem.budget), capacity_rows_of(problem))).bound


def barest_pyomo(problem) -> pyo.ConcreteModel:
    """The least Pyomo model of the problem's sources: a variable per source in its box, the
    budget and each finite capacity as one ``LinearExpression`` row, a linear objective (each
    curve's slope at the hours held), in the form and with the collector paused as procure
    builds its own. No curve, no cut, no hand-over to HiGHS."""
    a = source_arrays(problem)
    rows = coupling_rows(problem, float(problem.budget), capacity_rows_of(problem))
    upper = [float(u) if math.isfinite(u) else None for u in a.room]
    slope = a.slope_of(np.zeros(problem.n)).tolist()
    with PauseGC():
        m = pyo.ConcreteModel()
        m.S = pyo.Set(initialize=range(problem.n), ordered=True)
        m.x = pyo.Var(m.S, bounds=lambda _m, i: (0.0, upper[i]))
        xs = list(m.x.values())
        m.rows = pyo.ConstraintList()
        for coef, limit in zip(rows.A, rows.b, strict=True):
            body = LinearExpression(constant=0.0, linear_coefs=coef.tolist(), linear_vars=xs)
            m.rows.add(body <= float(limit))
        body = LinearExpression(constant=0.0, linear_coefs=slope, linear_vars=xs)
        m.value = pyo.Objective(expr=body, sense=pyo.maximize)
    return m


def kernel_route(problem) -> highspy.Highs:
    """The LP ``Program(problem)`` builds and hands over (its hours in their boxes, the value
    credited, the budget and capacity rows, the objective Σ z; the dual guide places the cuts
    after), built as a ``pyomo.kernel`` block with the rows as one ``matrix_constraint``, and
    handed to HiGHS from that matrix and the variables' bounds, with the collector paused."""
    import pyomo.kernel as pmo
    from scipy import sparse

    a = source_arrays(problem)
    rows = coupling_rows(problem, float(problem.budget), capacity_rows_of(problem))
    n = problem.n
    with PauseGC():
        m = pmo.block()
        m.x = pmo.variable_list(pmo.variable(lb=0.0, ub=float(u) if math.isfinite(u) else None) for u in a.upper)
        m.z = pmo.variable_list(pmo.variable() for _ in range(n))
        A = sparse.hstack([sparse.csr_matrix(rows.A), sparse.csr_matrix((len(rows.b), n))], format="csr")
        A.eliminate_zeros()
        columns = [*m.x, *m.z]
        m.rows = pmo.matrix_constraint(A, ub=rows.b, x=columns)
        m.value = pmo.objective(LinearExpression(constant=0.0, linear_coefs=[1.0] * n, linear_vars=list(m.z)),
                                sense=pmo.maximize)  # fmt: skip
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = len(columns), A.shape[0]
        lp.col_lower_ = np.array([highspy.kHighsInf * -1 if v.lb is None else v.lb for v in columns])
        lp.col_upper_ = np.array([highspy.kHighsInf if v.ub is None else v.ub for v in columns])
        lp.col_cost_ = np.concatenate([np.zeros(n), np.ones(n)])
        lp.sense_ = highspy.ObjSense.kMaximize
        M = m.rows.A.tocsc()
        lp.row_lower_ = np.full(A.shape[0], -highspy.kHighsInf)
        lp.row_upper_ = np.asarray(m.rows.ub, dtype=float)
        lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = M.indptr, M.indices, M.data
        h = _highs()
        h.passModel(lp)
    return h


def write_priced(problem, folder: Path) -> None:
    """procure's priced numbers of ``problem``, per source and per capacity, as the two CSV files
    :func:`independent_dual` reads (written outside its timing)."""
    table = pd.DataFrame(
        {
            "rate": problem.rate,
            "held": problem.held,
            "avail": problem.column("available_hours"),
            "k": problem.column("saturation_hours"),
            "curve": problem.sources["curve"].to_numpy(str),
            "cost": problem.cost,
        }
    )
    for name in problem.capacity:
        table[f"use_{name}"] = problem.usage(name)
    table.to_csv(folder / PRICED, index=False)
    limits = pd.DataFrame({"capacity": list(problem.capacity), "limit": list(problem.capacity.values())})
    limits.to_csv(folder / CAPACITIES_FILE, index=False)


class Certificate(NamedTuple):
    """The independent dual's answer."""

    bound: float  # g(μ*), an upper bound on the optimum
    lower: float  # the value of feasible hours, a lower bound
    gap: float  # (bound − lower) / |bound|
    evaluations: int  # evaluations of g (root-finding and L-BFGS-B)
    hours: np.ndarray  # the feasible hours, in file order


def independent_dual(folder: Path, budget: float) -> Certificate:
    """Bounds on max Σ v_s(a_s (h0_s + x_s)) s.t. 0 ≤ x ≤ avail, A x ≤ b, from the files alone.

    Reads ``priced.csv`` (columns rate, held, avail, k, curve, cost, use_<capacity>) and
    ``capacities.csv`` (capacity, limit). The rows A x ≤ b: cost · x ≤ ``budget`` and, per
    finite capacity, use · x ≤ limit − use · h0. Curves: log, v = k ln(1 + e/k), and exp,
    v = k (1 − exp(−e/k)). The dual g(μ) = Σ_s max_{0≤x≤avail} [v_s − c_s x] + μ · b with
    c = Aᵀμ is an upper bound for every μ ≥ 0; its inner maxima are closed forms (a v'(e) = c
    solved for e, clipped) and its gradient is b − A x(μ).
    """
    s = pd.read_csv(folder / PRICED)
    caps = pd.read_csv(folder / CAPACITIES_FILE)
    curve = s["curve"].to_numpy(str)
    unknown = set(np.unique(curve)) - {"log", "exp"}
    if unknown:
        raise ValueError(f"the independent dual takes log and exp curves only, not {sorted(unknown)}")
    order = np.argsort(curve != "log", kind="stable")  # log sources first, then exp: slices, not masks
    nl = int(np.count_nonzero(curve == "log"))
    a, h0, avail, k, cost = (s[c].to_numpy(float)[order] for c in ("rate", "held", "avail", "k", "cost"))
    rows, rhs = [cost], [float(budget)]
    for name, limit in zip(caps["capacity"], caps["limit"].to_numpy(float), strict=True):
        if np.isfinite(limit):
            use = s[f"use_{name}"].to_numpy(float)[order]
            rows.append(use)
            rhs.append(float(limit - use @ h0))
    A, b = np.array(rows), np.array(rhs)
    if (b <= 0).any():
        raise ValueError("a row's right-hand side is not positive: held hours already fill a capacity")
    scaled = A / b[:, None]  # each row with right-hand side 1
    koa = k / a
    count = [0]

    def hours(c: np.ndarray) -> np.ndarray:
        """argmax over 0 ≤ x ≤ avail of v(a (h0 + x)) − c x, per source."""
        x = np.empty_like(c)
        with np.errstate(divide="ignore"):
            x[:nl] = k[:nl] / c[:nl] - koa[:nl]  # 1 / (1 + e/k) = c/a  →  e/a = k/c − k/a
            x[nl:] = koa[nl:] * np.log(a[nl:] / c[nl:])  # exp(−e/k) = c/a  →  e/a = (k/a) ln(a/c)
        x -= h0
        np.clip(x, 0.0, avail, out=x)
        return np.where(c > 0, x, avail)

    def values(x: np.ndarray) -> np.ndarray:
        e = a * (h0 + x)
        v = np.empty_like(e)
        v[:nl] = k[:nl] * np.log1p(e[:nl] / k[:nl])
        v[nl:] = -k[nl:] * np.expm1(-e[nl:] / k[nl:])
        return v

    def dual(mu: np.ndarray) -> tuple[float, np.ndarray]:
        """g(μ) for multipliers ``mu`` of the scaled rows (right-hand sides 1), and x(μ)."""
        count[0] += 1
        c = scaled.T @ mu
        x = hours(c)
        return float(np.sum(values(x) - c * x) + mu.sum()), x

    # The budget multiplier alone: cost · x(λ cost) = budget, by root-finding on ln λ.
    e0 = a * h0
    slope0 = a * np.concatenate([1.0 / (1.0 + e0[:nl] / k[:nl]), np.exp(-e0[nl:] / k[nl:])])
    lam = 0.0
    if cost @ avail > budget:
        hi = float(np.max(slope0 / cost)) * 1.01  # x(λ cost) = 0 from here up

        def spend(t: float) -> float:
            count[0] += 1
            return float(cost @ hours(math.exp(t) * cost)) - budget

        lo = hi * 1e-3
        while spend(math.log(lo)) <= 0:
            lo *= 1e-3
        lam = math.exp(optimize.brentq(spend, math.log(lo), math.log(hi), xtol=1e-10))
    mu0 = np.zeros(len(b))
    mu0[0] = lam * b[0]
    g0, _ = dual(mu0)
    scale = abs(g0) or 1.0  # μ = scale · ν: ν and the gradient 1 − A x / b are of order 1

    def objective(nu: np.ndarray) -> tuple[float, np.ndarray]:
        g, x = dual(scale * nu)
        return g / scale, 1.0 - scaled @ x

    found = optimize.minimize(
        objective,
        mu0 / scale,
        jac=True,
        method="L-BFGS-B",
        bounds=[(0, None)] * len(b),
        options={"ftol": 1e-15, "gtol": 1e-10, "maxiter": 200},
    )
    nu = np.maximum(found.x, 0.0)
    g, x = dual(scale * nu)
    if g0 < g:  # L-BFGS-B keeps its best point, but the start is a bound too
        g, x = dual(mu0)
    # Feasible hours: x(μ*) scaled down until every row's use is within its right-hand side.
    feasible = x * min(1.0, 1.0 / float(np.max(scaled @ x, initial=0.0))) * (1.0 - 1e-12)
    if not (A @ feasible <= b).all():
        raise AssertionError("the scaled-down hours are not feasible")
    lower = float(np.sum(values(feasible)))
    out = np.empty_like(feasible)
    out[order] = feasible
    return Certificate(g, lower, (g - lower) / abs(g), count[0], out)


def cvxpy_solve(problem) -> float | None:
    """The concave program in cvxpy (linear terms; log, exp and power curves as cones), solved by Clarabel."""
    try:
        import cvxpy as cp
    except ImportError:
        return None
    s = problem.sources
    n = problem.n
    x = cp.Variable(n, nonneg=True)
    a, h0 = problem.rate, problem.held
    k = s["saturation_hours"].to_numpy()
    beta = s["curve_shape"].to_numpy()
    curve = s["curve"].to_numpy()
    r = cp.multiply(a / k, h0 + x)
    terms = []
    linear = np.flatnonzero(curve == "linear")
    if len(linear):
        terms.append(a[linear] @ (h0[linear] + x[linear]))
    for name in ("log", "exp", "power"):
        idx = np.flatnonzero(curve == name)
        if not len(idx):
            continue
        ri, ki = r[idx], k[idx]
        if name == "log":
            terms.append(ki @ cp.log(1 + ri))
        elif name == "exp":
            terms.append(cp.sum(ki) - ki @ cp.exp(-ri))
        else:
            for b in np.unique(beta[idx]):
                sel = idx[beta[idx] == b]
                terms.append((k[sel] / b) @ (cp.power(1 + r[sel], b) - 1))
    rows = [problem.cost @ x <= problem.budget, x <= s["available_hours"].to_numpy()]
    for name, limit in problem.capacity.items():
        if math.isfinite(limit):
            rows.append(problem.usage(name) @ x <= limit - problem.usage(name) @ h0)
    prob = cp.Problem(cp.Maximize(cp.sum(terms)), rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prob.solve(solver=cp.CLARABEL)
    return float(prob.value)


def end_to_end(ledger: Ledger, path: Path, budget: float):
    """Read and validate the ledger's sources.csv, then price and solve it (on its cluster)."""
    loaded = Ledger(read_sources(path), ledger.cluster, ledger.path)
    return Program(from_ledger(loaded, budget=budget), tolerance=TOLERANCE).solve()


def read_and_price(ledger: Ledger, path: Path, budget: float):
    """Read and validate the ledger's sources.csv and price it: the part of procure end to end
    before any program, which the independent dual does not do (it reads priced numbers)."""
    return from_ledger(Ledger(read_sources(path), ledger.cluster, ledger.path), budget=budget)


def agreement(cert: Certificate, value: float, dual_bound: float) -> str:
    """The independent dual's bounds, its gap against the tolerance, whether procure's plan
    ``value`` lies between them, and how far its bound is from procure's ``dual_bound``."""
    within = cert.lower <= value * (1 + AGREEMENT) and value <= cert.bound * (1 + AGREEMENT)
    return (
        f"{INDEPENDENT}: bound {cert.bound:,.6f}, lower {cert.lower:,.6f}, gap {cert.gap:.1e} "
        f"({'within' if cert.gap <= TOLERANCE else 'NOT within'} {TOLERANCE:.0e}), {cert.evaluations} evaluations; "
        f"procure's value {'within' if within else 'NOT within'} [lower, bound]; "
        f"bound / procure's dual bound − 1 = {cert.bound / dual_bound - 1:.1e}"
    )


def goal_of(n: int, t: dict[str, list[float]]) -> str:
    """The goal at ``n`` sources, met or not, from the timings ``t``; empty where none."""
    if n not in GOALS:
        return ""
    most, seconds = GOALS[n]
    e2e = statistics.median(t["procure end to end"])
    r = statistics.median(a / b for a, b in zip(t["procure end to end"], t[INDEPENDENT], strict=True))
    met = r <= most and (seconds is None or e2e < seconds)
    within = f"end to end under {seconds:g} s and " if seconds is not None else ""
    return f"{within}within {most:g}x: {'met' if met else 'NOT met'}"


def exponent(sizes: list[int], seconds: list[float]) -> float:
    """Slope of log time against log size (least squares)."""
    if len(sizes) < 2:
        return math.nan
    return float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0])


def target_ledger(n: int = 40, seed: int = 3) -> Ledger:
    """A random ledger of ``n`` sources with lots, minimum orders and fees on most of them."""
    ledger = random_ledger(n, seed=seed)
    rows = ledger.sources.copy()
    rng = np.random.default_rng(seed)
    rows["lot_hours"] = np.where(rng.random(n) < 0.4, 25.0, 0.0)
    rows["min_order_hours"] = np.where(rng.random(n) < 0.4, 10.0, 0.0)
    rows["fixed_fee_usd"] = np.where(rng.random(n) < 0.4, rng.uniform(100, 1_000, n), 0.0)
    return Ledger(rows, ledger.cluster, ledger.path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--integer", type=int, default=1_000, help="Sources of the integer case (0: skip).")
    parser.add_argument("--no-raw", action="store_true", help="Leave out raw highspy (slow at 100,000).")
    args = parser.parse_args()
    print(machine())
    medians: dict[str, list[float]] = {}
    for n in args.sizes:
        ledger = random_ledger(n, seed=1, curves=CURVES)
        problem = from_ledger(ledger, budget=200.0 * n)
        hours = solve_dual(source_arrays(problem), coupling_rows(problem, 200.0 * n, capacity_rows_of(problem))).x
        out: dict[str, object] = {}
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "sources.csv"
            ledger.sources.replace([np.inf], np.nan).to_csv(path, index=False, na_rep="")
            write_priced(problem, Path(tmp))
            methods = {
                "procure end to end": _keep(
                    out, "e2e", lambda p, ledger=ledger, path=path, n=n: end_to_end(ledger, path, 200.0 * n), problem
                ),
                READ_AND_PRICE: _keep(
                    out,
                    "priced",
                    lambda p, ledger=ledger, path=path, n=n: read_and_price(ledger, path, 200.0 * n),
                    problem,
                ),
                "procure solve": _keep(out, "procure", lambda p: Program(p, tolerance=TOLERANCE).solve(), problem),
                BUILD_ALONE: _drop(lambda p: Program(p, tolerance=TOLERANCE), problem),
                BAREST: _drop(barest_pyomo, problem),
                KERNEL: _drop(kernel_route, problem),
                "dual alone": _keep(out, "dual", dual_alone, problem),
                TANGENT_LP: _keep(out, "tangent", lambda p, x=hours: tangent_lp(p, x), problem),
                INDEPENDENT: _keep(
                    out, "independent", lambda p, tmp=tmp, n=n: independent_dual(Path(tmp), 200.0 * n), problem
                ),
            }
            if not args.no_raw:
                methods["raw highspy, adaptive"] = _keep(out, "raw", highspy_adaptive, problem)
            if cvxpy_solve(from_ledger(random_ledger(20, seed=1), budget=4_000.0)) is not None:
                methods["cvxpy + Clarabel"] = _keep(out, "cvxpy", cvxpy_solve, problem)
            t = interleaved(methods, args.repeat, collect=True)
            freed = freeing(methods["procure end to end"])
        plan = out["procure"]
        print(f"{n:,} sources")
        print(f"  procure: value {plan.value:,.6f}, bound {plan.value_upper_bound:,.6f}, "  # type: ignore[attr-defined]
              f"gap {plan.gap:.1e}, {plan.rounds} round(s), {plan.cuts:,} cuts")  # type: ignore[attr-defined]  # fmt: skip
        print(f"  dual bound {out['dual']:,.6f}; tangent LP's bound {out['tangent']:,.6f}; "
              f"cvxpy {out.get('cvxpy', math.nan):,.6f}")  # fmt: skip
        print("  " + agreement(out["independent"], plan.value, out["dual"]))  # type: ignore[arg-type, attr-defined]
        print(f"  freeing procure's model after a run end to end (not in its time): {freed:.3f} s")
        for name, times in t.items():
            medians.setdefault(name, []).append(statistics.median(times))
            print(f"  {name}: median {statistics.median(times):.3f} s (min {min(times):.3f}, max {max(times):.3f})")
        for name in t:
            if name != "dual alone":
                print("  " + ratio(f"{name} / dual alone", t[name], t["dual alone"]))
        label = f"procure end to end / {INDEPENDENT} (CSV read included)"
        print("  " + ratio(label, t["procure end to end"], t[INDEPENDENT], goal_of(n, t)))
        floor = ratio(f"{BUILD_ALONE} / {INDEPENDENT}", t[BUILD_ALONE], t[INDEPENDENT])
        print(f"  {floor}: the least procure end to end can reach while the Pyomo model is the program solved")
        priced = ratio(f"{READ_AND_PRICE} / {INDEPENDENT}", t[READ_AND_PRICE], t[INDEPENDENT])
        print(f"  {priced}: what reading the user's ledger, not a priced file, costs before any program")
        goal = "<= 1.5x" if n >= 100_000 else ""
        print("  " + ratio(f"{BUILD_ALONE} / {KERNEL}", t[BUILD_ALONE], t[KERNEL], goal))
        barest = ratio(f"{BAREST} / {INDEPENDENT}", t[BAREST], t[INDEPENDENT])
        print(f"  {barest}: the least any run can reach that builds a Pyomo model of the sources")
        lean = ratio(f"{TANGENT_LP} / {INDEPENDENT}", t[TANGENT_LP], t[INDEPENDENT])
        print(f"  {lean}: with the row of the ledger read and the barest model, the least a formulation "
              "with no credited value or cut row could reach")  # fmt: skip
        for other in ("cvxpy + Clarabel", "raw highspy, adaptive"):
            if other in t:
                print("  " + ratio(f"procure end to end / {other}", t["procure end to end"], t[other]))
    if len(args.sizes) > 1:
        for name, m in medians.items():
            print(f"scaling exponent, {name}: {exponent(args.sizes, m):.2f}")
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
        probe = Program(from_ledger(target_ledger(), budget=40_000.0)).solve()
        problem = from_ledger(target_ledger(), target=0.9 * probe.value)
        t = interleaved({"procure": lambda: plans.append(Program(problem, tolerance=TOLERANCE).solve())}, args.repeat)
        plan = plans[-1]
        print(
            f"target mode, 40 sources with lots, minimum orders and fees: median "
            f"{statistics.median(t['procure']):.2f} s "
            f"(min {min(t['procure']):.2f}, max {max(t['procure']):.2f}), {plan.rounds} budget solves, "
            f"money {plan.spent_usd:,.2f} (lower bound {plan.money_lower_bound:,.2f})"
        )


if __name__ == "__main__":
    main()
