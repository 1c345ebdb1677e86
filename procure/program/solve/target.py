"""Target mode: the least money whose plan reaches a value, bracketed by budget-mode solves.

The money is bracketed between a budget whose certified upper bound falls short of the
target and one whose plan truly reaches it, and the bracket is narrowed with budget-mode
solves of one model (Newton steps on λ for a linear program, the secant through the bracket's
ends with integers, bisection when two steps land on one side) until the two agree within the
tolerance. The plan's ``money_lower_bound`` is the short end: no plan that reaches the target
costs less.
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import Reason, SolveError
from ...ledger.schema import MOST_USD
from ..numbers.bounds import source_arrays
from ..numbers.periods import PeriodProblem
from ..readout.plan import Plan
from ..readout.solved import exact_solve, money_dual_of, money_of
from .diagnose import diagnose, least_money
from .refine import TOLERANCE_FLOOR, refine
from .state import Refined, Solving

#: Relative difference from the target below which a plan's value counts as reaching it, and a
#: bound as not falling short of it: float noise, a hundredth of HiGHS's feasibility tolerance
#: [1]. It matters only for a target equal to the most value the sources allow.
REACH_NOISE = 1e-9
#: Relative margin above the least money that meets the mix bounds at which target mode starts
#: its bracket: float noise, a hundredth of HiGHS's feasibility tolerance [1].
FLOOR_MARGIN = 1e-9
#: The least first budget target mode tries where its sources' best value per dollar is
#: known [$]: a budget must be > 0.
LEAST_FIRST_BUDGET = 1e-9
#: The least money the bracket's width and the gap are taken relative to [$] (a target the
#: hours held reach needs none).
LEAST_MONEY_SCALE = 1e-12
#: Most budget-mode solves target mode makes while bracketing and narrowing the money.
MAX_TARGET_STEPS = 200
#: The first budget at which the least money meeting the mix bounds is sought again where
#: sources' bounds come from the budget [$], and the factor by which that budget then grows
#: until the least money lies within it [1].
MIX_FLOOR_FIRST_BUDGET = 1e4
MIX_FLOOR_GROWTH = 10.0


def most_money(program: Solving) -> float:
    """Money that buys everything availability and capacities allow [$]; inf if unlimited."""
    p = program.problem
    room = source_arrays(p.asking(budget=0.0, target=None)).room
    finite = np.isfinite(room)
    if np.any(~finite & (p.cost > 0)):
        return math.inf
    price, share = p.cost, 1.0
    if isinstance(f := program.formulation, PeriodProblem):
        # Every hour at its dearest price with its bill at every run, and the money arriving
        # in the smallest share of any period that brings some.
        price = f.prices.max(axis=(0, 1)) + f.periods * f.bill
        share = float(f.share[f.share > 0].min())
    return float(np.sum(np.where(finite, price * room, 0.0)) + np.sum(p.column("fixed_fee_usd"))) / share


def evaluate(program: Solving, budget: float, deadline: float, target: float) -> tuple[Refined, str]:
    """A certified budget-mode solve at ``budget`` with its λ [value per $] (0 if the budget does
    not bind), decided against the target: ``"reaches"`` (the plan's true value is at least the
    target) or ``"short"`` (the upper bound is below it)."""
    program.at_budget(budget)
    tolerance = program.tolerance
    while True:
        r = refine(program, deadline, tolerance)
        if program.built.has_integers:  # λ: an average rate, a safe Newton step
            r.lam = r.value / r.budget if r.budget > 0 else 0.0
        else:
            r.lam = money_dual_of(program, r)
        noise = REACH_NOISE * max(1.0, abs(target))
        if r.value >= target - noise:
            return r, "reaches"
        if r.upper < target - noise or tolerance <= TOLERANCE_FLOOR:
            return r, "short"
        # Undecided: the value gap spans the target. A value gap g leaves the money
        # undecided over about g / λ; ask for half the money tolerance's worth of value.
        needed = 0.5 * program.tolerance * r.lam * budget / target if r.lam > 0 else 0.0
        tolerance = max(TOLERANCE_FLOOR, min(0.5 * tolerance, needed) if needed > 0 else 0.1 * tolerance)


def _mix_floor(program: Solving, most: float) -> tuple[float, float]:
    """The least money whose plan meets the mix bounds with the hours held [$] (0 without mix
    bounds, or where the hours held meet them), and a certified lower bound on it; ``most``, the
    most money the bracket reaches [$].

    Raises
    ------
    SolveError
        No purchase meets the mix bounds within the capacities (said in terms of money).
    """
    if not program.problem.max_share:
        return 0.0, 0.0
    # The least-money model has no budget row, but where a source's bound (an S-shaped curve's
    # last breakpoint, its lots' count, its on/off) comes from what the budget buys, it has the
    # bound of the budget it was put at: at 0, none of those sources could be bought. The least
    # money L is found once the budget is at least L (the cheapest plan then lies within every
    # bound), so the budget grows until the least money found is within it.
    budget = 0.0
    while True:
        program.at_budget(budget)
        found = least_money(program.built)
        if not program.built.budget_bounds or budget >= most or (found is not None and found[0] <= budget):
            break
        budget = min(most, max(MIX_FLOOR_GROWTH * budget, found[0] if found is not None else 0.0,
                               MIX_FLOOR_FIRST_BUDGET))  # fmt: skip
    if found is None:
        raise SolveError(diagnose(program.built, money=True), Reason.INFEASIBLE)
    least, bound = found
    if least <= 0:
        return 0.0, 0.0
    # A hair above the least money, so that the budget-mode model at it is feasible in floats.
    return least * (1 + FLOOR_MARGIN), bound


def solve_target(program: Solving, t0: float, deadline: float) -> Plan:
    """The least-money plan that reaches the program's target (see the module).

    Raises
    ------
    SolveError
        The target is out of reach, or what a budget-mode solve raises.
    """
    p = program.problem
    target = float(p.target or 0.0)
    steps = 0
    # the bracket stays within the budgets the program takes (the budget option's range)
    most = min(most_money(program), MOST_USD)
    floor, floor_bound = _mix_floor(program, most)
    lo = budget = floor
    r, verdict = evaluate(program, floor, deadline, target)
    hi, hi_r, lo_r = (floor, r, None) if verdict == "reaches" else (math.inf, None, r)
    if verdict == "short":
        with np.errstate(divide="ignore", invalid="ignore"):
            best_rate = np.max(np.where(p.cost > 0, p.rate / p.cost, 0.0), initial=0.0)
        guess = target / best_rate if best_rate > 0 else 1.0
        budget = min(max(guess, 2 * floor, LEAST_FIRST_BUDGET), most)
    # Bracket: grow the budget until its plan reaches the target.
    while hi_r is None:
        steps += 1
        r, verdict = evaluate(program, budget, deadline, target)
        if verdict == "reaches":
            hi, hi_r = budget, r
            break
        lo, lo_r = budget, r
        if budget >= most or steps >= MAX_TARGET_STEPS:
            capped = f"the most value a budget of ${MOST_USD:,.0f} (the largest the budget option takes) buys is "
            allowed = "the most value the sources' availability, the capacities and the mix bounds allow is "
            within = capped if most == MOST_USD else allowed
            raise SolveError(
                f"infeasible: target = {target:,.4g} is out of reach: {within}{r.upper:,.4g}", Reason.INFEASIBLE
            )
        newton = budget + (target - r.value) / r.lam if r.lam > 0 else math.inf
        budget = min(most, max(2 * budget, newton * (1 + program.tolerance)) if math.isfinite(newton) else 2 * budget)
    # Narrow (see the module): aim a hair above the estimated root, so that one step lands on each side of it.
    same_side, last = 0, ""
    while lo_r is not None:  # None: the hours held reach the target, no money needed
        top = min(hi, money_of(program, hi_r))
        hair = 0.5 * program.tolerance * max(top, LEAST_MONEY_SCALE)
        if top - lo <= 2 * hair or steps >= MAX_TARGET_STEPS:
            break
        steps += 1
        if lo_r.lam > 0 and not program.built.has_integers:
            estimate = lo + (target - lo_r.value) / lo_r.lam
        elif hi_r.value > lo_r.value:
            estimate = lo + (target - lo_r.value) * (top - lo) / (hi_r.value - lo_r.value)
        else:
            estimate = 0.5 * (lo + top)
        budget = min(max(estimate + hair, lo + hair), top - hair)
        if same_side >= 2:
            budget, same_side = 0.5 * (lo + top), 0
        r, verdict = evaluate(program, budget, deadline, target)
        same_side, last = (same_side + 1 if verdict == last else 1), verdict
        if verdict == "reaches":
            hi, hi_r = budget, r
        else:
            lo, lo_r = budget, r
    final, _ = evaluate(program, hi, deadline, target)
    final, lam, shadow = exact_solve(program, final, deadline)
    if lo_r is None:  # the least money that meets the mix bounds already reaches the target
        lo = floor_bound
    gap = money_gap(money_of(program, final), lo)
    return program.read(final, lam, shadow, rounds=steps + 1, gap=gap, money_lower_bound=lo, t0=t0)


def money_gap(spent: float, lower: float) -> float:
    """Target mode's gap: the money spent above its certified lower bound, relative to the money
    spent, ``(spent − lower) / spent`` (0 where below) [1]."""
    return max(0.0, spent - lower) / max(spent, LEAST_MONEY_SCALE)
