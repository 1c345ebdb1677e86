"""Adding a source's cameras to ``cameras.csv`` keeps the file as the user saved it: every other
line byte for byte, its line ends (CRLF from a spreadsheet), a byte-order mark, and blank lines
at its end, at its end. The expected files are written out here by hand."""

from __future__ import annotations

import pytest

from procure.errors import LedgerError
from procure.ledger.cameras_edit import CamerasEdit
from procure.ledger.lerobot_v3 import Camera

HEADER = "source,camera,count,width,height,fps,bits_per_pixel,gop"
OLD = "droid,wrist,1,320,180,,0.2,30"


def cameras() -> list[Camera]:
    return [Camera(camera="front", width=192, height=128, codec="h264", gop=15.0, files=1, frames=90, bytes=1000,
                   bits_per_pixel=0.25),
            Camera(camera="top", width=128, height=96, codec="h264", gop=15.0, files=1, frames=90, bytes=500,
                   bits_per_pixel=0.125)]  # fmt: skip


NEW = ["so101,front,1,192,128,,0.25,15", "so101,top,1,128,96,,0.125,15"]


def edited(tmp_path, before: bytes | None, replace: bool = False, source: str = "so101") -> bytes:
    if before is not None:
        (tmp_path / "cameras.csv").write_bytes(before)
    out = tmp_path / "out.csv"
    CamerasEdit(tmp_path, source, cameras(), replace=replace).write(out)
    return out.read_bytes()


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (None, "\n".join([HEADER, *NEW]) + "\n"),  # no file: made with its header
        (f"{HEADER}\n{OLD}\n", "\n".join([HEADER, OLD, *NEW]) + "\n"),
        (f"{HEADER}\r\n{OLD}\r\n", "\r\n".join([HEADER, OLD, *NEW]) + "\r\n"),  # a spreadsheet's CRLF
        (f"{HEADER}\n{OLD}\n\n\n", "\n".join([HEADER, OLD, *NEW]) + "\n\n\n"),  # blank lines stay last
        (f"{HEADER}\r\n{OLD}\r\n\r\n", "\r\n".join([HEADER, OLD, *NEW]) + "\r\n\r\n"),
        (f"{HEADER}\n{OLD}", "\n".join([HEADER, OLD, *NEW]) + "\n"),  # a last line without its end
        (f"\ufeff{HEADER}\r\n{OLD}\r\n", "\ufeff" + "\r\n".join([HEADER, OLD, *NEW]) + "\r\n"),  # Excel's BOM
    ],
)
def test_new_cameras_go_after_the_last_record_as_the_file_writes_lines(tmp_path, before, after):
    assert edited(tmp_path, None if before is None else before.encode()) == after.encode()


def test_a_source_with_cameras_is_refused_or_replaced(tmp_path):
    before = f"{HEADER}\r\n{OLD}\r\nso101,side,1,64,48,,0.5,10\r\n\r\n".encode()
    with pytest.raises(LedgerError, match="source = 'so101' has cameras already"):
        edited(tmp_path, before)
    assert edited(tmp_path, before, replace=True) == ("\r\n".join([HEADER, OLD, *NEW]) + "\r\n\r\n").encode()
