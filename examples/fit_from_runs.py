"""Fit the value curves from a team's training runs, plan under what the runs say, and rank
what to measure next.

Twenty runs are simulated from known numbers (the twin's hour worth 0.5 own hours, the
simulated hour 0.02; the ledger guesses 0.35 and 0.03), each evaluated on 20 to 50 trials.
The fit recovers the rates with their uncertainty; the plan made under the posterior is
valued beside the plan made with the ledger's guesses, both under the posterior; EVPPI says
which number a pilot study should settle first.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import procure
from procure.analyses.fit.evppi import measure_next
from procure.analyses.fit.simulate import runs_frame, simulate_runs

TRUTH = {"twin.exchange_rate": 0.5, "sim.exchange_rate": 0.02}
LINK = {"p_min": 0.1, "p_max": 0.85, "value_scale": 300.0}
MOST_HOURS = {"own": 800.0, "twin": 3000.0, "sim": 20000.0}
BUDGET = 100_000.0

with tempfile.TemporaryDirectory() as tmp:
    folder = Path(tmp) / "ledger"
    shutil.copytree(procure.load_ledger().path, folder)
    ledger = procure.load_ledger(folder)
    runs = simulate_runs(ledger.sources, TRUTH, LINK, runs=20, most_hours=MOST_HOURS, seed=1)
    runs_frame(runs).to_csv(folder / "runs.csv", index=False)

    fitted = procure.fit(folder / "runs.csv", ledger, fit=["exchange_rate"], seed=0)
    print(f"Fitted from {fitted.runs.count} runs (binomial, link {fitted.link}):")
    for row in fitted.parameters.itertuples():
        true = TRUTH[f"{row.source}.{row.parameter}"]
        print(
            f"  {row.source}.{row.parameter}: {row.median:.3f} (90 % {row.q05:.3f} to {row.q95:.3f}); "
            f"ledger {row.prior_median:.3f}, true {true:.3f}"
        )
    d = fitted.diagnostics
    inside = int(fitted.runs_table["inside"].sum())
    print(
        f"  split R-hat at most {d['rhat_max']:.2f}, {inside} of {fitted.runs.count} runs inside their 90 % "
        "predictive interval"
    )

    info, ledger_plan = measure_next(fitted, budget=BUDGET, draws=40, groups=5, workers=1)
    print(f"At ${BUDGET:,.0f}, expected value under the posterior ({len(info.plan.scenario_values)} draws):")
    print(f"  plan made under the posterior: {info.plan.expected_value:.1f}")
    print(f"  plan made with the ledger's guesses: {ledger_plan:.1f}")
    print(f"  EVPI {info.plan.evpi:.2f} own-hour equivalents (${info.usd(info.plan.evpi):,.0f} at λ)")
    print("What to measure next (EVPPI):")
    for row in info.table.itertuples():
        print(f"  {row.rank}. {row.source}.{row.parameter}: {row.evppi:.2f} (${row.evppi_usd:,.0f})")
