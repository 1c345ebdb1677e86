"""``read_sources`` checks whole columns at once; a plain loop over rows and cells, written here
with Python's csv module, must find the same first bad cell with the same message, and read the
same values from a good file.

The loop is the ledger's contract spelled out one cell at a time: a row's cells in column order,
then its name against the rows before it, its scale, its shape, and its ranges.
"""

from __future__ import annotations

import csv
import math
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from procure.errors import LedgerError
from procure.ledger import SOURCE_COLUMNS, read_sources
from procure.ledger.synthetic import random_sources
from procure.spec import did_you_mean

UNCERTAIN = ("exchange_rate", "survival", "saturation_hours", "price_usd_per_hour")
DEFAULT_SHAPE = {"power": 0.5, "hill": 2.0}
FORMAT_NAMES = ("recorded", "model_side", "decoded")
ODD = [
    "0", "-1", "1e308", "1e-308", "nan", "NaN", "inf", "-inf", "1e20", "0.5", "3", "", " ", "abc", " 5 ", "1_000",
    "True", "\t3", "+2", ".5", "1e400", "log", " log ", "LOG", "power", "hill", "linear", "video", "random", "a,b",
    "#", "  own  ", "2.5", "1200", "1201", "-0", "20", "21", "1.5", "recorded", "decoded+recorded", "model_side",
    "recorded+", "rendered",
]  # fmt: skip


def cell(spec, text: str, name: str, where: str):
    """One cell, as the contract says: stripped; a blank takes the default; else checked."""
    text = text.strip()
    if text == "":
        if spec.default is None:
            raise LedgerError(f"{where}: {name} is blank: it is required, {spec.describe()}")
        return spec.default
    if spec.kind == "text":
        return text
    if spec.kind == "choice":
        if text not in spec.choices:
            raise LedgerError(f"{where}: {name} = {text!r} is invalid: allowed are {spec.describe()}")
        return text
    try:
        x = float(text)
    except ValueError:
        x = math.nan
    ok = math.isfinite(x) and (x > spec.low if spec.low_open else x >= spec.low) and x <= spec.high
    ok = ok and (x == 0 or x >= spec.least)  # no tiny value but 0: a floor of 1e-6 (1 px for a side)
    if not ok:
        raise LedgerError(f"{where}: {name} = {text!r} is invalid: must be {spec.describe()}")
    return x


def loop(path: Path) -> pd.DataFrame:
    """The sources of a file whose header is good, one row and one cell at a time."""
    with path.open(newline="") as fh:
        lines = list(csv.reader(fh, skipinitialspace=True))
    header = [h.strip() for h in lines[0]]
    rows, seen = [], {}
    for i, cells in enumerate(lines[1:]):
        line = i + 2
        cells = cells + [""] * (len(header) - len(cells))
        record = dict(zip(header, cells, strict=True))
        if all(v.strip() == "" for v in record.values()):
            continue
        name = record["source"].strip()
        where = f"{path}: line {line}" + (f" (source {name!r})" if name else "")
        row = {c: cell(spec, record.get(c, ""), c, where) for c, spec in SOURCE_COLUMNS.items()}
        if name in seen:
            raise LedgerError(f"{where}: source = {name!r} is a duplicate of line {seen[name]}: names must be unique")
        seen[name] = line
        if row["curve"] != "linear" and math.isnan(row["saturation_hours"]):
            raise LedgerError(
                f"{where}: saturation_hours is blank: required for curve {row['curve']!r}, a number ≥ 1e-06"
            )
        if math.isnan(row["curve_shape"]):
            row["curve_shape"] = DEFAULT_SHAPE.get(row["curve"], math.nan)
        elif row["curve"] == "power" and row["curve_shape"] > 1:
            raise LedgerError(
                f"{where}: curve_shape = {row['curve_shape']:g} is invalid for curve 'power': "
                "must be > 0 and ≤ 1 (concave)"
            )
        for c in UNCERTAIN:
            low, high, value = row[c + "_low"], row[c + "_high"], row[c]
            if math.isnan(low) != math.isnan(high):
                given, blank = (f"{c}_low", f"{c}_high") if math.isnan(high) else (f"{c}_high", f"{c}_low")
                raise LedgerError(f"{where}: {blank} is blank but {given} is not: a range needs both ends")
            if not math.isnan(low) and (low > high or not (math.isnan(value) or low <= value <= high)):
                raise LedgerError(
                    f"{where}: {c}_low = {low:g}, {c} = {value:g}, {c}_high = {high:g} are invalid: "
                    f"must be {c}_low ≤ {c} ≤ {c}_high"
                )
        formats = [f.strip() for f in row["formats"].split("+") if f.strip()]
        unknown = [f for f in formats if f not in FORMAT_NAMES]
        if unknown:
            # the spelling hint is the library's helper: the rule, not the hint, is what is checked here
            hint = " (join formats with '+')" if "," in unknown[0] else did_you_mean(unknown[0], FORMAT_NAMES)
            raise LedgerError(
                f"{where}: formats = {row['formats']!r} is invalid: {unknown[0]!r} is no format; "
                f"allowed are recorded, model_side, decoded{hint}"
            )
        if row["stored"] != "video" and any(f != "recorded" for f in formats):
            raise LedgerError(
                f"{where}: formats = {row['formats']!r} is invalid: its frames are stored {row['stored']}, "
                "nothing to re-encode or decode: recorded only"
            )
        row.update({c: record[c] for c in header if c not in SOURCE_COLUMNS})
        rows.append(row)
    if not rows:
        raise LedgerError(f"{path}: no sources: the ledger needs at least one row")
    return pd.DataFrame(rows)


