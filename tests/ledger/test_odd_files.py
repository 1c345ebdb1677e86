"""Ledger files as other programs write them, and files that are not what they claim: Excel's
CSV (a byte-order mark and CRLF; ``;`` and decimal commas), a cell with line breaks, a
scenarios file that is not a file, a model card named by a path, a model that sees no pixels,
and bytes no parser should meet. Each is read, or refused with one line and exit 2."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from procure.errors import SHOWN_CHARS, LedgerError
from procure.interfaces.cli import main
from procure.ledger import load_ledger, load_model_card, read_cluster, read_sources
from procure.ledger.scenarios import read_scenarios

BOM = b"\xef\xbb\xbf"
#: The csv module's limit on one cell [characters]: a longer cell must not break the reader.
CSV_FIELD_LIMIT = 131_072


def _run(args, capsys):
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _one_line_exit_2(args, capsys) -> str:
    code, out, err = _run(args, capsys)
    assert code == 2, err
    assert out == "" and err.count("\n") == 1 and err.startswith("procure: error: "), err
    return err


# ----------------------------------------------------------------------------- Excel's CSV


def test_a_ledger_saved_as_csv_utf8_by_excel_is_read(ledger_copy):
    sources = ledger_copy / "sources.csv"
    plain = read_sources(sources)
    sources.write_bytes(BOM + sources.read_text().replace("\n", "\r\n").encode())
    excel = read_sources(sources)
    assert list(excel.columns) == list(plain.columns) and excel["source"].tolist() == plain["source"].tolist()
    assert excel["held_hours"].tolist() == plain["held_hours"].tolist()


def test_an_error_in_an_excel_ledger_names_the_column_without_the_mark(ledger_copy):
    sources = ledger_copy / "sources.csv"
    text = sources.read_text().replace("own,own,123.60", "own,own,-1", 1)
    sources.write_bytes(BOM + text.replace("\n", "\r\n").encode())
    with pytest.raises(LedgerError, match=r"line 2 \(source 'own'\): price_usd_per_hour = '-1' is invalid"):
        read_sources(sources)
    sources.write_bytes(BOM + text.replace("source,kind", "sorce,kind").encode())
    with pytest.raises(LedgerError, match=r"column 'sorce' is unknown \(did you mean 'source'\?\)"):
        read_sources(sources)


def test_a_cluster_and_a_scenarios_file_with_a_mark_are_read(ledger_copy, tmp_path):
    toml = ledger_copy / "cluster.toml"
    toml.write_bytes(BOM + toml.read_bytes().replace(b"\n", b"\r\n"))
    assert read_cluster(toml).count == 8
    scenarios = tmp_path / "scenarios.csv"
    scenarios.write_bytes(BOM + b"scenario,source,survival\r\nlow,own,0.5\r\nhigh,own,0.9\r\n")
    read = read_scenarios(scenarios, load_ledger(ledger_copy).sources)
    assert read.names == ("low", "high") and read.values["survival"][:, 0].tolist() == [0.5, 0.9]


def test_a_file_separated_by_semicolons_is_refused_with_the_hint(ledger_copy, capsys):
    sources = ledger_copy / "sources.csv"
    rows = [line.split(",") for line in sources.read_text().splitlines()]
    european = "\r\n".join(";".join(cell.replace(".", ",") for cell in row) for row in rows)  # 123,60 for 123.60
    sources.write_bytes(BOM + european.encode() + b"\r\n")
    err = _one_line_exit_2(["bill", "--ledger", str(ledger_copy)], capsys)
    assert f"{sources}: the file is separated by ';': save it as CSV with commas" in err
    scenarios = ledger_copy / "scenarios.csv"
    scenarios.write_text("scenario\tsource\tsurvival\nlow\town\t0,5\n")
    with pytest.raises(LedgerError, match="the file is separated by tabs: save it as CSV with commas"):
        read_scenarios(scenarios, load_ledger().sources)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("source,kind\n".encode("utf-16"), "is UTF-16 text: save it as UTF-8"),
        ("source,kind\nmoteur é,own\n".encode("cp1252"), "is not UTF-8 text (byte 20): save it as UTF-8"),
        (b"source,kind\x00\n", "holds a NUL byte"),
    ],
)
def test_a_ledger_in_another_encoding_is_one_line(ledger_copy, capsys, data, message):
    (ledger_copy / "sources.csv").write_bytes(data)
    assert message in _one_line_exit_2(["bill", "--ledger", str(ledger_copy)], capsys)


# ----------------------------------------------------------------------------- line numbers


def _padded(path: Path) -> list[str]:
    """The lines of a ledger, every row given as many cells as the header."""
    lines = path.read_text().splitlines()
    width = len(lines[0].split(","))
    return [line + "," * (width - len(line.split(","))) for line in lines]


def test_after_a_cell_with_line_breaks_errors_name_the_right_line(ledger_copy):
    sources = ledger_copy / "sources.csv"
    lines = _padded(sources)
    lines[0] += ",x_note"
    lines[1] += ',"a note\non three\nlines"'
    lines[3] = lines[3].replace("older_arm,older_arm,15.00", "older_arm,older_arm,-2")
    sources.write_text("\n".join(lines) + "\n")
    # own is lines 2-4, twin 5, older_arm 6 of the file
    with pytest.raises(LedgerError, match=r"sources.csv: line 6 \(source 'older_arm'\): price_usd_per_hour = '-2'"):
        read_sources(sources)
    sources.write_text(sources.read_text().replace("older_arm,older_arm,-2", "own,older_arm,15"))
    with pytest.raises(LedgerError, match=r"line 6 \(source 'own'\): source = 'own' is a duplicate of line 2"):
        read_sources(sources)


def test_scenario_lines_count_a_cell_with_line_breaks(ledger_copy, tmp_path):
    scenarios = tmp_path / "scenarios.csv"
    scenarios.write_text('scenario,source,survival\n"a long\nname",own,0.5\nb,own,1.5\n')
    with pytest.raises(LedgerError, match=r"scenarios.csv: line 4: survival = '1.5' is invalid"):
        read_scenarios(scenarios, load_ledger(ledger_copy).sources)


# ----------------------------------------------------------------------------- scenarios that are not a file


@pytest.mark.parametrize("kind", ["folder", "fifo", "dangling link"])
def test_a_scenarios_file_that_is_not_a_file_is_refused(ledger_copy, capsys, kind):
    own = ledger_copy / "scenarios.csv"
    if kind == "folder":
        own.mkdir()
    elif kind == "fifo":
        os.mkfifo(own)
    else:
        own.symlink_to(ledger_copy / "nowhere.csv")
    err = _one_line_exit_2(["solve", "--budget", "1e5", "--ledger", str(ledger_copy)], capsys)
    expected = {
        "folder": "is a folder, not a file",
        "fifo": "is a FIFO, not a file",
        "dangling link": "a link to nothing",
    }
    assert f"{own}: {expected[kind]}" in err


# ----------------------------------------------------------------------------- model cards by name only


@pytest.mark.parametrize("name", ["/etc/hostname", "../ledgers/default/cluster", ".hidden", "a/b", "", "93m.toml/"])
def test_a_card_name_that_is_a_path_is_refused(ledger_copy, capsys, name):
    toml = ledger_copy / "cluster.toml"
    toml.write_text(toml.read_text().replace('name = "93m"', f"name = {name!r}".replace("'", '"')))
    err = _one_line_exit_2(["bill", "--ledger", str(ledger_copy)], capsys)
    if name:
        assert f"model.name = {name!r} is invalid: a card's name is letters, digits" in err
    else:
        assert "model.name = '' is invalid: must be non-empty text" in err
    err = _one_line_exit_2(["bill", "--model", name], capsys)
    assert f"model = {name!r} is invalid: a card's name is letters, digits, '.', '_' and '-', not starting" in err


def test_a_toml_file_that_is_not_a_card_is_never_read(tmp_path, capsys):
    secret = tmp_path / "secret.toml"
    secret.write_text('api_token = "hunter2"\n')
    for name in (str(secret.with_suffix("")), os.path.relpath(secret.with_suffix(""), Path.cwd() / "models")):
        err = _one_line_exit_2(["bill", "--model", name], capsys)
        assert "api_token" not in err and "hunter2" not in err
        with pytest.raises(LedgerError):
            load_model_card(name)


def test_cards_keep_their_names_with_dots(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    (models / "vit.b-16_v2.toml").write_text("params = 86e6\ninput_side = 224\npatch = 16\n")
    assert load_model_card("vit.b-16_v2", models).params == 86e6


# ----------------------------------------------------------------------------- a model that sees no pixels


def test_a_side_below_the_patch_is_refused_wherever_it_enters(ledger_copy, tmp_path, capsys):
    toml = ledger_copy / "cluster.toml"
    text = toml.read_text()
    toml.write_text(text.replace('name = "93m"', 'name = "93m"\ninput_side = 14\npatch = 224'))
    err = _one_line_exit_2(["bill", "--ledger", str(ledger_copy)], capsys)
    assert "model.input_side = 14 is invalid: must be at least model.patch = 224 px" in err
    toml.write_text(text.replace('name = "93m"', 'name = "93m"\npatch = 300'))
    err = _one_line_exit_2(["bill", "--ledger", str(ledger_copy)], capsys)
    assert "input_side of card '93m' = 224 is invalid: must be at least model.patch = 300 px" in err
    models = tmp_path / "models"
    models.mkdir()
    (models / "tiny.toml").write_text("params = 1e6\ninput_side = 8\npatch = 16\n")
    with pytest.raises(LedgerError, match=r"tiny.toml: input_side = 8 is invalid: must be at least patch = 16 px"):
        load_model_card("tiny", models)
    err = _one_line_exit_2(["bill", "--side", "7"], capsys)
    assert "side = 7.0 is invalid: must be at least the patch, 14 px" in err


# ----------------------------------------------------------------------------- bytes no parser should meet


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda t: t.replace(b"count = 8", b"count = " + b"9" * 309), "count = '99999999999999999999… (309 digits)'"),
        (lambda t: t.replace(b"count = 8", b"count = " + b"9" * 5000), "a number has more than 4,300 digits"),
        (lambda t: t.decode().encode("utf-16"), "is UTF-16 text"),
        (lambda t: bytes(range(256)) * 4, "is not UTF-8 text"),
        (lambda t: b"[model]\nname = " + b"[" * 100_000 + b"]" * 100_000 + b"\n", "nested too deep"),
        (lambda t: b"[accelerator]\npeak_flops = 5e-324\n", "peak_flops = 5e-324 is invalid: must be a number ≥ 1e-06"),
        (lambda t: b"model = 5\n", "model = 5 is invalid: must be a table"),
        (lambda t: t + b"\n# " + b"x" * 2_000_000 + b"\n", "larger than 1,000,000 bytes"),
    ],
)
def test_a_cluster_file_no_parser_should_meet_is_one_line(ledger_copy, capsys, make, message):
    toml = ledger_copy / "cluster.toml"
    toml.write_bytes(make(toml.read_bytes()))
    assert message in _one_line_exit_2(["bill", "--ledger", str(ledger_copy)], capsys)


def test_a_header_cell_longer_than_the_csv_modules_limit_is_one_line(ledger_copy, capsys):
    sources = ledger_copy / "sources.csv"
    long = "y" * (CSV_FIELD_LIMIT + 10)
    lines = sources.read_text().splitlines()
    sources.write_text("\n".join([f"{long},{lines[0]}", *[f"a,{line}" for line in lines[1:]]]) + "\n")
    err = _one_line_exit_2(["bill", "--ledger", str(ledger_copy)], capsys)
    assert f"column '{'y' * SHOWN_CHARS}… (131,082 characters)' is unknown" in err
    assert len(err) < 3 * SHOWN_CHARS + len(str(ledger_copy))
    sources.write_text(sources.read_text().replace(long, "x_" + long))  # a column of one's own: read through
    assert len(read_sources(sources)) == 5


# ----------------------------------------------------------------------------- rows pandas cannot read


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines(keepends=True)


def test_a_quote_never_closed_names_the_line_it_opens_on(ledger_copy, capsys):
    sources = ledger_copy / "sources.csv"
    lines = _lines(sources)
    lines[3] = lines[3].replace(",", ',"', 1)  # line 4: a quote opened in its second cell
    sources.write_text("".join(lines))
    err = _one_line_exit_2(["solve", "--ledger", str(ledger_copy), "--budget", "1000"], capsys)
    assert f"{sources}: line 4: a quote opens a cell that is never closed" in err
    assert "C error" not in err and "tokenizing" not in err


def test_one_row_with_a_cell_too_many_names_its_line(ledger_copy, capsys):
    sources = ledger_copy / "sources.csv"
    lines = _lines(sources)
    columns = lines[0].count(",") + 1
    lines[2] = lines[2].rstrip("\n") + ",5\n"  # line 3 only
    sources.write_text("".join(lines))
    err = _one_line_exit_2(["solve", "--ledger", str(ledger_copy), "--budget", "1000"], capsys)
    assert f"{sources}: line 3 has {columns + 1} cells, the header has {columns}: a cell too many" in err


def test_an_unknown_format_in_the_ledger_names_its_line(ledger_copy, capsys):
    sources = ledger_copy / "sources.csv"
    lines = _padded(sources)
    lines = [lines[0] + ",formats", *(line + (",recorded+foo" if k == 2 else ",") for k, line in enumerate(lines[1:]))]
    sources.write_text("\n".join(lines) + "\n")
    err = _one_line_exit_2(["solve", "--ledger", str(ledger_copy), "--budget", "1000"], capsys)
    assert f"{sources}: line 4 (source " in err and "formats = 'recorded+foo' is invalid: 'foo' is no format" in err


def test_a_cluster_that_decodes_nothing_names_its_file(ledger_copy, capsys):
    cluster = ledger_copy / "cluster.toml"
    text = cluster.read_text()
    assert "cores_per_accelerator = 8" in text
    cluster.write_text(text.replace("cores_per_accelerator = 8", "cores_per_accelerator = 0", 1))
    err = _one_line_exit_2(["solve", "--ledger", str(ledger_copy), "--budget", "1000"], capsys)
    assert f"{cluster}: cores_per_accelerator = 0 with NVDEC off" in err


def test_a_quote_inside_a_cell_is_text_and_the_real_fault_is_named(ledger_copy, capsys):
    """``12" arm`` (a quote that does not open its cell) is text, as pandas reads it: a later row
    with a cell too many is the one named."""
    sources = ledger_copy / "sources.csv"
    lines = _padded(sources)
    lines = [lines[0] + ",x_note", lines[1] + ',12" arm', *(line + "," for line in lines[2:])]
    lines[4] += ",5"  # line 5
    sources.write_text("\n".join(lines) + "\n")
    err = _one_line_exit_2(["solve", "--ledger", str(ledger_copy), "--budget", "1000"], capsys)
    assert f"{sources}: line 5 has" in err and "a cell too many" in err
    lines[4] = lines[4][: -len(",5")]
    sources.write_text("\n".join(lines) + "\n")
    assert read_sources(sources)["x_note"].iloc[0] == '12" arm'
