"""An imported LeRobot row never inflates a plan, and the import refuses what would: a blank
name or kind, a frame rate out of the ledger's range, an output onto a file it reads."""

from __future__ import annotations

import json
import os

import pytest
from test_lerobot import FPS, FRAMES, make_dataset

from procure import load_ledger
from procure.interfaces.cli import main

pytest.importorskip("av")

BUDGET = "100000"


def solve(capsys, ledger) -> dict:
    assert main(["solve", "--ledger", str(ledger), "--budget", BUDGET, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_an_appended_row_is_held_with_nothing_to_buy(tmp_path, capsys, ledger_copy):
    before = solve(capsys, ledger_copy)
    root = make_dataset(tmp_path / "ds", "v2.1")
    args = ["import", "lerobot", str(root), "--source", "arm3", "--append", "--ledger", str(ledger_copy),
            "--saturation-hours", "500"]  # fmt: skip
    assert main(args) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "exchange_rate not given" in printed  # said where the row is written
    row = load_ledger(ledger_copy).source("arm3")
    assert (row["price_usd_per_hour"], row["available_hours"], row["exchange_rate"]) == (0, 0, 1)
    assert row["held_hours"] == pytest.approx(FRAMES / FPS / 3600)
    after = solve(capsys, ledger_copy)
    bought = {p["source"]: p["hours"] for p in after["plan"]}
    assert bought.get("arm3", 0) == 0
    # Its 0.0004 h held add value on a log curve of k = 500 only: at most ρ · h = 0.0004.
    assert after["value"] == pytest.approx(before["value"], abs=FRAMES / FPS / 3600 + 1e-6)


def test_price_needs_the_hours_it_buys(tmp_path, capsys):
    root = make_dataset(tmp_path / "ds", "v2.1")
    assert main(["import", "lerobot", str(root), "--price", "40"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--price and --available-hours go together" in err


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [("--source", "", "--source: source is blank"), ("--source", "  ", "--source: source is blank"),
     ("--kind", "", "--kind: kind is blank"), ("--exchange-rate", "-1", "exchange_rate")],
)  # fmt: skip
def test_blank_name_or_kind_is_refused(tmp_path, capsys, option, value, message):
    root = make_dataset(tmp_path / "ds", "v2.1")
    assert main(["import", "lerobot", str(root), option, value, "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and message in captured.err


@pytest.mark.parametrize("fps", [1e-9, 0, 10_001, 10**400], ids=["1e-9", "0", "10001", "10^400"])
def test_a_frame_rate_out_of_the_ledgers_range_is_refused(tmp_path, capsys, fps):
    root = make_dataset(tmp_path / "ds", "v2.1")
    info = json.loads((root / "meta" / "info.json").read_text())
    info["fps"] = fps
    (root / "meta" / "info.json").write_text(json.dumps(info))
    assert main(["import", "lerobot", str(root)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "info.json: fps = " in err and "must be a number ≥ 1e-06 and ≤ 10000" in err


@pytest.mark.parametrize("target", ["meta/info.json", "videos/chunk-000/observation.images.top/episode_000000.mp4"])
def test_the_json_never_overwrites_a_file_the_import_reads(tmp_path, capsys, target):
    root = make_dataset(tmp_path / "ds", "v2.1")
    path = root / target
    before = path.read_bytes()
    assert main(["import", "lerobot", str(root), "--json", str(path)]) == 2
    err = capsys.readouterr().err
    assert "a file of the dataset this import reads" in err and err.count("\n") == 1
    assert path.read_bytes() == before


def test_the_ledger_edit_never_overwrites_a_file_the_import_reads(tmp_path, capsys, ledger_copy):
    root = make_dataset(tmp_path / "ds", "v2.1")
    info = root / "meta" / "info.json"
    before = info.read_bytes()
    (ledger_copy / "sources.csv").unlink()
    os.symlink(info, ledger_copy / "sources.csv")
    args = ["import", "lerobot", str(root), "--append", "--ledger", str(ledger_copy), "--saturation-hours", "9"]
    assert main(args) == 2
    assert info.read_bytes() == before
    assert "info.json" in capsys.readouterr().err


def test_append_of_another_kind_needs_its_exchange_rate(tmp_path, capsys, ledger_copy):
    root = make_dataset(tmp_path / "ds", "v2.1")
    before = (ledger_copy / "sources.csv").read_bytes()
    args = ["import", "lerobot", str(root), "--source", "arm3", "--kind", "older_arm", "--append", "--ledger",
            str(ledger_copy), "--saturation-hours", "500"]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "kind 'older_arm' needs --exchange-rate" in err
    assert (ledger_copy / "sources.csv").read_bytes() == before
    assert main([*args, "--exchange-rate", "0.3"]) == 0
    assert load_ledger(ledger_copy).source("arm3")["exchange_rate"] == 0.3


@pytest.mark.parametrize("importer", ["lerobot", "rlds"])
@pytest.mark.parametrize(("option", "value"), [("--source", ""), ("--kind", ""), ("--kind", " \t")])
def test_a_blank_name_or_kind_is_refused_at_the_option_before_the_dataset_is_read(
    tmp_path, capsys, importer, option, value
):
    missing = tmp_path / "no_such_dataset"  # read first, it would be refused for its missing files
    assert main(["import", importer, str(missing), option, value, "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert f"{option}: {option[2:]} is blank: it is required, non-empty text" in captured.err