def _quoted(text: str) -> str:
    return f'"{text}"' if "," in text else text


def damaged(rng: random.Random, n: int) -> str:
    """A random ledger of ``n`` rows, some of its cells, rows and lines damaged."""
    frame = random_sources(n, rng.randrange(1_000), curves=("linear", "log", "exp", "power", "hill"))
    columns = [c for c in frame.columns if SOURCE_COLUMNS[c].required or rng.random() < 0.85]
    columns += ["x_note"] if rng.random() < 0.3 else []
    if rng.random() < 0.3:
        rng.shuffle(columns)
    rows = []
    for _, r in frame.iterrows():
        cells = []
        for c in columns:
            v = "note" if c == "x_note" else r.get(c)
            if isinstance(v, float):
                v = "" if not math.isfinite(v) else rng.choice([repr(v), f"{v:.6g}"])
            cells.append(str(v))
        rows.append(cells)
    for _ in range(rng.choice([0, 0, 1, 2, 4])):
        i, j = rng.randrange(n), rng.randrange(len(columns))
        roll = rng.random()
        if roll < 0.7:
            rows[i][j] = rng.choice(ODD)
        elif roll < 0.8:
            rows[i][columns.index("source")] = rows[rng.randrange(n)][columns.index("source")]
        elif roll < 0.9:
            name = rng.choice(UNCERTAIN)
            for suffix in ("_low", "_high"):
                if name + suffix in columns and rng.random() < 0.7:
                    rows[i][columns.index(name + suffix)] = rng.choice(["0.1", "0.5", "1", "5000", "", "2"])
        elif "curve" in columns and "curve_shape" in columns:
            rows[i][columns.index("curve")] = rng.choice(["power", "hill"])
            rows[i][columns.index("curve_shape")] = rng.choice(["1.5", "0.5", "", "3"])
    lines = [",".join(columns)] + [",".join(_quoted(c) for c in r) for r in rows]
    for _ in range(rng.choice([0, 0, 1, 2])):
        lines.insert(rng.randrange(1, len(lines) + 1), rng.choice(["", ",,,"]))
    if rng.random() < 0.1:
        k = rng.randrange(1, len(lines))
        lines[k] = ",".join(lines[k].split(",")[: rng.randrange(1, 8)])
    return "\n".join(lines) + "\n"


def _outcome(read, path: Path):
    try:
        return "ok", read(path)
    except LedgerError as exc:
        return "error", str(exc)


@pytest.mark.parametrize("seed", range(40))
def test_the_first_bad_cell_is_the_one_a_cell_by_cell_loop_finds(tmp_path, seed):
    rng = random.Random(seed)
    path = tmp_path / "sources.csv"
    for _ in range(5):
        path.write_text(damaged(rng, rng.choice([1, 3, 8])))
        expected, got = _outcome(loop, path), _outcome(read_sources, path)
        assert got[0] == expected[0], (got[1], expected[1])
        if expected[0] == "error":
            assert got[1] == expected[1]
        else:
            pd.testing.assert_frame_equal(got[1], expected[1], check_exact=True)


HEADER = "source,kind,price_usd_per_hour,cameras,width,height,fps,curve,saturation_hours_low,saturation_hours_high"
ODD_FILES = [
    "a,own,True,1,640,480,30,linear,,\nb,own,False,1,640,480,30,linear,,\n",  # read as true/false by pandas
    "a,own,1,1,640,480,30,linear,,\nb,own,1,1,640,480,30,linear,,false\n",  # true/false among blanks
    "a,own,99999999999999999999999,1,640,480,30,linear,,\n",  # beyond a 64-bit integer
    "a,own,1,1,640,480,30,linear,,\n\n,,,,,,,,,\nb,own,-0,1,640,480,30, log ,,\n",  # blank lines, spaces
    "a,own,1,1,640,480,30,linear,1,2\nb,own,1,1,640,480,30,log,,\n",  # no scale for log
    'a,own,1,1,640,480,30,linear,"",\nb,own,1,1,640,480,30,linear, 1 ,nan\n',  # quoted blank; nan
    "a,own,1,1,640,480,30,linear\nb,own,1\n",  # a short row
]


@pytest.mark.parametrize("body", ODD_FILES)
def test_odd_files_read_as_a_cell_by_cell_loop_reads_them(tmp_path, body):
    path = tmp_path / "sources.csv"
    path.write_text(HEADER + "\n" + body)
    expected, got = _outcome(loop, path), _outcome(read_sources, path)
    assert got[0] == expected[0], (got[1], expected[1])
    if expected[0] == "error":
        assert got[1] == expected[1]
    else:
        pd.testing.assert_frame_equal(got[1], expected[1], check_exact=True)


def test_a_large_ledger_with_a_late_bad_cell(tmp_path):
    """The first bad cell of 20,000 rows, in the middle and in the last row, by line and column."""
    frame = random_sources(20_000, 4).replace([np.inf], np.nan)
    path = tmp_path / "sources.csv"
    frame.loc[12_345, "survival"] = 1.5
    frame.loc[19_999, "fps"] = -3.0
    frame.to_csv(path, index=False)
    with pytest.raises(LedgerError) as info:
        read_sources(path)
    assert str(info.value) == (
        f"{path}: line 12347 (source 'vendor_12345'): survival = '1.5' is invalid: must be 0 or a number ≥ 1e-06 and ≤ 1"
    )
    assert str(info.value) == str(_outcome(loop, path)[1])
