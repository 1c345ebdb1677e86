"""What to buy when the twin's worth is uncertain, and what a pilot study would be worth.

The default ledger gives the twin's exchange rate a range: 0.1 to 0.6 own-hours per twin hour
around its 0.35. 100 scenarios drawn from it (seed 0); three plans for $100,000: the most
expected value, the most value in the worst tenth of scenarios (CVaR, W = 1), and buy-now-or-
later with later hours at 1.05 × the price.

python examples/uncertain_value.py
"""

from __future__ import annotations

from procure.analyses.uncertainty import solve_uncertain
from procure.ledger import load_ledger
from procure.ledger.scenarios import sample_scenarios
from procure.program import from_ledger
from procure.program.numbers.scenarios import scenario_problem

ledger = load_ledger()
scenarios = sample_scenarios(ledger.sources, 100, seed=0)
problem = from_ledger(ledger, budget=100_000)
names = list(problem.sources["source"])

plans = {
    "expected value": scenario_problem(problem, scenarios),
    "risk-averse (CVaR 10 %)": scenario_problem(problem, scenarios, risk_alpha=0.1, risk_weight=1.0),
    "buy later at 1.05 x": scenario_problem(problem, scenarios, recourse_price_x=1.05),
}
print(f"{len(scenarios.names)} scenarios of the twin's exchange rate: {scenarios.origin}")
print(f"{'plan':<24} " + " ".join(f"{n:>9}" for n in names) + f" {'E[value]':>9} {'CVaR10%':>8} {'EVPI':>6} {'VSS':>6}")
results = {}
for label, sp in plans.items():
    r = solve_uncertain(sp, tolerance=1e-6, workers=1)
    results[label] = r
    hours = " ".join(f"{h:9.1f}" for h in r.plan.sources["hours"])
    print(f"{label:<24} {hours} {r.expected_value:9.1f} {r.cvar:8.1f} {r.evpi:6.1f} {r.vss:6.1f}")

ev = results["expected value"]
lam = ev.plan.lambda_
print(f"Knowing the twin's exchange rate before buying is worth {ev.evpi:.1f} own-hour equivalents,")
print(f"${ev.evpi / lam:,.0f} of budget at lambda = {lam:.5f}: a pilot study that settles it pays up to that.")
later = results["buy later at 1.05 x"]
spent_now = later.plan.spent_usd
print(
    f"Buy now or later: ${spent_now:,.0f} now; later, on average, "
    f"${float(later.scenario_values['probability'] @ later.scenario_values['later_usd']):,.0f} "
    f"(in {int((later.scenario_values['later_usd'] > 0).sum())} of {len(later.scenario_values)} scenarios)."
)
