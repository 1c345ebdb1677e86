"""Tables on narrow and wide terminals: every number whole, every line within the width, a
table too wide printed in parts with a line saying how wide a terminal prints it whole; user
text with control characters shown escaped (and kept exact in JSON)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import unicodedata

import pytest
from conftest import DEFAULT_LEDGER
from hypothesis import given, settings
from hypothesis import strategies as st

from procure.interfaces import render, tables, terminal
from procure.interfaces.cli import main

#: Commands whose tables must fit, each with what its JSON lets the test check.
COMMANDS = {
    "solve": ["solve", "--budget", "100000"],
    "rank": ["rank"],
    "rank-budget": ["rank", "--by", "value", "--budget", "100000"],
    "sensitivity": ["sensitivity", "--steps", "5"],
    "sensitivity-budget": ["sensitivity", "--vary", "budget", "20000", "200000", "--steps", "3"],
    "bill": ["bill"],
    "scenarios": ["solve", "--budget", "100000", "--samples", "12", "--recourse-price-x", "1.05", "--no-evpi"],
}
#: A number cut short by the table: a digit, a decimal point or a thousands comma before an ellipsis.
CUT = re.compile(r"[\d.,%$]…")


@pytest.fixture
def width(request, monkeypatch):
    monkeypatch.setattr(terminal.console, "width", request.param)
    return request.param


def printed(capsys, args) -> str:
    assert main(args) == 0
    return capsys.readouterr().out


def as_json(capsys, args) -> dict:
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def rows_of(text: str) -> list[list[str]]:
    """The cells of each table row printed (box-drawn lines with cells)."""
    out = []
    for line in text.splitlines():
        if line.startswith("│") or line.startswith("┃"):
            out.append([c.strip() for c in re.split("[│┃]", line)[1:-1]])
    return out


@pytest.mark.parametrize("width", [80, 120], indirect=True)
@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_line_fits_and_no_number_is_cut(capsys, width, name):
    text = printed(capsys, COMMANDS[name])
    assert text.strip()
    for line in text.splitlines():
        if line.startswith(("│", "┃", "┏", "┡", "└")):
            assert len(line) <= width, line
        assert not CUT.search(line), line
        assert "…" not in line or line.startswith("… ")  # only the "… N more not shown" lines


@pytest.mark.parametrize("width", [80, 120], indirect=True)
def test_the_plan_shows_every_dollar_whole(capsys, width):
    text = printed(capsys, COMMANDS["solve"])
    record = as_json(capsys, COMMANDS["solve"])
    cells = {c for row in rows_of(text) for c in row}
    for r in record["plan"]:
        assert tables.number(r["purchase_usd"], 2) in cells and tables.number(r["transport_usd"], 2) in cells
    parted = "parts to fit" in text
    assert parted == (width < 101)
    if parted:
        assert f"In 2 parts to fit {width} columns; at 101 (COLUMNS=101) the table prints whole." in text
        names = [row[0] for row in rows_of(text) if row and row[0] in {r["source"] for r in record["plan"]}]
        assert len(names) == 2 * len(record["plan"])  # the source column heads each part


@pytest.mark.parametrize("width", [80, 120], indirect=True)
def test_every_lambda_of_a_sweep_is_whole(capsys, width):
    text = printed(capsys, COMMANDS["sensitivity"])
    record = as_json(capsys, COMMANDS["sensitivity"])
    cells = {c for row in rows_of(text) for c in row}
    for r in record["rows"]:
        assert f"{r['lambda']:.4g}" in cells and tables.number(r["hours"]) in cells


def test_the_plan_table_has_no_empty_column(capsys, monkeypatch):
    monkeypatch.setattr(terminal.console, "width", 200)
    text = printed(capsys, COMMANDS["solve"])
    header = next(line for line in text.splitlines() if line.startswith("┃ source"))
    assert header.rstrip().endswith("value per next $ ┃")
    assert all(row[-1] for row in rows_of(text)[1:6])  # no blank cell ends a source row


def test_a_capped_source_gets_its_column(capsys, monkeypatch):
    monkeypatch.setattr(terminal.console, "width", 200)
    text = printed(capsys, ["solve", "--budget", "5000000"])
    assert "all available" in text


def test_a_budget_sweep_is_titled_and_written_in_dollars(capsys, monkeypatch):
    monkeypatch.setattr(terminal.console, "width", 200)
    text = printed(capsys, COMMANDS["sensitivity-budget"])
    assert "The plan as the budget moves" in text and "The plan at" not in text
    assert "e+0" not in text
    budgets = [row[0] for row in rows_of(text)[1:]]
    assert budgets == ["20,000.00", "63,245.55", "200,000.00"]
    assert "budget $" in text


def test_other_sweeps_name_the_budget_as_money(capsys, monkeypatch):
    monkeypatch.setattr(terminal.console, "width", 200)
    text = printed(capsys, ["sensitivity", "--steps", "3", "--budget", "50000"])
    assert "The plan at $50,000.00 as byte_price_x moves" in text


def test_a_table_splits_into_parts_that_fit():
    rows = tables.Rows(("name", *[f"column {i}" for i in range(9)]),
                       [("a", *[f"{1234567.891 * (i + 1):,.2f}" for i in range(9)])])  # fmt: skip
    for width in (40, 60, 100, 250):
        console = render.Console(width=width, record=True)
        render.print_table(console, "wide", rows, ["left", *["right"] * 9])
        text = console.export_text()
        assert max(len(line) for line in text.splitlines()) <= width
        cells = [c for row in rows_of(text) for c in row]
        assert all(cell in cells for cell in rows.cells[0])  # every number whole, once or with its key
        assert ("parts to fit" in text) == (width < 150)


@pytest.fixture
def evil_ledger(tmp_path):
    dest = tmp_path / "evil"
    shutil.copytree(DEFAULT_LEDGER.path, dest)
    sources = dest / "sources.csv"
    text = sources.read_text()
    sources.write_text(text.replace("\ntwin,", '\n"tw\x1b[2Jin\x1b]0;title\x07",', 1))
    return dest


def test_control_characters_are_shown_escaped(capsys, monkeypatch, evil_ledger):
    monkeypatch.setattr(terminal.console, "width", 200)
    name = "tw\x1b[2Jin\x1b]0;title\x07"
    for args in (["solve", "--budget", "100000"], ["rank"], ["sensitivity", "--steps", "2"]):
        text = printed(capsys, [*args, "--ledger", str(evil_ledger)])
        assert "\x1b" not in text and "\x07" not in text
        assert "tw\\x1b[2Jin\\x1b]0;title\\x07" in text
    record = as_json(capsys, ["solve", "--budget", "100000", "--ledger", str(evil_ledger)])
    assert name in [r["source"] for r in record["plan"]]  # JSON keeps the name exact
    assert tables.visible("a\u202eb\x7f") == "a\\u202eb\\x7f" and tables.visible("dé€") == "dé€"


def test_a_pipe_is_as_wide_as_columns_says():
    code = "import sys; from procure.interfaces.cli import main; sys.exit(main(['rank', '--budget', '100000']))"
    for env, widest in (({"COLUMNS": "80"}, 80), ({}, terminal.PIPE_WIDTH)):
        environ = {k: v for k, v in __import__("os").environ.items() if k != "COLUMNS"} | env
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environ, check=True)
        lines = out.stdout.splitlines()
        assert max(len(line) for line in lines) <= widest
        assert ("parts to fit" in out.stdout) == (widest == 80)


def test_json_to_a_file_still_prints_the_table(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(terminal.console, "width", 200)
    text = printed(capsys, ["solve", "--budget", "100000", "--json", str(tmp_path / "plan.json")])
    assert "what to buy" in text and f"JSON written to {tmp_path / 'plan.json'}" in text


@pytest.mark.parametrize("width", [80, 40], indirect=True)
def test_a_note_wraps_at_its_spaces_and_keeps_a_path_whole(width, capsys):
    path = "/data/" + "d" * 60 + "/episode_000000.mp4"
    text = (f"Note: {path}: decode rates spread 1.87× over 10 runs (fastest over slowest; trusted up to "
            "1.5×): about 27 runs (--repeat 27) would put the median within 5 %")  # fmt: skip
    terminal.note(text)
    lines = capsys.readouterr().out.splitlines()
    assert " ".join(lines) == text  # nothing lost, every break at a space
    assert path + ":" in lines[0] or path + ":" in lines[1]  # the path whole on one line
    assert all(len(line) <= width for line in lines if path not in line)


@pytest.mark.parametrize("width", [40], indirect=True)
def test_a_path_with_spaces_in_a_note_stays_whole(width, capsys):
    path = "/home/ana/Robot Videos/session 12/cam 0.mp4"
    text = f"Note: {path}: variable frame rate: the mean rate is used, and the bits per pixel from it"
    terminal.note(text, whole=path)
    lines = capsys.readouterr().out.splitlines()
    assert any(path in line for line in lines) and " ".join(lines) == text


def _cells(text: str) -> int:
    """Terminal cells of text of ASCII and East Asian wide characters, by Unicode's own table
    (written apart from rich's): a wide or full-width character takes two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


@pytest.mark.parametrize("width", [40], indirect=True)
def test_a_note_of_wide_characters_fits_the_terminal_cells(width, capsys):
    name = "東京ロボット収集データ"  # 11 wide characters: 22 cells, 11 characters
    text = f"Note: source '{name}' and source '{name}' share a name once case is folded: one row is used"
    terminal.note(text)
    lines = capsys.readouterr().out.splitlines()
    assert " ".join(lines) == text
    assert all(_cells(line) <= width for line in lines)


@settings(max_examples=200, deadline=None)
@given(
    words=st.lists(st.text(st.sampled_from("ab-/.:1漢字データ"), min_size=1, max_size=30), min_size=1, max_size=40),
    width=st.integers(1, 100),
)
def test_wrap_breaks_only_at_spaces_and_only_when_the_next_word_would_not_fit(words, width):
    text = " ".join(words)
    lines = terminal.wrap_cells(text, width)
    assert " ".join(lines) == text  # every character kept, every break at a space
    for i, line in enumerate(lines):
        assert _cells(line) <= width or " " not in line  # only a lone word wider than a line overflows
        if i + 1 < len(lines):
            assert _cells(line + " " + lines[i + 1].split(" ")[0]) > width  # the next word did not fit
