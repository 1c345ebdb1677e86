"""Ledger edits lose nothing: two writers at once both land, a stale editor is refused, every
change is checked before any is written, and a rewrite keeps the file's mode, owner, link, line
ends and byte-order mark, and every record it does not change byte for byte."""

from __future__ import annotations

import math
import multiprocessing
import os
import stat
from pathlib import Path

import pytest

from procure.errors import EditConflict, InputError, LedgerError
from procure.ledger import edit as ledger_edit
from procure.ledger import load_ledger, read_sources
from procure.ledger.edit import append_row, ledger_lock, set_cells, update_cells

ROOT = os.geteuid() == 0
#: Edits each of the two writers makes.
ROUNDS = 12


def _held(folder: Path) -> dict[str, float]:
    return dict(zip(*(read_sources(folder / "sources.csv")[c] for c in ("source", "held_hours")), strict=True))


def _writer(folder: str, source: str, start, rounds: int) -> None:
    start.wait()
    for k in range(1, rounds + 1):
        set_cells(folder, source, {"held_hours": float(k)})


# ----------------------------------------------------------------------------- two writers


def test_two_processes_editing_different_rows_both_land(ledger_copy):
    try:
        context = multiprocessing.get_context("fork")
    except ValueError:
        pytest.skip("no fork here")
    start = context.Barrier(2)
    writers = [
        context.Process(target=_writer, args=(str(ledger_copy), name, start, ROUNDS)) for name in ("twin", "sim")
    ]
    for w in writers:
        w.start()
    for w in writers:
        w.join(timeout=120)
    assert [w.exitcode for w in writers] == [0, 0]
    held = _held(ledger_copy)
    assert held["twin"] == ROUNDS and held["sim"] == ROUNDS  # neither lost
    assert held["own"] == 200  # the rest as it was


def test_a_second_writer_waits_a_bounded_time_then_fails_with_one_line(ledger_copy, monkeypatch):
    monkeypatch.setattr(ledger_edit, "LOCK_TIMEOUT", 0.2)
    sources = ledger_copy / "sources.csv"
    before = sources.read_bytes()
    with ledger_lock(sources), pytest.raises(LedgerError) as info:
        set_cells(ledger_copy, "twin", {"held_hours": 5.0})
    message = str(info.value)
    assert "another program is changing this ledger" in message and "0.2 s" in message
    assert "\n" not in message
    assert sources.read_bytes() == before
    set_cells(ledger_copy, "twin", {"held_hours": 5.0})  # once it is free
    assert _held(ledger_copy)["twin"] == 5


def test_an_edit_reads_the_file_afresh(ledger_copy):
    set_cells(ledger_copy, "twin", {"held_hours": 3.0})
    set_cells(ledger_copy, "sim", {"held_hours": 4.0})  # the first edit is in the file it changes
    assert _held(ledger_copy) == pytest.approx({"own": 200, "twin": 3, "older_arm": 0, "force": 0, "sim": 4})


# ----------------------------------------------------------------------------- an editor with a stale view


def test_update_cells_writes_when_nobody_changed_the_cells(ledger_copy):
    seen = load_ledger(ledger_copy).sources.set_index("source")
    changes = {"own": {"held_hours": 350.0}, "sim": {"available_hours": 10.0}}
    was = {"own": {"held_hours": seen.loc["own", "held_hours"]}, "sim": {"available_hours": math.inf}}
    update_cells(ledger_copy, changes, was)
    rows = load_ledger(ledger_copy).sources.set_index("source")
    assert rows.loc["own", "held_hours"] == 350 and rows.loc["sim", "available_hours"] == 10


def test_update_cells_refuses_a_cell_someone_else_changed(ledger_copy):
    sources = ledger_copy / "sources.csv"
    set_cells(ledger_copy, "own", {"held_hours": 999.0})  # someone else, after the editor read 200
    before = sources.read_bytes()
    with pytest.raises(EditConflict) as info:
        update_cells(
            ledger_copy,
            {"twin": {"held_hours": 1.0}, "own": {"held_hours": 300.0}},
            {"twin": {"held_hours": 0.0}, "own": {"held_hours": 200.0}},
        )
    assert str(info.value) == (
        f"{sources}: source 'own', held_hours: you read 200.0 but the file now holds '999': someone else "
        "changed it; reload the ledger (nothing was written)"
    )
    assert sources.read_bytes() == before  # not even twin's change


