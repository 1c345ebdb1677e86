"""The hand-over to HiGHS: the Pyomo model as one sparse matrix, kept in step with the model.

The model (:mod:`procure.program.model.build`) is the program; this module derives HiGHS's copy of
it: the rows made from arrays and the bounds of the variables made so
(:mod:`procure.program.model.array_rows`) are read from those arrays, every other row as
:mod:`procure.program.model.read` states, into one matrix passed to ``highspy`` whole. The
tangent cuts, blocks of ``model.cuts``, are appended as batches of rows from the numbers each
block's rows were built from; a coefficient or bound that is an expression of the model's
mutable parameters (costs, later costs, budget) is re-read and re-sent when they change, so
HiGHS keeps its basis. The solution is read by column index. Nothing private of Pyomo's solver
classes is used.

Why not Pyomo's ``LinearStandardFormCompiler``: it builds a SciPy matrix, and Pyomo's deferred
SciPy import then loads ``scipy.stats``, ``integrate`` and ``spatial`` too, 1.3 s of start-up
on a 2-core machine, twice the whole solve of a small ledger. Why not Pyomo's persistent HiGHS
interface: handing a model over through it took 1.1 s at 1,000 sources and 5–10 s at 10,000,
against 0.1 s and 0.7 s here.

HiGHS counts its time limit from the first run of a ``Highs`` object, across re-solves; each
solve here sets the limit to the time used so far plus the time left.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import highspy
import numpy as np
import pyomo.environ as pyo

from ...errors import Reason, SolveError
from .array_rows import Layout, row_terms
from .read import LiveNumbers, coefficients, linear_terms, rows_of
from .solver_process import INF, LEAST_TIME_LIMIT, SIMPLEX, crossover_ready, new_highs, solver_streams

if TYPE_CHECKING:  # the hand-over reads a built model; it needs no builder
    from .build import BuiltModel


@dataclass
class SolverResult:
    """One solve's answer, by column and by named row."""

    status: str  # "optimal" | "infeasible" | "unbounded" | "time"
    x: np.ndarray  # hours bought of each source (now)
    z: np.ndarray  # value credited to each curve
    w: np.ndarray  # hours each curve's value is read at
    bound: float
    objective: float
    columns: np.ndarray


