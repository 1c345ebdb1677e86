"""The plan table of a risk-averse plan names each number as what it is: the sources' values are
expectations over the scenarios and add up to the row of the expected value; the CVaR, and the
objective where it is neither, have rows of their own, equal to the JSON's keys."""

from __future__ import annotations

import json

import pytest

from procure.interfaces import tables, terminal
from procure.interfaces.cli import main

#: Scenarios of the exchange rates of own (held hours too) and twin [own-hours per hour] and
#: their probabilities [1]: far apart, so that no plan is worth as much in the worst share of
#: them as on average.
SCENARIOS = (
    "scenario,source,exchange_rate,probability\n"
    "low,own,0.6,0.3\nlow,twin,0.05,0.3\n"
    "mid,own,1.0,0.4\nmid,twin,0.35,0.4\n"
    "high,own,1.3,0.3\nhigh,twin,0.9,0.3\n"
)
#: Budget of the plans [$].
BUDGET = "100000"
#: The CVaR's share of the worst scenarios [1].
ALPHA = "0.3"
#: The first headings of the plan table over scenarios; the values are in the last of them.
HEADINGS = ("source", "buy h", "held h", "purchase $", "transport $", "effective h", "expected value")
#: Where the values are [column].
AT = HEADINGS.index("expected value")
#: A table cell's value is written to 0.1 (:func:`procure.interfaces.cells.number` with 1
#: decimal): it is within half of that of the number it shows [own-hour equivalents].
CELL = 0.05


def _value(text: str) -> float:
    return float(text.replace(",", ""))


def _solve(tmp_path, capsys, weight: str) -> tuple[list[list[str]], dict]:
    """The plan table's rows (cells split at the rules, label first) and the JSON, of one run."""
    scenarios = tmp_path / "twin.csv"
    scenarios.write_text(SCENARIOS)
    out = tmp_path / "plan.json"
    args = ["solve", "--budget", BUDGET, "--scenarios", str(scenarios), "--risk-alpha", ALPHA,
            "--risk-weight", weight, "--no-evpi", "--json", str(out)]  # fmt: skip
    assert main(args) == 0
    printed = capsys.readouterr().out
    table = printed.split("what to buy")[1].split("All in:")[0]
    lines = [line for line in table.splitlines() if line.startswith(("│", "┃"))]
    rows = [[c.strip() for c in line.strip("│┃ ").replace("┃", "│").split("│")] for line in lines]
    assert rows[0][:7] == list(HEADINGS)
    return rows[1:], json.loads(out.read_text())


@pytest.fixture(autouse=True)
def wide(monkeypatch):
    """A terminal wide enough for the table in one part (a narrower one splits it) [characters]."""
    monkeypatch.setattr(terminal.console, "width", 200)


def test_at_risk_weight_one_the_rows_are_the_expected_value_and_the_cvar(tmp_path, capsys):
    rows, out = _solve(tmp_path, capsys, "1")
    names = [r["source"] for r in out["plan"]]
    by_label = {r[0]: r for r in rows}
    assert set(names) <= set(by_label)
    sources = sum(_value(by_label[n][AT]) for n in names)
    expected = _value(by_label["total: expected value"][AT])
    cvar = _value(by_label["CVaR at 30 % (objective)"][AT])
    assert sources == pytest.approx(expected, abs=CELL * (len(names) + 1))
    assert expected == pytest.approx(out["expected_value"], abs=CELL)
    assert cvar == pytest.approx(out["cvar"], abs=CELL)
    assert out["cvar"] == pytest.approx(out["value"], rel=1e-12) == out["objective"]
    assert out["expected_value"] - out["cvar"] > 10 * CELL  # the two are told apart
    assert sum(r["value"] for r in out["plan"]) == pytest.approx(out["expected_value"], rel=1e-12)


def test_at_risk_weight_one_half_the_objective_has_its_row(tmp_path, capsys):
    rows, out = _solve(tmp_path, capsys, "0.5")
    by_label = {r[0]: r for r in rows}
    assert _value(by_label["CVaR at 30 %"][AT]) == pytest.approx(out["cvar"], abs=CELL)
    assert _value(by_label["objective"][AT]) == pytest.approx(out["objective"], abs=CELL)
    assert out["objective"] == pytest.approx(0.5 * out["expected_value"] + 0.5 * out["cvar"], rel=1e-9)
    assert _value(by_label["total: expected value"][AT]) == pytest.approx(out["expected_value"], abs=CELL)


def test_a_plan_without_scenarios_keeps_its_one_total(tmp_path, capsys):
    assert main(["solve", "--budget", BUDGET]) == 0
    printed = capsys.readouterr().out
    assert "│ total " in printed and "expected value" not in printed and "CVaR" not in printed


def test_the_rows_name_the_objective_for_each_weight(tmp_path, capsys):
    """:func:`procure.interfaces.tables.objective_label`, as the sentence under the table says it."""
    assert tables.objective_label(None) == "Value"
    for weight, label in (("0", "Expected value"), ("1", "CVaR at 30 % (the objective)"),
                          ("0.25", "Objective (0.75 × expected + 0.25 × CVaR at 30 %)")):  # fmt: skip
        scenarios = tmp_path / "twin.csv"
        scenarios.write_text(SCENARIOS)
        args = ["solve", "--budget", BUDGET, "--scenarios", str(scenarios), "--risk-alpha", ALPHA,
                "--risk-weight", weight, "--no-evpi"]  # fmt: skip
        assert main(args) == 0
        assert f"{label} " in capsys.readouterr().out
