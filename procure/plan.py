"""The answer of the procurement program: what to buy, what it costs, and why."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from .output import jsonable

#: Columns of ``Plan.sources`` with their units.
PLAN_COLUMNS = {
    "source": "name",
    "kind": "text",
    "hours": "h bought",
    "held_hours": "h already held",
    "purchase_usd": "$ (price × hours, plus the fixed fee if bought)",
    "transport_usd": "$ (transport bill × hours)",
    "effective_hours": "effective h, held and bought",
    "value": "own-hour equivalents",
    "marginal_value_per_usd": "value per $ of the next hour, capacity charges included",
    "marginal_value_per_usd_price_only": "value per $ of the next hour at price + transport",
    "position": "zero | between | cap (where the source sits between its bounds)",
}

#: Columns of ``Plan.capacities`` with their units.
CAPACITY_COLUMNS = {
    "capacity": "name",
    "unit": "text",
    "used": "unit, held and bought",
    "limit": "unit (inf = unlimited)",
    "slack": "unit",
    "binding": "bool",
    "shadow_price": "value per unit",
    "shadow_usd": "$ per unit: what one more unit is worth, in budget dollars",
}


@dataclass(frozen=True)
class Plan:
    """A certified plan.

    Attributes
    ----------
    mode : str
        ``"budget"`` (most value for the money) or ``"target"`` (least money for the value).
    status : str
        ``"optimal"``: the plan's true value and the upper bound agree within ``tolerance``
        (relative) or ``procure.program.VALUE_ABS_TOLERANCE`` (absolute, solver noise).
    value : float
        True value of the plan, Σ v_s(e_s) [own-hour equivalents].
    value_upper_bound : float
        No plan is worth more than this (budget mode) [own-hour equivalents]; in target mode,
        the value the solver's piecewise form credits the plan with.
    gap : float
        ``(value_upper_bound − value) / |value_upper_bound|`` [1].
    tolerance : float
        The gap the refinement stopped at [1].
    lambda_ : float
        Value of the next budget dollar, λ [own-hour equivalents per $]; in target mode, the
        dollars one more unit of value costs is ``1 / lambda_``.
    shadow_prices : dict of str to float
        Value of one more unit of each capacity (and mix bound) [value per unit].
    sources : pandas.DataFrame
        One row per source, columns of :data:`PLAN_COLUMNS`.
    capacities : pandas.DataFrame
        One row per capacity, columns of :data:`CAPACITY_COLUMNS`.
    budget, spent_usd, purchase_usd, transport_usd : float
        The budget (NaN in target mode) and what the plan spends, all in and by part [$].
    target : float
        The value asked for in target mode (NaN in budget mode).
    rounds, cuts : int
        Refinement rounds and tangent cuts in the final model.
    build_seconds, solve_seconds : float
        Wall time to build the Pyomo model and to solve and refine it [s].
    notes : list of str
        What a reader should know (sources that cannot be bought, and why).
    """

    mode: str
    status: str
    value: float
    value_upper_bound: float
    gap: float
    tolerance: float
    lambda_: float
    shadow_prices: dict[str, float]
    sources: pd.DataFrame
    capacities: pd.DataFrame
    budget: float
    spent_usd: float
    purchase_usd: float
    transport_usd: float
    target: float
    rounds: int
    cuts: int
    build_seconds: float
    solve_seconds: float
    notes: list[str] = field(default_factory=list)

    @property
    def binding(self) -> list[str]:
        """Names of the capacities that bind."""
        return list(self.capacities.loc[self.capacities["binding"], "capacity"])

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``procure solve`` (DESIGN.md §6 keys first, then more)."""
        rows = self.sources[
            [
                "source", "hours", "purchase_usd", "transport_usd", "effective_hours", "value",
                "marginal_value_per_usd", "kind", "held_hours", "position",
                "marginal_value_per_usd_price_only",
            ]
        ].to_dict("records")  # fmt: skip
        return jsonable(
            {
                "status": self.status,
                "value": self.value,
                "value_upper_bound": self.value_upper_bound,
                "lambda": self.lambda_,
                "shadow_prices": self.shadow_prices,
                "plan": rows,
                "mode": self.mode,
                "gap": self.gap,
                "tolerance": self.tolerance,
                "budget": self.budget,
                "target": self.target,
                "spent_usd": self.spent_usd,
                "purchase_usd": self.purchase_usd,
                "transport_usd": self.transport_usd,
                "capacities": self.capacities.to_dict("records"),
                "binding": self.binding,
                "rounds": self.rounds,
                "cuts": self.cuts,
                "build_seconds": self.build_seconds,
                "solve_seconds": self.solve_seconds,
                "notes": self.notes,
            }
        )
