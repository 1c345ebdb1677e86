"""A program's new prices or bills between solves: :meth:`Program.reprice
<procure.program.solve.program.Program.reprice>` says what changes and when the model is rebuilt."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ...errors import invalid
from ..numbers.bounds import check_lots
from ..numbers.problem import Problem
from ..numbers.question import other_numbers

if TYPE_CHECKING:
    from .state import Solving


def reprice(program: Solving, problem: Problem) -> None:
    """Put ``program`` at ``problem``'s prices and bills (see :meth:`Program.reprice
    <procure.program.solve.program.Program.reprice>`, which raises what this raises)."""
    if program.single is not None:
        program.single.with_base(problem)  # refused, as for several periods: re-read the periods file
    old = program.problem
    if problem.n != old.n or not np.array_equal(problem.sources["source"].to_numpy(), old.sources["source"].to_numpy()):
        raise invalid("problem", "other sources", f"must price the same {old.n} sources, in the same order")
    other = other_numbers(old, problem)
    if other:
        raise invalid("problem", f"other {other}", "must differ from the program's in prices and bills only "
                      "(build a new Program for other numbers)")  # fmt: skip
    cost = problem.cost
    if not np.all(np.isfinite(cost) & (cost >= 0)):
        raise invalid("cost", cost, f"must be {old.n} numbers ≥ 0 [$/h], one per source")
    problem = problem.asking(budget=old.budget, target=old.target, max_share=old.max_share)
    program.formulation = program.formulation.with_base(problem)
    b = program.built_if_any
    if b is None:
        return
    loosens = np.any(b.sources.budget_bounded & (cost < old.cost))
    program.incumbent, program.narrowing = -math.inf, True  # the old prices' best plan and bounds
    later_bounded = program.formulation.recourse_price_x is not None and np.any(b.arrays.budget_bounded)
    if loosens or program.narrowed is not None or later_bounded:
        program.rebuild()
        return
    check_lots(problem, b.sources, program.budget)
    m = b.model
    changed = np.flatnonzero(cost != old.cost)
    # the costs were checked above (finite, ≥ 0), so Pyomo's own check per item is skipped
    m.cost.store_values(dict(zip(changed.tolist(), cost[changed].tolist(), strict=True)), check=False)
    if program.formulation.recourse_price_x is not None:
        later = program.formulation.later_cost
        m.later.store_values({(k, i): float(later[k, i]) for k, i in m.later})
    program.highs.sync_costs()
