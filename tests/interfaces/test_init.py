"""``procure init DIR`` (a ledger of one's own, copied from the shipped one), the distribution's
name and version, and the commands that install an extra."""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import procure
from procure.interfaces.cli import main
from procure.ledger import default_ledger_dir, load_ledger

ROOT = Path(__file__).resolve().parents[2]


def test_init_copies_the_default_ledger(tmp_path, capsys):
    target = tmp_path / "deep" / "mine"
    assert main(["init", str(target)]) == 0
    out = capsys.readouterr().out
    shipped = sorted(p.name for p in default_ledger_dir().iterdir() if p.is_file())
    assert sorted(p.name for p in target.iterdir()) == shipped
    for name in shipped:
        assert (target / name).read_bytes() == (default_ledger_dir() / name).read_bytes()
    assert f"to {target}" in out and f"procure app --ledger {target}" in out
    assert load_ledger(target).sources.equals(load_ledger().sources)
    assert main(["solve", "--ledger", str(target), "--budget", "100000", "--json"]) == 0
    assert not [p for p in target.parent.iterdir() if p.name.startswith(".")]  # no staging folder left


def test_the_copy_is_the_users_whatever_the_installed_files_allow(tmp_path, monkeypatch, capsys):
    locked = tmp_path / "installed"
    locked.mkdir()
    for p in default_ledger_dir().iterdir():
        (locked / p.name).write_bytes(p.read_bytes())
        os.chmod(locked / p.name, 0o444)
    monkeypatch.setattr("procure.ledger.default_ledger_dir", lambda: locked)
    old = os.umask(0o022)
    try:
        assert main(["init", str(tmp_path / "mine")]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "mine").stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "mine" / "sources.csv").stat().st_mode) == 0o644
    from procure.ledger.edit import update_cells

    update_cells(tmp_path / "mine", {"own": {"held_hours": 7.0}}, {"own": {"held_hours": 200.0}})
    assert float(load_ledger(tmp_path / "mine").source("own")["held_hours"]) == 7.0


def test_init_takes_an_empty_folder(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["init", str(tmp_path / "empty")]) == 0
    assert (tmp_path / "empty" / "sources.csv").is_file()


@pytest.mark.parametrize("what", ["not empty", "a file"])
def test_init_refuses_what_it_would_overwrite(tmp_path, capsys, what):
    target = tmp_path / "taken"
    if what == "a file":
        target.write_text("mine")
    else:
        target.mkdir()
        (target / "notes.txt").write_text("mine")
    before = sorted(tmp_path.rglob("*"))
    assert main(["init", str(target)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and str(target) in err and ("not empty" in err or "is a file" in err)
    assert sorted(tmp_path.rglob("*")) == before


def test_the_distribution_has_its_own_name():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == procure.DISTRIBUTION == "procure-robotics"
    assert any(r.startswith(f"{procure.DISTRIBUTION}[") for r in project["optional-dependencies"]["test"])
    assert procure.__version__ == project["version"]


def test_version_prints_the_distributions_version():
    out = subprocess.run([sys.executable, "-c", "import sys; from procure.interfaces.cli import main; "
                          "sys.exit(main(['--version']))"], capture_output=True, text=True, check=True)  # fmt: skip
    assert out.stdout == f"procure, version {procure.__version__}\n"


def test_an_extra_is_installed_by_a_command_that_names_this_project(monkeypatch):
    import procure.install

    words = shlex.split(procure.install_command("app"))
    # never the index's other "procure" (a word of it, not a checkout's folder that has its name)
    assert words[:2] == ["pip", "install"] and all(w.split("[")[0] != "procure" for w in words)
    # As imported from a checkout: the checkout itself with the extra.
    monkeypatch.setattr(procure.install, "__file__", str(ROOT / "procure" / "install.py"))
    words = shlex.split(procure.install_command("app"))
    assert f"{ROOT}[app]" in words and all(w.split("[")[0] != "procure" for w in words)


def test_without_shiny_the_app_names_the_command(monkeypatch, capsys):
    import builtins

    real = builtins.__import__

    def no_shiny(name, *args, **kwargs):
        if name == "shiny" or name.startswith("shiny."):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_shiny)
    assert main(["app", "--port", "8999"]) == 2
    err = capsys.readouterr().err
    assert err == f"procure: error: the app needs Shiny for Python: {procure.install_command('app')}\n"
