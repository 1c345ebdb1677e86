"""``procure solve`` with scenarios: the keys users' scripts read, the table, one-line errors."""

from __future__ import annotations

import json

import pytest

from procure.interfaces.cli import main

SCENARIOS = "scenario,source,exchange_rate,probability\nlow,twin,0.1,0.25\nmid,twin,0.35,0.5\nhigh,twin,0.6,0.25\n"


def _run(args, capsys):
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def scenarios_file(tmp_path):
    path = tmp_path / "twin.csv"
    path.write_text(SCENARIOS)
    return path


def test_json_has_the_scenario_keys(scenarios_file, capsys):
    code, out, err = _run(["solve", "--budget", "100000", "--scenarios", str(scenarios_file),
                           "--recourse-price-x", "1.05", "--json"], capsys)  # fmt: skip
    assert code == 0, err
    d = json.loads(out)
    for key in ("status", "value", "value_upper_bound", "gap", "lambda", "plan", "expected_value", "cvar",
                "scenario_values", "evpi", "vss", "recourse"):  # fmt: skip
        assert key in d
    assert [r["scenario"] for r in d["scenario_values"]] == ["low", "mid", "high"]
    assert d["evpi"] >= 0 and d["vss"] >= 0
    assert d["value"] <= d["value_upper_bound"] * (1 + 1e-12)
    assert d["gap"] <= 1e-4
    assert {"scenario", "source", "hours"} <= set(d["recourse"][0])
    expected = sum(r["probability"] * r["value"] for r in d["scenario_values"])
    assert d["expected_value"] == pytest.approx(expected, rel=1e-12)


def test_the_table_names_the_risk_and_the_information(scenarios_file, capsys, tmp_path):
    plot = tmp_path / "values.png"
    code, out, err = _run(["solve", "--budget", "100000", "--scenarios", str(scenarios_file), "--risk-weight", "0.5",
                           "--plot", str(plot)], capsys)  # fmt: skip
    assert code == 0, err
    assert "The plan in each of 3 scenarios" in out
    assert "CVaR at 10 %" in out and "0.5 × expected + 0.5 × CVaR" in out
    assert "EVPI" in out and "VSS" in out
    assert plot.stat().st_size > 10_000


def test_samples_from_the_default_ledger_are_reproducible(capsys):
    args = ["solve", "--budget", "50000", "--samples", "20", "--seed", "4", "--no-evpi", "--json"]
    _code, first, _err = _run(args, capsys)
    _code, second, _err = _run(args, capsys)
    a, b = json.loads(first), json.loads(second)
    assert a["scenario_values"] == b["scenario_values"]
    assert a["evpi"] is None  # not computed: NaN reads as null


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--risk-weight", "0.5"], "--risk-weight needs scenarios"),
        (["--samples", "5", "--risk-alpha", "0"], "risk_alpha = 0.0 is invalid"),
        (["--samples", "5", "--recourse-price-x", "0.5"], "recourse_price_x = 0.5 is invalid"),
        (["--samples", "5", "--ranging"], "--ranging is for a plan without scenarios"),
        (["--samples", "0"], "samples = 0 is invalid"),
        (["--samples", "5", "--workers", "0"], "workers = 0 is invalid"),
    ],
)
def test_bad_options_end_in_one_line(args, message, capsys):
    code, out, err = _run(["solve", "--budget", "100000", *args], capsys)
    assert code == 2
    assert message in err and err.count("\n") == 1 and out == ""


def test_target_with_scenarios_is_refused(capsys):
    code, _out, err = _run(["solve", "--target", "500", "--samples", "5"], capsys)
    assert code == 2 and "scenarios are solved for a budget" in err


def test_recourse_capacity_binds_only_where_a_scenario_fills_it():
    """With recourse a capacity's use is the most any scenario uses; it binds only when full."""
    import procure

    sp = procure.solve(budget=100_000, samples=20, seed=0, recourse_price_x=1.05, evpi=False)
    for _, c in sp.plan.capacities.iterrows():
        if c["capacity"].startswith("max_share"):
            continue
        assert bool(c["binding"]) == bool(c["limit"] - c["used"] <= 1e-7 * max(1.0, c["limit"]))


def test_a_capacity_worth_value_but_no_dollars_says_so():
    """λ = 0 (the budget does not bind): a binding capacity has a value but no dollar price."""
    import procure
    from procure.interfaces.tables import capacity_rows

    plan = procure.solve(budget=1e9)
    assert plan.lambda_ == 0
    worth = [cells[-1] for cells in capacity_rows(plan).cells if cells[3] == "binds"]
    assert worth and all("no $" in w and "$0.00" not in w for w in worth)
