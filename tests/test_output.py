"""Outputs never replace what is not a regular file, never leave part of a commit behind, and
keep what they replace: a device or a FIFO is written in place, a link is followed, several
files and a ledger edit land together or not at all, a replaced file keeps its mode and owner."""

from __future__ import annotations

import json
import os
import socket
import stat
import threading
from pathlib import Path

import pytest
from conftest import DEFAULT_LEDGER

from procure import files
from procure.errors import InputError, LedgerError
from procure.interfaces.cli import main
from procure.ledger.edit import cells_edit
from procure.output import Outputs, write_all, write_atomic

ROOT = os.geteuid() == 0
#: Major and minor numbers of Linux's /dev/null and /dev/full.
NULL_DEVICE, FULL_DEVICE = (1, 3), (1, 7)


def _run(args, capsys):
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _device(path: Path, numbers: tuple[int, int]) -> Path:
    """A copy of a character device (root only): a test may lose it without harm."""
    if not ROOT:
        pytest.skip("creating a device node needs root")
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(*numbers))
    return path


def _leftovers(folder: Path) -> list[str]:
    """Temporary and backup files a write left behind."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


# ----------------------------------------------------------------------------- what a path holds


def test_a_fifo_is_written_in_place(tmp_path, capsys):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    code, _out, err = _run(["bill", "--json", str(fifo)], capsys)
    reader.join(timeout=30)
    assert code == 0, err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still a FIFO, not a regular file
    assert json.loads(got[0])["stage"] == "decode"
    assert _leftovers(tmp_path) == []


def test_a_fifo_no_one_reads_is_refused_and_leaves_no_temporary_file(tmp_path):
    import subprocess
    import sys
    import time

    fifo, temp = tmp_path / "out.json", tmp_path / "tmp"
    os.mkfifo(fifo)
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    started = time.monotonic()
    try:
        run = subprocess.run([sys.executable, "-m", "procure.interfaces.cli", "bill", "--json", str(fifo)],
                             capture_output=True, text=True, check=False, env=env, timeout=60)  # fmt: skip
    finally:
        left = sorted(p.name for p in temp.iterdir())  # what a blocked or killed writer left
    assert run.returncode == 2, run.stderr
    assert time.monotonic() - started < 60
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("procure: error: ")
    assert f"output = {str(fifo)!r} is invalid: it is a FIFO no program reads" in run.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and left == [] and _leftovers(tmp_path) == []


def test_a_link_is_written_through_and_stays_a_link(tmp_path, capsys):
    real = tmp_path / "shared" / "plan.json"
    real.parent.mkdir()
    real.write_text("old\n")
    os.chmod(real, 0o640)
    link = tmp_path / "plan.json"
    link.symlink_to(real)
    code, _out, err = _run(["bill", "--json", str(link)], capsys)
    assert code == 0, err
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert json.loads(real.read_text())["stage"] == "decode"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert _leftovers(real.parent) == [] and _leftovers(tmp_path) == []


def test_a_character_device_is_written_in_place(tmp_path, capsys):
    null = _device(tmp_path / "null", NULL_DEVICE)
    code, _out, err = _run(["solve", "--budget", "1e5", "--csv", str(null), "--json", str(null)], capsys)
    assert code == 0, err  # a device may take two outputs
    assert stat.S_ISCHR(os.lstat(null).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null"]


def test_a_full_device_is_an_error_not_a_success(tmp_path, capsys):
    full = _device(tmp_path / "full", FULL_DEVICE)
    code, out, err = _run(["bill", "--json", str(full)], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "No space left on device" in err and str(full) in err
    assert stat.S_ISCHR(os.lstat(full).st_mode)


def test_dev_full_itself_reports_the_disk_full(capsys):
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    code, _out, err = _run(["bill", "--json", "/dev/full"], capsys)
    assert code == 2 and err == "procure: error: /dev/full: not written: No space left on device\n"
    assert stat.S_ISCHR(os.lstat("/dev/full").st_mode)


def test_a_descriptor_is_written_where_it_stands(tmp_path, capsys):
    log = tmp_path / "log.json"
    log.write_text("first line\n")
    fd = os.open(log, os.O_WRONLY | os.O_APPEND)  # as a shell's >> opens it
    try:
        code, _out, err = _run(["bill", "--json", f"/dev/fd/{fd}"], capsys)
    finally:
        os.close(fd)
    assert code == 0, err
    first, rest = log.read_text().split("\n", 1)
    assert first == "first line" and json.loads(rest)["stage"] == "decode"  # appended, not replaced
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.json"]
    code, _out, err = _run(["bill", "--json", "/dev/fd/987"], capsys)
    assert code == 2 and "json = '/dev/fd/987' is invalid: descriptor 987 is not open" in err


def test_a_folder_or_a_socket_is_refused_before_any_work(tmp_path, capsys):
    code, _out, err = _run(["bill", "--json", str(tmp_path)], capsys)
    assert code == 2 and f"json = '{tmp_path}' is invalid: it is a folder: give a file name" in err
    sock_path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        code, _out, err = _run(["bill", "--plot", str(tmp_path / "s.png"), "--json", str(sock_path)], capsys)
    assert code == 2 and f"json = '{sock_path}' is invalid: it is a socket" in err
    assert not (tmp_path / "s.png").exists()


# ----------------------------------------------------------------------------- all or none


def test_when_the_third_replacement_fails_the_first_two_are_put_back(tmp_path, monkeypatch):
    paths = [tmp_path / f"{name}.txt" for name in "abc"]
    for path in paths[:2]:
        path.write_text(f"old {path.stem}\n")
    inode = paths[0].stat().st_ino
    calls = []
    real_replace = files._replace

    def third_fails(src, dst):
        calls.append(dst)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(files, "_replace", third_fails)
    with pytest.raises(OSError, match="No space left"):
        write_all([(p, lambda tmp, p=p: tmp.write_text(f"new {p.stem}\n")) for p in paths])
    assert len(calls) == 3
    assert [p.read_text() for p in paths[:2]] == ["old a\n", "old b\n"]
    assert paths[0].stat().st_ino == inode  # the very file, put back
    assert not paths[2].exists()
    assert _leftovers(tmp_path) == []


def test_an_interrupt_while_staging_leaves_every_file_as_it_was(tmp_path):
    old = tmp_path / "a.txt"
    old.write_text("old\n")

    def interrupted(path):
        path.write_text("half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_all([(old, lambda p: p.write_text("new\n")), (tmp_path / "b.txt", interrupted)])
    assert old.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_a_ledger_edit_does_not_land_when_an_output_fails(ledger_copy, tmp_path):
    full = _device(tmp_path / "full", FULL_DEVICE)
    sources = ledger_copy / "sources.csv"
    before = sources.read_bytes()
    out = Outputs(json_out=str(full))
    out.json({"a": 1})
    out.ledger_edit(cells_edit(ledger_copy, "twin", {"held_hours": 7.0}))
    with pytest.raises(OSError, match="No space left on device"):
        out.commit()
    assert sources.read_bytes() == before
    assert _leftovers(ledger_copy) == [".sources.csv.lock"]


def test_outputs_do_not_land_when_the_ledger_edit_is_refused(ledger_copy, tmp_path):
    js, table = tmp_path / "out.json", tmp_path / "out.csv"
    table.write_text("old\n")
    out = Outputs(json_out=str(js), csv_out=table)
    out.json({"a": 1})
    out.ledger_edit(cells_edit(ledger_copy, "nobody", {"held_hours": 7.0}))
    with pytest.raises(LedgerError, match="source = 'nobody' is not a row of the ledger"):
        out.commit()
    assert not js.exists() and table.read_text() == "old\n"


def test_outputs_are_put_back_when_the_ledger_replacement_fails(ledger_copy, tmp_path, monkeypatch):
    js = tmp_path / "out.json"
    js.write_text("old\n")
    sources = ledger_copy / "sources.csv"
    before = sources.read_bytes()
    real_replace = files._replace

    def ledger_fails(src, dst):
        if Path(dst).name == "sources.csv":
            raise OSError(5, "Input/output error")
        real_replace(src, dst)

    monkeypatch.setattr(files, "_replace", ledger_fails)
    out = Outputs(json_out=str(js))
    out.json({"a": 1})
    out.ledger_edit(cells_edit(ledger_copy, "twin", {"held_hours": 7.0}), "wrote it")
    with pytest.raises(OSError, match="Input/output error"):
        out.commit()
    assert js.read_text() == "old\n" and sources.read_bytes() == before
    assert _leftovers(tmp_path) == []


def test_a_commit_with_an_edit_writes_both_and_says_so(ledger_copy, tmp_path):
    said: list[str] = []
    js = tmp_path / "out.json"
    out = Outputs(json_out=str(js), say=said.append)
    out.json({"a": 1})
    out.ledger_edit(cells_edit(ledger_copy, "twin", {"held_hours": 7.0}), "Wrote held_hours into 'twin'")
    out.commit()
    assert json.loads(js.read_text()) == {"a": 1}
    assert "twin,twin,15.00,20000,7," in (ledger_copy / "sources.csv").read_text()
    assert said == [f"JSON written to {js}", "Wrote held_hours into 'twin'"]


def test_one_path_named_twice_is_refused_before_any_work(tmp_path, capsys):
    same = tmp_path / "x.out"
    code, _out, err = _run(["solve", "--budget", "1e5", "--json", str(same), "--csv", str(same)], capsys)
    assert code == 2 and f"csv = '{same}' is invalid: it is also the json file" in err
    link = tmp_path / "y.out"
    link.symlink_to(same)
    code, _out, err = _run(["solve", "--budget", "1e5", "--json", str(same), "--csv", str(link)], capsys)
    assert code == 2 and "it is also the json file" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["y.out"]


def test_an_output_onto_a_file_the_command_reads_is_refused(ledger_copy, capsys, monkeypatch):
    import procure.analyses.solving as solving

    def never(*args, **kwargs):
        raise AssertionError("the check comes before any work")

    monkeypatch.setattr(solving, "prepare", never)
    sources = ledger_copy / "sources.csv"
    before = sources.read_bytes()
    for args in (
        ["solve", "--budget", "1e5", "--csv", str(sources)],
        ["solve", "--budget", "1e5", "--json", str(ledger_copy / "cluster.toml")],
        ["solve", "--budget", "1e5", "--json", str(ledger_copy / "." / "sources.csv")],
    ):
        code, _out, err = _run([*args, "--ledger", str(ledger_copy)], capsys)
        assert code == 2 and "is invalid: it is a file this command reads" in err, err
    assert sources.read_bytes() == before
    code, _out, err = _run(["bill", "--json", str(DEFAULT_LEDGER.path / "sources.csv")], capsys)
    assert code == 2 and "it is inside procure's installation" in err  # the shipped ledger: never written
    edit = cells_edit(ledger_copy, "twin", {"held_hours": 1.0})
    with pytest.raises(InputError, match="it is the ledger file this command edits"):
        Outputs(csv_out=sources).ledger_edit(edit)


# ----------------------------------------------------------------------------- what a file keeps


def test_a_replaced_file_keeps_its_mode(tmp_path):
    path = tmp_path / "secret.json"
    path.write_text("old")
    os.chmod(path, 0o600)
    write_atomic(path, lambda tmp: tmp.write_text("new"))
    assert path.read_text() == "new" and stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_replaced_file_keeps_its_owner_and_group(tmp_path):
    if not ROOT:
        pytest.skip("giving a file to another user needs root")
    path = tmp_path / "theirs.json"
    path.write_text("old")
    os.chown(path, 4321, 8765)
    write_atomic(path, lambda tmp: tmp.write_text("new"))
    st = path.stat()
    assert (st.st_uid, st.st_gid) == (4321, 8765) and path.read_text() == "new"


def test_a_new_file_takes_the_umask(tmp_path):
    old = os.umask(0o077)
    try:
        write_atomic(tmp_path / "new.txt", lambda tmp: tmp.write_text("x"))
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o600


def _disk_full(*paths):
    """What the system raises when the disk fills while a staged file is written or renamed."""
    raise OSError(28, "No space left on device", *map(str, paths[:2]))


@pytest.mark.parametrize("step", ["_fsync", "_replace", "keep_old"])
def test_a_failed_write_names_the_users_file_not_the_temporary_one(tmp_path, capsys, monkeypatch, step):
    out = tmp_path / "plan.json"
    out.write_text("old\n")  # replaced: a second name of it is kept until the new one lands
    monkeypatch.setattr(files, step, _disk_full)
    code, _out, err = _run(["bill", "--json", str(out)], capsys)
    assert code == 2 and err == f"procure: error: {out}: not written: No space left on device\n"
    assert out.read_text() == "old\n" and _leftovers(tmp_path) == []


def test_a_failed_ledger_edit_names_the_ledger_file(ledger_copy, monkeypatch):
    from procure.errors import system_message
    from procure.ledger.edit import set_cells

    sources = ledger_copy / "sources.csv"
    before = sources.read_bytes()
    monkeypatch.setattr(files, "_fsync", _disk_full)
    with pytest.raises(OSError) as caught:
        set_cells(ledger_copy, "twin", {"held_hours": 7.0})
    assert system_message(caught.value) == f"{sources}: not written: No space left on device"
    assert sources.read_bytes() == before and not list(ledger_copy.glob(".sources.csv.*.csv"))
