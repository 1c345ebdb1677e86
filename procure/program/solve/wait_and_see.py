"""The wait-and-see values of many scenarios at once: one Lagrangian dual per scenario, all
minimised together, each certified by its own bounds.

EVPI needs, for every scenario ω, the best value of the deterministic problem at ω's numbers
(:meth:`procure.program.numbers.scenarios.ScenarioProblem.scenario`). Where that problem qualifies
for the dual (:func:`procure.program.paths.eligible`), its dual is one problem of
:class:`procure.program.dual.terms.CurveTerms` with ω's rates, scales and rows; the scenarios
share the sources, their curves, boxes and the shape of their coupling rows, so the K duals are
minimised as one batch by the program's one minimiser (:mod:`procure.program.dual.newton`):
every evaluation is a few array operations on K × n numbers, and each projected Newton step
solves K small systems at once.

Each scenario's value is certified as :func:`procure.program.solve.certify.dual_certified`
certifies one, but its plan is the hours at its multipliers clipped to their boxes (not
polished), those that break a coupling row (by float noise) scaled down until it holds
(:func:`procure.program.rows.within_rows`); its value is that plan's. A scenario that is not
certified gets ``None``, and the caller solves it on its own.
"""

from __future__ import annotations

import numpy as np

from ..dual.newton import minimise
from ..dual.terms import CurveTerms, Terms
from ..numbers.bounds import CurveArrays, source_arrays
from ..numbers.problem import Mode
from ..numbers.scenarios import ScenarioProblem
from ..paths import eligible
from ..readout.plan import VALUE_ABS_TOLERANCE
from ..rows import capacity_rows_of, scenario_rows, within_rows
from .polish import FEASIBILITY


def _qualified_arrays(sp: ScenarioProblem) -> CurveArrays | None:
    """The sources' arrays where the scenarios' duals can be minimised together, else None."""
    if sp.base.mode is not Mode.BUDGET or sp.count == 0:
        return None
    a = source_arrays(sp.base)
    return a if eligible(a) else None


def qualifies(sp: ScenarioProblem) -> bool:
    """True where the scenarios' duals can be minimised together: budget mode and sources the dual
    prices (:func:`procure.program.paths.eligible`; their curves are the same in every scenario)."""
    return _qualified_arrays(sp) is not None


def wait_and_see_values(sp: ScenarioProblem, tolerance: float) -> list[float | None]:
    """Each scenario's best value, certified within ``tolerance`` by its dual [own-hour
    equivalents], or None where it is not (the caller solves that scenario on its own).

    All None where the problem does not qualify (:func:`qualifies`).
    """
    base = sp.base
    a = _qualified_arrays(sp)
    if a is None:
        return [None] * sp.count
    rows = scenario_rows(base, sp.rate, float(base.budget or 0.0), capacity_rows_of(base))
    A, b = rows.A, rows.b
    if sp.recourse_price_x is not None:
        later = np.where(sp.later_ok[None, :], sp.recourse_price_x * sp.later_cost, np.inf)
        A[:, 0, :] = np.minimum(base.cost[None, :], later)
    d = CurveTerms(sp.rate.astype(float), sp.saturation_hours.astype(float), a.held, a.room, a.shape, a.curve, A, b)
    found = minimise(d)
    lower, good = certified_values(d, found.mu, found.bound, found.x, tolerance)
    return [float(v) if ok else None for v, ok in zip(lower, good, strict=True)]


def certified_values(d: Terms, mu: np.ndarray, upper: np.ndarray, x: np.ndarray,
                     tolerance: float) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Each problem's lower bound and whether it is certified (see the module): its multipliers
    ``mu``, bound ``upper`` = g(μ) and hours ``x`` at μ, one row per problem of ``d``."""
    sel = np.arange(len(upper))
    A, b = d.A[sel], d.b[sel]
    finite = np.all(np.isfinite(x), axis=1) & np.isfinite(upper)
    x = np.where(finite[:, None], np.clip(np.nan_to_num(x, posinf=0.0), 0.0, d.room), 0.0)
    x = within_rows(A, b, x)
    met = np.all(np.isfinite(x), axis=1)
    x = np.where(met[:, None], x, 0.0)
    used = np.einsum("kmn,kn->km", A, x)
    scale = np.maximum(1.0, np.abs(b) + np.einsum("kmn,kn->km", np.abs(A), np.abs(x)))
    feasible = np.all(used <= b + FEASIBILITY * scale, axis=1) & met
    lower = d.values(x, sel)
    closes = upper - lower <= np.maximum(tolerance * np.abs(upper), VALUE_ABS_TOLERANCE)
    return lower, finite & feasible & closes & np.isfinite(lower) & (mu >= 0).all(axis=1)
