"""The notes a plan carries: sources that cannot be bought and why, a budget that buys nothing
or more than anything can use."""

from __future__ import annotations

import numpy as np

from ..numbers.problem import Mode, Problem

#: Share of the budget left unspent above which a plan with λ = 0 notes that the budget is
#: more than anything can use [1].
UNSPENT_SHARE = 1e-6


def plan_notes(p: Problem, room: np.ndarray, lam: float, spent: float) -> list[str]:
    """The notes of a plan of ``p``: each source's room [h] as the model bounds it, the plan's λ
    [value per $] and the money it spends [$]."""
    s = p.sources
    notes: list[str] = []
    smallest = np.maximum(p.column("min_order_hours"), p.column("lot_hours"))
    too_big = (smallest > room) & (room > 0)
    for i in np.flatnonzero(too_big):
        notes.append(
            f"{s['source'].iloc[i]} cannot be bought: its smallest purchase ({smallest[i]:,.4g} h, its minimum "
            f"order or one lot) is more than the {room[i]:,.4g} h that availability and capacities allow"
        )
    if p.mode is Mode.BUDGET:
        budget = float(p.budget or 0.0)
        least = p.least_order_usd
        open_ = room > 0
        below_every_order = bool(budget > 0 and open_.any() and np.all(least[open_] > budget))
        if below_every_order:
            c = int(np.flatnonzero(open_)[np.argmin(least[open_])])
            hours = max(s["min_order_hours"].iloc[c], s["lot_hours"].iloc[c])
            its_fee = float(s["fixed_fee_usd"].iloc[c])
            order = f"{hours:g} h × ${p.cost[c]:,.2f}" + (f" + fee ${its_fee:,.2f}" if its_fee > 0 else "")
            order = f"its fee ${its_fee:,.2f}" if hours <= 0 else order
            notes.append(
                f"the budget ${budget:,.2f} buys nothing: it is below every source's least order, so the plan "
                f"is the hours held (the least order is {s['source'].iloc[c]!r}: {order} = ${least[c]:,.2f})"
            )
        for i in np.flatnonzero((least > budget) & (least > 0) & ~too_big & (room > 0)):
            notes.append(
                f"{s['source'].iloc[i]} cannot be bought: its smallest purchase costs ${least[i]:,.2f}, "
                "more than the budget"
            )
        if lam == 0 and budget > 0 and spent < budget * (1 - UNSPENT_SHARE) and not below_every_order:
            notes.append(
                f"the budget is more than anything can use: the plan spends ${spent:,.2f} of ${budget:,.2f}; "
                "availability and capacities bind (see the capacities)"
            )
    for i in np.flatnonzero(room <= 0):
        notes.append(f"{s['source'].iloc[i]} cannot be bought: nothing available or no capacity left")
    return notes
