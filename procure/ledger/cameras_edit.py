"""Adding a source's cameras to a ledger's ``cameras.csv`` (:mod:`procure.ledger.cameras`), as
an import appends a dataset whose cameras differ in size.

The rows are added at the end of the file (made, with its header, if there is none), under
the file's own lock, every other line kept as it was; a source that has cameras there already
is refused, as ``--append`` refuses a source name ``sources.csv`` has.
"""

from __future__ import annotations

import contextlib
import csv
import io
import math
from collections.abc import Sequence
from pathlib import Path

from ..errors import LedgerError
from .cameras import CAMERA_COLUMNS, CAMERAS_FILE
from .csvtext import BOM, decode, split_cells, split_records
from .edit import ledger_lock
from .lerobot_v3 import Camera


def _cell(value: object) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.10g}"
    return str(value)


class CamerasEdit:
    """The rows of one source's cameras added to ``cameras.csv`` (a :class:`procure.output.FileEdit`).

    Parameters
    ----------
    folder : path-like
        The ledger folder.
    source : str
        The source the cameras record (a row ``sources.csv`` has, or gets in the same commit).
    cameras : sequence of Camera
        Each camera, one a row: its name, size, bits per pixel and keyframe interval; its frame
        rate is the source's.
    replace : bool, default False
        Put them in place of the source's rows there (``calibrate --write``); else a source
        with rows there is refused.
    """

    def __init__(self, folder: str | Path, source: str, cameras: Sequence[Camera], replace: bool = False) -> None:
        self.path = Path(folder) / CAMERAS_FILE
        self._source = source
        self._replace = replace
        self._rows = [
            {"source": source, "camera": c.camera, "count": "1", "width": str(c.width), "height": str(c.height),
             "fps": "", "bits_per_pixel": _cell(c.bits_per_pixel), "gop": _cell(c.gop)}
            for c in cameras
        ]  # fmt: skip

    def lock(self) -> contextlib.AbstractContextManager[Path]:
        """The lock of ``cameras.csv`` (:func:`procure.ledger.edit.ledger_lock`), whether the
        file is there yet or not."""
        return ledger_lock(self.path)

    def write(self, tmp: Path) -> None:
        """The file as it is now with the rows added; refused if the source has cameras there.

        Every other record stays byte for byte as it was, with its own line end, and so does a
        byte-order mark; the new rows go after the last record that is not blank (blank lines
        after it stay at the end) and end as the header does (CRLF in a file saved by Excel).

        Raises
        ------
        LedgerError
            Naming the file and the source: the source has cameras there, or the file is not
            UTF-8 text.
        """
        bom, text = decode(self.path, self.path.read_bytes()) if self.path.exists() else (False, "")
        sheet = split_records(text)
        bodies, endings = list(sheet.bodies), list(sheet.endings)
        if not any(b.strip() for b in bodies):  # no file, or only blank lines: a header first
            bodies, endings = [",".join(CAMERA_COLUMNS)], ["\n"]
        header = [c.strip() for c in split_cells(bodies[0])]
        where = header.index("source") if "source" in header else 0

        def of_source(body: str) -> bool:
            cells = split_cells(body)
            return len(cells) > where and cells[where].strip() == self._source

        if any(of_source(b) for b in bodies[1:]):
            if not self._replace:
                raise LedgerError(f"{self.path}: source = {self._source!r} has cameras already: give another --source")
            kept = [0, *(k for k in range(1, len(bodies)) if not of_source(bodies[k]))]
            bodies, endings = [bodies[k] for k in kept], [endings[k] for k in kept]
        newline = endings[0] or "\n"
        last = max(k for k, body in enumerate(bodies) if k == 0 or body.strip())
        if not endings[last]:  # a last record without a line end gets one before the new rows
            endings[last] = newline
        out = io.StringIO()
        csv.DictWriter(out, header, extrasaction="ignore", lineterminator=newline).writerows(self._rows)
        rows = out.getvalue()
        texts = [b + e for b, e in zip(bodies, endings, strict=True)]
        texts.insert(last + 1, rows)
        tmp.write_bytes(((BOM if bom else "") + "".join(texts)).encode("utf-8"))
