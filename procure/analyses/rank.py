"""How sources rank: by volume, by value, by the share transport takes, by price."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ..errors import invalid
from ..ledger import Cluster, Ledger
from ..program import DEFAULT_TOLERANCE, Problem, price_ledger
from ..program.numbers.problem import check_budget

#: ``--by`` choices and the column each sorts on (largest first).
RANK_BY = {
    "volume": "gb_per_hour",
    "value": "marginal_value_per_usd",
    "share": "share",
    "price": "price_usd_per_hour",
}

#: Columns of :func:`rank` with their units.
RANK_COLUMNS = {
    "rank": "1 = first; equal values share a rank",
    "source": "name",
    "kind": "text",
    "gb_per_hour": "GB stored per recorded hour",
    "price_usd_per_hour": "$/h",
    "transport_usd_per_hour": "$/h, the bill of moving one recorded hour",
    "share": "transport bill / price [1]",
    "effective_rate": "effective h per recorded h (ρσφ)",
    "cost_per_useful_hour": "$ per effective h, (p + t) / (ρσφ)",
    "marginal_value_per_usd": "value per $ of the next hour at current holdings",
}


def rank(
    ledger: Ledger,
    by: str = "value",
    *,
    budget: float | None = None,
    cluster: Cluster | None = None,
    tolerance: float | None = None,
) -> pd.DataFrame:
    """One row per source, ranked.

    Parameters
    ----------
    ledger : Ledger
        The sources and cluster.
    by : {"volume", "value", "share", "price"}
        ``volume`` GB per hour; ``value`` the value per dollar of the next hour at current
        holdings, or with a budget the value the source brings in that budget's plan;
        ``share`` the transport bill's share of the price; ``price`` the purchase price.
    budget : float, optional
        Adds ``plan_hours``, ``plan_gb`` and ``plan_value``: the source's hours, GB stored and
        value in the plan for this budget.
    cluster : Cluster, optional
        Instead of the ledger's.
    tolerance : float, optional
        Of the plan's solve, with a budget (default: the program's).

    Returns
    -------
    pandas.DataFrame
        Columns of :data:`RANK_COLUMNS` (and the plan's with a budget), largest first.
    """
    if by not in RANK_BY:
        raise invalid("by", by, f"allowed are {', '.join(RANK_BY)}")
    problem = price_ledger(ledger, cluster=cluster)
    out = ranking_table(problem)
    key = RANK_BY[by]
    if budget is not None:
        from ..program.solve.program import solve_problem  # the solver, only when a plan is asked

        plan = solve_problem(replace(problem, budget=check_budget(budget)), tolerance=tolerance or DEFAULT_TOLERANCE)
        out["plan_hours"] = plan.sources["hours"].to_numpy()
        out["plan_gb"] = out["plan_hours"] * out["gb_per_hour"]
        out["plan_value"] = plan.sources["value"].to_numpy()
        if by == "value":
            key = "plan_value"
    out.insert(0, "rank", out[key].rank(method="min", ascending=False).astype(int))
    return out.sort_values(["rank", "source"], kind="stable").reset_index(drop=True)


def ranking_table(problem: Problem) -> pd.DataFrame:
    """The columns of :data:`RANK_COLUMNS` but ``rank``, one row per source, in ledger order."""
    s = problem.sources
    rate = problem.rate
    with np.errstate(divide="ignore", invalid="ignore"):
        cost_per_useful = np.where(rate > 0, problem.cost / rate, np.inf)
    return pd.DataFrame(
        {
            "source": s["source"],
            "kind": s["kind"],
            "gb_per_hour": s["storage_gb"],
            "price_usd_per_hour": s["price_usd_per_hour"],
            "transport_usd_per_hour": s["transport_usd_per_hour"],
            "share": s["transport_share"].fillna(0.0),
            "effective_rate": rate,
            "cost_per_useful_hour": cost_per_useful,
            "marginal_value_per_usd": problem.marginal_value_per_usd(np.zeros(problem.n)),
        }
    )
