"""What a browser session asks the workers for and what it gets back: a plan request, the
formatted view of its plan, a drawing to make (:mod:`.work` runs them in worker processes).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..tables import Rows, capacity_rows, plan_numbers, plan_rows, rank_rows

if TYPE_CHECKING:
    from ...ledger import Ledger
    from ...program import Plan, Problem


@dataclass(frozen=True)
class PlanRequest:
    """What a session asks a plan for: its ledger (as read, with a token that changes when the
    files do), held hours [h] and mix bounds [1] by name, and the budget [$]."""

    ledger: Ledger = field(compare=False, repr=False)
    token: Hashable
    held: tuple[tuple[str, float], ...]
    shares: tuple[tuple[str, float], ...]
    budget: float

    def problem(self) -> Problem:
        """The problem of this request (:func:`procure.program.from_ledger`)."""
        from ...program import from_ledger

        return from_ledger(self.ledger, budget=self.budget, held=dict(self.held), max_share=dict(self.shares) or None)

    def formulation(self) -> Any:
        """What the program solves for this request: over the ledger folder's periods when it has
        a ``periods.csv``, over purchase options when its sources or cluster ask for a choice of
        infrastructure (:func:`procure.analyses.infra.chooses`), else the problem itself."""
        from ...analyses.infra import infra_request
        from ...ledger.periods import ledger_periods, read_periods
        from ...program.numbers.periods import period_problem

        problem = self.problem()
        path = ledger_periods(self.ledger.path, None)
        if path is not None:
            return period_problem(problem, read_periods(path, self.ledger.sources))
        options = infra_request(problem, self.ledger)
        return options if options is not None else problem


@dataclass(frozen=True, eq=False)
class PlanView:
    """What the Plan page shows of a plan, formatted where it was solved
    (:mod:`procure.interfaces.tables`): its numbers, the plan table (the sources with the most
    money first), the capacities and the sources table (the first sources)."""

    numbers: dict[str, str]
    plan: Rows
    capacities: Rows
    sources: Rows
    schedule: Rows | None = None
    periods: Rows | None = None
    formats: Rows | None = None
    infrastructure: tuple[str, ...] = ()

    @classmethod
    def of(cls, plan: Plan, sources: Rows) -> PlanView:
        """The view of a solved plan, with the sources table of its problem (:func:`sources_rows`);
        over periods with its schedule, with infrastructure with its formats and choices."""
        from ..infra_tables import format_rows, infrastructure_lines
        from ..schedule_tables import PERIOD_COLUMNS, period_rows, schedule_rows, schedule_rows_by_period

        view = cls(plan_numbers(plan), plan_rows(plan), capacity_rows(plan), sources)
        if plan.schedule is not None and plan.periods is not None:
            hours = schedule_rows_by_period(plan) if len(plan.periods) > PERIOD_COLUMNS else schedule_rows(plan)
            view = replace(view, schedule=hours, periods=period_rows(plan))
        if plan.infrastructure is not None:
            view = replace(view, formats=format_rows(plan), infrastructure=tuple(infrastructure_lines(plan)))
        return view


def sources_rows(problem: Problem) -> Rows:
    """The sources table of a problem: each source's price, transport bill, share and cost per
    useful hour (:func:`procure.analyses.rank.ranking_table`), the first sources."""
    from ...analyses.rank import ranking_table

    return rank_rows(ranking_table(problem))


@dataclass(frozen=True, eq=False)
class Solved:
    """A plan solved for a session: the plan, its problem and its view."""

    plan: Plan
    problem: Problem
    view: PlanView


@dataclass(frozen=True)
class Drawing:
    """A figure to draw: ``what`` names a function of :data:`procure.interfaces.pages.work.FIGURES`, ``key`` says which
    inputs it shows (two drawings of one key are the same), ``args`` are its arguments."""

    what: str
    key: Hashable
    args: tuple[Any, ...] = field(compare=False, repr=False, default=())
