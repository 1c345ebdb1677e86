"""``procure.solve`` does what ``procure solve`` does: the same plan, the same JSON, the same
errors, whether scenarios come from options, a file, a loaded object or the ledger folder."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version

import pytest

import procure
from procure.errors import InputError, Reason, SolveError
from procure.interfaces.cli import main
from procure.ledger import load_ledger
from procure.ledger.scenarios import read_scenarios

#: Keys that hold wall-clock timings, at any depth of the JSON object.
TIMINGS = {"build_seconds", "solve_seconds"}
#: Where the per-scenario solves ran: a local cluster is started only when it pays on this machine.
MACHINE = {"ran_on"}
SCENARIOS = "scenario,source,exchange_rate,probability\nlow,twin,0.1,0.25\nmid,twin,0.35,0.5\nhigh,twin,0.6,0.25\n"


def without(obj, keys):
    """``obj`` with ``keys`` left out of every object in it."""
    if isinstance(obj, dict):
        return {k: without(v, keys) for k, v in obj.items() if k not in keys}
    if isinstance(obj, list):
        return [without(v, keys) for v in obj]
    return obj


def cli_json(capsys, *args: str) -> dict:
    code = main(["solve", *args, "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def same(facade: dict, printed: dict) -> None:
    assert list(facade) == list(printed)  # the same keys, in the same order
    assert without(facade, TIMINGS | MACHINE) == without(printed, TIMINGS | MACHINE)


def test_sampled_scenarios_with_risk_match_the_command(capsys):
    result = procure.solve(budget=100000, samples=100, seed=0, risk_weight=1)
    assert isinstance(result, procure.ScenarioPlan)
    printed = cli_json(capsys, "--budget", "100000", "--samples", "100", "--seed", "0", "--risk-weight", "1")
    same(result.to_dict(), printed)
    assert printed["risk_weight"] == 1 and len(printed["scenario_values"]) == 100


def test_a_budget_matches_the_command(capsys):
    plan = procure.solve(budget=100000)
    assert isinstance(plan, procure.Plan)
    same(plan.to_dict(), cli_json(capsys, "--budget", "100000"))


def test_a_target_matches_the_command(capsys):
    plan = procure.solve(target=800)
    assert isinstance(plan, procure.Plan) and plan.mode == "target"
    same(plan.to_dict(), cli_json(capsys, "--target", "800"))


def test_every_option_reaches_the_same_plan(capsys):
    plan = procure.solve(budget=50000, held={"own": 300}, max_share={"sim": 0.1}, byte_price_x=2.0, tolerance=1e-5)
    printed = cli_json(capsys, "--budget", "50000", "--held", "own=300", "--max-share", "sim=0.1",
                       "--byte-price-x", "2", "--tolerance", "1e-5")  # fmt: skip
    same(plan.to_dict(), printed)


def test_recourse_without_evpi_matches_the_command(capsys):
    result = procure.solve(budget=100000, samples=20, seed=3, recourse_price_x=1.05, evpi=False, workers=1)
    printed = cli_json(capsys, "--budget", "100000", "--samples", "20", "--seed", "3", "--recourse-price-x", "1.05",
                       "--no-evpi", "--workers", "1")  # fmt: skip
    same(result.to_dict(), printed)
    assert printed["evpi"] is None and "recourse" in printed


def test_scenarios_from_a_file_a_loaded_object_and_the_ledger_folder(capsys, tmp_path, ledger_copy):
    path = tmp_path / "twin.csv"
    path.write_text(SCENARIOS)
    from_file = procure.solve(budget=100000, scenarios=path, workers=1)
    loaded = read_scenarios(path, load_ledger().sources)
    from_object = procure.solve(budget=100000, scenarios=loaded, workers=1)
    same(from_object.to_dict(), from_file.to_dict())
    same(from_file.to_dict(), cli_json(capsys, "--budget", "100000", "--scenarios", str(path), "--workers", "1"))
    (ledger_copy / "scenarios.csv").write_text(SCENARIOS)
    own = procure.solve(ledger_copy, budget=100000, workers=1)
    assert isinstance(own, procure.ScenarioPlan)
    same(own.to_dict(), from_file.to_dict())
    same(own.to_dict(), cli_json(capsys, "--ledger", str(ledger_copy), "--budget", "100000", "--workers", "1"))


def test_progress_is_reported(capsys):
    ticks: list[tuple[int, int]] = []
    procure.solve(budget=50000, samples=30, workers=1, progress=lambda done, total: ticks.append((done, total)))
    assert ticks and ticks[-1][0] == ticks[-1][1]


@pytest.mark.parametrize(
    ("kwargs", "message", "args"),
    [
        ({"risk_weight": 0.5}, "risk_weight needs scenarios", ["--risk-weight", "0.5"]),
        ({"evpi": False}, "evpi=False needs scenarios", ["--no-evpi"]),
        ({"workers": 2}, "workers needs scenarios", ["--workers", "2"]),
    ],
)
def test_an_argument_of_scenario_solves_needs_scenarios(kwargs, message, args, capsys):
    with pytest.raises(InputError, match=message):
        procure.solve(budget=100000, **kwargs)
    assert main(["solve", "--budget", "100000", *args]) == 2
    err = capsys.readouterr().err
    assert err == f"procure: error: {args[0]} needs scenarios: --scenarios FILE, --samples N, or scenarios.csv\n"


def test_the_library_errors_are_the_commands(capsys):
    for kwargs, args in (
        ({"budget": 1e5, "samples": 5, "risk_alpha": 0.0}, ["--budget", "1e5", "--samples", "5", "--risk-alpha", "0"]),
        ({"target": 500, "samples": 5}, ["--target", "500", "--samples", "5"]),
    ):
        with pytest.raises(InputError) as caught:
            procure.solve(**kwargs)
        assert main(["solve", *args]) == 2
        assert capsys.readouterr().err == f"procure: error: {caught.value}\n"


def test_a_solve_error_says_why():
    with pytest.raises(SolveError) as caught:
        procure.solve(budget=1e5, time_limit=1e-9)
    assert caught.value.reason is procure.Reason.TIME_LIMIT
    assert procure.Reason is Reason and {"Reason", "ScenarioPlan"} <= set(procure.__all__)


def test_the_version_is_the_installed_one():
    from procure.install import DISTRIBUTION

    assert procure.__version__ == version(DISTRIBUTION)
    run = subprocess.run([sys.executable, "-m", "procure.interfaces.cli", "--version"], capture_output=True, text=True)
    assert run.stdout == f"procure, version {version(DISTRIBUTION)}\n"


def test_import_procure_stays_light():
    code = "import sys, procure\nprocure.__version__\nprint(' '.join(sorted(sys.modules)))"
    loaded = set(
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    )
    assert not {"pyomo", "numpy", "pandas", "matplotlib", "click", "rich"} & loaded


def test_a_source_checkout_reads_the_version_from_pyproject(monkeypatch):
    import importlib.metadata
    import tomllib
    from pathlib import Path

    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    import procure.install

    checkout = Path(__file__).resolve().parents[2]  # the repository these tests are in
    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    monkeypatch.setattr(procure.install, "__file__", str(checkout / "procure" / "install.py"))
    pyproject = tomllib.loads((checkout / "pyproject.toml").read_text())
    assert procure._version() == pyproject["project"]["version"]
