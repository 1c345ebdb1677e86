"""What a user can count on: no silent fallback, every number in range, user text as given,
bounded resources, outputs all or nothing, answers that mean what they say."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import DEFAULT_LEDGER

from procure import from_ledger, load_ledger
from procure.errors import InputError
from procure.interfaces.cli import main
from procure.output import write_all


def _run(args, capsys):
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _edit_sources(folder: Path, change) -> None:
    frame = pd.read_csv(folder / "sources.csv", dtype=str, keep_default_na=False)
    frame = change(frame)
    frame.to_csv(folder / "sources.csv", index=False)


# ----------------------------------------------------------------------------- no silent fallbacks


def test_misspelt_column_is_an_error_that_suggests_the_name(ledger_copy, capsys):
    _edit_sources(ledger_copy, lambda f: f.rename(columns={"held_hours": "held_hrs"}))
    code, out, err = _run(["solve", "--ledger", str(ledger_copy), "--budget", "100000"], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert "column 'held_hrs' is unknown (did you mean 'held_hours'?)" in err
    assert "columns of your own start with 'x_'" in err


def test_a_column_given_twice_is_an_error(ledger_copy, capsys):
    path = ledger_copy / "sources.csv"
    lines = path.read_text().splitlines()
    lines = [lines[0] + ",survival", *[line + ",0.5" for line in lines[1:]]]
    path.write_text("\n".join(lines) + "\n")
    code, _out, err = _run(["bill", "--ledger", str(ledger_copy)], capsys)
    assert code == 2
    assert "column 'survival' is given twice (columns 18 and 25)" in err


def test_columns_of_your_own_are_ignored(ledger_copy):
    _edit_sources(ledger_copy, lambda f: f.assign(x_vendor_contact="someone@example.org"))
    mine = load_ledger(ledger_copy)
    assert (mine.sources["x_vendor_contact"] == "someone@example.org").all()
    plan_mine = from_ledger(mine, budget=50_000)
    plan_default = from_ledger(DEFAULT_LEDGER, budget=50_000)
    assert np.array_equal(plan_mine.cost, plan_default.cost)


def test_unknown_cluster_key_suggests_the_name(ledger_copy, capsys):
    toml = ledger_copy / "cluster.toml"
    toml.write_text(toml.read_text().replace("epochs = 10", "epoch = 10"))
    code, _out, err = _run(["bill", "--ledger", str(ledger_copy)], capsys)
    assert code == 2
    assert "training.epoch is unknown (did you mean 'epochs'?)" in err


# ----------------------------------------------------------------------------- every number in range


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("gop = 30", "gop = 0.5", "decode.gop = 0.5 is invalid: must be a number ≥ 1 and ≤ 100000"),
        ("window_hours = 720", "window_hours = 876000", "training.window_hours = 876000 is invalid"),
        ("epochs = 10", "epochs = 1e300", "training.epochs = 1e+300 is invalid: must be a number ≥ 1e-06 and ≤ 100000"),
        ("count = 8", "count = 1e300", "accelerator.count = 1e+300 is invalid"),
    ],
)
def test_cluster_numbers_out_of_range(ledger_copy, capsys, old, new, message):
    toml = ledger_copy / "cluster.toml"
    text = toml.read_text()
    assert old in text
    toml.write_text(text.replace(old, new, 1))
    code, _out, err = _run(["bill", "--ledger", str(ledger_copy)], capsys)
    assert code == 2 and message in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["bill", "--cores", "1e300"], "cores = 1e+300 is invalid: must be 0 or a number ≥ 1e-06 and ≤ 4096"),
        (["bill", "--params", "1"], "params = 1.0 is invalid: must be a number ≥ 1000 and ≤ 1e+14"),
        (
            ["bill", "--byte-price-x", "1e300"],
            "byte_price_x = 1e+300 is invalid: must be 0 or a number ≥ 1e-06 and ≤ 10000",
        ),
        (["bill", "--width", "1e9"], "width = 1000000000.0 is invalid: must be a number ≥ 1 and ≤ 16384"),
        (
            ["bill", "--cores", "0"],
            "cores_per_accelerator = 0 with NVDEC off: nothing decodes the video of source 'own'",
        ),
        (["simulate", "--frames", "1000000000"], "frames = 1000000000 is invalid"),
        (["solve", "--budget", "inf"], "budget = inf is invalid: must be a number ≥ 0 and ≤ 1e+12"),
        (["solve", "--budget", "1000", "--byte-price-x", "-1"], "byte_price_x = -1.0 is invalid"),
        (["sensitivity", "--steps", "1000000"], "1000000 is invalid: must be ≥ 2 and ≤ 10,000"),
    ],
)
def test_options_out_of_range(capsys, args, message):
    code, out, err = _run(args, capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert message in err


@pytest.mark.parametrize("args", [["bill"], ["simulate"], ["sensitivity"], ["solve", "--budget", "1000"], ["rank"]])
def test_a_cluster_file_that_decodes_nothing_is_named_by_every_command(ledger_copy, capsys, args):
    path = ledger_copy / "cluster.toml"
    text = path.read_text(encoding="utf-8")
    assert "\ncores_per_accelerator = 8 " in text
    path.write_text(text.replace("\ncores_per_accelerator = 8 ", "\ncores_per_accelerator = 0 "), "utf-8")
    code, out, err = _run([*args, "--ledger", str(ledger_copy)], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"procure: error: {path}: cores_per_accelerator = 0 with NVDEC off")
    # the same ledger given cores by an option decodes; zero cores by option names no file
    assert _run(["bill", "--ledger", str(ledger_copy), "--cores", "4"], capsys)[0] == 0
    code, _, err = _run(["bill", "--cores", "0"], capsys)
    assert code == 2 and "cluster.toml" not in err


def test_no_nan_and_no_warning_on_the_default_commands(capsys, recwarn):
    for args in (
        ["bill"],
        ["solve", "--budget", "100000"],
        ["rank", "--by", "value"],
        ["simulate", "--frames", "5000"],
    ):
        code, out, err = _run(args, capsys)
        assert code == 0 and err == ""
        assert " nan" not in out.lower() and " inf " not in out.lower()
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_a_lot_larger_than_the_availability_says_so(ledger_copy, capsys):
    _edit_sources(ledger_copy, lambda f: f.assign(lot_hours=np.where(f["source"] == "force", "500", f["lot_hours"])))
    code, out, _err = _run(["solve", "--ledger", str(ledger_copy), "--budget", "100000"], capsys)
    assert code == 0
    assert "force cannot be bought: its smallest purchase (500 h, its minimum order or one lot) is more than" in out
    assert "more than the budget" not in out


def test_a_budget_larger_than_anything_can_use_says_so(capsys):
    code, out, _err = _run(["solve", "--budget", "1e9", "--json"], capsys)
    assert code == 0
    notes = json.loads(out)["notes"]
    assert any(n.startswith("the budget is more than anything can use: the plan spends $") for n in notes)


# ----------------------------------------------------------------------------- user text is text

ODD_NAMES = ["[bold]robot[/bold]", "cost $5 $x^2$", "名前-ロボット", "a,b", 'say "hi"']


def test_user_text_is_printed_as_given(ledger_copy, capsys, tmp_path):
    _edit_sources(ledger_copy, lambda f: f.assign(source=ODD_NAMES))
    code, out, err = _run(["solve", "--ledger", str(ledger_copy), "--budget", "100000", "--all"], capsys)
    assert code == 0, err
    for name in ODD_NAMES:
        assert name in out
    for command in (["rank", "--by", "volume"], ["bill", "--kind", ODD_NAMES[0]]):
        code, out, err = _run([*command, "--ledger", str(ledger_copy)], capsys)
        assert code == 0, err
        assert ODD_NAMES[0] in out
    plot = tmp_path / "plan.svg"
    code, _out, err = _run(["solve", "--ledger", str(ledger_copy), "--budget", "1e5", "--plot", str(plot)], capsys)
    assert code == 0, err
    svg = plot.read_text()
    for name in ("cost $5 $x^2$", "名前-ロボット", "[bold]robot[/bold]"):
        assert name in svg  # text kept as text, not read as maths or markup
    js = json.loads(_run(["solve", "--ledger", str(ledger_copy), "--budget", "1e5", "--json"], capsys)[1])
    assert [row["source"] for row in js["plan"]] == ODD_NAMES


# ----------------------------------------------------------------------------- bounded resources


def test_a_short_simulation_says_so(capsys):
    code, out, _err = _run(["simulate", "--frames", "300", "--json"], capsys)
    assert code == 0
    assert json.loads(out)["note"].startswith("the measured window holds 270 frames, fewer than the")
    code, out, _err = _run(["simulate", "--frames", "20000", "--json"], capsys)
    assert json.loads(out)["note"] == ""


def test_a_long_table_is_summarised(capsys):
    from procure.interfaces import render
    from procure.ledger.synthetic import random_ledger
    from procure.program.solve.program import solve_problem

    ledger = random_ledger(render.TABLE_ROWS + 30, seed=3)
    plan = solve_problem(from_ledger(ledger, budget=50_000.0))
    console = render.Console(width=200, record=True)
    render.print_plan(console, plan)
    text = console.export_text()
    assert "… 30 more sources not shown: --all prints every one, --csv FILE writes them." in text
    console = render.Console(width=200, record=True)
    render.print_plan(console, plan, every_row=True)
    assert "more sources not shown" not in console.export_text()


def test_a_budget_buys_what_a_large_ledger_allows_with_default_options():
    """1,000 sources with the default options (the 100,000-source run is in benchmarks/)."""
    from procure.ledger.synthetic import random_ledger
    from procure.program.solve.program import solve_problem

    plan = solve_problem(from_ledger(random_ledger(1_000, seed=2), budget=200_000.0))
    assert plan.gap <= 1e-4


# ----------------------------------------------------------------------------- outputs all or nothing


def test_output_paths_are_checked_before_any_work(capsys, tmp_path):
    missing = tmp_path / "nowhere" / "plan.json"
    code, out, err = _run(["solve", "--budget", "1e5", "--json", str(missing)], capsys)
    assert code == 2 and out == ""
    assert f"json = '{missing}' is invalid: folder '{missing.parent}' does not exist" in err
    code, _out, err = _run(["solve", "--budget", "1e5", "--csv", str(tmp_path)], capsys)
    assert code == 2 and f"csv = '{tmp_path}' is invalid: it is a folder" in err
    code, _out, err = _run(["bill", "--plot", str(tmp_path / "busy.pdf")], capsys)
    assert code == 2 and "the file must end in .png or .svg" in err


def test_several_outputs_are_written_all_or_none(capsys, tmp_path, monkeypatch):
    csv, js = tmp_path / "plan.csv", tmp_path / "plan.json"
    csv.write_text("old csv\n")
    from procure.interfaces import plots

    def broken(fig, path):
        raise OSError("disk full")

    monkeypatch.setattr(plots, "write_figure", broken)
    code, _out, err = _run(
        ["solve", "--budget", "1e5", "--csv", str(csv), "--json", str(js), "--plot", str(tmp_path / "p.png")], capsys
    )
    assert code == 2 and "disk full" in err
    assert csv.read_text() == "old csv\n"  # untouched
    assert not js.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.csv"]  # no temporary file left


def test_files_take_the_users_umask(capsys, tmp_path):
    old = os.umask(0o027)
    try:
        assert main(["solve", "--budget", "1e5", "--json", str(tmp_path / "plan.json")]) == 0
    finally:
        os.umask(old)
    capsys.readouterr()
    assert stat.S_IMODE((tmp_path / "plan.json").stat().st_mode) == 0o640


def test_an_interrupt_while_writing_leaves_no_file(tmp_path):
    def interrupted(path):
        path.write_text("half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_all([(tmp_path / "a.txt", lambda p: p.write_text("a")), (tmp_path / "b.txt", interrupted)])
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_is_one_line_and_exit_130(capsys, monkeypatch):
    import procure.program.solve.program as solve_module

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(solve_module, "solve_problem", interrupted)
    code, out, err = _run(["solve", "--budget", "1e5"], capsys)
    assert code == 130 and out == "" and err == "procure: aborted\n"


# ----------------------------------------------------------------------------- answers mean what they say


def test_target_is_reached(capsys):
    code, out, _err = _run(["solve", "--target", "800", "--json"], capsys)
    assert code == 0
    plan = json.loads(out)
    assert plan["value"] >= 800
    assert plan["money_lower_bound"] <= plan["spent_usd"] <= plan["money_lower_bound"] * (1 + 1e-4)


def test_ranging_says_a_search_limit_is_a_limit(capsys):
    code, out, _err = _run(["solve", "--budget", "100000", "--ranging"], capsys)
    assert code == 0
    assert "for byte prices from below 0.0001 to 10.87" in out
    code, out, _err = _run(["solve", "--budget", "100000", "--ranging", "--json"], capsys)
    assert json.loads(out)["byte_price_range_at_search_limit"] == [True, False]


def test_sweep_hours_move_only_as_prices_move():
    """Twin's hours fall as bytes get dearer: no zig-zag between neighbouring points."""
    from procure.analyses.sensitivity import sweep

    table = sweep(DEFAULT_LEDGER, "byte_price_x", 0.1, 10.0, 15, budget=100_000, tolerance=1e-6)
    twin = table[table["source"] == "twin"].sort_values("x")["hours"].to_numpy()
    assert (np.diff(twin) <= 1e-3 * twin.max()).all()


def test_bad_python_input_names_the_argument():
    with pytest.raises(InputError, match=r"byte_price_x = -1 is invalid"):
        from_ledger(DEFAULT_LEDGER, budget=1.0).with_byte_price_x(-1)
