"""``procure solve``: the JSON keys README lists, outputs written atomically, one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from procure.interfaces.cli import main

PLAN_KEYS = ["source", "hours", "purchase_usd", "transport_usd", "effective_hours", "value", "marginal_value_per_usd"]


def run_json(args, capsys) -> dict:
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_contract(capsys):
    out = run_json(["solve", "--budget", "100000"], capsys)
    for key in ("status", "value", "value_upper_bound", "lambda", "shadow_prices", "plan"):
        assert key in out
    assert out["status"] == "optimal"
    assert set(out["shadow_prices"]) >= {"accelerator_hours", "core_hours", "storage_gb"}
    assert [row["source"] for row in out["plan"]] == ["own", "twin", "older_arm", "force", "sim"]
    for row in out["plan"]:
        assert set(PLAN_KEYS) <= set(row)
    spent = sum(r["purchase_usd"] + r["transport_usd"] for r in out["plan"])
    assert spent == pytest.approx(100_000, rel=1e-6)
    assert out["value"] <= out["value_upper_bound"]


def test_target(capsys):
    out = run_json(["solve", "--target", "500"], capsys)
    assert out["value"] >= 500 * (1 - 1e-4)
    assert out["mode"] == "target"


def test_held_override_changes_the_plan(capsys):
    base = run_json(["solve", "--budget", "100000"], capsys)
    more = run_json(["solve", "--budget", "100000", "--held", "own=300"], capsys)
    own = lambda out: next(r for r in out["plan"] if r["source"] == "own")  # noqa: E731
    assert own(more)["hours"] < own(base)["hours"]


def test_files_written_atomically(tmp_path, capsys):
    csv, js = tmp_path / "plan.csv", tmp_path / "plan.json"
    js.write_text("old")
    assert main(["solve", "--budget", "20000", "--csv", str(csv), "--json", str(js)]) == 0
    plan = pd.read_csv(csv)
    assert list(plan["source"]) == ["own", "twin", "older_arm", "force", "sim"]
    assert json.loads(js.read_text())["status"] == "optimal"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.csv", "plan.json"]


def test_failed_solve_leaves_files_alone(tmp_path, capsys):
    js = tmp_path / "plan.json"
    js.write_text("keep me")
    assert main(["solve", "--target", "1e9", "--json", str(js)]) == 2
    assert js.read_text() == "keep me"
    assert "infeasible: target" in capsys.readouterr().err


def test_readable(capsys):
    assert main(["solve", "--budget", "100000"]) == 0
    text = capsys.readouterr().out
    for needle in (
        "what to buy",
        "All in: $100,000.00",
        "goes to moving",
        "λ =",
        "the next dollar buys",
        "accelerator_hours",
        "binds",
        "one more unit is worth",
        "certified",
    ):
        assert needle in text, needle


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["solve"], "budget and target: give exactly one"),
        (["solve", "--budget", "-5"], "budget = -5.0 is invalid"),
        (["solve", "--budget", "10", "--held", "own"], "'own' is not NAME=NUMBER"),
        (["solve", "--budget", "10", "--held", "nobody=3"], "held = 'nobody' is invalid: not a source of the ledger"),
        (["solve", "--budget", "10", "--tolerance", "0"], "tolerance = 0.0 is invalid"),
        (["solve", "--budget", "10", "--max-share", "sim=2"], "max_share sim = 2.0 is invalid"),
        (["solve", "--budget", "10", "--csv", "/no/such/dir/plan.csv"], "folder '/no/such/dir' does not exist"),
    ],
)
def test_bad_input(args, message, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_internal_error_is_one_line(monkeypatch, capsys):
    import procure.program.solve.program as solve_module

    def broken(*args, **kwargs):
        raise RuntimeError("something inside broke\nsecond line")

    monkeypatch.setattr(solve_module, "solve_problem", broken)
    assert main(["solve", "--budget", "10"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "internal error: RuntimeError: something inside broke (run with PROCURE_TRACEBACK=1" in err
    monkeypatch.setenv("PROCURE_TRACEBACK", "1")
    with pytest.raises(RuntimeError):
        main(["solve", "--budget", "10"])


def test_library_entry_point_matches_the_command(capsys):
    import procure

    assert main(["solve", "--budget", "100000", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    plan = procure.solve(budget=100_000)
    assert plan.value == pytest.approx(printed["value"], rel=1e-12)
    assert plan.mode == printed["mode"] == "budget" and plan.status == printed["status"] == "optimal"
    loaded = procure.solve(procure.load_ledger(), budget=100_000)
    assert loaded.value == pytest.approx(plan.value, rel=1e-12)


def _free_sim_ledger(ledger_copy):
    path = ledger_copy / "sources.csv"
    text = path.read_text().splitlines()
    head = text[0].split(",")
    rows = [line.split(",") for line in text[1:]]
    price = head.index("price_usd_per_hour")
    for row in rows:
        if row[0] == "sim":
            row[price] = "0"
    path.write_text("\n".join([",".join(head), *[",".join(r) for r in rows]]) + "\n")
    return ledger_copy


def test_json_on_stdout_stays_json_with_a_free_source(ledger_copy):
    """A source that costs $0 all in once made HiGHS print a warning on standard output."""
    ledger = _free_sim_ledger(ledger_copy)
    env = {k: v for k, v in os.environ.items() if k != "PROCURE_TRACEBACK"}
    run = subprocess.run(
        [sys.executable, "-m", "procure.interfaces.cli", "solve", "--ledger", str(ledger), "--budget", "1000", "--json"],
        capture_output=True, text=True, check=False, env=env,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["status"] == "optimal"
    assert run.stderr == ""
    assert "WARNING" not in run.stdout


def test_solver_output_shown_only_when_asked(ledger_copy):
    ledger = _free_sim_ledger(ledger_copy)
    env = {**os.environ, "PROCURE_TRACEBACK": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "procure.interfaces.cli", "solve", "--ledger", str(ledger), "--budget", "1000", "--json"],
        capture_output=True, text=True, check=False, env=env,
    )  # fmt: skip
    assert run.returncode == 0
    json.loads(run.stdout)  # still JSON: the solver's output goes to standard error
    assert "Running HiGHS" in run.stderr


def test_infeasible_mix_names_the_budget(capsys):
    assert main(["solve", "--budget", "20000", "--max-share", "own=0.2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "infeasible: the mix bounds need at least $27,1" in err
    assert "the budget is $20,000.00 (short by $7,1" in err
    assert main(["solve", "--budget", "30000", "--max-share", "own=0.2", "--json"]) == 0


def test_infeasible_mix_names_the_hours_held(capsys):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["solve", "--budget", "20000", "--max-share", "own=0"]) == 2
    assert [str(w.message) for w in caught] == []  # one line, no numpy warning before it
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "infeasible: the mix bounds cannot be met with the hours held and available: own is at least" in err
