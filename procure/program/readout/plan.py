"""The answer of the procurement program: what to buy, what it costs, and why.

:class:`Plan` is the result; :func:`read_plan` reads it out of a solved program's numbers
(positions, marginal values per dollar, capacity rows, notes) and computes nothing the solver
has not decided.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np
import pandas as pd

from ...output import jsonable
from ..numbers.problem import CAPACITIES, Mode, Problem
from ..numbers.value import per_usd
from ..numbers.value import value as value_at
from ..rows import mix_coefficients
from .notes import plan_notes

#: Absolute gap that counts as closed whatever the relative one [own-hour equivalents]: ten
#: times HiGHS's primal feasibility tolerance (1e-7), below which the LP cannot tell plans apart.
VALUE_ABS_TOLERANCE = 1e-6
#: The least value a relative tolerance is taken of, so that a value of 0 has a scale
#: [own-hour equivalents].
LEAST_VALUE_SCALE = 1e-12
#: Least abs(bound) a relative gap is taken against, so that a plan worth 0 has a finite gap
#: [own-hour equivalents].
GAP_FLOOR = 1e-12
#: Relative slack under which a capacity or mix row counts as binding, and the share of its
#: room within which a source counts as at zero or at its cap [1].
BINDING_TOLERANCE = 1e-7


def relative_gap(upper: float, value: float) -> float:
    """The gap between a bound ``upper`` and a plan's true ``value``, relative to the bound [1]."""
    return (upper - value) / max(abs(upper), GAP_FLOOR)


def closes(upper: float, value: float, tolerance: float) -> bool:
    """True where the bound and the value agree within ``tolerance`` (relative) or within
    :data:`VALUE_ABS_TOLERANCE` (absolute, the solver's noise)."""
    return relative_gap(upper, value) <= tolerance or upper - value <= VALUE_ABS_TOLERANCE


class Status(StrEnum):
    """How a plan is certified. Every plan returned is certified; a request that has none
    raises :class:`procure.errors.SolveError`, whose ``reason`` (:class:`procure.errors.Reason`)
    says why (infeasible, unbounded, out of time, not certified)."""

    #: The plan's true value and the bound agree within the relative tolerance (in target mode,
    #: the money and its certified lower bound).
    OPTIMAL = "optimal"
    #: The gap is within the solver's absolute noise (:data:`VALUE_ABS_TOLERANCE`) but not
    #: the relative tolerance: a plan whose value is close to 0, where no LP can tell plans apart.
    WITHIN_NOISE = "within_noise"


