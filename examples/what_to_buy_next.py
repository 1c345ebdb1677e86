"""What to buy next with $100,000 on the default ledger, and why.

python examples/what_to_buy_next.py
"""

from __future__ import annotations

import procure

plan = procure.solve(budget=100_000, tolerance=1e-6)

print(
    f"Budget ${plan.budget:,.0f}: status {plan.status}, value {plan.value:,.1f} "
    f"(upper bound {plan.value_upper_bound:,.1f}) own-hour equivalents"
)
print(
    f"{'source':<10} {'buy h':>9} {'purchase $':>11} {'moving $':>10} {'eff. h':>8} {'value':>7} {'value/$':>9}  where"
)
for _, r in plan.sources.iterrows():
    print(
        f"{r['source']:<10} {r['hours']:9.1f} {r['purchase_usd']:11,.0f} {r['transport_usd']:10,.0f} "
        f"{r['effective_hours']:8.1f} {r['value']:7.1f} {r['marginal_value_per_usd']:9.5f}  {r['position']}"
    )
print(f"All in ${plan.spent_usd:,.0f}: {100 * plan.transport_share:.1f} % of it moves the hours.")
print(f"λ = {plan.lambda_:.5f} value per $: one more own-hour equivalent costs ${1 / plan.lambda_:,.0f}.")
for _, c in plan.capacities.iterrows():
    state = f"binds, one more unit is worth ${c['shadow_usd']:.2f}" if c["binding"] else "has room"
    print(f"{c['capacity']:<18} used {c['used']:10,.1f} of {c['limit']:10,.1f} {c['unit']}: {state}")
