"""What a field accepts: one Range describes it, checks one value, and checks a whole column with
the same verdict and message as a plain per-cell loop."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procure.errors import InputError, LedgerError, invalid
from procure.spec import Range, check, check_cell, check_series, did_you_mean

PRICE = Range("price", "$/h", low=0.0, high=1e7)
FPS = Range("fps", "1/s", low=0.0, low_open=True, high=10_000)
SHELF = Range("shelf", "months", math.inf, low=0.0, low_open=True, high=1_200)
COUNT = Range("count", "1", 1.0, low=1.0, high=100, high_open=True, integer=True)
CURVE = Range("curve", "", "log", kind="choice", choices=("linear", "log"))
NAME = Range("name", "text", kind="text")
CODEC = Range("codec", "text", "", kind="text")
FLAG = Range("nvdec", "", False, kind="bool")
SPECS = [PRICE, FPS, SHELF, COUNT, CURVE, NAME, CODEC]


def test_describe_says_what_is_allowed():
    assert PRICE.describe() == "a number ≥ 0 and ≤ 1e+07"
    assert FPS.describe() == "a number > 0 and ≤ 10000"
    assert COUNT.describe() == "a whole number ≥ 1 and < 100"
    assert Range("x").describe() == "a number"
    assert Range("x", low=2.5).describe() == "a number ≥ 2.5"
    assert CURVE.describe() == "one of linear, log"
    assert NAME.describe() == "non-empty text" and CODEC.describe() == "text"
    assert FLAG.describe() == "true or false"
    assert CURVE.rule() == "allowed are one of linear, log" and FPS.rule() == "must be a number > 0 and ≤ 10000"
    assert FPS.allowed() == FPS.describe() and FPS.bounds() == "> 0 and ≤ 10000"
    with pytest.raises(ValueError, match="kind = 'date' is invalid"):
        Range("x", kind="date")


def test_check_takes_numbers_and_words_errors_as_invalid_does():
    assert check(FPS, 30) == 30.0 and isinstance(check(FPS, 30), float)
    assert check(FPS, np.float64(2.5), "--fps") == 2.5
    for bad in (0, -1.0, 1e300, math.nan, math.inf, True, "30", None, 10**400):
        with pytest.raises(InputError) as info:
            check(FPS, bad, "fps", "here")
        assert str(info.value) == str(invalid("fps", bad, "must be a number > 0 and ≤ 10000", "here"))
    with pytest.raises(InputError, match=r"^fps = 0.0 is invalid: must be a number > 0 and ≤ 10000$"):
        check(FPS, np.float64(0.0))  # a numpy number shown as Python shows it
    with pytest.raises(LedgerError, match=r"^f.toml: count = 2.5 is invalid: must be a whole number"):
        check(COUNT, 2.5, where="f.toml", error=LedgerError)
    assert check(Range("big", high=1e18), 10**18) == 1e18
    with pytest.raises(InputError):
        check(Range("big", high=1e18), 10**18 + 1)  # compared exactly, not after rounding to a float


def test_check_cell_reads_text_as_a_ledger_cell():
    assert check_cell(PRICE, " 12.5 ") == 12.5 and check_cell(PRICE, "1_000") == 1000.0
    assert check_cell(SHELF, "  ") == math.inf and check_cell(SHELF, None) == math.inf
    assert check_cell(CURVE, " linear ") == "linear" and check_cell(CURVE, "") == "log"
    assert check_cell(CODEC, "") == "" and check_cell(NAME, " a ") == "a"
    with pytest.raises(InputError, match=r"^w: price is blank: it is required, a number ≥ 0 and ≤ 1e\+07$"):
        check_cell(PRICE, "", where="w")
    with pytest.raises(InputError, match=r"^price = 'nan' is invalid: must be a number ≥ 0"):
        check_cell(PRICE, " nan ")
    with pytest.raises(InputError, match=r"^curve = 'LOG' is invalid: allowed are one of linear, log$"):
        check_cell(CURVE, "LOG")
    with pytest.raises(InputError, match=r"^fps = 0.0 is invalid"):
        check_cell(FPS, 0.0)


def test_mask_and_contains_agree():
    x = np.array([-1, 0, 1e-300, 0.5, 1, 99, 99.5, 100, 1e4, 1e4 + 1, math.nan, math.inf, -math.inf])
    for spec in (PRICE, FPS, SHELF, COUNT):
        assert spec.mask(x).tolist() == [spec.contains(float(v)) for v in x]


# ------------------------------------------------------------------ a column against a per-cell loop


def naive(spec: Range, cells: list[object]) -> tuple[list[object], list[bool], list[str]]:
    """Each cell on its own, in plain Python: the values, which are bad, and the messages."""
    values, bad, messages = [], [], []
    for cell in cells:
        missing = cell is None or (isinstance(cell, float) and math.isnan(cell))
        text = "" if missing else str(cell).strip()
        if text == "":
            values.append(spec.default)
            bad.append(spec.default is None)
            messages.append(f"{spec.name} is blank: it is required, {spec.describe()}")
            continue
        if spec.kind == "text":
            values.append(text)
            bad.append(False)
            messages.append("")
            continue
        if spec.kind == "choice":
            values.append(text)
            bad.append(text not in spec.choices)
            messages.append(f"{spec.name} = {text!r} is invalid: allowed are {spec.describe()}")
            continue
        try:
            x = float(text)
        except ValueError:
            x = math.nan
        ok = math.isfinite(x)
        ok = ok and (x > spec.low if spec.low_open else x >= spec.low)
        ok = ok and (x < spec.high if spec.high_open else x <= spec.high)
        ok = ok and (not spec.integer or x == math.floor(x))
        values.append(x)
        bad.append(not ok)
        messages.append(f"{spec.name} = {text!r} is invalid: must be {spec.describe()}")
    return values, bad, messages


CELLS = st.one_of(
    st.sampled_from(
        ["", " ", "\t", "0", "-1", "0.5", " 7 ", "99", "100", "1e308", "1e400", "nan", "inf", "1_0", "abc"]
    ),
    st.sampled_from(["linear", "log", " log ", "LOG", "x,y", "١", "+3", ".5", "5.", "True", None, math.nan]),
    st.floats(-10, 2e4, allow_nan=False).map(repr),
    st.text(max_size=4),
)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(SPECS), st.lists(CELLS, min_size=1, max_size=30))
def test_a_column_check_finds_what_a_per_cell_loop_finds(spec, cells):
    column = pd.Series(cells, dtype=object)
    got = check_series(spec, column)
    values, bad, messages = naive(spec, cells)
    assert got.bad.tolist() == bad
    first = bad.index(True) if True in bad else -1
    assert got.first() == first
    if first >= 0:
        assert got.message(first) == messages[first]
    for v, w, b in zip(got.values.tolist(), values, bad, strict=True):
        if not b:
            assert v == w or (isinstance(v, float) and math.isnan(v) and math.isnan(w))


def test_a_column_of_numbers_is_checked_as_given():
    column = pd.Series([1.0, 0.0, math.nan, 2.0])
    got = check_series(FPS, column)
    assert got.bad.tolist() == [False, True, True, False] and got.first() == 1
    assert got.message(1, "fps", "f: line 3") == "f: line 3: fps = 0.0 is invalid: must be a number > 0 and ≤ 10000"
    blanks = check_series(SHELF, column, nan_is_blank=True)
    assert blanks.values.tolist()[2] == math.inf and blanks.blank.tolist() == [False, False, True, False]
    with pytest.raises(ValueError, match="true/false"):
        check_series(FLAG, column)


def test_did_you_mean():
    assert did_you_mean("held_hrs", ["held_hours", "fps"]) == " (did you mean 'held_hours'?)"
    assert did_you_mean("zzz", ["held_hours"]) == ""
