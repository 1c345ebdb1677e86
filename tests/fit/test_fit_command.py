"""``procure fit``: the JSON keys, the warnings on what cannot be learned, --scenarios read back
by ``procure solve``, --write through the ledger's locked edit, and the missing extra."""

from __future__ import annotations

import json
import re
import sys

import numpy as np
import pandas as pd
import pytest

from procure import fit, load_ledger
from procure.interfaces.cli import main
from procure.ledger.scenarios import read_scenarios

from .conftest import DEFAULT, FAST, simulated

FAST_ARGS = ["--steps", "300", "--burn-in", "300", "--walkers", "24"]


def _run(args, capsys):
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_json_has_the_documented_keys(ledger_dir, capsys, tmp_path):
    plot = tmp_path / "fit.png"
    code, out, err = _run(["fit", "--ledger", str(ledger_dir), *FAST_ARGS, "--json", "--plot", str(plot)], capsys)
    assert code == 0, err
    d = json.loads(out)
    assert {"parameters", "link", "diagnostics", "runs", "warnings"} <= set(d)
    assert [(r["source"], r["parameter"]) for r in d["parameters"]] == [
        ("own", "saturation_hours"),
        ("twin", "exchange_rate"),
        ("twin", "saturation_hours"),
        ("sim", "exchange_rate"),
        ("sim", "saturation_hours"),
    ]
    for row in d["parameters"]:
        assert {"source", "parameter", "median", "q05", "q95", "prior_median"} <= set(row)
        assert row["q05"] < row["median"] < row["q95"]
    assert d["link"]["name"] == "exp" and [p["parameter"] for p in d["link"]["parameters"]] == [
        "p_min",
        "p_max",
        "value_scale",
    ]
    assert {"acceptance", "ess_min", "rhat_max", "converged", "correlations"} <= set(d["diagnostics"])
    assert 0.1 < d["diagnostics"]["acceptance"] < 0.9
    assert len(d["runs"]) == 16
    for r in d["runs"]:
        assert r["q05"] <= r["predicted"] <= r["q95"]
        assert r["inside"] == (r["q05"] <= r["observed"] <= r["q95"])
    assert sum(r["inside"] for r in d["runs"]) >= 12  # a 90 % interval holds most runs
    # Sources in no run: a warning each, on standard error, what cannot be learned.
    assert "source 'force' is in no run" in err and "cannot be learned" in err
    assert plot.stat().st_size > 10_000


def test_the_same_seed_gives_the_same_fit(capsys):
    runs = simulated(runs=10)
    a = fit(runs, DEFAULT, **FAST)
    b = fit(runs, DEFAULT, **FAST)
    assert a.parameters["median"].tolist() == b.parameters["median"].tolist()


def test_the_table_names_parameters_diagnostics_and_runs(ledger_dir, capsys):
    code, out, err = _run(["fit", str(ledger_dir / "runs.csv"), "--ledger", str(ledger_dir), "--fit",
                           "twin.exchange_rate", *FAST_ARGS], capsys)  # fmt: skip
    assert code == 0, err
    assert "twin" in out and "exchange_rate" in out and "5 %–95 %" in out
    assert "split R-hat" in out and "Posterior predictive check" in out
    assert "Link exp" in out


def test_all_runs_on_one_mix_warn_that_nothing_can_be_told_apart():
    runs = simulated(runs=6)
    same = type(runs)(runs.path, runs.names, runs.lines, runs.sources, np.tile(runs.hours[2], (6, 1)),
                      successes=runs.successes, trials=runs.trials)  # fmt: skip
    f = fit(same, DEFAULT, **FAST)
    assert any("all 6 runs have the same mix" in w for w in f.warnings)


