"""The plan with its infrastructure read out of a solved model: formats, cores, rented capacity.

A source kept in one format is one plan row with its ``format``; a source split across formats
is one row per format it is bought in, its effective hours and value shared by their hours. A
row's ``transport_usd`` is its bill plus the one-time cost of its format; ``pixels_per_token`` is
the format's. ``Plan.infrastructure`` holds the cores per accelerator chosen, the capacity
rented and what it costs, and the formats table: for every (source, format) the program could
choose at that count, its all-in cost, bill, one-time cost, uses and pixels per token, and the
hours bought.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ..numbers.infrastructure import Infrastructure
from ..numbers.problem import BOUGHT_HOURS, CAPACITIES
from .notes import UNSPENT_SHARE
from .plan import Plan

#: Columns of the formats table (``Plan.infrastructure["formats"]``) with their units.
FORMAT_COLUMNS = {
    "source": "name",
    "format": "recorded | model_side | decoded",
    "cost_usd_per_hour": "$/h, all in: price, bill and the format's one-time cost",
    "bill_usd_per_hour": "$/h",
    "format_usd_per_hour": "$/h, once: decoding and re-encoding",
    "accelerator_hours": "accelerator-h per recorded hour",
    "core_hours": "core-h per recorded hour",
    "gb_per_hour": "GB per recorded hour",
    "pixels_per_token": "px",
    "hours": "h bought in this format",
}


def option_spend(inf: Infrastructure, q: np.ndarray, rented: np.ndarray, fee_paid: float) -> float:
    """What a plan's options, fees and rent cost [$]."""
    rent = np.array([inf.rent[r][1] for r in inf.rent]) if inf.rent else np.zeros(0)
    return float(inf.cost @ q + fee_paid + (rent @ rented if len(rent) else 0.0))


def read_infra_plan(inf: Infrastructure, plan: Plan, q: np.ndarray, rented: np.ndarray, core: np.ndarray) -> Plan:
    """``plan`` (read at each source's hours) with its rows per format, its money and its
    infrastructure made those of the options' hours ``q`` [h], the capacity ``rented`` (in the
    order of ``inf.rent``) [its unit] and the cores binaries ``core`` (empty: one count)."""
    q = np.where(np.asarray(q, dtype=float) > BOUGHT_HOURS, np.asarray(q, dtype=float), 0.0)
    c = int(np.argmax(core)) if len(core) else 0
    p = plan.sources
    fee = inf.base.column("fixed_fee_usd")
    rows: list[dict[str, Any]] = []
    formats = []
    for i in range(inf.n):
        mine = np.flatnonzero((inf.source == i) & (inf.choice == c))
        bought = [o for o in mine.tolist() if q[o] > 0]
        shown = bought or mine[:1].tolist()
        total = float(q[mine].sum())
        for k, o in enumerate(shown):
            share = q[o] / total if total > 0 else (1.0 if k == 0 else 0.0)
            row = p.iloc[i].to_dict()
            row.update(
                held_hours=float(row["held_hours"]) if k == 0 else 0.0,  # held hours once, on the first row
                hours=float(q[o]),
                purchase_usd=float(
                    inf.base.column("price_usd_per_hour")[i] * q[o] + (fee[i] if k == 0 and total > 0 else 0.0)
                ),
                transport_usd=float((inf.bill[o] + inf.reformat_usd[o]) * q[o]),
                effective_hours=float(row["effective_hours"]) * share,
                value=float(row["value"]) * share,
                format=str(inf.format[o]),
                pixels_per_token=float(inf.pixels_per_token[o]),
            )
            rows.append(row)
        for o in mine.tolist():
            formats.append({
                "source": str(p["source"].iloc[i]), "format": str(inf.format[o]),
                "cost_usd_per_hour": float(inf.cost[o]), "bill_usd_per_hour": float(inf.bill[o]),
                "format_usd_per_hour": float(inf.reformat_usd[o]),
                **{column: float(inf.usage[name][o]) for name, (column, _unit) in CAPACITIES.items()},
                "pixels_per_token": float(inf.pixels_per_token[o]), "hours": float(q[o]),
            })  # fmt: skip
    sources = pd.DataFrame(rows)
    # Rent no more than the plan uses (with the budget slack, the solver may rent more for nothing).
    need = [max(0.0, float(inf.usage[r] @ q + inf.held_usage[r][c] - inf.capacity[r][c])) for r in inf.rent]
    rented = np.minimum(np.asarray(rented, dtype=float), np.array(need, dtype=float))
    rent_usd = {r: float(rented[k] * inf.rent[r][1]) for k, r in enumerate(inf.rent)}
    purchase = float(sources["purchase_usd"].sum())
    transport = float(sources["transport_usd"].sum())
    capacities = plan.capacities.copy()
    for name in CAPACITIES:
        used = float(inf.usage[name] @ q + inf.held_usage[name][c])
        limit = float(inf.capacity[name][c] + (rented[list(inf.rent).index(name)] if name in inf.rent else 0.0))
        capacities.loc[capacities["capacity"] == name, ["used", "limit", "slack"]] = [used, limit, limit - used]
    info = {
        "cores_per_accelerator": float(inf.cores[c]),
        "rented": {r: float(rented[k]) for k, r in enumerate(inf.rent)},
        "rent_usd": rent_usd,
        "formats": pd.DataFrame(formats, columns=list(FORMAT_COLUMNS)),
    }
    spent = purchase + transport + sum(rent_usd.values())
    notes = [note for note in plan.notes if not note.startswith("the budget is more than anything can use")]
    budget = float(inf.base.budget or 0.0)
    if plan.lambda_ == 0 and budget > 0 and spent < budget * (1 - UNSPENT_SHARE):
        notes.append(
            f"the budget is more than anything can use: the plan spends ${spent:,.2f} of ${budget:,.2f} (rent "
            "included); availability and capacities bind (see the capacities)"
        )
    return replace(plan, sources=sources, capacities=capacities, purchase_usd=purchase, transport_usd=transport,
                   spent_usd=spent, infrastructure=info, notes=notes)  # fmt: skip
