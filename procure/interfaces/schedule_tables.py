"""The cells of a plan over periods: hours by source and period, money and λ by period.

The same cells serve the terminal (:mod:`procure.interfaces.render`) and the app's Plan page.
"""

from __future__ import annotations

from ..defaults import TABLE_ROWS
from ..program import Plan
from ..program.readout.periods import hours_by_period
from .tables import Rows, number, visible


def schedule_rows(plan: Plan, *, every_row: bool = False) -> Rows:
    """Hours bought of each source in each period, and over all (the sources with the most
    hours first, the first :data:`TABLE_ROWS` unless ``every_row``); with scenarios, expected."""
    assert plan.schedule is not None and plan.periods is not None
    table = hours_by_period(plan.schedule)
    periods = [str(p) for p in plan.periods["period"]]
    order = list(plan.sources["source"])
    table = table.loc[order, periods]
    total = table.sum(axis=1)
    most = total.sort_values(ascending=False).index[:TABLE_ROWS]
    shown = table if every_row or len(table) <= TABLE_ROWS else table.loc[most]
    cells = [
        (visible(name), *(number(v) for v in row.to_numpy()), number(float(total[name])))
        for name, row in shown.iterrows()
    ]
    sums = table.sum(axis=0)
    last = ("total", *(number(float(sums[p])) for p in periods), number(float(total.sum())))
    return Rows(("source", *(visible(p) for p in periods), "all"), cells, total=last, left_out=len(table) - len(shown))


#: Most periods the hours table shows as columns; with more, periods are its rows and the
#: sources with the most hours its columns.
PERIOD_COLUMNS = 12
#: Sources shown as columns when periods are rows; the rest are summed as "others".
SOURCE_COLUMNS_SHOWN = 6


def schedule_rows_by_period(plan: Plan) -> Rows:
    """Hours bought in each period (rows) of the sources with the most hours (columns), the
    others summed, and all; with scenarios, expected."""
    assert plan.schedule is not None and plan.periods is not None
    periods = [str(p) for p in plan.periods["period"]]
    table = hours_by_period(plan.schedule)[periods]
    total = table.sum(axis=1).sort_values(ascending=False)
    named = list(total.index[:SOURCE_COLUMNS_SHOWN])
    others = table.drop(index=named).sum(axis=0) if len(total) > len(named) else None
    cells = []
    for p in periods:
        row = [number(float(table.loc[name, p])) for name in named]
        if others is not None:
            row.append(number(float(others[p])))
        cells.append((visible(p), *row, number(float(table[p].sum()))))
    heads = ("period", *(visible(name) for name in named), *(("others",) if others is not None else ()), "all")
    last = ("total", *(number(float(total[name])) for name in named),
            *((number(float(others.sum())),) if others is not None else ()), number(float(total.sum())))  # fmt: skip
    return Rows(heads, cells, total=last)


def period_rows(plan: Plan, *, first: int = 0) -> Rows:
    """Per period from ``first`` on: money arriving, purchases, the run's bill, money left,
    the run's value and λ_t."""
    assert plan.periods is not None
    cells = [
        (visible(r["period"]), number(r["months"], 1), number(r["money_usd"], 2), number(r["purchase_usd"], 2),
         number(r["transport_usd"], 2), number(r["carried_usd"], 2), number(r["value"], 1), f"{r['lambda']:.4g}")
        for _, r in plan.periods.iloc[first:].iterrows()
    ]  # fmt: skip
    headings = ("period", "months", "money in $", "purchase $", "run's bill $", "left $", "run value", "λ per $")
    return Rows(headings, cells)


def now_rows(plan: Plan) -> Rows:
    """What to buy in the first period: per source bought then, its hours and money."""
    assert plan.schedule is not None and plan.periods is not None
    first = str(plan.periods["period"].iloc[0])
    rows = plan.schedule
    if "scenario" in rows:  # the first period is one decision: the same in every scenario
        rows = rows[rows["scenario"] == rows["scenario"].iloc[0]]
    s = rows[(rows["period"] == first) & (rows["hours"] > 0)]
    cells = [
        (visible(r["source"]), number(r["hours"]), number(r["purchase_usd"], 2), number(r["transport_usd"], 2))
        for _, r in s.iterrows()
    ]
    total = ("total", number(s["hours"].sum()), number(s["purchase_usd"].sum(), 2),
             number(s["transport_usd"].sum(), 2))  # fmt: skip
    return Rows(("source", "buy h", "purchase $", "run's bill $"), cells, total=total)
