"""Training runs simulated from known numbers: for examples, the recovery benchmark and tests.

Each run's mix draws, for each source, hours uniform on [0, ``most_hours``] (a source left out
of a run with probability ``absent``); its value is the program's ``V = Σ v_s(ρσh)`` at the
true numbers, its success rate the link's, and its successes binomial over a whole number of
trials uniform on [``trials[0]``, ``trials[1]``].
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ...curves import get
from ...ledger.runs import HOURS_PREFIX, Runs
from .links import LINKS


def run_values(sources: pd.DataFrame, hours: np.ndarray, truth: Mapping[str, float]) -> np.ndarray:
    """``V`` of each row of ``hours`` (runs × sources) at the ledger's numbers with ``truth``
    (``source.column`` → value) over them [own-hour equivalents]."""
    cols = {c: sources[c].to_numpy(dtype=float).copy() for c in ("exchange_rate", "survival", "saturation_hours")}
    names = list(sources["source"])
    for key, value in truth.items():
        source, _, column = key.rpartition(".")
        cols[column][names.index(source)] = value
    total = np.zeros(hours.shape[0])
    for s, curve in enumerate(sources["curve"]):
        e = cols["exchange_rate"][s] * cols["survival"][s] * hours[:, s]
        k = np.full(e.shape, cols["saturation_hours"][s])
        total += get(str(curve)).value(e, k, np.full(e.shape, float(sources["curve_shape"].iloc[s])))
    return total


def simulate_runs(sources: pd.DataFrame, truth: Mapping[str, float], link: Mapping[str, float], *, runs: int,
                  most_hours: Mapping[str, float], trials: tuple[int, int] = (20, 50), absent: float = 0.3,
                  link_name: str = "exp", seed: int = 0, path: Path | str = "simulated runs.csv") -> Runs:  # fmt: skip
    """``runs`` simulated runs (see the module).

    Parameters
    ----------
    sources : pandas.DataFrame
        The ledger's sources.
    truth : mapping of str to float
        The true numbers, ``source.column`` → value (the rest: the ledger's).
    link : mapping of str to float
        The link's true ``p_min``, ``p_max`` and ``value_scale``.
    runs : int
        Runs to simulate.
    most_hours : mapping of str to float
        The most hours of each source a run has [h]; sources not named are in no run.
    trials : (int, int)
        Least and most trials of a run's evaluation.
    absent : float
        Probability that a source is left out of a run's mix [1].
    link_name : str
        A success link of :data:`.links.LINKS`.
    seed : int
        Seed of the draws.
    path : path-like
        The name the runs go by in messages.
    """
    rng = np.random.default_rng(seed)
    names = list(sources["source"])
    hours = np.zeros((runs, len(names)))
    for source, most in most_hours.items():
        s = names.index(source)
        hours[:, s] = rng.uniform(0.0, most, runs) * (rng.uniform(size=runs) >= absent)
    v = run_values(sources, hours, truth)
    params = {k: np.array([float(x)]) for k, x in link.items()}
    p = LINKS[link_name].mean(v[None, :], params)[0]
    n = rng.integers(trials[0], trials[1] + 1, runs).astype(float)
    y = rng.binomial(n.astype(np.int64), np.clip(p, 0.0, 1.0)).astype(float)
    width = len(str(runs))
    return Runs(Path(path), tuple(f"r{j + 1:0{width}d}" for j in range(runs)), tuple(range(2, runs + 2)),
                tuple(names), hours, successes=y, trials=n)  # fmt: skip


def runs_frame(runs: Runs) -> pd.DataFrame:
    """The runs as a ``runs.csv`` table: ``run``, ``hours_<source>`` for each source some run
    has, and the metric's columns."""
    out: dict[str, object] = {"run": list(runs.names)}
    for s, name in enumerate(runs.sources):
        if runs.used()[s]:
            out[HOURS_PREFIX + name] = np.round(runs.hours[:, s], 3)
    if runs.trials is not None:
        out["successes"] = runs.successes.astype(int) if runs.successes is not None else None
        out["trials"] = runs.trials.astype(int)
    else:
        out["score"] = runs.score
        out["score_sd"] = runs.score_sd
    return pd.DataFrame(out)
