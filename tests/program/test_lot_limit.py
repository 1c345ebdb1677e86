"""Lots finer than a solver tells apart are refused; lots just inside the limit are certified.

The default ledger's simulated source has unlimited availability, so its hours are bounded by
what the budget buys (about 17,000 h at $100,000). With lots of 1e-6 h that is 1.7e10 whole
lots, where a double no longer tells an integer from its neighbours to HiGHS's integrality
tolerance: the solve used to report a plan that bought none of it, "certified" against a bound
below the value of plans with coarser lots.
"""

from __future__ import annotations

import json

import pytest
from conftest import DEFAULT_LEDGER

from procure import Ledger, from_ledger
from procure.errors import SolveError
from procure.interfaces.cli import main
from procure.program.numbers.bounds import MOST_LOTS
from procure.program.solve.program import Program

BUDGET = 100_000.0


def with_sim_lot(lot: float) -> Ledger:
    sources = DEFAULT_LEDGER.sources.copy()
    sources.loc[sources["source"] == "sim", "lot_hours"] = lot
    return Ledger(sources, DEFAULT_LEDGER.cluster, DEFAULT_LEDGER.path)


def test_lots_beyond_the_limit_are_refused_with_one_line(tmp_path, capsys):
    folder = tmp_path / "fine"
    assert main(["init", str(folder)]) == 0
    path = folder / "sources.csv"
    lines = path.read_text().splitlines(keepends=True)
    header = lines[0].rstrip("\n").split(",")
    for k, line in enumerate(lines[1:], start=1):
        cells = line.rstrip("\n").split(",")
        if cells[0] == "sim":
            cells[header.index("lot_hours")] = "1e-6"
            lines[k] = ",".join(cells) + "\n"
    path.write_text("".join(lines))
    capsys.readouterr()
    for mode in (["--budget", "100000"], ["--target", "950"]):
        code = main(["solve", "--ledger", str(folder), *mode])
        out, err = capsys.readouterr()
        assert code == 2 and out == ""
        assert err.count("\n") == 1 and "'sim'" in err and "lot_hours" in err and "whole lots" in err


def test_the_limit_counts_the_lots_the_hours_could_span():
    lot = 1e-6
    with pytest.raises(SolveError, match="whole lots"):
        Program(from_ledger(with_sim_lot(lot), budget=BUDGET))
    # the same lot on hours capped below the limit's span is solved
    sources = with_sim_lot(lot).sources
    sources.loc[sources["source"] == "sim", "available_hours"] = 0.5 * MOST_LOTS * lot
    plan = Program(from_ledger(Ledger(sources, DEFAULT_LEDGER.cluster, DEFAULT_LEDGER.path), budget=BUDGET)).solve()
    assert plan.gap <= plan.tolerance


@pytest.mark.parametrize("lot", [1e-3, 2e-5])
def test_fine_lots_inside_the_limit_lie_within_the_continuous_bound(lot):
    """Oracle apart from the lots: the plan with no lots bounds any plan in whole lots, and
    flooring its hours to whole lots (losing at most one lot a source) is within reach of it."""
    continuous = Program(from_ledger(DEFAULT_LEDGER, budget=BUDGET), tolerance=1e-7).solve()
    plan = Program(from_ledger(with_sim_lot(lot), budget=BUDGET)).solve()
    assert plan.value <= continuous.value_upper_bound * (1 + 1e-9)
    assert plan.value >= continuous.value * (1 - 2 * plan.tolerance)
    sim = plan.sources.set_index("source").loc["sim", "hours"]
    assert sim > 0 and abs(sim / lot - round(sim / lot)) <= 1e-6 * max(1.0, sim / lot)


def test_json_of_a_refused_ledger_is_not_written(tmp_path, capsys):
    folder = tmp_path / "fine"
    assert main(["init", str(folder)]) == 0
    text = (folder / "sources.csv").read_text()
    header = text.splitlines()[0].split(",")
    rows = [line.split(",") for line in text.splitlines()[1:]]
    for cells in rows:
        if cells and cells[0] == "sim":
            cells[header.index("lot_hours")] = "1e-6"
    (folder / "sources.csv").write_text("\n".join([",".join(header), *(",".join(r) for r in rows)]) + "\n")
    target = tmp_path / "plan.json"
    target.write_text(json.dumps({"kept": True}))
    capsys.readouterr()
    assert main(["solve", "--ledger", str(folder), "--budget", "100000", "--json", str(target)]) == 2
    assert json.loads(target.read_text()) == {"kept": True}


def test_the_budget_counts_where_the_room_alone_would_span_too_many_lots():
    """Room for over 1e9 hours of sim (its availability unlimited, a million accelerators)
    in lots of 1 h, but $100,000 buys at most 5e5 of them: the plan is solved, in whole lots, and
    raising the budget past the limit's span is then refused, without a rebuild in between."""
    cluster = DEFAULT_LEDGER.cluster.replace(count=1e6, storage_gb=1e15, decode_core_hours=1e15)
    sources = DEFAULT_LEDGER.sources.copy()
    sources["lot_hours"] = 1.0
    ledger = Ledger(sources, cluster, DEFAULT_LEDGER.path)
    program = Program(from_ledger(ledger, budget=BUDGET))
    assert program.built.sources.upper.max() / 1.0 > MOST_LOTS  # the room alone spans too many
    plan = program.solve()
    assert plan.gap <= plan.tolerance
    hours = plan.sources["hours"].to_numpy()
    assert (abs(hours - hours.round()) <= 1e-6 * hours.clip(1.0)).all()
    with pytest.raises(SolveError, match="whole lots"):
        program.set_budget(1e11)
