"""``cameras.csv``: the cameras of a source, when they are not all of one size.

An optional file beside ``sources.csv``, one row per group of like cameras of a source
(:data:`CAMERA_COLUMNS`): DROID's two 1280 × 720 exterior cameras and its 640 × 480 wrist
camera are two rows of source ``droid``. A source with rows here is priced as the sum of its
cameras (:func:`procure.pipeline.cameras.equivalent`): its ``cameras``, ``width``, ``height``,
``fps``, ``bits_per_pixel`` and ``gop`` in ``sources.csv`` are replaced by the one stream that
moves, stores and decodes what its cameras do; a blank ``fps``, ``bits_per_pixel`` or ``gop``
here is the source's (a blank ``gop`` there, the cluster's). A source's cameras share its
``codec``; cameras in another codec are another source. A source without rows is as before.

Every error names the file, the line, the field, the value and what is allowed, as one line.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import LedgerError
from ..pipeline.cameras import equivalent
from ..spec import Range
from ..spec_columns import check_series
from .csvcells import read_csv_text, record_lines
from .csvtext import short
from .schema import SOURCE_COLUMNS

#: Name of the file beside ``sources.csv``.
CAMERAS_FILE = "cameras.csv"
#: The columns of ``cameras.csv``: the ranges of ``sources.csv``'s columns of the same meaning.
CAMERA_COLUMNS: dict[str, Range] = {
    "source": dataclasses.replace(SOURCE_COLUMNS["source"], doc="a source of sources.csv"),
    "camera": dataclasses.replace(SOURCE_COLUMNS["source"], name="camera", doc="the group's name, unique per source"),
    "count": dataclasses.replace(SOURCE_COLUMNS["cameras"], name="count", default=1.0, doc="cameras in the group"),
    "width": SOURCE_COLUMNS["width"],
    "height": SOURCE_COLUMNS["height"],
    "fps": dataclasses.replace(SOURCE_COLUMNS["fps"], default=math.nan, blank="the source's"),
    "bits_per_pixel": dataclasses.replace(SOURCE_COLUMNS["bits_per_pixel"], default=math.nan, blank="the source's"),
    "gop": dataclasses.replace(SOURCE_COLUMNS["gop"], blank="the source's"),
}
#: Columns of ``cameras.csv`` that hold numbers.
NUMBER_COLUMNS = tuple(n for n, c in CAMERA_COLUMNS.items() if c.kind == "number")
#: Columns of ``sources.csv`` a source's cameras replace.
REPLACED = ("cameras", "fps", "width", "height", "bits_per_pixel", "gop")


def read_cameras(path: Path | str, sources: pd.DataFrame) -> pd.DataFrame:
    """Read and validate ``cameras.csv`` against the ledger's sources.

    Returns
    -------
    pandas.DataFrame
        One row per camera group with every column of :data:`CAMERA_COLUMNS`, a blank number
        NaN (the source's value), indexed 0..n-1.

    Raises
    ------
    LedgerError
        ``path: line N: field = value is invalid: …``: a missing or unknown column, a bad
        value, a source not in sources.csv, a camera named twice for a source.
    """
    path = Path(path)
    raw = read_csv_text(path, "a ledger's cameras", NUMBER_COLUMNS)
    unknown = [c for c in raw.columns if c not in CAMERA_COLUMNS]
    missing = [n for n, c in CAMERA_COLUMNS.items() if c.required and n not in raw.columns]
    if unknown or missing:
        what = f"column {short(unknown[0])!r} is unknown" if unknown else f"column {missing[0]!r} is missing"
        raise LedgerError(f"{path}: {what}: columns are {', '.join(CAMERA_COLUMNS)}")
    keep = ~raw.isna().all(axis=1).to_numpy()
    raw = raw[keep].reset_index(drop=True)
    lines = np.asarray(record_lines(path, int(keep.size)))[keep]
    out = {}
    for name, spec in CAMERA_COLUMNS.items():
        cells = raw[name] if name in raw.columns else pd.Series([""] * len(raw), dtype=object)
        checked = check_series(spec, cells, nan_is_blank=True)
        if (row := checked.first()) >= 0:
            raise LedgerError(checked.message(row, name, f"{path}: line {lines[row]}"))
        out[name] = checked.values
    table = pd.DataFrame(out)
    known = set(sources["source"])
    seen: dict[tuple[str, str], int] = {}
    for i, (source, camera) in enumerate(zip(table["source"], table["camera"], strict=True)):
        if source not in known:
            raise LedgerError(f"{path}: line {lines[i]}: source = {short(source)!r} is not in sources.csv: "
                              f"sources are {', '.join(sorted(known))}")  # fmt: skip
        if (source, camera) in seen:
            first = seen[(source, camera)]
            raise LedgerError(f"{path}: line {lines[i]}: camera = {short(camera)!r} of source {short(source)!r} is "
                              f"a duplicate of line {first}: a source names each camera once")  # fmt: skip
        seen[(source, camera)] = int(lines[i])
    return table


def with_cameras(sources: pd.DataFrame, cameras: pd.DataFrame, cluster_gop: float) -> pd.DataFrame:
    """The sources with each one that has cameras replaced by its cameras' one stream.

    Parameters
    ----------
    sources : pandas.DataFrame
        Validated rows of ``sources.csv``.
    cameras : pandas.DataFrame
        :func:`read_cameras`'s table.
    cluster_gop : float
        The cluster's keyframe interval, for a camera and source that give none [frames].
    """
    out = sources.copy()
    for source, group in cameras.groupby("source", sort=False):
        i = int(np.flatnonzero((out["source"] == source).to_numpy())[0])
        own = out.iloc[i]
        own_gop = float(own["gop"]) if not math.isnan(float(own["gop"])) else cluster_gop

        def filled(column: str, default: float, g: pd.DataFrame = group) -> np.ndarray:
            values = g[column].to_numpy(dtype=float)
            return np.where(np.isnan(values), default, values)

        gop = filled("gop", own_gop)
        stream = equivalent(
            group["count"].to_numpy(dtype=float), group["width"].to_numpy(dtype=float),
            group["height"].to_numpy(dtype=float), filled("fps", float(own["fps"])),
            filled("bits_per_pixel", float(own["bits_per_pixel"])), gop,
        )  # fmt: skip
        if np.all(gop == gop[0]) and math.isnan(float(own["gop"])) and np.all(group["gop"].isna()):
            stream["gop"] = math.nan  # every camera at the cluster's: the source stays so
        for column in REPLACED:
            out.loc[out.index[i], column] = stream[column]
    return out


def camera_bill(cameras: pd.DataFrame | None, row: pd.Series, cluster_gop: float) -> list[dict[str, object]]:
    """Each camera group of one source as ``procure bill`` lists it: its format, the GB an
    hour it stores and its share of the source's decoding (pixels × frames decoded per frame
    used, as the source is read); empty for a source without cameras.

    Parameters
    ----------
    cameras : pandas.DataFrame or None
        The ledger's ``cameras.csv`` (:func:`read_cameras`).
    row : pandas.Series
        The source's evaluated row (its ``source``, ``read``, ``stored``, and its format
        before its cameras replaced it are not needed: the blanks take the row's values).
    cluster_gop : float
        The cluster's keyframe interval [frames].
    """
    if cameras is None:
        return []
    group = cameras[cameras["source"] == row["source"]]
    if group.empty:
        return []
    fps = group["fps"].fillna(float(row["fps"])).to_numpy(dtype=float)
    bpp = group["bits_per_pixel"].fillna(float(row["bits_per_pixel"])).to_numpy(dtype=float)
    gop = group["gop"].fillna(float(row["gop"]) if not math.isnan(float(row["gop"])) else cluster_gop).to_numpy()
    count, pixels = group["count"].to_numpy(dtype=float), (group["width"] * group["height"]).to_numpy(dtype=float)
    random = row["read"] == "random" and row["stored"] == "video"
    g = (gop.astype(float) + 1.0) / 2.0 if random else np.ones(len(group))
    work = count * fps * pixels * g
    return [
        {"camera": str(c), "count": float(n), "width": float(w), "height": float(h), "fps": float(f),
         "bits_per_pixel": float(b), "gop": float(G), "gb_per_hour": float(n * f * 3600 * p * b / 8 / 1e9),
         "decode_share": float(x / work.sum())}
        for c, n, w, h, f, b, G, p, x in zip(group["camera"], count, group["width"], group["height"], fps, bpp, gop,
                                              pixels, work, strict=True)
    ]  # fmt: skip