def test_update_cells_compares_numbers_as_numbers_and_keeps_others_changes(ledger_copy):
    sources = ledger_copy / "sources.csv"
    sources.write_text(sources.read_text().replace("own,own,123.60,5000,200,", "own,own,123.60,5000,2e2,"))
    set_cells(ledger_copy, "force", {"held_hours": 11.0})  # another cell, changed meanwhile
    update_cells(ledger_copy, {"own": {"held_hours": 201.0}}, {"own": {"held_hours": 200}})
    held = _held(ledger_copy)
    assert held["own"] == 201 and held["force"] == 11


def test_update_cells_refuses_a_row_that_is_gone(ledger_copy):
    with pytest.raises(EditConflict, match="source 'ghost' is no longer a row of the ledger"):
        update_cells(ledger_copy, {"ghost": {"held_hours": 1.0}}, {"ghost": {"held_hours": 0.0}})


def test_update_cells_checks_every_change_before_writing_any(ledger_copy):
    sources = ledger_copy / "sources.csv"
    before = sources.read_bytes()
    with pytest.raises(LedgerError) as info:
        update_cells(
            ledger_copy,
            {"own": {"held_hours": 10.0}, "twin": {"survival": 1.5}},
            {"own": {"held_hours": 200.0}, "twin": {"survival": 0.9}},
        )
    assert str(info.value) == (
        f"{sources} (source 'twin'): survival = 1.5 is invalid: must be 0 or a number ≥ 1e-06 and ≤ 1"
    )
    with pytest.raises(LedgerError, match="seen has no value for source 'own', column 'held_hours'"):
        update_cells(ledger_copy, {"own": {"held_hours": 10.0}}, {})
    with pytest.raises(LedgerError, match="column 'notes' is unknown: columns of your own start with 'x_'"):
        update_cells(ledger_copy, {"own": {"notes": "x"}}, {"own": {"notes": ""}})
    assert sources.read_bytes() == before


def test_a_change_that_breaks_the_ledger_never_lands(ledger_copy):
    sources = ledger_copy / "sources.csv"
    before = sources.read_bytes()
    with pytest.raises(LedgerError) as info:
        set_cells(ledger_copy, "twin", {"exchange_rate": 0.9})  # outside its range 0.1 to 0.6
    assert str(info.value) == (
        f"{sources}: line 3 (source 'twin'): exchange_rate_low = 0.1, exchange_rate = 0.9, exchange_rate_high = 0.6 "
        "are invalid: must be exchange_rate_low ≤ exchange_rate ≤ exchange_rate_high"
    )
    assert sources.read_bytes() == before
    assert sorted(p.name for p in ledger_copy.iterdir()) == [".sources.csv.lock", "cluster.toml", "sources.csv"]


# ----------------------------------------------------------------------------- what a rewrite keeps


def test_a_rewrite_keeps_the_mode(ledger_copy):
    sources = ledger_copy / "sources.csv"
    os.chmod(sources, 0o600)
    set_cells(ledger_copy, "twin", {"held_hours": 2.0})
    assert stat.S_IMODE(sources.stat().st_mode) == 0o600


def test_a_rewrite_keeps_the_owner(ledger_copy):
    if not ROOT:
        pytest.skip("giving a ledger to another user needs root")
    sources = ledger_copy / "sources.csv"
    os.chown(sources, 2345, 3456)
    set_cells(ledger_copy, "twin", {"held_hours": 2.0})
    st = sources.stat()
    assert (st.st_uid, st.st_gid) == (2345, 3456)


def test_a_linked_ledger_stays_a_link_to_the_shared_file(ledger_copy, tmp_path):
    shared = tmp_path / "shared.csv"
    sources = ledger_copy / "sources.csv"
    sources.rename(shared)
    sources.symlink_to(shared)
    set_cells(ledger_copy, "twin", {"held_hours": 6.0})
    assert sources.is_symlink() and os.readlink(sources) == str(shared)
    assert _held(tmp_path.parent / tmp_path.name / "ledger")["twin"] == 6
    assert read_sources(shared).set_index("source").loc["twin", "held_hours"] == 6


def _excel(folder: Path) -> bytes:
    """The ledger as Excel's "CSV UTF-8" saves it: a byte-order mark and CRLF on every line."""
    text = (folder / "sources.csv").read_text()
    data = b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode()
    (folder / "sources.csv").write_bytes(data)
    return data


