"""A year in quarters on the default ledger: what to buy in each quarter, and what to buy now.

$25,000 arrives at the start of each quarter; unspent money carries over. The simulator's hour
gets 10 % cheaper each quarter and the twin vendor delivers at most 2,000 h a quarter
(``quarters/period_sources.csv``). A model is trained at the end of each quarter on every hour
held then; each run pays the transport bill of every bought hour it trains on, and hours age
by the shelf life of their source.

    python examples/plans_over_time.py
"""

from pathlib import Path

import procure

HERE = Path(__file__).resolve().parent
plan = procure.solve(periods=HERE / "quarters" / "periods.csv")
assert plan.periods is not None and plan.schedule is not None

print(f"value {plan.value:.2f} own-hour equivalents (time average of the four runs), certified within {plan.gap:.1e}")
print(f"spent ${plan.spent_usd:,.2f}: purchases ${plan.purchase_usd:,.2f}, transport ${plan.transport_usd:,.2f}")
print()
print("period   money in    purchases   run's bill   run value   lambda per $")
for _, p in plan.periods.iterrows():
    print(
        f"{p['period']:<8} {p['money_usd']:>9,.0f} {p['purchase_usd']:>12,.2f} {p['transport_usd']:>12,.2f}"
        f" {p['value']:>11.2f} {p['lambda']:>14.6f}"
    )
print()
print("hours bought by quarter")
table = plan.schedule.pivot(index="source", columns="period", values="hours").loc[list(plan.sources["source"])]
print("source     " + " ".join(f"{name:>9}" for name in table.columns))
for source, row in table.iterrows():
    print(f"{source:<10} " + " ".join(f"{h:>9.1f}" for h in row))
print()
first = plan.schedule[(plan.schedule["period"] == "2027Q1") & (plan.schedule["hours"] > 0)]
print("buy now (2027Q1): " + ", ".join(f"{r['source']} {r['hours']:.1f} h" for _, r in first.iterrows()))
binding = {p: [k for k, v in prices.items() if v > 0] for p, prices in (plan.shadow_prices_by_period or {}).items()}
print("binding capacities: " + "; ".join(f"{p}: {', '.join(v) or 'none'}" for p, v in binding.items()))
