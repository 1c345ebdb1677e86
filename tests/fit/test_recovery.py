"""Parameter recovery, small: a few data sets simulated from known numbers, fitted; the 90 %
intervals hold most truths and narrow as runs are added (benchmarks/fit_recovery.py runs 50)."""

from __future__ import annotations

import numpy as np

from procure import fit
from procure.analyses.fit.simulate import simulate_runs

from .conftest import DEFAULT, LINK, MOST_HOURS

TRUTH = {"twin.exchange_rate": 0.6, "sim.exchange_rate": 0.015}


def _fit(runs, seed):
    data = simulate_runs(DEFAULT.sources, TRUTH, LINK, runs=runs, most_hours=MOST_HOURS, seed=seed)
    return fit(data, DEFAULT, fit=["exchange_rate"], steps=300, burn_in=300, walkers=16, seed=seed)


def test_intervals_hold_the_truth_and_narrow_with_more_runs():
    inside, widths = [], {8: [], 30: []}
    for seed in range(3):
        for runs in (8, 30):
            f = _fit(runs, seed)
            for r in f.parameters.itertuples():
                inside.append(r.q05 <= TRUTH[f"{r.source}.{r.parameter}"] <= r.q95)
                widths[runs].append(np.log(r.q95 / r.q05))
    assert np.mean(inside) >= 0.75  # 12 intervals of 90 %: 9 or more hold the truth
    assert np.mean(widths[30]) < 0.8 * np.mean(widths[8])
