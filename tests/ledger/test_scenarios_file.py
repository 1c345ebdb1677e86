"""Scenarios read from a file or drawn from ranges: validated like every ledger file."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from procure.errors import LedgerError
from procure.ledger import load_ledger
from procure.ledger.scenarios import SCENARIO_FILE, ledger_scenarios, read_scenarios, sample_scenarios

LEDGER = load_ledger()


def write(tmp_path, text):
    path = tmp_path / "scenarios.csv"
    path.write_text(text)
    return path


def test_a_file_changes_only_what_it_lists(tmp_path):
    path = write(tmp_path, "scenario,source,exchange_rate,saturation_hours,probability\n"
                 "low,twin,0.1,,0.25\nlow,own,,1500,0.25\nhigh,twin,0.6,900,0.75\n")  # fmt: skip
    sc = read_scenarios(path, LEDGER.sources)
    assert sc.names == ("low", "high")
    np.testing.assert_allclose(sc.probability, [0.25, 0.75])
    er = sc.values["exchange_rate"]
    ledger_er = LEDGER.sources["exchange_rate"].to_numpy()
    assert er[0, 1] == 0.1 and er[1, 1] == 0.6
    np.testing.assert_array_equal(er[:, [0, 2, 3, 4]], np.tile(ledger_er[[0, 2, 3, 4]], (2, 1)))
    k = sc.values["saturation_hours"]
    assert k[0, 0] == 1500 and k[1, 1] == 900 and k[0, 1] == 800 and k[1, 0] == 2000
    np.testing.assert_array_equal(sc.values["survival"], np.tile(LEDGER.sources["survival"], (2, 1)))
    assert sc.mean()["exchange_rate"][1] == pytest.approx(0.25 * 0.1 + 0.75 * 0.6)


def test_equal_probabilities_by_default(tmp_path):
    sc = read_scenarios(write(tmp_path, "scenario,source,survival\na,own,0.5\nb,own,0.7\nc,sim,0.1\n"), LEDGER.sources)
    np.testing.assert_allclose(sc.probability, [1 / 3] * 3)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("scenario,source,exchange_rat\na,own,1\n", "column 'exchange_rat' is unknown (did you mean 'exchange_rate'?)"),
        ("scenario,exchange_rate\na,1\n", "missing column 'source'"),
        ("scenario,source,exchange_rate\na,robot,1\n", "line 2: source = 'robot' is not a source of the ledger"),
        ("scenario,source,exchange_rate\na,own,1\na,own,2\n", "line 3: scenario 'a' gives source 'own' again"),
        (
            "scenario,source,survival\na,own,1.5\n",
            "line 2: survival = '1.5' is invalid: must be 0 or a number ≥ 1e-06 and ≤ 1",
        ),
        ("scenario,source,probability\na,own,0.5\na,twin,0.4\nb,own,0.5\n", "differs from 0.5 on line 2"),
        ("scenario,source,probability\na,own,0.5\nb,own,0.4\n", "probabilities sum to 0.9"),
        ("scenario,source,probability\na,own,0.5\nb,own,\n", "probability is blank for scenario 'b'"),
        ("scenario,source,probability\na,own,2\n", "probability = '2' is invalid"),
        ("scenario,source\n", "no scenarios"),
        ("scenario,source\n,own\n", "line 2: scenario is blank"),
    ],
)
def test_bad_files_are_named(tmp_path, text, message):
    with pytest.raises(LedgerError, match=None) as info:
        read_scenarios(write(tmp_path, text), LEDGER.sources)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_samples_are_reproducible_and_within_the_ranges():
    a = sample_scenarios(LEDGER.sources, 500, seed=3)
    b = sample_scenarios(LEDGER.sources, 500, seed=3)
    c = sample_scenarios(LEDGER.sources, 500, seed=4)
    er = a.values["exchange_rate"][:, 1]
    np.testing.assert_array_equal(er, b.values["exchange_rate"][:, 1])
    assert not np.array_equal(er, c.values["exchange_rate"][:, 1])
    assert er.min() >= 0.1 and er.max() <= 0.6
    # Triangular on [0.1, 0.6] peaking at the ledger's 0.35: mean 0.35, sd √((a²+b²+c²−ab−ac−bc)/18).
    sd = np.sqrt((0.1**2 + 0.6**2 + 0.35**2 - 0.1 * 0.6 - 0.1 * 0.35 - 0.6 * 0.35) / 18)
    assert abs(er.mean() - 0.35) < 4 * sd / np.sqrt(500)
    # Sources without a range keep the ledger's value.
    np.testing.assert_array_equal(a.values["exchange_rate"][:, 0], 1.0)
    assert a.names[0] == "s001" and len(a.names) == 500


def test_samples_need_ranges_and_a_count():
    no_ranges = LEDGER.sources.assign(exchange_rate_low=np.nan, exchange_rate_high=np.nan)
    with pytest.raises(LedgerError, match=r"sources\.csv has no ranges to draw from"):
        sample_scenarios(no_ranges, 10)
    with pytest.raises(LedgerError, match=r"samples = 0 is invalid"):
        sample_scenarios(LEDGER.sources, 0)


def _set_range(folder, low, high):
    frame = pd.read_csv(folder / "sources.csv", dtype=str, keep_default_na=False)
    frame.loc[frame["source"] == "own", ["exchange_rate_low", "exchange_rate_high"]] = [low, high]
    frame.to_csv(folder / "sources.csv", index=False)


@pytest.mark.parametrize(
    ("low", "high", "message"),
    [("0.5", "", "exchange_rate_high is blank but exchange_rate_low is not"),
     ("1.2", "1.5", "exchange_rate_low = 1.2, exchange_rate = 1, exchange_rate_high = 1.5 are invalid")],
)  # fmt: skip
def test_bad_ranges_are_named(ledger_copy, low, high, message):
    _set_range(ledger_copy, low, high)
    with pytest.raises(LedgerError) as info:
        load_ledger(ledger_copy)
    assert message in str(info.value) and "line 2 (source 'own')" in str(info.value)


def test_a_ledger_folder_brings_its_own_scenarios(ledger_copy):
    ledger = load_ledger(ledger_copy)
    assert ledger_scenarios(ledger) is None
    (ledger_copy / SCENARIO_FILE).write_text("scenario,source,exchange_rate\na,twin,0.2\nb,twin,0.5\n")
    sc = ledger_scenarios(ledger)
    assert sc is not None and sc.names == ("a", "b")
    with pytest.raises(LedgerError, match="not both"):
        ledger_scenarios(ledger, ledger_copy / SCENARIO_FILE, samples=3)