def status_of(gap: float, tolerance: float) -> Status:
    """A certified plan's status at ``gap``: within ``tolerance`` (relative), else within the
    solver's noise (the plan is certified either way)."""
    return Status.OPTIMAL if not gap > tolerance else Status.WITHIN_NOISE


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
    "capacity_charge_usd_per_hour": "$ per h: an hour's use of the capacities and mix bounds at their shadow prices",
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
    mode : Mode
        ``"budget"`` (most value for the money) or ``"target"`` (least money for the value).
    status : Status
        ``"optimal"``: the plan's true value and the upper bound agree within ``tolerance``
        (relative); ``"within_noise"``: only within :data:`VALUE_ABS_TOLERANCE` (absolute, solver
        noise). See :class:`Status`.
    value : float
        True value of the plan, Σ v_s(e_s) [own-hour equivalents].
    value_upper_bound : float
        No plan for the same money is worth more than this [own-hour equivalents] (in target
        mode: for the money the plan spends).
    gap : float
        Budget mode: ``(value_upper_bound − value) / |value_upper_bound|``; target mode:
        ``(spent_usd − money_lower_bound) / spent_usd`` [1].
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
        Refinement rounds (in target mode, budget-mode solves) and tangent cuts in the final model.
    build_seconds, solve_seconds : float
        Wall time to build the Pyomo model and to solve and refine it [s].
    notes : list of str
        What a reader should know (sources that cannot be bought, and why).
    money_lower_bound : float
        Target mode: no plan that reaches the target costs less than this [$] (certified: the
        upper bound on the value of this budget falls short of the target); NaN in budget mode.
    periods : pandas.DataFrame or None
        Over periods, one row per period, columns of
        :data:`procure.program.readout.periods.PERIOD_COLUMNS`; None for a plan at one time.
    schedule : pandas.DataFrame or None
        Over periods, one row per (period, source), columns of
        :data:`procure.program.readout.periods.SCHEDULE_COLUMNS`.
    shadow_prices_by_period : dict or None
        Over periods, by period name, the shadow price of each capacity (and mix bound) at that
        period's run [value per unit].
    infrastructure : dict or None
        With formats, cores choices or rented capacity (:mod:`procure.program.readout.infrastructure`):
        ``cores_per_accelerator`` [cores], ``rented`` and ``rent_usd`` by capacity [its unit,
        $], ``formats`` (a DataFrame) and, with several counts, ``cores_values`` (the best
        value at each count [own-hour equivalents]; in target mode ``cores_money``, the least
        money at each [$]; None at a count with no plan); None otherwise.
    """

    mode: Mode
    status: Status
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
    money_lower_bound: float = math.nan
    periods: pd.DataFrame | None = None
    schedule: pd.DataFrame | None = None
    shadow_prices_by_period: dict[str, dict[str, float]] | None = None
    infrastructure: dict[str, Any] | None = None

    @property
    def lambda_by_period(self) -> dict[str, float] | None:
        """Over periods, by period name, the value of one more dollar arriving at the start of
        that period, λ_t [value per $]."""
        if self.periods is None:
            return None
        return {str(k): float(v) for k, v in zip(self.periods["period"], self.periods["lambda"], strict=True)}

    @property
    def binding(self) -> list[str]:
        """Names of the capacities that bind."""
        return list(self.capacities.loc[self.capacities["binding"], "capacity"])

    @property
    def transport_share(self) -> float:
        """Share of the money spent that goes to moving the hours [1]; NaN if nothing is spent."""
        return self.transport_usd / self.spent_usd if self.spent_usd > 0 else math.nan

    @property
    def marginal_value_spread(self) -> float:
        """Largest relative difference between λ and the marginal value per dollar of a source
        bought in part [1]: how far the certified plan is from equal marginal value per dollar
        (about √tolerance); 0 when no source is bought in part or λ is 0 or infinite."""
        if not (self.lambda_ > 0 and math.isfinite(self.lambda_)):
            return 0.0
        between = self.sources.loc[self.sources["position"] == "between", "marginal_value_per_usd"]
        return float((between / self.lambda_ - 1).abs().max()) if len(between) else 0.0

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``procure solve`` (the keys README documents first, then more)."""
        columns = [
            "source", "hours", "purchase_usd", "transport_usd", "effective_hours", "value",
            "marginal_value_per_usd", "kind", "held_hours", "position", "marginal_value_per_usd_price_only",
        ]  # fmt: skip
        columns += [c for c in ("format", "pixels_per_token") if c in self.sources]
        rows = self.sources[columns].to_dict("records")
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
                "money_lower_bound": self.money_lower_bound,
            }
            | (
                {}
                if self.periods is None or self.schedule is None
                else {
                    "periods": self.periods.to_dict("records"),
                    "schedule": self.schedule.to_dict("records"),
                    "lambda_by_period": self.lambda_by_period,
                    "shadow_prices_by_period": self.shadow_prices_by_period,
                }
            )
            | (
                {}
                if self.infrastructure is None
                else {
                    key: (value.to_dict("records") if isinstance(value, pd.DataFrame) else value)
                    for key, value in self.infrastructure.items()
                }
            )
        )


