"""What the solve loop reads of a program: the refined solve it records, and the program's face.

:class:`Refined` is a budget-mode solve refined until certified. :class:`Solving` is the part of
:class:`procure.program.solve.program.Program` that the refinement, target search and exact-hours
steps use (the model, its hand-over, the budget, re-solves), so that those modules depend on
this face and not on the class that composes them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:  # the face names the model's types; the loop that reads it imports no model
    import highspy

    from ..model.build import BuiltModel, Formulation
    from ..model.highs import HighsModel, SolverResult
    from ..numbers.periods import PeriodProblem
    from ..numbers.problem import Problem
    from ..readout.plan import Plan


@dataclass
class Refined:
    """A budget-mode solve refined until certified.

    Attributes
    ----------
    budget : float
        The budget it was solved at [$].
    x : numpy.ndarray
        Hours bought now of each source [h].
    w : numpy.ndarray
        Hours each curve's value was read at [h].
    value, upper, gap : float
        The true objective, the bound and their relative gap.
    rounds : int
        Rounds taken.
    results : SolverResult
        The last solver answer.
    lam : float
        λ where target mode asked for it (NaN otherwise).
    mu : numpy.ndarray or None
        The exact multipliers of the coupling rows (budget, capacities, mix bounds, in
        :func:`procure.program.rows.coupling_rows` order) when the hours are exact; None when
        they are the LP's.
    prices : highspy.Highs or None
        The LP the prices are read from where it is not the model's own
        (:func:`procure.program.solve.sharpen.sharpened`); None: the model's.
    """

    budget: float
    x: np.ndarray
    w: np.ndarray
    value: float
    upper: float
    gap: float
    rounds: int
    results: Any
    lam: float = math.nan
    mu: np.ndarray | None = None
    prices: Any = None


@dataclass(frozen=True)
class Solved:
    """What the last solve of a program ended with, beside its plan.

    Attributes
    ----------
    hours : numpy.ndarray
        Hours bought now of each source [h].
    curve_hours : numpy.ndarray
        Hours each curve's value was read at (per scenario with recourse) [h].
    refined : Refined
        The certified budget-mode solve the plan was read from.
    """

    hours: np.ndarray
    curve_hours: np.ndarray
    refined: Refined


class Solving(Protocol):
    """The program as the solve loop sees it: what each member is, is said in
    :class:`procure.program.solve.program.Program`."""

    tolerance: float
    fixed_hours: np.ndarray | None
    dual_guide: bool
    last: Solved | None
    formulation: Formulation
    narrowed: np.ndarray | None
    narrowed_value: float
    incumbent: float
    narrowing: bool
    first_hill_points: int
    single: PeriodProblem | None

    @property
    def problem(self) -> Problem: ...
    @property
    def built(self) -> BuiltModel: ...
    @property
    def built_if_any(self) -> BuiltModel | None: ...
    @property
    def highs(self) -> HighsModel: ...
    @property
    def budget(self) -> float: ...
    def solve_once(
        self, deadline: float, *, rel_gap: float, cold: str = "choose", start: highspy.HighsSolution | None = None
    ) -> SolverResult: ...
    def rebuild(self, *, hill_breakpoints: dict[int, np.ndarray] | None = None, deadline: float = math.inf) -> None: ...
    def at_budget(self, budget: float) -> None: ...
    def read(
        self, r: Refined, lam: float, shadow: dict[str, float], *, rounds: int, gap: float,
        money_lower_bound: float, t0: float,
    ) -> Plan: ...  # fmt: skip
