"""The cells of a plan's infrastructure: formats by source, the cores chosen, rented capacity.

The same cells serve the terminal (:mod:`procure.interfaces.render`) and the app's Plan page.
"""

from __future__ import annotations

from ..program import Plan
from .tables import Rows, money, number, visible


def format_rows(plan: Plan) -> Rows:
    """Per source and format the program could keep it in: the all-in cost of an hour, its
    bill, the format's one-time cost, its uses, pixels per token and the hours bought."""
    assert plan.infrastructure is not None
    table = plan.infrastructure["formats"]
    cells = [
        (visible(r["source"]), visible(r["format"]), number(r["cost_usd_per_hour"], 2),
         number(r["bill_usd_per_hour"], 2), number(r["format_usd_per_hour"], 2), number(r["accelerator_hours"], 3),
         number(r["core_hours"], 2), number(r["gb_per_hour"], 2), number(r["pixels_per_token"], 0), number(r["hours"]))
        for _, r in table.iterrows()
    ]  # fmt: skip
    headings = ("source", "format", "all-in $/h", "bill $/h", "once $/h", "accel-h/h", "core-h/h", "GB/h", "px/token",
                "bought h")  # fmt: skip
    return Rows(headings, cells)


def infrastructure_lines(plan: Plan) -> list[str]:
    """The cores chosen (and what each other count gives) and the capacity rented, as sentences."""
    assert plan.infrastructure is not None
    info = plan.infrastructure
    lines = []
    values = info.get("cores_values")
    money_at = info.get("cores_money")
    chosen = f"{info['cores_per_accelerator']:g}"
    if values:
        others = ", ".join(
            f"{count}: {'no plan' if value is None else f'{value:,.2f}'}" for count, value in values.items()
        )
        lines.append(
            f"Cores per accelerator: {chosen}, chosen from {len(values)} counts (the best value at each: {others})."
        )
    elif money_at:
        others = ", ".join(
            f"{count}: {'out of reach' if value is None else money(value)}" for count, value in money_at.items()
        )
        lines.append(
            f"Cores per accelerator: {chosen}, chosen from {len(money_at)} counts (the least money at each: {others})."
        )
    else:
        lines.append(f"Cores per accelerator: {chosen}.")
    rented = {name: units for name, units in info["rented"].items() if units > 0}
    if rented:
        parts = [f"{name} {number(units)} for {money(info['rent_usd'][name])}" for name, units in rented.items()]
        lines.append("Rented: " + "; ".join(parts) + ".")
    elif info["rented"]:
        lines.append("Rented: nothing (the capacity that may be rented is worth less than its price).")
    return lines
