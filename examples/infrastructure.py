"""Choose the infrastructure with the data, on the default ledger at $100,000.

Each source may be kept as recorded, re-encoded at the model's 224 × 224 input, or decoded; the
cluster's cores per accelerator is one of 8, 16, 24, 32; up to 20,000 accelerator-hours may be
rented at the cluster's $2.50. Each decision is added in turn, so its worth shows.

    python examples/infrastructure.py
"""

import procure

BUDGET = 100_000
FORMATS = ["recorded", "model_side", "decoded"]
CORES = [8, 16, 24, 32]
RENT = {"accelerator_hours": 20_000}

today = procure.solve(budget=BUDGET)
print(f"as recorded, 8 cores, nothing rented: value {today.value:.2f}")
shadow = today.capacities.set_index("capacity").loc["accelerator_hours", "shadow_usd"]
print(f"  an accelerator-hour is worth ${shadow:.2f} of budget against the $2.50 it rents for")

cores = procure.solve(budget=BUDGET, cores_choices=CORES)
info = cores.infrastructure
print(f"cores chosen: {info['cores_per_accelerator']:g}, value {cores.value:.2f}")
print("  best value at each count: " + ", ".join(f"{k}: {v:.2f}" for k, v in info["cores_values"].items()))

rented = procure.solve(budget=BUDGET, rent=RENT)
hours = rented.infrastructure["rented"]["accelerator_hours"]
shadow = rented.capacities.set_index("capacity").loc["accelerator_hours", "shadow_usd"]
print(f"renting allowed: value {rented.value:.2f}, {hours:,.1f} accelerator-hours rented, shadow price ${shadow:.2f}")

every = procure.solve(budget=BUDGET, formats=FORMATS, cores_choices=CORES, rent=RENT)
info = every.infrastructure
print(f"formats, cores and rent together: value {every.value:.2f}, certified within {every.gap:.1e}")
print(f"  cores {info['cores_per_accelerator']:g}; rented {info['rented']['accelerator_hours']:,.1f} accelerator-hours")
for _, row in every.sources.iterrows():
    if row["hours"] > 0:
        ppt = row["pixels_per_token"]
        print(f"  {row['source']:<10} {row['format']:<11} {row['hours']:>9.1f} h  {ppt:>6.0f} px/token")
formats = info["formats"]
twin = formats[formats["source"] == "twin"].set_index("format")
print("  twin, all in per hour: " + ", ".join(f"{f} ${c:,.2f}" for f, c in twin["cost_usd_per_hour"].items()))
