"""Refine until certified: solve the model, compare each curve's credit with its true value,
and add what closes the gap where it lies.

Every round either certifies (the bound and the plan's true value agree within the
tolerance), adds a block of tangent cuts that cut off the current point by more than
:data:`CUT_MIN_EXCESS`, splits the segments of the hill curves' piecewise forms around the
plan point where the gap lies (a rebuild that keeps the cuts), or tightens the MIP gap when
that is where the gap lies.
"""

from __future__ import annotations

import math

import highspy
import numpy as np

from ...errors import Reason, SolveError
from ..dual import solve_dual, solve_expected_dual
from ..model.crossover import start_from
from ..model.forms import add_cuts, initial_points, refined_breakpoints
from ..numbers.periods import PeriodProblem
from ..numbers.scenarios import ScenarioProblem
from ..paths import eligible, qualifies
from ..readout.plan import VALUE_ABS_TOLERANCE, closes, relative_gap
from ..rows import coupling_rows
from .hill_range import priced_dual
from .polish import FEASIBILITY, polish_from
from .state import Refined, Solving

#: Most refinement rounds of one solve; a safety net: every round makes progress.
MAX_ROUNDS = 200
#: A curve gets a new cut when the LP credits it with more than this share of the plan's
#: value above its curve [1] ...
CUT_THRESHOLD = 1e-9
#: ... and more than this, ten times HiGHS's primal feasibility tolerance (1e-7), so that the
#: new cut cuts the current point off by more than the solver can blur [own-hour equivalents].
CUT_MIN_EXCESS = VALUE_ABS_TOLERANCE
#: HiGHS's relative MIP gap, as a share of the certification tolerance [1].
MIP_GAP_SHARE = 0.1
#: HiGHS's method for the first solve of a linear model with no basis and no starting point:
#: interior point, then crossover to a vertex (see :meth:`procure.program.model.highs.HighsModel.solve`;
#: the dual-guided solve starts from the exact plan instead, :mod:`procure.program.model.crossover`);
#: re-solves after new cuts start the dual simplex from that vertex.
COLD_METHOD = "ipm"
#: Share of a narrowed bound (:mod:`procure.program.solve.hill_range`) within which a source's
#: hours count as on it [1]: ten times HiGHS's primal feasibility tolerance.
NARROWED_AT = 1e-6
#: Smallest relative gap the refinement is asked for (target mode tightens towards it) [1].
TOLERANCE_FLOOR = 1e-9


def refine(program: Solving, deadline: float, tolerance: float) -> Refined:
    """Solve ``program`` at its budget and refine until the bounds agree within ``tolerance``.

    Raises
    ------
    SolveError
        Not certified (solver precision, or :data:`MAX_ROUNDS` rounds), or what the solve raises.
    """
    guided = _guided(program, deadline, tolerance)
    if guided is not None:
        return guided
    if program.built.cut_count == 0:  # built for the guide, which placed none: the spread first cuts
        add_cuts(program.built, *initial_points(program.built.arrays))
        program.highs.sync_cuts()
    _concave_start(program)
    rel_gap = tolerance * MIP_GAP_SHARE
    gap = math.inf
    for rounds in range(1, MAX_ROUNDS + 1):
        built = program.built
        a = built.arrays
        res = program.solve_once(deadline, rel_gap=rel_gap, cold=COLD_METHOD)
        x = np.clip(res.x, 0.0, built.sources.bound)
        w = np.clip(res.w, 0.0, a.bound)
        _e, v = a.value_of(w)
        true_value = built.true_objective(v)
        program.incumbent = max(program.incumbent, true_value)
        # a plan beyond the narrowed bounds is worth no more than narrowed_value (hill_range)
        upper = max(float(res.bound), true_value, program.narrowed_value)
        gap = relative_gap(upper, true_value)
        if closes(upper, true_value, tolerance):
            if _on_narrowed_bound(program, x):
                # its duals would price that bound: solve on with the sources' own, their forms anew
                dropped = set(np.flatnonzero(~np.isnan(np.asarray(program.narrowed))).tolist())
                program.narrowing = False
                points = {i: xs for i, xs in built.hill_breakpoints.items() if i not in dropped}
                program.rebuild(hill_breakpoints=points, deadline=deadline)
                continue
            return Refined(program.budget, x, w, true_value, upper, gap, rounds, res)
        if not _progress(program, w, res.z, v, upper, float(res.bound) - res.objective, deadline):
            if rel_gap > TOLERANCE_FLOOR:
                rel_gap = max(rel_gap / 10, TOLERANCE_FLOOR)
                continue
            raise SolveError(
                f"not certified: the gap {gap:.2e} does not close below the tolerance {tolerance:.0e} "
                "(solver precision): raise --tolerance",
                Reason.NOT_CERTIFIED,
            )
    raise SolveError(
        f"not certified: after {MAX_ROUNDS} rounds the gap is {gap:.2e}, above the tolerance "
        f"{tolerance:.0e}: raise --tolerance",
        Reason.NOT_CERTIFIED,
    )