def read_plan(
    problem: Problem,
    *,
    x: np.ndarray,
    room: np.ndarray,
    value: float,
    value_upper_bound: float,
    gap: float,
    tolerance: float,
    lambda_: float,
    shadow_prices: dict[str, float],
    rounds: int,
    cuts: int,
    build_seconds: float,
    solve_seconds: float,
    money_lower_bound: float = math.nan,
) -> Plan:
    """Read a plan out of a solved program's numbers.

    Parameters
    ----------
    problem : Problem
        What was solved.
    x : numpy.ndarray
        Hours bought of each source [h].
    room : numpy.ndarray
        Most hours availability and capacities allow of each source [h].
    value, value_upper_bound, gap, tolerance : float
        The plan's true value, the bound, their relative gap and the tolerance it met.
    lambda_ : float
        Value of the next budget dollar [value per $].
    shadow_prices : dict of str to float
        Value of one more unit of each capacity and mix bound [value per unit].
    rounds, cuts : int
        Refinement rounds and tangent cuts.
    build_seconds, solve_seconds : float
        Wall times [s].
    money_lower_bound : float, optional
        In target mode, the certified lower bound on the least money [$].
    """
    p, s, lam, held = problem, problem.sources, lambda_, problem.held
    tol = BINDING_TOLERANCE * np.maximum(1.0, np.where(np.isfinite(room), room, 1.0))
    bought = p.bought(x)
    position = np.where(~bought, "zero", np.where(x >= room - tol, "cap", "between"))
    purchase = p.column("price_usd_per_hour") * x + np.where(bought, p.column("fixed_fee_usd"), 0.0)
    transport = p.column("transport_usd_per_hour") * x
    e = p.rate * (held + x)
    v = np.asarray(value_at(e, p.curves, p.column("saturation_hours"), p.column("curve_shape")), float)
    pricing = lam > 0 and math.isfinite(lam)
    charge = np.zeros(p.n)  # capacity and mix charges per hour, in budget dollars
    if pricing:
        for name, price in shadow_prices.items():
            if name.startswith("max_share:"):
                key = name.split(":", 1)[1]
                charge += price / lam * mix_coefficients(p.rate, p.members(key), p.max_share[key])
            else:
                charge += price / lam * p.usage(name)
    dv = p.marginal_value(x)
    sources = pd.DataFrame(
        {
            "source": s["source"],
            "kind": s["kind"],
            "hours": x,
            "held_hours": held,
            "purchase_usd": purchase,
            "transport_usd": transport,
            "effective_hours": e,
            "value": v,
            "marginal_value_per_usd": per_usd(dv, p.cost + charge),
            "marginal_value_per_usd_price_only": per_usd(dv, p.cost),
            "capacity_charge_usd_per_hour": charge,
            "position": position,
        }
    )

    def row(name: str, unit: str, used: float, limit: float) -> dict[str, object]:
        price = shadow_prices.get(name, 0.0)
        slack = limit - used
        binding = price > 0 or (math.isfinite(limit) and slack <= BINDING_TOLERANCE * max(1.0, limit))
        usd = price / lam if pricing else 0.0
        return {"capacity": name, "unit": unit, "used": used, "limit": limit, "slack": slack,
                "binding": bool(binding), "shadow_price": price, "shadow_usd": usd}  # fmt: skip

    caps = [
        row(name, unit, float(p.usage(name) @ (held + x)), p.capacity[name])
        for name, (_col, unit) in CAPACITIES.items()
    ]
    for key, share in p.max_share.items():
        caps.append(row(f"max_share:{key}", "effective h", float(e[p.members(key)].sum()), share * float(e.sum())))
    spent = float(purchase.sum() + transport.sum())
    notes = plan_notes(p, room, lam, spent)
    return Plan(
        mode=p.mode, status=status_of(gap, tolerance), value=value, value_upper_bound=value_upper_bound, gap=gap,
        tolerance=tolerance, lambda_=lam, shadow_prices=shadow_prices, sources=sources, capacities=pd.DataFrame(caps),
        budget=float(p.budget) if p.budget is not None else math.nan, spent_usd=spent,
        purchase_usd=float(purchase.sum()), transport_usd=float(transport.sum()),
        target=float(p.target) if p.target is not None else math.nan, rounds=rounds, cuts=cuts,
        build_seconds=build_seconds, solve_seconds=solve_seconds, notes=notes, money_lower_bound=money_lower_bound,
    )  # fmt: skip