def test_an_excel_ledger_keeps_its_bom_and_crlf_after_a_one_cell_write(ledger_copy):
    before = _excel(ledger_copy)
    set_cells(ledger_copy, "twin", {"held_hours": 8.0})
    after = (ledger_copy / "sources.csv").read_bytes()
    assert after.startswith(b"\xef\xbb\xbf")
    old_lines, new_lines = before.split(b"\r\n"), after.split(b"\r\n")
    assert b"\n" not in after.replace(b"\r\n", b"")  # CRLF on every line
    changed = [k for k, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)) if a != b]
    assert changed == [2]  # twin's line alone
    assert new_lines[2].startswith(b"twin,twin,15.00,20000,8,")


def test_an_excel_ledger_keeps_its_crlf_when_a_column_and_a_row_are_added(ledger_copy):
    _excel(ledger_copy)
    set_cells(ledger_copy, "own", {"codec": "h264"})
    append_row(ledger_copy, {**_row("extra"), "codec": "av1"})
    after = (ledger_copy / "sources.csv").read_bytes()
    assert after.endswith(b"\r\n") and b"\n" not in after.replace(b"\r\n", b"")
    rows = load_ledger(ledger_copy).sources.set_index("source")
    assert rows.loc["own", "codec"] == "h264" and rows.loc["extra", "codec"] == "av1"


def _row(name: str) -> dict[str, object]:
    return {"source": name, "kind": "own", "price_usd_per_hour": 1.0, "cameras": 1, "width": 640, "height": 480,
            "fps": 30, "saturation_hours": 100.0}  # fmt: skip


def test_records_the_edit_does_not_touch_stay_byte_for_byte(ledger_copy):
    sources = ledger_copy / "sources.csv"
    lines = sources.read_text().splitlines()
    width = len(lines[0].split(","))
    rows = [line + "," * (width - len(line.split(","))) for line in lines]  # every row as wide as the header
    rows = [rows[0] + ",x_note", rows[1] + ',"two\nlines, ""quoted"""', *[r + "," for r in rows[2:]]]
    rows.insert(3, "   ")  # a blank line, its spaces kept
    sources.write_text("\n".join(rows))  # no line end at the end
    before = sources.read_text()
    set_cells(ledger_copy, "force", {"held_hours": 9.0})
    after = sources.read_text()
    keep, new = before.split("\n"), after.split("\n")
    assert len(new) == len(keep)
    assert [k for k, (a, b) in enumerate(zip(keep, new, strict=True)) if a != b] == [6]  # force's line alone
    assert new[6].startswith("force,force,214.44,400,9,")
    assert not after.endswith("\n")
    assert read_sources(sources).set_index("source").loc["own", "x_note"] == 'two\nlines, "quoted"'


def test_written_numbers_read_back_exactly(ledger_copy):
    value = 0.1 + 0.2  # 0.30000000000000004: ten digits would round it
    set_cells(ledger_copy, "twin", {"held_hours": value, "lot_hours": 3.0})
    line = next(x for x in (ledger_copy / "sources.csv").read_text().splitlines() if x.startswith("twin,"))
    assert ",0.30000000000000004,3," in line
    assert _held(ledger_copy)["twin"] == value


def test_a_hard_linked_ledger_is_refused_and_both_names_keep_their_content(ledger_copy, tmp_path):
    """A file replaced whole would leave its other hard links on the old content: the edit is
    refused with one line, and neither name changes."""
    sources = ledger_copy / "sources.csv"
    other = tmp_path / "shared.csv"
    os.link(sources, other)
    before = sources.read_bytes()
    with pytest.raises(InputError, match="has 2 hard links"):
        set_cells(ledger_copy, "twin", {"held_hours": 6.0})
    assert sources.read_bytes() == before == other.read_bytes()
    assert os.stat(sources).st_ino == os.stat(other).st_ino and os.stat(sources).st_nlink == 2