def _guided(program: Solving, deadline: float, tolerance: float) -> Refined | None:
    """One solve with the model's cuts placed at the optimum the dual gives (see
    :mod:`procure.program.dual`), for one scenario of concave curves with no integer terms: the
    dual's multipliers and hours, made exact (:mod:`procure.program.solve.polish`), are where each curve
    gets a tangent cut; the model solved once then bounds the plan within the tolerance. None
    where the program does not qualify or the bound does not close (the loop goes on from there,
    the cuts kept)."""
    built = program.built
    a = built.sources
    if not program.dual_guide or program.fixed_hours is not None or isinstance(built.formulation, PeriodProblem):
        return None
    if not built.formulation.certain:
        return _guided_expected(program, deadline, tolerance)
    if built.has_integers or not eligible(a):
        return None
    rows = coupling_rows(program.problem, program.budget, built.capacity_names)
    start = program.last.refined.mu if program.last is not None else None
    if start is not None and len(start) != len(rows.b):
        start = None
    dual = solve_dual(a, rows, start)
    exact = polish_from(program, dual.x, dual.mu, -math.inf)
    # Every curve gets a cut at the point found (the model may have been built without others);
    # on a re-solve (a sweep's next point, a new budget) a curve whose point has not moved keeps
    # the cut it has, and the one warm solve that follows certifies.
    curves = np.arange(len(a.rate))
    if add_cuts(built, curves, a.rate * (a.held + (exact.x if exact is not None else dual.x))):
        program.highs.sync_cuts()
    if exact is None:
        return None
    mu = np.array([exact.lam, *(exact.shadow[name] for name in rows.names[1:])])
    point = None if program.highs.has_basis() else start_from(program.highs, exact.x, mu)
    return _closed(program, deadline, tolerance, exact.x, exact.x, exact.value, start=point, mu=mu)


def _on_narrowed_bound(program: Solving, x: np.ndarray) -> bool:
    """Whether some source's hours sit on a bound the program narrowed (:attr:`Program.narrowed
    <procure.program.solve.program.Program.narrowed>`)."""
    narrowed = program.narrowed
    if narrowed is None:
        return False
    # a source narrowed to 0 hours is not bought: the integers its form fixes in the LP the
    # duals are read from hold it at 0 whatever its bound
    bound = np.nan_to_num(narrowed, nan=np.inf)
    return bool(np.any((bound > 0) & (x >= bound * (1 - NARROWED_AT))))


def _concave_start(program: Solving) -> None:
    """Before the first solve of a one-scenario program with terms the dual cannot price (S-shaped
    curves, minimum orders, fees, lots), a tangent cut on each concave curve where the dual of its
    concave part alone puts it; see ``docs/certification.md``, "S-shaped curves, lots, minimum
    orders and fees: the integer form"."""
    built = program.built
    a = built.sources
    if (not program.dual_guide or program.fixed_hours is not None or isinstance(built.formulation, PeriodProblem)
            or not built.formulation.certain or eligible(a)):  # fmt: skip
        return
    found = priced_dual(a, coupling_rows(program.problem, program.budget, built.capacity_names))
    if found is None:
        return
    part, dual = found
    curves = np.flatnonzero(part)
    if add_cuts(built, curves, a.rate[curves] * (a.held[curves] + np.clip(dual.x[curves], 0.0, a.room[curves]))):
        program.highs.sync_cuts()


