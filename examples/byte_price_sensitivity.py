"""How the $100,000 plan moves with byte prices, from a tenth to ten times the ledger's.

python examples/byte_price_sensitivity.py
"""

from __future__ import annotations

from procure import byte_price_range, from_ledger, load_ledger, sweep

ledger = load_ledger()
table = sweep(ledger, "byte_price_x", 0.1, 10.0, 5, budget=100_000, tolerance=1e-6)
sources = list(dict.fromkeys(table["source"]))
print(f"{'bytes ×':>8} {'value':>8} {'lambda':>9} {'moving':>7} {'idle':>6}  " + " ".join(f"{s:>10}" for s in sources))
for x, part in table.groupby("x", sort=True):
    first = part.iloc[0]
    hours = part.set_index("source")["hours"]
    print(
        f"{x:8.3f} {first['plan_value']:8.1f} {first['lambda']:9.5f} {100 * first['transport_share']:6.1f}% "
        f"{100 * first['idle_share']:5.1f}%  " + " ".join(f"{hours[s]:10.0f}" for s in sources)
    )
lo, hi = byte_price_range(from_ledger(ledger, budget=100_000))
print(f"The plan keeps its shape for byte prices from {lo:.3g} to {hi:.3g} times the ledger's.")