def test_an_output_onto_a_hard_linked_file_is_refused_before_any_work(tmp_path, capsys):
    from procure.interfaces.cli import main

    plan = tmp_path / "plan.json"
    plan.write_text("{}\n")
    os.link(plan, tmp_path / "copy.json")
    assert main(["solve", "--budget", "100000", "--json", str(plan)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "hard links" in err
    assert plan.read_text() == "{}\n" == (tmp_path / "copy.json").read_text()


def test_the_second_name_a_writer_gives_the_file_is_not_a_users_link(ledger_copy):
    """While a writer replaces the file it keeps the old one under a second name beside it (a
    hard link): another command checking the file then, or after a writer killed mid-way, is
    not refused for it; a link of the user's beside it still is."""
    from procure.output import Outputs

    sources = ledger_copy / "sources.csv"
    os.link(sources, ledger_copy / ".sources.csv.0123abcd.old")
    (ledger_copy / ".sources.csv.notes.old").write_text("the user's\n")
    Outputs().will_edit(sources)
    set_cells(ledger_copy, "twin", {"held_hours": 6.0})
    assert _held(ledger_copy)["twin"] == 6
    # the next edit, under the lock, removes the second name a killed writer left; not the user's
    assert sorted(p.name for p in ledger_copy.glob(".sources.csv.*")) == [".sources.csv.lock", ".sources.csv.notes.old"]
    os.link(sources, ledger_copy / "mine.csv")
    with pytest.raises(InputError, match="has 2 hard links"):
        Outputs().will_edit(sources)


def test_a_second_name_holding_replaced_content_is_kept(ledger_copy):
    # a writer killed after its rename leaves the old content under a second name: the only copy
    # of what was there before (maybe of a pair of files written together), so it is kept
    sources = ledger_copy / "sources.csv"
    old = ledger_copy / ".sources.csv.89abcdef.old"
    old.write_bytes(sources.read_bytes())  # a file of its own, not the file in place
    set_cells(ledger_copy, "twin", {"held_hours": 8.0})
    assert _held(ledger_copy)["twin"] == 8 and old.exists()


def _killed_mid_edit(folder: str, staged) -> None:
    """An edit that stops for ever once its new file is staged (to be killed there)."""
    import time

    from procure.files import write_all
    from procure.ledger.edit import SourcesEdit

    def change(_sheet) -> None:
        staged.set()
        time.sleep(600)

    write_all([], [SourcesEdit(folder, change)])


def test_the_next_edit_removes_what_a_killed_edit_staged(ledger_copy):
    import signal

    try:
        context = multiprocessing.get_context("fork")
    except ValueError:  # pragma: no cover - no fork here
        pytest.skip("needs fork")
    staged = context.Event()
    writer = context.Process(target=_killed_mid_edit, args=(str(ledger_copy), staged))
    writer.start()
    assert staged.wait(60)
    os.kill(writer.pid, signal.SIGKILL)
    writer.join(60)
    left = sorted(p.name for p in ledger_copy.glob(".sources.csv.*.csv"))
    assert len(left) == 1  # what the killed edit staged, as it left it
    mine = [
        ledger_copy / ".sources.csv.notes.csv",
        ledger_copy / "sources.csv.bak",
        ledger_copy / ".runs.csv.a1b2c3d4.csv",
    ]
    for path in mine:
        path.write_text("the user's\n")
    set_cells(ledger_copy, "twin", {"held_hours": 7.0})
    assert _held(ledger_copy)["twin"] == 7
    assert sorted(p.name for p in ledger_copy.glob(".sources.csv.*.csv")) == [".sources.csv.notes.csv"]
    assert all(path.read_text() == "the user's\n" for path in mine)


@pytest.mark.parametrize(
    ("tail", "newline"),
    [("\n", "\n"), ("\n\n", "\n"), ("\n\n\n", "\n"), ("\n  \n", "\n"), ("\r\n\r\n", "\r\n"), ("", "\n")],
    ids=["one_end", "one_blank", "two_blanks", "spaces_line", "crlf_blank", "no_final_end"],
)
def test_an_appended_row_keeps_the_files_trailing_lines_and_line_ends(ledger_copy, tail, newline):
    path = ledger_copy / "sources.csv"
    records = path.read_text().strip("\n").split("\n")
    path.write_bytes((newline.join(records) + tail).encode())
    append_row(ledger_copy, _row("extra"))
    after = path.read_bytes().decode()
    new = after[: len(after) - len(tail)] if tail else after
    assert after.endswith(tail) and new.startswith(newline.join(records) + newline)
    added = new[len(newline.join(records) + newline) :]
    assert added.startswith("extra,own,") and added.count(newline.strip("\r") or "\n") == 0
    assert load_ledger(ledger_copy).sources["source"].tolist()[-1] == "extra"