def _closed(
    program: Solving, deadline: float, tolerance: float, x: np.ndarray, w: np.ndarray, value: float,
    *, start: highspy.HighsSolution | None = None, mu: np.ndarray | None = None,
) -> Refined | None:  # fmt: skip
    """One solve of the model as it stands (from ``start`` where given,
    :mod:`procure.program.model.crossover`); the plan of hours ``x`` (``w`` per curve) worth
    ``value``, if its bound closes on it."""
    res = program.solve_once(deadline, rel_gap=tolerance * MIP_GAP_SHARE, cold=COLD_METHOD, start=start)
    upper = max(float(res.bound), value)
    if not closes(upper, value, tolerance):
        return None
    return Refined(program.budget, x, w, value, upper, relative_gap(upper, value), 1, res, mu=mu)


def _guided_expected(program: Solving, deadline: float, tolerance: float) -> Refined | None:
    """The guided solve of an expected-value scenario program (:mod:`procure.program.dual.family`):
    each (scenario, source) curve gets a cut at its effective hours at the dual's optimum, and the
    model is solved once; None where the program does not qualify or the bound does not close."""
    built = program.built
    sp = built.formulation
    a = built.sources
    if not isinstance(sp, ScenarioProblem) or built.has_integers or not qualifies(sp, a):
        return None
    rows = coupling_rows(program.problem, program.budget, built.capacity_names)
    dual = solve_expected_dual(sp, a, rows)
    if not (dual.converged and np.all(np.isfinite(dual.x))):
        return None
    x = np.clip(dual.x, 0.0, a.room)
    scale = np.maximum(1.0, np.abs(rows.b) + np.abs(rows.A) @ x)
    if np.any(rows.A @ x > rows.b + FEASIBILITY * scale):
        return None
    c = built.arrays
    w = np.tile(x, sp.count)
    if add_cuts(built, np.arange(len(c.rate)), c.rate * (c.held + w)):
        program.highs.sync_cuts()
    _e, v = c.value_of(w)
    return _closed(program, deadline, tolerance, x, w, built.true_objective(v))


def _progress(program: Solving, w: np.ndarray, z: np.ndarray, v: np.ndarray, upper: float, mip_gap: float,
              deadline: float) -> bool:  # fmt: skip
    """Make the round's progress where the gap lies; False if neither cuts nor breakpoints help.

    ``w`` is the hours each curve's value is read at, ``z`` the value the model credits each
    curve, ``v`` its true value, ``mip_gap`` the solver's bound less its objective.
    """
    built = program.built
    a = built.arrays
    excess = z - v
    over = excess > max(CUT_THRESHOLD * max(1.0, abs(upper)), CUT_MIN_EXCESS)
    cut_part = float(np.sum(np.maximum(excess[a.concave], 0.0)))
    hill_part = float(np.sum(np.maximum(excess[~a.concave], 0.0)))
    mip_part = max(0.0, mip_gap)
    if mip_part > cut_part + hill_part:
        return False  # the gap is the branch and bound's: tighten it
    candidates = np.flatnonzero(over & a.concave)
    if len(candidates) and (cut_part >= hill_part or not np.any(over & ~a.concave)):
        if add_cuts(built, candidates, a.rate[candidates] * (a.held[candidates] + w[candidates])):
            program.highs.sync_cuts()
            return True
    coarse = [i for i in np.flatnonzero(over & ~a.concave).tolist() if i in built.hill_breakpoints]
    if coarse:
        points = built.hill_breakpoints
        program.rebuild(hill_breakpoints=points | {i: refined_breakpoints(points[i], float(w[i])) for i in coarse},
                        deadline=deadline)  # fmt: skip
        return True
    return False