def test_two_numbers_the_runs_cannot_tell_apart_are_named():
    """The exchange rate and the survival of one source enter only as their product."""
    from procure.analyses.fit.simulate import simulate_runs

    from .conftest import LINK, TRUTH

    runs = simulate_runs(DEFAULT.sources, TRUTH, LINK, runs=30, most_hours={"own": 800.0, "twin": 3000.0}, trials=(2000, 3000),
                         absent=0.5, seed=3)  # fmt: skip
    f = fit(runs, DEFAULT, fit=["twin.exchange_rate", "twin.survival"], steps=800, burn_in=600, prior_sd_survival=1.0)
    pairs = f.diagnostics["correlations"]
    assert any({p["a"], p["b"]} == {"twin.exchange_rate", "twin.survival"} and p["correlation"] < -0.9 for p in pairs)
    assert any(
        "cannot tell twin.exchange_rate and twin.survival apart" in w and "only as their product" in w
        for w in f.warnings
    )


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ("own.exchange_rate", "own's exchange rate is 1, the unit of value (the numeraire): it is never fitted"),
        ("force.exchange_rate", "source 'force' is in no run"),
        ("twn.exchange_rate", "'twn' is not a source or kind of the ledger (did you mean 'twin'?)"),
        ("price_usd_per_hour", "allowed are exchange_rate, survival, saturation_hours"),
    ],
)
def test_bad_fit_items_are_one_line(ledger_dir, capsys, item, expected):
    code, _out, err = _run(["fit", "--ledger", str(ledger_dir), "--fit", item], capsys)
    assert code == 2 and expected in err and err.count("\n") == 1


def test_scenarios_written_are_read_by_solve(ledger_dir, capsys, tmp_path):
    path = tmp_path / "posterior.csv"
    code, _out, err = _run(["fit", "--ledger", str(ledger_dir), "--fit", "exchange_rate", *FAST_ARGS, "--draws",
                            "12", "--scenarios", str(path)], capsys)  # fmt: skip
    assert code == 0, err
    ledger = load_ledger(ledger_dir)
    read = read_scenarios(path, ledger.sources)
    assert read.count == 12
    f = fit(ledger_dir / "runs.csv", ledger, fit=["exchange_rate"], **FAST)
    mine = f.scenarios(12)
    for column in ("exchange_rate", "survival", "saturation_hours"):
        assert read.values[column] == pytest.approx(mine.values[column], rel=1e-15)
    twin = list(ledger.sources["source"]).index("twin")
    assert np.ptp(read.values["exchange_rate"][:, twin]) > 0  # the draws differ
    code, out, err = _run(["solve", "--ledger", str(ledger_dir), "--budget", "50000", "--scenarios", str(path),
                           "--no-evpi", "--json"], capsys)  # fmt: skip
    assert code == 0, err
    d = json.loads(out)
    assert len(d["scenario_values"]) == 12 and d["expected_value"] > 0


def test_write_sets_medians_and_ranges_and_nothing_else(ledger_dir, capsys):
    before = (ledger_dir / "sources.csv").read_text().splitlines()
    # The sampler's defaults: --write refuses a fit that has not converged.
    code, out, err = _run(["fit", "--ledger", str(ledger_dir), "--fit", "twin.exchange_rate", "--write", "--json"],
                          capsys)  # fmt: skip
    assert code == 0, err
    row = json.loads(out)["parameters"][0]
    after = (ledger_dir / "sources.csv").read_text().splitlines()
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert changed == [2]  # the twin's row only
    twin = load_ledger(ledger_dir).source("twin")
    assert twin["exchange_rate"] == pytest.approx(row["median"], rel=1e-5)
    assert twin["exchange_rate_low"] == pytest.approx(row["q05"], rel=1e-5)
    assert twin["exchange_rate_high"] == pytest.approx(row["q95"], rel=1e-5)
    assert twin["saturation_hours"] == 800  # not fitted: as it was
    # the report of the ledger so written shows the fit's interval around its median
    pytest.importorskip("plotly", reason="Plotly is not installed (procure-robotics[report])")
    page = ledger_dir.parent / "report.html"
    code, _out, err = _run(["report", "--ledger", str(ledger_dir), "--budget", "50000", "--out", str(page)], capsys)
    assert code == 0, err
    html = page.read_text(encoding="utf-8")
    for key, value in (("low", row["q05"]), ("value", row["median"]), ("high", row["q95"])):
        shown = re.search(rf'data-key="ranges\.twin\.exchange_rate\.{key}" data-value="([^"]+)"', html)
        assert shown is not None and float(shown.group(1)) == pytest.approx(value, rel=1e-5), key