class HighsModel:
    """A built model handed to HiGHS as one matrix, kept in step with the model (see the module).

    Parameters
    ----------
    built : BuiltModel
        The model.
    deadline : float, default inf
        When reading the rows must stop (:func:`time.perf_counter`) [s]
        (:func:`procure.program.model.read.rows_of`).
    """

    def __init__(self, built: BuiltModel, deadline: float = math.inf) -> None:
        m = built.model
        self.built = built
        columns = Layout(m)
        first = columns.first
        self.x_cols = first["x"] + np.arange(len(m.x), dtype=np.int64)
        self.z_cols = first["z"] + np.arange(len(m.z), dtype=np.int64)
        #: Per curve, the column of the hours its value is read at (cuts are rows in it).
        self.w_cols = built.at.columns(first)
        #: The columns of the variables of a period or infrastructure axis, by name (``y``, ``q``,
        #: ``rented``, ``core``, ``keep``), in their index order.
        self.axis_cols = {
            name: first[name] + np.arange(len(getattr(m, name)), dtype=np.int64)
            for name in ("y", "q", "rented", "core", "keep")
            if hasattr(m, name)
        }
        lower, upper, self.integer = columns.bounds()
        self.row_of: dict[int, int] = {}
        #: Coefficients that are mutable parameters or expressions of them: their rows, columns
        #: and the parameters or expressions.
        live_rows: list[np.ndarray] = []
        live_cols: list[np.ndarray] = []
        live_coefs: list[Any] = []
        #: Upper bounds that are expressions of mutable parameters: (row, expression, constant).
        self._live_upper: list[tuple[int, Any, float]] = []
        starts: list[int] = [0]
        index: list[np.ndarray] = []
        values: list[np.ndarray] = []
        row_lower: list[float] = []
        row_upper: list[float] = []

        def read(body_of: Any) -> tuple[float, np.ndarray, np.ndarray, np.ndarray, list[Any]]:
            """A row's (or the objective's) constant, columns, coefficients, which are live and what."""
            made = row_terms(m, body_of.expr if isinstance(body_of, pyo.Objective) else body_of.body, first)
            if made is not None:
                return (0.0, *made)
            constant_expr, coefs, cols = linear_terms(body_of, columns.col_of())
            coef, live = coefficients(coefs)
            at = np.asarray(live, dtype=np.int64)
            return float(pyo.value(constant_expr or 0.0)), cols, coef, at, [coefs[q] for q in live]

        for con in rows_of(m, deadline):
            row = len(row_lower)
            constant, cols, coef, live_at, live = read(con)
            live_rows.append(np.full(len(live_at), row, dtype=np.int64))
            live_cols.append(cols[live_at].astype(np.int64))
            live_coefs += live
            kept = coef != 0.0
            index.append(cols[kept])
            values.append(coef[kept])
            row_lower.append(-INF if con.lower is None else float(pyo.value(con.lower)) - constant)
            row_upper.append(INF if con.upper is None else float(pyo.value(con.upper)) - constant)
            if con.upper is not None and not isinstance(con.upper, int | float) and not con.upper.is_constant():
                self._live_upper.append((row, con.upper, constant))
            self.row_of[id(con)] = row
            starts.append(starts[-1] + int(kept.sum()))
        cost = np.zeros(columns.count)
        _constant, cols, coef, _at, _live = read(m.objective)
        np.add.at(cost, cols, coef)
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = columns.count, len(row_lower)
        lp.col_cost_, lp.col_lower_, lp.col_upper_ = cost, lower, upper
        lp.row_lower_, lp.row_upper_ = np.asarray(row_lower, dtype=np.float64), np.asarray(row_upper, dtype=np.float64)
        lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
        lp.a_matrix_.start_ = np.array(starts, dtype=np.int32)
        lp.a_matrix_.index_ = np.concatenate([np.zeros(0, np.int32), *index]).astype(np.int32)
        lp.a_matrix_.value_ = np.concatenate([np.zeros(0), *values])
        if self.integer.any():
            lp.integrality_ = [
                highspy.HighsVarType.kInteger if flag else highspy.HighsVarType.kContinuous for flag in self.integer
            ]
        lp.sense_ = highspy.ObjSense.kMaximize
        self.h = new_highs()
        with solver_streams():
            self.h.passModel(lp)
        #: Every cut row handed over: its curve, coefficient and right-hand side, in row order.
        self.cut_parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.budget_rows = [self.row_of[id(m.budget_row[k])] for k in m.Kb]
        #: Per capacity with a row and per mix bound, its matrix row in each scenario or run (-1: none there).
        self.capacity_rows = [
            [self.row_of.get(id(m.capacity[r, k]), -1) if (r, k) in m.capacity else -1 for k in m.Kc] for r in m.R
        ]
        self.mix_rows = [[self.row_of.get(id(m.mix[g, k]), -1) for k in m.K] for g in m.G]
        self._live = LiveNumbers(live_coefs)
        self._live_rows = np.concatenate([np.zeros(0, dtype=np.int64), *live_rows])
        self._live_cols = np.concatenate([np.zeros(0, dtype=np.int64), *live_cols])
        self._sent_coefs = self._live.values()
        self._sent_upper = np.array([float(row_upper[r]) for r, _e, _k in self._live_upper])
        #: Rows of the matrix that are tangent cuts, and the cut blocks they came from.
        self.cut_rows = self._cut_blocks = 0
        self.sync_cuts()

    # ------------------------------------------------------------------ keeping in step

    def sync_cuts(self) -> int:
        """Append the rows of every cut block of the model not yet handed over; returns how many."""
        m = self.built.model
        before = self.cut_rows
        while self._cut_blocks in m.cuts:
            b = m.cuts[self._cut_blocks]
            self.add_tangent_rows(self.h, b.cut_curve, b.cut_coef, b.cut_rhs)
            self.cut_parts.append((np.asarray(b.cut_curve, np.int64), np.asarray(b.cut_coef, float),
                                   np.asarray(b.cut_rhs, float)))  # fmt: skip
            self.cut_rows += len(b.cut_curve)
            self._cut_blocks += 1
        return self.cut_rows - before

    def add_tangent_rows(self, h: highspy.Highs, curves: np.ndarray, coef: np.ndarray, rhs: np.ndarray) -> None:
        """Append tangent cuts ``z_j + coef·w_j ≤ rhs`` of ``curves`` to ``h`` (this model's
        HiGHS object, or an LP of it) as one batch of rows."""
        k = len(curves)
        index = np.empty(2 * k, dtype=np.int32)
        index[0::2], index[1::2] = self.z_cols[curves], self.w_cols[curves]
        value = np.empty(2 * k)
        value[0::2], value[1::2] = 1.0, coef
        with solver_streams():
            h.addRows(k, np.full(k, -INF), np.asarray(rhs, float), 2 * k,
                      np.arange(0, 2 * k, 2, dtype=np.int32), index, value)  # fmt: skip

    def sync_budget(self) -> None:
        """Send the right-hand sides that depend on the model's parameters (the budget) where
        they changed."""
        for q, (row, expr, constant) in enumerate(self._live_upper):
            hi = float(pyo.value(expr)) - constant
            if hi != self._sent_upper[q]:
                self.h.changeRowBounds(row, -INF, hi)
                self._sent_upper[q] = hi

    def sync_costs(self) -> None:
        """Send the coefficients that depend on the model's parameters (the costs) where they
        changed; a zero that stays zero is not sent."""
        now = self._live.values()
        changed = np.flatnonzero(now != self._sent_coefs)
        change = self.h.changeCoeff
        with solver_streams():
            for row, col, coef in zip(self._live_rows[changed].tolist(), self._live_cols[changed].tolist(),
                                      now[changed].tolist(), strict=True):  # fmt: skip
                change(row, col, coef)
        self._sent_coefs = now

    # ------------------------------------------------------------------ solving

    def has_basis(self) -> bool:
        """True where HiGHS holds a basis (a solve ran): the next solve starts from it."""
        return bool(self.h.getBasis().valid)

    def solve(
        self, time_left: float, rel_gap: float, *, cold: str = SIMPLEX, start: highspy.HighsSolution | None = None
    ) -> SolverResult:
        """Solve; the time limit is counted from the first run of this HiGHS object.

        ``cold`` is the method of a solve with no basis to start from: ``"choose"`` (HiGHS's
        dual simplex) or ``"ipm"`` (interior point with crossover to a vertex, several times
        faster on a large model whose cuts sit at the optimum: 1.8 s against 11 s at 100,000
        sources); a solve that has a basis always re-starts the simplex from it. ``start``
        (:func:`procure.program.model.crossover.start_from`) is where a solve with no basis
        starts instead; where HiGHS's crossover from it does not end cleanly, the cold method runs.
        """
        h = self.h
        h.setOptionValue("time_limit", float(h.getRunTime() + max(time_left, LEAST_TIME_LIMIT)))
        h.setOptionValue("mip_rel_gap", float(rel_gap))
        warm = bool(h.getBasis().valid)
        if not warm and start is not None and not self.integer.any():
            crossover_ready()
            with solver_streams():
                h.ensureColwise()  # type: ignore[attr-defined]  # crossover reads the matrix column-wise
                crossed = h.crossover(start)
            warm = crossed == highspy.HighsStatus.kOk and bool(h.getBasis().valid)
            if not warm:
                h.clearSolver()  # what the crossover left is no start: solve cold
        h.setOptionValue("solver", SIMPLEX if warm or self.integer.any() else cold)
        with solver_streams():
            h.run()
        status = h.getModelStatus()
        if status == highspy.HighsModelStatus.kTimeLimit:
            return self._empty("time")
        if status == highspy.HighsModelStatus.kInfeasible:
            return self._empty("infeasible")
        if status in (highspy.HighsModelStatus.kUnbounded, highspy.HighsModelStatus.kUnboundedOrInfeasible):
            return self._empty("unbounded")
        if status != highspy.HighsModelStatus.kOptimal:
            raise SolveError(f"HiGHS stopped without a solution: {h.modelStatusToString(status)}", Reason.NOT_CERTIFIED)
        columns = np.asarray(h.getSolution().col_value, dtype=float)
        info = h.getInfo()
        objective = float(info.objective_function_value)
        bound = float(info.mip_dual_bound) if self.integer.any() else objective
        if not math.isfinite(bound):
            bound = objective
        return SolverResult(
            "optimal", columns[self.x_cols], columns[self.z_cols], columns[self.w_cols], bound, objective, columns
        )

    def _empty(self, status: str) -> SolverResult:
        nothing, curves = np.zeros(len(self.x_cols)), np.zeros(len(self.z_cols))
        return SolverResult(status, nothing, curves, curves, math.nan, math.nan, np.zeros(0))

    def values(self, solution: SolverResult, name: str) -> np.ndarray:
        """The values of the model's variable ``name`` (of :attr:`axis_cols`) at ``solution``."""
        return solution.columns[self.axis_cols[name]]

    def row_duals(self, solution: SolverResult, h: highspy.Highs | None = None) -> np.ndarray:
        """Duals of every row at ``solution``; with integers, from the LP with them fixed; ``h``:
        from that LP of this model instead (rows appended to it left out)."""
        h = h or (self.h if not self.integer.any() else self.fixed_lp(solution, math.inf))
        if h is None:
            raise SolveError(
                "the LP with the plan's integers fixed has no solution: the duals cannot be read", Reason.NOT_CERTIFIED
            )
        return np.asarray(h.getSolution().row_dual, dtype=float)[: self.h.getNumRow()]

    def fixed_lp(self, solution: SolverResult, deadline: float) -> highspy.Highs | None:
        """A new HiGHS object holding the model as an LP with its integers at ``solution``'s (from
        this one's basis where it has none), solved by ``deadline`` (:func:`time.perf_counter`)
        [s]; None where it is not optimal."""
        lp = self.h.getLp()
        fixed = np.round(solution.columns[self.integer])
        lower, upper = np.asarray(lp.col_lower_, dtype=float), np.asarray(lp.col_upper_, dtype=float)
        lower[self.integer], upper[self.integer] = fixed, fixed
        lp.col_lower_, lp.col_upper_, lp.integrality_ = lower, upper, []
        h = new_highs()
        h.setOptionValue("time_limit", max(deadline - time.perf_counter(), LEAST_TIME_LIMIT))
        with solver_streams():
            h.passModel(lp)
            if not self.integer.any() and self.h.getBasis().valid:
                h.setBasis(self.h.getBasis())
            h.run()
        return h if h.getModelStatus() == highspy.HighsModelStatus.kOptimal else None

    def duals(self, solution: SolverResult, h: highspy.Highs | None = None) -> tuple[float, list[float], list[float]]:
        """The budget row's dual and those of the capacity and mix rows [value per unit]; where
        a constraint has a row per scenario, the sum of their duals (no bound shares a limit's
        price: :data:`procure.program.numbers.bounds.DERIVED_BOUND`). ``h``: read from that LP of
        this model instead."""
        rows = self.row_duals(solution, h)

        def at(ks: list[int]) -> float:
            return float(sum(abs(float(rows[k])) for k in ks if k >= 0))

        return at(self.budget_rows), [at(ks) for ks in self.capacity_rows], [at(k) for k in self.mix_rows]
