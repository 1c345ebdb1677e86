"""No command writes into the ledger that ships with the package."""

from __future__ import annotations

from procure.interfaces.cli import main
from procure.ledger import default_ledger_dir
from procure.ledger.shipped import shipped


def test_the_shipped_ledger_is_known_and_a_copy_is_not(tmp_path):
    assert shipped(default_ledger_dir())
    assert not shipped(tmp_path)


def test_calibrate_write_refuses_the_shipped_ledger(tmp_path, capsys):
    before = (default_ledger_dir() / "sources.csv").read_bytes()
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(b"not read: the ledger is refused first")
    code = main(["calibrate", str(clip), "--ledger", str(default_ledger_dir()), "--source", "own", "--write"])
    err = capsys.readouterr().err
    assert code == 2 and "shipped default ledger, never written" in err and len(err.strip().splitlines()) == 1
    assert (default_ledger_dir() / "sources.csv").read_bytes() == before
