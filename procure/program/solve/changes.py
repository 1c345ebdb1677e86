"""Changes to a program between solves: a new budget, new prices or bills.

:class:`Changes` is part of :class:`procure.program.solve.program.Program`: it sets the model's
parameters (the costs, the later costs, the budget) and tells the hand-over to follow, or
rebuilds where a bound the model was built with would no longer hold.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from ...errors import invalid
from ..numbers.bounds import check_lots
from ..numbers.problem import Mode, Problem, check_budget
from ..numbers.question import other_numbers

if TYPE_CHECKING:
    from ..model.build import BuiltModel, Formulation
    from ..model.highs import HighsModel
    from ..numbers.periods import PeriodProblem


class Changes:
    """A new budget, new prices or new costs for the next solve of a :class:`Program
    <procure.program.solve.program.Program>`."""

    if TYPE_CHECKING:  # what the program holds, which these change
        formulation: Formulation
        single: PeriodProblem | None
        _built: BuiltModel | None
        narrowed: np.ndarray | None
        incumbent: float

        @property
        def problem(self) -> Problem: ...

        @property
        def highs(self) -> HighsModel: ...

        @property
        def budget(self) -> float: ...

        def at_budget(self, budget: float) -> None: ...

        def rebuild(self) -> None: ...

    def set_budget(self, budget: float) -> None:
        """A new budget [$] for the next :meth:`~procure.program.solve.program.Program.solve` (budget mode)."""
        budget = check_budget(budget)
        if self.problem.mode is not Mode.BUDGET:
            raise invalid("budget", budget, "the program is in target mode: its money is what it finds")
        self.formulation = replace(self.formulation, base=self.problem.asking(budget=budget))
        self.at_budget(budget)

    def reprice(self, problem: Problem) -> None:
        """The same sources at new prices or bills (a new byte price, say) [$/h]; the cuts stay valid.

        Sets the model's cost parameters (with recourse, the later costs too, which move with
        the transport bill) and sends the changed coefficients to HiGHS, which keeps its basis;
        rebuilds only where a source's bound came from the budget and would loosen.

        Raises
        ------
        InputError
            ``problem`` has other sources than the program's, other numbers than their prices
            and bills (:data:`procure.program.numbers.question.PRICE_COLUMNS`), or a cost that is not ≥ 0; or the
            program is over periods (one period included: its prices and bills are the periods
            file's, which its read-out keeps).
        """
        if self.single is not None:
            self.single.with_base(problem)  # refused, as for several periods: re-read the periods file
        old = self.problem
        if problem.n != old.n or not np.array_equal(
            problem.sources["source"].to_numpy(), old.sources["source"].to_numpy()
        ):
            raise invalid("problem", "other sources", f"must price the same {old.n} sources, in the same order")
        other = other_numbers(old, problem)
        if other:
            raise invalid("problem", f"other {other}", "must differ from the program's in prices and bills only "
                          "(build a new Program for other numbers)")  # fmt: skip
        cost = problem.cost
        if not np.all(np.isfinite(cost) & (cost >= 0)):
            raise invalid("cost", cost, f"must be {old.n} numbers ≥ 0 [$/h], one per source")
        problem = problem.asking(budget=old.budget, target=old.target, max_share=old.max_share)
        self.formulation = self.formulation.with_base(problem)
        b = self._built
        if b is None:
            return
        loosens = np.any(b.sources.budget_bounded & (cost < old.cost))
        self.incumbent = -math.inf
        if (
            loosens
            or self.narrowed is not None
            or (self.formulation.recourse_price_x is not None and np.any(b.arrays.budget_bounded))
        ):
            self.rebuild()
            return
        check_lots(problem, b.sources, self.budget)
        m = b.model
        changed = np.flatnonzero(cost != old.cost)
        # the costs were checked above (finite, ≥ 0), so Pyomo's own check per item is skipped
        m.cost.store_values(dict(zip(changed.tolist(), cost[changed].tolist(), strict=True)), check=False)
        if self.formulation.recourse_price_x is not None:
            later = self.formulation.later_cost
            for (k, i), param in m.later.items():
                param.set_value(float(later[k, i]))
        self.highs.sync_costs()

    def set_costs(self, cost: np.ndarray) -> None:
        """New all-in prices per hour [$/h], in source order, the purchase price taking the
        change (the bill's terms stay the pipeline's); see :meth:`reprice`."""
        cost = np.asarray(cost, dtype=float)
        if cost.shape != (self.problem.n,) or not np.all(np.isfinite(cost) & (cost >= 0)):
            raise invalid("cost", cost, f"must be {self.problem.n} numbers ≥ 0 [$/h], one per source")
        self.reprice(self.problem.with_cost(cost))
