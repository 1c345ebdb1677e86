"""Ledger, model-card and cluster validation: every bad input names the file, the row, the
field, the value and what is allowed; the command line prints it as one line."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from procure import LedgerError, load_ledger, load_model_card
from procure.errors import SHOWN_CHARS
from procure.interfaces.cli import main
from procure.ledger import SOURCE_COLUMNS, read_sources


def edit_csv(path: Path, row: int, column: str, value: str) -> None:
    """Set one cell of sources.csv (row counted from 0 below the header)."""
    lines = path.read_text().splitlines()
    header = lines[0].split(",")
    cells = lines[row + 1].split(",")
    cells[header.index(column)] = value
    lines[row + 1] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")


def test_default_ledger_fills_defaults():
    ledger = load_ledger()
    s = ledger.sources.set_index("source")
    assert math.isinf(s.loc["sim", "available_hours"])
    assert s.loc["own", "bits_per_pixel"] == pytest.approx(8e6 / (1920 * 1080 * 30))
    assert s.loc["own", "curve_shape"] != s.loc["own", "curve_shape"]  # log: no shape (NaN)
    assert ledger.cluster.core_hours_capacity == 8 * 8 * 720
    assert ledger.cluster.accelerator_hours_capacity == 8 * 720
    assert ledger.cluster.storage_gb == 100_000


@pytest.mark.parametrize(
    ("row", "column", "value", "expected"),
    [
        (
            0,
            "price_usd_per_hour",
            "-5",
            "line 2 (source 'own'): price_usd_per_hour = '-5' is invalid: must be 0 or a number ≥ 1e-06 and ≤ 1e+07",
        ),
        (
            1,
            "price_usd_per_hour",
            "cheap",
            "line 3 (source 'twin'): price_usd_per_hour = 'cheap' is invalid: must be 0 or a number ≥ 1e-06",
        ),
        (2, "fps", "0", "line 4 (source 'older_arm'): fps = '0' is invalid: must be a number ≥ 1e-06 and ≤ 10000"),
        (
            3,
            "survival",
            "1.2",
            "line 5 (source 'force'): survival = '1.2' is invalid: must be 0 or a number ≥ 1e-06 and ≤ 1",
        ),
        (0, "survival", "-0.1", "survival = '-0.1' is invalid: must be 0 or a number ≥ 1e-06 and ≤ 1"),
        (0, "read", "sideways", "read = 'sideways' is invalid: allowed are one of order, random"),
        (0, "stored", "tape", "stored = 'tape' is invalid: allowed are one of video, decoded, rendered"),
        (0, "curve", "sigmoid", "curve = 'sigmoid' is invalid: allowed are one of linear, log, exp, power, hill"),
        (0, "width", "", "width is blank: it is required, a number ≥ 1 and ≤ 16384"),
        (0, "price_usd_per_hour", "nan", "price_usd_per_hour = 'nan' is invalid"),
        (0, "saturation_hours", "", "saturation_hours is blank: required for curve 'log', a number ≥ 1e-06"),
        (0, "curve_shape", "0", "curve_shape = '0' is invalid: must be a number ≥ 1e-06 and ≤ 20"),
    ],
)
def test_bad_cell(ledger_copy, row, column, value, expected):
    csv = ledger_copy / "sources.csv"
    edit_csv(csv, row, column, value)
    with pytest.raises(LedgerError) as info:
        load_ledger(ledger_copy)
    assert str(csv) in str(info.value)
    assert expected in str(info.value)


def test_power_shape_above_one_is_not_concave(ledger_copy):
    csv = ledger_copy / "sources.csv"
    edit_csv(csv, 0, "curve", "power")
    edit_csv(csv, 0, "curve_shape", "1.5")
    with pytest.raises(LedgerError, match=r"curve_shape = 1.5 is invalid for curve 'power': must be > 0 and ≤ 1"):
        load_ledger(ledger_copy)


def test_linear_curve_needs_no_saturation(ledger_copy):
    csv = ledger_copy / "sources.csv"
    edit_csv(csv, 0, "curve", "linear")
    edit_csv(csv, 0, "saturation_hours", "")
    assert load_ledger(ledger_copy).sources.loc[0, "curve"] == "linear"


def test_duplicate_source(ledger_copy):
    csv = ledger_copy / "sources.csv"
    edit_csv(csv, 1, "source", "own")
    with pytest.raises(
        LedgerError, match=r"line 3 \(source 'own'\): source = 'own' is a duplicate of line 2: names must be unique"
    ):
        load_ledger(ledger_copy)


def test_missing_column(ledger_copy):
    csv = ledger_copy / "sources.csv"
    lines = csv.read_text().splitlines()
    header = lines[0].split(",")
    drop = header.index("fps")
    csv.write_text("\n".join(",".join(c for i, c in enumerate(line.split(",")) if i != drop) for line in lines) + "\n")
    with pytest.raises(
        LedgerError,
        match=r"missing column\(s\) fps: required are source, kind, price_usd_per_hour, cameras, width, height, fps",
    ):
        load_ledger(ledger_copy)


def test_optional_columns_may_be_left_out(tmp_path):
    csv = tmp_path / "sources.csv"
    csv.write_text("source,kind,price_usd_per_hour,cameras,width,height,fps,curve\nx,own,10,1,640,480,30,linear\n")
    s = read_sources(csv)
    assert set(SOURCE_COLUMNS) <= set(s.columns)
    assert s.loc[0, "stored"] == "video" and s.loc[0, "held_hours"] == 0


def test_empty_ledger(tmp_path):
    csv = tmp_path / "sources.csv"
    csv.write_text(",".join(SOURCE_COLUMNS) + "\n")
    with pytest.raises(LedgerError, match="no sources: the ledger needs at least one row"):
        read_sources(csv)


def test_missing_files(tmp_path):
    with pytest.raises(LedgerError, match="is not a folder"):
        load_ledger(tmp_path / "nowhere")
    tmp_path.joinpath("sources.csv").write_text((load_ledger().path / "sources.csv").read_text())
    with pytest.raises(LedgerError, match=r"cluster\.toml: no such file"):
        load_ledger(tmp_path)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ('type = "H100"', 'type = "TPU9"', "accelerator.type = 'TPU9' is unknown: allowed are H100, A100"),
        ("mfu = 0.4", "mfu = 1.4", "accelerator.mfu = 1.4 is invalid: must be a number ≥ 1e-06 and ≤ 1"),
        ("nvdec = false", 'nvdec = "yes"', "accelerator.nvdec = 'yes' is invalid: must be true or false"),
        ("epochs = 10", "epochs = 0", "training.epochs = 0 is invalid: must be a number ≥ 1e-06"),
        ("count = 8", 'count = "eight"', "accelerator.count = 'eight' is invalid: must be a number ≥ 1e-06"),
        (
            'name = "93m"',
            'name = "gpt5"',
            "cluster.toml: model.name = 'gpt5' is unknown: model cards are 25m, 411m, 7b, 93m",
        ),
        ("[capacity]", "[capacities]", "table [capacities] is unknown"),
        (
            "gop = 30",
            "gop = 30\ngopp = 3",
            "decode.gopp is unknown (did you mean 'gop'?): allowed are cores_per_accelerator",
        ),
    ],
)
def test_bad_cluster(ledger_copy, old, new, expected):
    toml = ledger_copy / "cluster.toml"
    text = toml.read_text()
    assert old in text
    toml.write_text(text.replace(old, new, 1))
    with pytest.raises(LedgerError) as info:
        load_ledger(ledger_copy)
    assert expected in str(info.value)


def test_model_cards():
    for name, params in [("25m", 25e6), ("93m", 93e6), ("411m", 411e6), ("7b", 7e9)]:
        card = load_model_card(name)
        assert card.params == params and card.source
    with pytest.raises(LedgerError, match="model = 'nope' is unknown"):
        load_model_card("nope")


def test_cli_prints_one_line(ledger_copy, capsys):
    edit_csv(ledger_copy / "sources.csv", 0, "price_usd_per_hour", "-1")
    code = main(["bill", "--ledger", str(ledger_copy)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("procure: error: ")
    assert "price_usd_per_hour = '-1' is invalid" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["bill", "--cores", "-1"], "cores = -1.0 is invalid: must be 0 or a number ≥ 1e-06 and ≤ 4096"),
        (["bill", "--fps", "0"], "fps = 0.0 is invalid: must be a number ≥ 1e-06"),
        (["bill", "--accelerator", "V100"], "accelerator = 'V100' is invalid: allowed are H100, A100"),
        (["bill", "--model", "nope"], "model = 'nope' is unknown"),
        (["bill", "--kind", "nope"], "kind = 'nope' is not in"),
        (["bill", "--read", "sideways"], "Invalid value for '--read'"),
        (
            ["bill", "--byte-price-x", "-0.5"],
            "byte_price_x = -0.5 is invalid: must be 0 or a number ≥ 1e-06 and ≤ 10000",
        ),
        (["bill", "--side", "7"], "side = 7.0 is invalid: must be at least the patch, 14 px"),
        (["bill", "--bogus"], "No such option '--bogus'"),
    ],
)
def test_cli_bad_options(args, expected, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert expected in err


def test_blank_lines_keep_line_numbers(tmp_path):
    csv = tmp_path / "sources.csv"
    csv.write_text(
        "source,kind,price_usd_per_hour,cameras,width,height,fps,curve\n"
        "a #1,own,10,1,640,480,30,linear\n"
        "\n"
        "b,own,-3,1,640,480,30,linear\n"
    )
    with pytest.raises(LedgerError, match=r"line 4 \(source 'b'\): price_usd_per_hour = '-3'"):
        read_sources(csv)
    csv.write_text(csv.read_text().replace("-3", "3"))
    assert list(read_sources(csv)["source"]) == ["a #1", "b"]


def test_the_old_import_paths_still_work():
    from procure import ledger
    from procure.ledger import load

    for name in (
        "UNCERTAIN_COLUMNS", "RANGE_SUFFIXES", "CURVES", "DEFAULT_CURVE_SHAPE", "check_source_value", "check_field",
        "read_csv_text", "load_accelerators", "CLUSTER_FIELDS", "SOURCE_COLUMNS", "Cluster", "Ledger", "matches",
    ):  # fmt: skip
        assert hasattr(load, name), name
    assert load.CURVES == ("linear", "log", "exp", "power", "hill", "logistic")
    assert load.DEFAULT_CURVE_SHAPE == {"power": 0.5, "hill": 2.0}
    for name in ledger.__all__:
        assert hasattr(ledger, name), name


def test_a_cell_given_as_an_option_is_checked_as_a_cell():
    from procure.ledger.load import check_source_value

    assert check_source_value("saturation_hours", 50) == 50.0
    assert check_source_value("curve", " log ") == "log"
    with pytest.raises(LedgerError, match=r"^--fps: fps = 0.0 is invalid: must be a number ≥ 1e-06 and ≤ 10000$"):
        check_source_value("fps", 0.0, "--fps")


#: A value other than the default of each column whose blank a cell of only spaces stands for.
NOT_DEFAULT = {"stored": "decoded", "read": "random", "curve": "linear", "split_formats": "yes"}


@pytest.mark.parametrize("column", list(NOT_DEFAULT))
@pytest.mark.parametrize("spaces", [" ", "   ", "\t "])
def test_a_cell_of_only_spaces_is_the_documented_blank(ledger_copy, column, spaces):
    path = ledger_copy / "sources.csv"
    lines = path.read_text().splitlines()
    if column not in lines[0].split(","):  # an optional column the default ledger leaves out
        lines = [lines[0] + f",{column}", *(line + "," for line in lines[1:])]
        path.write_text("\n".join(lines) + "\n")
    edit_csv(path, 1, column, NOT_DEFAULT[column])
    assert load_ledger(ledger_copy).sources[column].iloc[1] == NOT_DEFAULT[column]
    edit_csv(path, 1, column, spaces)
    assert load_ledger(ledger_copy).sources[column].iloc[1] == SOURCE_COLUMNS[column].default
    # ... and the documentation says so where it says what a blank means.
    doc = (Path(__file__).resolve().parents[2] / "docs" / "ledger.md").read_text()
    assert "A blank cell (empty, or only spaces and tabs) takes the default" in doc
    assert "a cell of only spaces and tabs is blank" in doc


@pytest.mark.parametrize(
    ("row", "column", "value", "shown"),
    [
        (1, "held_hours", "1" * 20_000, "held_hours = '" + "1" * SHOWN_CHARS + "…' (20,000 characters) is invalid"),
        (1, "stored", "v" * 20_000, "stored = '" + "v" * SHOWN_CHARS + "…' (20,000 characters) is invalid"),
        (1, "exchange_rate_low", "z" * 20_000,
         "exchange_rate_low = '" + "z" * SHOWN_CHARS + "…' (20,000 characters) is invalid"),
        (1, "source", "own", "source = 'own' is a duplicate of line 2"),
    ],
)  # fmt: skip
def test_a_huge_cell_is_shown_cut_with_its_length(ledger_copy, capsys, row, column, value, shown):
    edit_csv(ledger_copy / "sources.csv", row, column, value)
    edit_csv(ledger_copy / "sources.csv", 0, "source", "o" * 20_000)  # every line's prefix names its source
    if column == "source":
        edit_csv(ledger_copy / "sources.csv", 0, "source", "own")
    code = main(["bill", "--ledger", str(ledger_copy)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and shown in err, err[:400]
    assert len(err) < 4 * SHOWN_CHARS + len(str(ledger_copy))


@pytest.mark.parametrize(("option", "field"), [("--accelerator", "accelerator"), ("--kind", "kind")])
def test_a_huge_option_is_shown_cut_with_its_length(capsys, option, field):
    code = main(["bill", option, "V" * 20_000])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and len(err) < 3 * SHOWN_CHARS, err[:400]
    assert f"{field} = '" + "V" * SHOWN_CHARS + "…' (20,000 characters) is " in err
