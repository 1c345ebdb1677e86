"""``procure solve --formats --cores-choices --rent``: the infrastructure in JSON and one line for bad input."""

from __future__ import annotations

import json

import pytest

from procure.interfaces.cli import main


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_json_has_the_format_cores_and_rent(capsys):
    code, out, err = run(["solve", "--budget", "100000", "--formats", "recorded,model_side,decoded",
                          "--cores-choices", "8,16,24,32", "--rent", "accelerator_hours=20000", "--json", "-"],
                         capsys)  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert {"format", "pixels_per_token"} <= set(data["plan"][0])
    assert data["cores_per_accelerator"] in (8, 16, 24, 32)
    assert set(data["rented"]) == {"accelerator_hours"}
    assert set(data["cores_values"]) == {"8", "16", "24", "32"}
    assert data["value"] == pytest.approx(max(data["cores_values"].values()), rel=2e-4)
    rows = data["formats"]
    assert {r["format"] for r in rows} == {"recorded", "model_side", "decoded"}
    assert sum(r["hours"] for r in rows) == pytest.approx(sum(r["hours"] for r in data["plan"]), rel=1e-9)
    assert data["spent_usd"] <= 100_000 * (1 + 1e-7)


@pytest.mark.parametrize("mode", [("--budget", "100000"), ("--target", "900")])
def test_each_counts_figure_is_that_counts_own_plan(capsys, mode):
    # the figure printed for each count is the certified plan of a request that offers that
    # count alone (each solved on its own, with no cuts carried from another program)
    formats = ["--formats", "recorded,model_side,decoded", "--json", "-"]
    code, out, err = run(["solve", *mode, *formats, "--cores-choices", "8,16,24"], capsys)
    assert code == 0, err
    data = json.loads(out)
    key, figure = ("cores_money", "spent_usd") if mode[0] == "--target" else ("cores_values", "value")
    for count, shown in data[key].items():
        code, out, err = run(["solve", *mode, *formats, "--cores-choices", count], capsys)
        assert code == 0, err
        alone = json.loads(out)
        assert alone["cores_per_accelerator"] == float(count)
        assert shown == pytest.approx(alone[figure], rel=2e-4), count


def test_the_table_names_each_source_s_format(capsys, monkeypatch):
    from procure.interfaces import terminal

    monkeypatch.setattr(terminal.console, "width", 80)
    code, out, err = run(["solve", "--budget", "100000", "--formats", "recorded,model_side"], capsys)
    assert code == 0, err
    assert "twin (model_side)" in out and "Formats: what keeping each hour costs and uses" in out
    assert max(len(line) for line in out.splitlines()) <= 80


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--formats", "recorded,mp4"], "mp4"),
        (["--formats", ","], "--formats is empty"),
        (["--cores-choices", ""], "--cores-choices = '' is empty"),
        (["--cores-choices", "8,x"], "'x' is not a count"),
        (["--cores-choices", "32-8"], "runs backwards"),
        (["--cores-choices", "0.5"], "whole numbers ≥ 1"),
        (["--rent", "accelerator_hours=-1"], "rent accelerator_hours"),
        (["--rent", "gpus=5"], "rent 'gpus' is unknown"),
        (["--formats", "model_side", "--samples", "5"], "for a plan at one time without scenarios"),
    ],
)
def test_bad_infrastructure_gives_one_line_and_exit_2(tmp_path, capsys, args, message):
    out_json = tmp_path / "plan.json"
    code, _out, err = run(["solve", "--budget", "100000", *args, "--json", str(out_json)], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("procure: error: "), err
    assert message in lines[0]
    assert not out_json.exists()


def test_a_rendered_source_asked_to_re_encode_in_its_ledger_is_one_line(tmp_path, capsys):
    import shutil

    from procure.ledger import default_ledger_dir

    folder = tmp_path / "ledger"
    shutil.copytree(default_ledger_dir(), folder)
    import pandas as pd

    table = pd.read_csv(folder / "sources.csv", dtype=str, keep_default_na=False)
    table["formats"] = ["recorded+model_side" if name == "sim" else "" for name in table["source"]]
    table.to_csv(folder / "sources.csv", index=False)
    code, _out, err = run(["solve", "--ledger", str(folder), "--budget", "100000"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "sources.csv: line 6 (source 'sim'): formats = 'recorded+model_side' is invalid" in err and "rendered" in err


@pytest.mark.parametrize("offer", [["--formats", "recorded"], ["--cores-choices", "8"]])
def test_offering_only_what_is_there_is_todays_program_within_the_tolerance(offer, capsys):
    """Each plan's bound holds the other's value, and the values agree within the tolerance."""
    code, out, err = run(["solve", "--budget", "100000", "--json", "-"], capsys)
    assert code == 0, err
    today = json.loads(out)
    code, out, err = run(["solve", "--budget", "100000", *offer, "--json", "-"], capsys)
    assert code == 0, err
    offered = json.loads(out)
    assert offered["value"] <= today["value_upper_bound"] * (1 + 1e-9)
    assert today["value"] <= offered["value_upper_bound"] * (1 + 1e-9)
    assert offered["value"] == pytest.approx(today["value"], rel=2 * today["tolerance"])


@pytest.mark.parametrize("cell", ["+", " + ", "recorded++decoded", "recorded+", "+model_side"])
def test_a_formats_cell_with_an_empty_format_is_one_line(tmp_path, capsys, cell):
    import shutil

    import pandas as pd

    from procure.ledger import default_ledger_dir

    folder = tmp_path / "ledger"
    shutil.copytree(default_ledger_dir(), folder)
    table = pd.read_csv(folder / "sources.csv", dtype=str, keep_default_na=False)
    table["formats"] = [cell if name == "own" else "" for name in table["source"]]
    table.to_csv(folder / "sources.csv", index=False)
    out_json = tmp_path / "plan.json"
    code, _out, err = run(["solve", "--ledger", str(folder), "--budget", "100000", "--json", str(out_json)], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"sources.csv: line 2 (source 'own'): formats = {cell.strip()!r} is invalid: an empty format" in err
    assert "formats joined by '+'" in err and not out_json.exists()


@pytest.mark.parametrize("given", ["recorded,,decoded", "recorded,", ",model_side", "recorded, ,decoded"])
def test_a_formats_option_with_an_empty_format_is_one_line(tmp_path, capsys, given):
    out_json = tmp_path / "plan.json"
    code, _out, err = run(["solve", "--budget", "100000", "--formats", given, "--json", str(out_json)], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"--formats = {given!r} is invalid: an empty format" in err and not out_json.exists()
