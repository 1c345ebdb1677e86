"""Reading a certified solve out of the program: its exact hours, λ and shadow prices, the
money it uses, and the plan over the formulation's axes (one scenario, periods, formats).

These functions read a program through its face (:class:`procure.program.solve.state.Solving`): the
refinement, the target search and :class:`procure.program.solve.program.Program` each call them.
"""

from __future__ import annotations

import time
from dataclasses import replace

import highspy
import numpy as np

from ..dual.prices import with_box_duals
from ..model.forms import add_cuts
from ..model.highs import SolverResult
from ..numbers.infrastructure import Infrastructure
from ..numbers.periods import PeriodProblem
from ..numbers.problem import CAPACITIES
from ..rows import coupling_rows
from ..solve.polish import DUAL_ZERO, polish
from ..solve.sharpen import sharpened
from ..solve.state import Refined, Solving
from .infrastructure import option_spend, read_infra_plan
from .periods import budget_dual, read_period_plan, single_period_plan
from .plan import Plan, read_plan, relative_gap


def _shadow(names: list[str], duals: list[float]) -> dict[str, float]:
    """Every capacity's shadow price (0 where it has no row) and each mix bound's, a dual below
    :data:`procure.program.solve.polish.DUAL_ZERO` read as 0 [value per unit]."""
    return dict.fromkeys(CAPACITIES, 0.0) | {
        k: (float(v) if v > DUAL_ZERO else 0.0) for k, v in zip(names, duals, strict=True)
    }


def exact_solve(program: Solving, r: Refined, deadline: float) -> tuple[Refined, float, dict[str, float]]:
    """A refined solve with its hours made exact where the optimality conditions can be solved
    (:mod:`procure.program.solve.polish`), and its λ [value per $] and shadow prices [value per unit].

    Without integer terms the model then gets tangent cuts at the exact hours and is solved
    once more, so its bound (the plan's ``value_upper_bound``, what solving the program's model
    gives) closes on the exact value; with integer terms the bound stays the last solve's.
    """
    built = program.built
    if r.mu is not None:  # exact already (the dual-guided solve)
        rows = coupling_rows(program.problem, program.budget, built.capacity_names)
        a = built.sources
        mu = with_box_duals(r.mu, rows.A, rows.b, range(1, 1 + len(built.capacity_names)), r.x, a.room,
                            a.slope_of(r.x))  # fmt: skip
        return r, float(mu[0]), _shadow(rows.names[1:], list(mu[1:]))
    polished = polish(program, r)
    if polished is None:  # the certified hours stand; the prices are read where the slopes are pinned
        solution, lp = sharpened(program, r, deadline)
        lam, shadow = duals_of(program, solution, lp)
        return replace(r, prices=lp), lam, shadow
    upper = r.upper
    if not built.has_integers:
        a = built.arrays
        curves = np.flatnonzero(a.concave & (a.rate > 0))
        if add_cuts(built, curves, a.rate[curves] * (a.held[curves] + polished.x[curves])):
            program.highs.sync_cuts()
            upper = program.solve_once(deadline, rel_gap=program.tolerance).bound
        upper = min(upper, polished.bound)
    upper = max(upper, polished.value)
    gap = relative_gap(upper, polished.value)
    shadow = _shadow(list(polished.shadow), list(polished.shadow.values()))
    exact = replace(r, x=polished.x, w=polished.x, value=polished.value, upper=upper, gap=gap)
    return exact, polished.lam, shadow


def plan_of(
    program: Solving, r: Refined, lam: float, shadow: dict[str, float], *, rounds: int, gap: float,
    money_lower_bound: float, t0: float, single: PeriodProblem | None, build_seconds: float,
) -> Plan:  # fmt: skip
    """The plan of a refined solve: λ [value per $], the shadow prices [value per unit], the
    rounds and gap it took, target mode's ``money_lower_bound`` [$], the solve's start ``t0``
    (:func:`time.perf_counter`) [s]; ``single`` is the one-period problem solved as today's
    program, read out over its period; ``build_seconds`` the model's build time [s]."""
    plan = read_plan(program.problem, x=r.x, room=program.built.room, value=r.value, value_upper_bound=r.upper,
                     gap=gap, tolerance=program.tolerance, lambda_=lam, shadow_prices=shadow, rounds=rounds,
                     cuts=program.built.cut_count, build_seconds=build_seconds,
                     solve_seconds=time.perf_counter() - t0, money_lower_bound=money_lower_bound)  # fmt: skip
    formulation = program.formulation
    if isinstance(formulation, Infrastructure):
        h, res = program.highs, r.results
        return read_infra_plan(formulation, plan, h.values(res, "q"), h.values(res, "rented"),
                               h.values(res, "core"))  # fmt: skip
    if single is not None:
        return single_period_plan(replace(single, base=single.base.asking(budget=r.budget)), plan)
    if isinstance(formulation, PeriodProblem):
        pp = replace(formulation, base=program.problem.asking(budget=r.budget))
        duals = program.highs.row_duals(r.results, r.prices)
        return read_period_plan(pp, plan, program.highs.values(r.results, "y"), duals, period_rows_of(program))
    return plan


def money_of(program: Solving, r: Refined) -> float:
    """The money a budget-mode solve uses [$]: what its plan spends; over periods, the budget
    that must arrive (split by the periods' shares)."""
    f = program.formulation
    problem = program.problem
    if isinstance(f, Infrastructure):
        fee = problem.column("fixed_fee_usd") @ problem.bought(r.x)
        return option_spend(f, program.highs.values(r.results, "q"), program.highs.values(r.results, "rented"), fee)
    return r.budget if isinstance(f, PeriodProblem) else problem.spend(r.x)


def money_dual_of(program: Solving, r: Refined) -> float:
    """λ of a refined budget-mode solve just made: the value of one more budget dollar [value per $]."""
    if isinstance(program.formulation, PeriodProblem):
        return budget_dual(program.formulation, program.highs.row_duals(r.results, r.prices), period_rows_of(program))
    return program.highs.duals(r.results)[0]


def period_rows_of(program: Solving) -> dict[str, list[int]]:
    """Over periods, the matrix row of each money, capacity and mix row per run ``b = ω T + t``
    (-1 where a run has no such row): ``"budget"``, each capacity's name, ``"max_share:KEY"``."""
    h = program.highs
    names = ["budget", *program.built.capacity_names, *(f"max_share:{key}" for key in program.problem.max_share)]
    return dict(zip(names, [h.budget_rows, *h.capacity_rows, *h.mix_rows], strict=True))


def duals_of(program: Solving, res: SolverResult, lp: highspy.Highs | None = None) -> tuple[float, dict[str, float]]:
    """λ [value per $] and the shadow prices [value per unit], from the LP (with integers fixed
    at the plan if any; ``lp``, an LP of the model with rows appended, where given)."""
    lam, capacity, mix = program.highs.duals(res, lp)
    names = [str(r) for r in program.built.capacity_names] + [f"max_share:{k}" for k in program.problem.max_share]
    return float(lam), _shadow(names, capacity + mix)