def test_write_needs_a_ledger_of_your_own(capsys, tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("run,hours_own,successes,trials\na,100,3,20\n")
    code, _out, err = _run(["fit", str(path), "--write"], capsys)
    assert code == 2 and "--write needs --ledger DIR" in err


def test_a_missing_sampler_names_the_command_that_installs_it(ledger_dir, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "emcee", None)  # as if it were not installed
    code, _out, err = _run(["fit", "--ledger", str(ledger_dir)], capsys)
    assert code == 2
    assert "procure fit needs the sampler emcee: pip install" in err and "[fit]" in err
    assert err.count("\n") == 1


def test_a_score_metric_is_fitted_with_the_power_link(tmp_path):
    rng = np.random.default_rng(5)
    hours = rng.uniform(0, 3000, (14, 1))
    v = 0.35 * 0.9 * 800 * np.log1p(0.35 * 0.9 * hours[:, 0] / 800)  # the twin's log curve
    score = 1.0 + (2.0 - 1.0) * (1 + v / 100) ** -0.7 + rng.normal(0, 0.02, 14)
    frame = pd.DataFrame({"run": [f"r{i}" for i in range(14)], "hours_twin": hours[:, 0], "score": score,
                          "score_sd": 0.02})  # fmt: skip
    frame.to_csv(tmp_path / "runs.csv", index=False)
    f = fit(tmp_path / "runs.csv", DEFAULT, fit=["twin.saturation_hours"], likelihood="student", **FAST)
    assert f.link == "power" and f.model.likelihood == "student"
    assert set(f.link_table["parameter"]) == {"y_0", "y_inf", "alpha", "value_scale"}
    assert f.runs_table["inside"].mean() > 0.7


def test_next_ranks_the_numbers_by_evppi_below_evpi(ledger_dir, capsys):
    code, out, err = _run(["fit", "--ledger", str(ledger_dir), "--fit", "exchange_rate", *FAST_ARGS, "--next",
                           "--draws", "8", "--groups", "2", "--budget", "50000", "--workers", "1", "--json"], capsys)  # fmt: skip
    assert code == 0, err
    n = json.loads(out)["next"]
    assert {"expected_value", "evpi", "evpi_usd", "lambda", "ledger_plan_expected_value", "parameters"} <= set(n)
    rows = n["parameters"]
    assert [(r["source"], r["parameter"]) for r in rows] != [] and [r["rank"] for r in rows] == [1, 2]
    assert rows[0]["evppi"] >= rows[1]["evppi"] >= 0
    assert all(r["evppi"] <= n["evpi"] + 1e-6 for r in rows)
    assert rows[0]["evppi_usd"] == pytest.approx(rows[0]["evppi"] / n["lambda"])
    assert n["ledger_plan_expected_value"] <= n["expected_value"] * (1 + 1e-6)  # the posterior's plan is no worse


def test_write_refuses_a_fit_that_has_not_converged(ledger_dir, capsys):
    before = (ledger_dir / "sources.csv").read_bytes()
    code, _out, err = _run(["fit", "--ledger", str(ledger_dir), "--fit", "twin.exchange_rate", "--steps", "20",
                            "--burn-in", "10", "--write"], capsys)  # fmt: skip
    assert code == 2 and "has not converged" in err and "nothing written" in err
    assert (ledger_dir / "sources.csv").read_bytes() == before


def test_write_never_touches_the_shipped_ledger(capsys, tmp_path):
    from procure.ledger import default_ledger_dir

    code, _out, err = _run(
        ["fit", str(tmp_path / "runs.csv"), "--ledger", str(default_ledger_dir()), "--write"], capsys
    )
    assert code == 2 and "shipped default ledger" in err


@pytest.mark.parametrize("given", ["", ",,", " , ", "twin.exchange_rate,,sim.exchange_rate"])
def test_an_empty_fit_item_is_refused_before_any_work(ledger_dir, capsys, tmp_path, given):
    plot = tmp_path / "fit.png"
    code, out, err = _run(["fit", "--ledger", str(ledger_dir), "--fit", given, "--plot", str(plot)], capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert f"--fit = {given!r} is invalid" in err and "no empty item" in err
    assert out == "" and not plot.exists()
