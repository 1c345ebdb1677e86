"""``procure solve --periods``: the schedule, what to buy now, and one line for every bad file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from procure.interfaces.cli import main

HEADER = "period,months,money_usd\n"
QUARTERS = HEADER + "Q1,3,25000\nQ2,3,25000\nQ3,3,25000\nQ4,3,25000\n"


def write(folder: Path, text: str, sources: str | None = None, *, crlf: bool = False, bom: bool = False) -> Path:
    path = folder / "periods.csv"
    body = text.replace("\n", "\r\n") if crlf else text
    path.write_bytes(("\ufeff" if bom else "").encode() + body.encode())
    if sources is not None:
        (folder / "period_sources.csv").write_text(sources)
    return path


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_json_has_the_schedule_and_lambda_by_period(tmp_path, capsys):
    path = write(tmp_path, QUARTERS)
    code, out, err = run(["solve", "--periods", str(path), "--json", "-"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert [p["period"] for p in data["periods"]] == ["Q1", "Q2", "Q3", "Q4"]
    assert set(data["schedule"][0]) == {"period", "source", "hours", "purchase_usd", "transport_usd",
                                        "effective_hours", "value"}  # fmt: skip
    assert len(data["schedule"]) == 4 * len(data["plan"])
    assert set(data["lambda_by_period"]) == {"Q1", "Q2", "Q3", "Q4"}
    assert set(data["shadow_prices_by_period"]) == {"Q1", "Q2", "Q3", "Q4"}
    # λ_t falls over the year: a dollar that arrives early buys hours every later run counts.
    lam = [data["lambda_by_period"][q] for q in ("Q1", "Q2", "Q3", "Q4")]
    assert lam == sorted(lam, reverse=True)
    total = sum(r["purchase_usd"] + r["transport_usd"] for r in data["schedule"])
    assert total == pytest.approx(data["spent_usd"], rel=1e-9)
    assert data["spent_usd"] <= 100_000 * (1 + 1e-7)


def test_a_spreadsheet_saved_file_reads_the_same(tmp_path, capsys):
    plain = tmp_path / "a"
    sheet = tmp_path / "b"
    plain.mkdir()
    sheet.mkdir()
    a = run(["solve", "--periods", str(write(plain, QUARTERS)), "--json", "-"], capsys)
    b = run(["solve", "--periods", str(write(sheet, QUARTERS, crlf=True, bom=True)), "--json", "-"], capsys)
    assert a[0] == b[0] == 0
    assert json.loads(a[1])["value"] == pytest.approx(json.loads(b[1])["value"], rel=1e-12)


def test_now_prints_the_first_period_only(tmp_path, capsys, monkeypatch):
    from procure.interfaces import terminal

    monkeypatch.setattr(terminal.console, "width", 80)
    path = write(tmp_path, QUARTERS)
    code, out, err = run(["solve", "--periods", str(path), "--now"], capsys)
    assert code == 0, err
    assert "Buy now, in period Q1" in out and "What the rest of the schedule assumes" in out
    assert "Hours bought, by period" not in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_csv_writes_the_schedule_and_plot_draws_it(tmp_path, capsys):
    path = write(tmp_path, QUARTERS)
    csv, png = tmp_path / "schedule.csv", tmp_path / "schedule.png"
    code, _out, err = run(["solve", "--periods", str(path), "--csv", str(csv), "--plot", str(png)], capsys)
    assert code == 0, err
    assert csv.read_text().splitlines()[0] == "period,source,hours,purchase_usd,transport_usd,effective_hours,value"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_ledger_folder_with_periods_plans_over_them(tmp_path, capsys):
    import shutil

    from procure.ledger import default_ledger_dir

    folder = tmp_path / "ledger"
    shutil.copytree(default_ledger_dir(), folder)
    write(folder, QUARTERS)
    code, out, err = run(["solve", "--ledger", str(folder), "--json", "-"], capsys)
    assert code == 0, err
    assert "schedule" in json.loads(out)


BAD = [
    (HEADER + "Q1,0,1000\n", None, "line 2: months = '0'"),
    (HEADER + "Q1,3,-5\n", None, "line 2: money_usd = '-5'"),
    (HEADER + "Q1,3,1000\nQ1,3,1000\n", None, "line 3: period = 'Q1' is named twice (first on line 2)"),
    (
        "period,months,money_usd,start_month\nQ1,3,1000,0\nQ2,3,1000,6\n",
        None,
        "line 3: start_month = 6 is out of order",
    ),
    (
        HEADER + "Q1,3,1000\n",
        "period,source,price_usd_per_hour\nQ1,twn,3\n",
        "source = 'twn' is not a source of the ledger (did you mean 'twin'?)",
    ),
    (HEADER + "Q1,3,1000\n", "period,source,price_usd_per_hour\nQ9,twin,3\n", "period = 'Q9' is not a period"),
    (HEADER + "Q1,3,1000\n", "period,source,available_hours\nQ1,twin,-1\n", "line 2: available_hours = '-1'"),
    ("period,months,money_usd,storage_gb\nQ1,3,1000,1\n", None, "in period 'Q1' the hours already held need"),
    ("period,month,money_usd\nQ1,3,1000\n", None, "column 'month' is unknown (did you mean 'months'?)"),
    (HEADER + "Q1,3,0\n", None, "money_usd is 0 in every period"),
    ("period,months,money_usd,weight\nQ1,3,1000,1\nQ2,3,1000,\n", None, "line 3: weight is blank"),
]


@pytest.mark.parametrize(("text", "sources", "message"), BAD, ids=[m[:30] for _t, _s, m in BAD])
def test_bad_periods_give_one_line_and_exit_2(tmp_path, capsys, text, sources, message):
    path = write(tmp_path, text, sources)
    out_json = tmp_path / "plan.json"
    code, _out, err = run(["solve", "--periods", str(path), "--json", str(out_json)], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("procure: error: "), err
    assert message in lines[0]
    assert "Traceback" not in err
    assert not out_json.exists()  # nothing written


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--now"], "--now needs periods"),
        (["--no-carry"], "--no-carry needs periods"),
        (["--samples", "5", "--risk-weight", "0.5"], "--risk-weight is for a plan at one time"),
        (["--samples", "5", "--risk-alpha", "0.2"], "--risk-alpha is for a plan at one time"),
        (["--samples", "5", "--recourse-price-x", "1.5"], "--recourse-price-x is for a plan at one time"),
        (["--samples", "5", "--workers", "2"], "a plan over periods under scenarios is one program"),
        (["--ranging", "--budget", "1000"], "--ranging is for a plan at one time"),
    ],
)
def test_options_that_need_or_refuse_periods(tmp_path, capsys, args, message):
    path = write(tmp_path, QUARTERS)
    extra = [] if args[0] in ("--now", "--no-carry") else ["--periods", str(path)]
    code, _out, err = run(
        ["solve", *extra, *args, *([] if "--budget" in args or extra else ["--budget", "1000"])], capsys
    )
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1


def test_periods_under_sampled_scenarios(tmp_path, capsys):
    path = write(tmp_path, QUARTERS)
    code, out, err = run(["solve", "--periods", str(path), "--samples", "6", "--json", "-"], capsys)
    assert code == 0, err
    data = json.loads(out)
    rows = data["schedule"]
    assert {r["scenario"] for r in rows} == {f"s{k}" for k in range(1, 7)} or len({r["scenario"] for r in rows}) == 6
    first = {}
    for r in rows:
        if r["period"] == "Q1":
            first.setdefault(r["source"], set()).add(round(r["hours"], 6))
    assert all(len(hours) == 1 for hours in first.values())  # one decision now
    assert sum(r["probability"] for r in rows if r["period"] == "Q1" and r["source"] == "own") == pytest.approx(1)


def test_a_row_with_a_cell_too_many_is_one_line(tmp_path, capsys):
    path = write(tmp_path, HEADER + "Q1,3,1000,99\n")
    code, _out, err = run(["solve", "--periods", str(path)], capsys)
    assert code == 2 and "line 2 has 4 cells, the header has 3" in err and len(err.strip().splitlines()) == 1


def test_columns_of_your_own_are_ignored(tmp_path, capsys):
    plain = run(["solve", "--periods", str(write(tmp_path, QUARTERS)), "--json", "-"], capsys)
    noted = QUARTERS.replace("money_usd\n", "money_usd,x_note\n").replace("25000\n", "25000,grant\n")
    mine = run(["solve", "--periods", str(write(tmp_path, noted)), "--json", "-"], capsys)
    assert plain[0] == mine[0] == 0
    assert json.loads(plain[1])["value"] == json.loads(mine[1])["value"]


def test_many_periods_are_the_rows_of_the_hours_table(tmp_path, capsys, monkeypatch):
    from procure.interfaces import terminal

    monkeypatch.setattr(terminal.console, "width", 80)
    text = HEADER + "".join(f"M{i},1,5000\n" for i in range(1, 15))
    code, out, err = run(["solve", "--periods", str(write(tmp_path, text))], capsys)
    assert code == 0, err
    table = out[out.index("Hours bought, by period") :]
    assert "┃ period" in table.splitlines()[2] and "M14" in table
    assert max(len(line) for line in out.splitlines()) <= 80


def test_sources_bought_in_part_return_lambda_per_dollar(tmp_path, capsys):
    code, out, err = run(["solve", "--periods", str(write(tmp_path, QUARTERS)), "--tolerance", "1e-7", "--json", "-"],
                         capsys)  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    first = {r["source"]: r["hours"] for r in data["schedule"] if r["period"] == "Q1"}
    between = [r for r in data["plan"] if first[r["source"]] > 1 and r["position"] == "between"]
    assert between
    for r in between:
        assert r["marginal_value_per_usd"] == pytest.approx(data["lambda"], rel=0.02)


def test_rank_and_sensitivity_say_they_plan_at_one_time(tmp_path, capsys):
    import shutil

    from procure.ledger import default_ledger_dir

    folder = tmp_path / "ledger"
    shutil.copytree(default_ledger_dir(), folder)
    write(folder, QUARTERS)
    code, out, err = run(["rank", "--ledger", str(folder), "--json", "-"], capsys)
    assert code == 0 and "rank plans at one time" in err and "periods.csv" in err
    json.loads(out)  # standard output stays one JSON object
    code, _out, err = run(["rank", "--json", "-"], capsys)
    assert code == 0 and "plans at one time" not in err
