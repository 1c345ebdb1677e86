"""``curve = logistic`` in a ledger's sources.csv: accepted by ``procure solve`` alone and with
scenarios, each source valued by PyMC-Marketing's ``LogisticSaturation`` (written out here)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from procure.interfaces.cli import main

#: Budget of the plans [$].
BUDGET = "100000"
#: Scenarios drawn from the default ledger's ranges.
SAMPLES = "8"


def pymc_logistic(x: np.ndarray, lam: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """PyMC-Marketing's ``LogisticSaturation``: ``β (1 − exp(−λx)) / (1 + exp(−λx))``."""
    return beta * (1 - np.exp(-lam * x)) / (1 + np.exp(-lam * x))


def _with_curve(ledger: Path, curve: str) -> dict[str, float]:
    """Rewrite every source of ``ledger`` to ``curve`` (its shape blank); each source's k [effective h]."""
    path = ledger / "sources.csv"
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        row["curve"], row["curve_shape"] = curve, ""
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return {row["source"]: float(row["saturation_hours"]) for row in rows}


def _solve(ledger: Path, capsys, *more: str) -> dict:
    assert main(["solve", "--ledger", str(ledger), "--budget", BUDGET, *more, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_logistic_ledger_is_solved_and_valued_by_pymc_marketings_formula(ledger_copy, capsys):
    k = _with_curve(ledger_copy, "logistic")
    out = _solve(ledger_copy, capsys)
    assert out["status"] == "optimal"
    assert out["value_upper_bound"] - out["value"] <= 1e-4 * out["value_upper_bound"]
    names = [r["source"] for r in out["plan"]]
    assert names == list(k)
    scale = np.array([k[n] for n in names])
    e = np.array([r["effective_hours"] for r in out["plan"]])
    values = np.array([r["value"] for r in out["plan"]])
    assert np.allclose(values, pymc_logistic(e, 1 / scale, 2 * scale), rtol=1e-12)
    assert sum(values) == pytest.approx(out["value"], rel=1e-12)
    bought = [r["hours"] for r in out["plan"]]
    assert sum(h > 0 for h in bought) >= 2  # a split, not one source


def test_a_logistic_ledger_is_solved_over_scenarios(ledger_copy, capsys):
    _with_curve(ledger_copy, "logistic")
    out = _solve(ledger_copy, capsys, "--samples", SAMPLES)
    assert out["status"] == "optimal"
    assert out["value"] <= out["value_upper_bound"]


def test_an_unknown_curve_names_logistic_among_those_allowed(ledger_copy, capsys):
    _with_curve(ledger_copy, "sigmoid")
    assert main(["solve", "--ledger", str(ledger_copy), "--budget", BUDGET]) == 2
    err = capsys.readouterr().err
    assert "sigmoid" in err and "logistic" in err
