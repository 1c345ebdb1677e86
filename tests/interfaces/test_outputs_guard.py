"""No output overwrites a file its command reads, and nothing of the installation is written.

Each command, each output option pointed at a file the command reads (a model card,
``accelerators.toml``, the runs, a video) or at a file of the installation (the shipped
ledger, a card, the package): one line, exit 2, and the file byte for byte as it was.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from procure.interfaces.cli import main
from procure.ledger import default_ledger_dir, models_dir

PACKAGE = Path(__import__("procure").__file__).resolve().parent


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def fit_ledger(tmp_path_factory):
    from procure import load_ledger
    from procure.analyses.fit.simulate import runs_frame, simulate_runs

    folder = tmp_path_factory.mktemp("fit") / "ledger"
    shutil.copytree(default_ledger_dir(), folder)
    ledger = load_ledger(folder)
    truth = {"twin.exchange_rate": 0.5}
    runs = simulate_runs(ledger.sources, truth, {"p_min": 0.1, "p_max": 0.85, "value_scale": 300.0}, runs=8,
                         most_hours={"own": 800.0, "twin": 3000.0, "sim": 20000.0}, seed=1)  # fmt: skip
    runs_frame(runs).to_csv(folder / "runs.csv", index=False)
    return folder


def _refused(args: list[str], victim: Path, capsys) -> str:
    before = _digest(victim)
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("procure: error: "), err
    assert _digest(victim) == before
    return err


@pytest.mark.parametrize(
    ("option", "card"), [("--json", "93m.toml"), ("--scenarios", "accelerators.toml"), ("--json", "25m.toml")]
)
def test_fit_never_writes_a_card_it_reads(fit_ledger, option, card, capsys):
    # before: procure fit runs.csv --json models/93m.toml overwrote the card it had read
    victim = models_dir() / card
    err = _refused(["fit", str(fit_ledger / "runs.csv"), "--ledger", str(fit_ledger), option, str(victim)], victim,
                   capsys)  # fmt: skip
    assert "a file this command reads" in err or "installation" in err


def test_fit_never_writes_its_runs(fit_ledger, capsys):
    runs = fit_ledger / "runs.csv"
    err = _refused(["fit", str(runs), "--ledger", str(fit_ledger), "--json", str(runs)], runs, capsys)
    assert "a file this command reads" in err


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="no ffmpeg on this machine")
def test_calibrate_never_turns_its_video_into_json(tmp_path, capsys):
    pytest.importorskip("av")
    clip = tmp_path / "c.mp4"
    subprocess.run(["ffmpeg", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=30",
                    "-t", "0.5", "-pix_fmt", "yuv420p", str(clip)], check=True)  # fmt: skip
    err = _refused(["calibrate", str(clip), "--json", str(clip)], clip, capsys)
    assert "a video this command reads" in err


@pytest.mark.parametrize(
    "command",
    [["solve", "--budget", "100000"], ["bill"], ["rank", "--budget", "100000"], ["sensitivity"]],
    ids=["solve", "bill", "rank", "sensitivity"],
)
@pytest.mark.parametrize("where", ["ledger", "card", "package"])
def test_no_output_is_written_into_the_installation(command, where, tmp_path, capsys):
    # before: an output path onto a shipped ledger file, from a command using another ledger,
    # replaced it
    mine = tmp_path / "mine"
    shutil.copytree(default_ledger_dir(), mine)
    victim = {"ledger": default_ledger_dir() / "sources.csv", "card": models_dir() / "7b.toml",
              "package": PACKAGE / "py.typed"}[where]  # fmt: skip
    err = _refused([*command, "--ledger", str(mine), "--json", str(victim)], victim, capsys)
    assert "inside procure's installation" in err


def test_no_ledger_edit_lands_in_the_installation():
    # before: import lerobot ... --append --ledger <installed>/ledgers/default added a row to it
    from procure.errors import InputError
    from procure.output import Outputs

    with pytest.raises(InputError, match="inside procure's installation"):
        Outputs().will_edit(default_ledger_dir() / "sources.csv")
