"""A writable ledger with simulated runs, and a fast fit of them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from procure import load_ledger
from procure.analyses.fit.simulate import runs_frame, simulate_runs

DEFAULT = load_ledger()
#: The true numbers the runs are simulated from.
TRUTH = {"twin.exchange_rate": 0.5, "sim.exchange_rate": 0.02}
LINK = {"p_min": 0.1, "p_max": 0.85, "value_scale": 300.0}
MOST_HOURS = {"own": 800.0, "twin": 3000.0, "sim": 20000.0}
#: Settings of a fit that takes about a second.
FAST = {"steps": 300, "burn_in": 300, "walkers": 24}


def simulated(runs: int = 16, seed: int = 2, **kw):
    return simulate_runs(DEFAULT.sources, TRUTH, LINK, runs=runs, most_hours=MOST_HOURS, seed=seed, **kw)


@pytest.fixture
def ledger_dir(tmp_path: Path) -> Path:
    """A copy of the default ledger with a runs.csv of 16 simulated runs."""
    dest = tmp_path / "ledger"
    shutil.copytree(DEFAULT.path, dest)
    runs_frame(simulated()).to_csv(dest / "runs.csv", index=False)
    return dest
