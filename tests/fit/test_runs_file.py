"""runs.csv: read as written, and every bad input one line naming file, line, field and value."""

from __future__ import annotations

import numpy as np
import pytest

from procure.errors import LedgerError
from procure.interfaces.cli import main
from procure.ledger.runs import read_runs

from .conftest import DEFAULT

GOOD = "run,hours_own,hours_twin,successes,trials,x_note\nbase,100,,5,20,first\n\nmix,50,400,12,30,\n"


def _read(tmp_path, text):
    path = tmp_path / "runs.csv"
    path.write_text(text)
    return read_runs(path, DEFAULT.sources)


def test_a_good_file_reads_as_written(tmp_path):
    runs = _read(tmp_path, GOOD)
    assert runs.names == ("base", "mix")
    assert runs.lines == (2, 4)
    own, twin = runs.sources.index("own"), runs.sources.index("twin")
    assert runs.hours[:, own].tolist() == [100.0, 50.0]
    assert runs.hours[:, twin].tolist() == [0.0, 400.0]
    assert runs.hours.sum() == 550.0  # sources left out have 0 hours
    assert runs.observed().tolist() == [0.25, 0.4]
    assert runs.used().tolist() == [s in ("own", "twin") for s in runs.sources]


def test_a_score_file_keeps_blank_errors_as_nan(tmp_path):
    runs = _read(tmp_path, "run,hours_sim,score,score_sd\na,10,1.5,0.1\nb,20,1.2,\n")
    assert runs.metric == "score"
    assert runs.score.tolist() == [1.5, 1.2]
    assert runs.score_sd[0] == 0.1 and np.isnan(runs.score_sd[1])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "run,hours_twn,successes,trials\na,1,1,2\n",
            "runs.csv: line 1: column 'hours_twn' names source 'twn', which is not in the ledger (did you mean 'twin'?)",
        ),
        ("run,hours_own,sucesses,trials\na,1,1,2\n", "column 'sucesses' is unknown (did you mean 'successes'?)"),
        (
            "run,hours_own,successes,trials\na,-5,1,2\n",
            "runs.csv: line 2 (run 'a'): hours_own = '-5' is invalid: must be a number ≥ 0",
        ),
        (
            "run,hours_own,successes,trials\na,1,1,2\nb,1,25,20\n",
            "runs.csv: line 3 (run 'b'): successes = 25 is invalid: must be ≤ trials (20)",
        ),
        (
            "run,hours_own,successes,trials\na,1,0,0\n",
            "runs.csv: line 2 (run 'a'): trials = '0' is invalid: must be a whole number ≥ 1",
        ),
        ("run,hours_own,successes,trials\na,1,1.5,3\n", "successes = '1.5' is invalid: must be a whole number ≥ 0"),
        (
            "run,hours_own,successes,trials\na,1,1,2\na,2,1,2\n",
            "line 3 (run 'a'): run = 'a' is a duplicate of line 2: names must be unique",
        ),
        ("run,hours_own,successes\na,1,1\n", "missing column trials: successes and trials go together"),
        ("run,hours_own\na,1\n", "no metric: give columns successes and trials, or score"),
        ("run,hours_own,successes,trials\na,1,,3\n", "line 2 (run 'a'): successes is blank: it is required"),
        ("run,hours_own,successes,trials\n", "no runs: the file needs at least one row"),
    ],
)
def test_bad_input_is_one_line(tmp_path, text, expected):
    with pytest.raises(LedgerError) as info:
        _read(tmp_path, text)
    message = str(info.value)
    assert expected in message
    assert "\n" not in message
    assert str(tmp_path / "runs.csv") in message


def test_the_command_says_it_in_one_line_exit_2(tmp_path, capsys):
    path = tmp_path / "runs.csv"
    path.write_text("run,hours_twn,successes,trials\na,1,1,2\n")
    assert main(["fit", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("procure: error: ") and "did you mean 'twin'?" in err
