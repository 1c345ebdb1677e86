"""How the default ledger's sources rank by volume, price, transport share and value.

python examples/rank_sources.py
"""

from __future__ import annotations

from procure import load_ledger, rank

ledger = load_ledger()
for by in ("volume", "price", "share", "value"):
    table = rank(ledger, by)
    order = " > ".join(" = ".join(group["source"]) for _, group in table.groupby("rank", sort=True))
    print(f"by {by:<7} {order}")

print()
table = rank(ledger, "value", budget=100_000)
print(
    f"{'source':<10} {'GB/h':>7} {'price':>8} {'moving':>7} {'share':>7} "
    f"{'$/useful h':>11} {'plan h':>9} {'plan value':>11}"
)
for _, r in table.iterrows():
    print(
        f"{r['source']:<10} {r['gb_per_hour']:7.2f} {r['price_usd_per_hour']:8.2f} {r['transport_usd_per_hour']:7.2f} "
        f"{100 * r['share']:6.1f}% {r['cost_per_useful_hour']:11.2f} {r['plan_hours']:9.1f} {r['plan_value']:11.1f}"
    )
