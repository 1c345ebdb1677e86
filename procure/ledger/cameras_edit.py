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
from .edit import ledger_lock
from .lerobot_v3 import Camera


def _cell(value: object) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.10g}"
    return str(value)


def _source_of(line: str, header: list[str]) -> str:
    """The ``source`` cell of one line of ``cameras.csv`` ("" for a blank line)."""
    cells = next(csv.reader([line]), [])
    where = header.index("source") if "source" in header else 0
    return cells[where].strip() if len(cells) > where else ""


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

        Raises
        ------
        LedgerError
            Naming the file and the source.
        """
        text = self.path.read_text(encoding="utf-8") if self.path.exists() else ""
        header = list(CAMERA_COLUMNS)
        if text.strip():
            rows = list(csv.DictReader(io.StringIO(text)))
            header = [h.strip() for h in next(csv.reader(io.StringIO(text)))]
            if any((r.get("source") or "").strip() == self._source for r in rows):
                if not self._replace:
                    raise LedgerError(
                        f"{self.path}: source = {self._source!r} has cameras already: give another --source"
                    )
                lines = text.splitlines(keepends=True)
                text = "".join([lines[0], *(ln for ln in lines[1:] if _source_of(ln, header) != self._source)])
            if not text.endswith("\n"):
                text += "\n"
        else:
            text = ",".join(header) + "\n"
        out = io.StringIO()
        writer = csv.DictWriter(out, header, extrasaction="ignore", lineterminator="\n")
        writer.writerows(self._rows)
        tmp.write_text(text + out.getvalue(), encoding="utf-8")
