"""A ledger folder read whole: its sources, its cluster and where it was read from.

A ledger is a folder with ``sources.csv`` (one row per source that can be bought,
:mod:`procure.ledger.sources`) and ``cluster.toml`` (the model, accelerators, decoders, prices,
training and capacity, :mod:`procure.ledger.cluster`); the columns and keys, with their units,
defaults and ranges, are :mod:`procure.ledger.schema`'s. The names those modules define are
importable from here too.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import LedgerError, quoted
from ..spec import did_you_mean
from .cameras import CAMERAS_FILE, read_cameras, with_cameras
from .cards import (
    AcceleratorCard,
    ModelCard,
    default_ledger_dir,
    load_accelerators,
    load_model_card,
    model_names,
    models_dir,
)
from .cluster import Cluster, check_field, read_cluster
from .csvcells import read_csv_text
from .schema import (
    ACCELERATOR_FIELDS,
    CLUSTER_FIELDS,
    CURVES,
    DEFAULT_BITS_PER_PIXEL,
    DEFAULT_CURVE_SHAPE,
    MOST_HOURS,
    MOST_PIXELS,
    MOST_USD,
    RANGE_SUFFIXES,
    REQUIRED_SOURCE_COLUMNS,
    SOURCE_COLUMNS,
    UNCERTAIN_COLUMNS,
    USER_COLUMN_PREFIX,
)
from .sources import check_source_value, read_sources

__all__ = [
    "ACCELERATOR_FIELDS",
    "CLUSTER_FIELDS",
    "CURVES",
    "DEFAULT_BITS_PER_PIXEL",
    "DEFAULT_CURVE_SHAPE",
    "MOST_HOURS",
    "MOST_PIXELS",
    "MOST_USD",
    "RANGE_SUFFIXES",
    "REQUIRED_SOURCE_COLUMNS",
    "SOURCE_COLUMNS",
    "UNCERTAIN_COLUMNS",
    "USER_COLUMN_PREFIX",
    "AcceleratorCard",
    "Cluster",
    "Ledger",
    "ModelCard",
    "check_field",
    "check_source_value",
    "default_ledger_dir",
    "ledger_files",
    "load_accelerators",
    "load_ledger",
    "load_model_card",
    "matches",
    "model_names",
    "models_dir",
    "read_cluster",
    "read_csv_text",
    "read_sources",
]


def matches(sources: pd.DataFrame, key: str) -> np.ndarray:
    """Rows whose ``source`` or ``kind`` is ``key`` (a mix bound, a ``--kind``) [bool per row]."""
    return ((sources["source"] == key) | (sources["kind"] == key)).to_numpy(dtype=bool)


@dataclass(frozen=True)
class Ledger:
    """A validated ledger: its sources, its cluster, where it was read from, and the cameras of
    its sources of cameras of different sizes (``cameras.csv``, :mod:`procure.ledger.cameras`;
    None without one), whose rows of ``sources`` are already their cameras' one stream."""

    sources: pd.DataFrame
    cluster: Cluster
    path: Path
    cameras: pd.DataFrame | None = None

    def source(self, name: str) -> pd.Series:
        """The row of source ``name``, else the first row of that kind."""
        s = self.sources
        hit = s[s["source"] == name]
        if hit.empty:
            hit = s[s["kind"] == name]
        if hit.empty:
            near = did_you_mean(str(name), [*s["source"].astype(str), *s["kind"].astype(str)])
            known = ", ".join(s["source"])
            raise LedgerError(f"kind = {quoted(name)} is not in {self.path / 'sources.csv'}{near}: sources are {known}")
        return hit.iloc[0]


#: The files of a ledger folder a command reads.
LEDGER_FILES = (
    "sources.csv", "cluster.toml", "scenarios.csv", "periods.csv", "period_sources.csv", "runs.csv", "cameras.csv",
)  # fmt: skip


def ledger_files(directory: Path | str | None = None, models: Path | None = None) -> list[Path]:
    """The files a command reads from a ledger folder (the default one if None) and its cards,
    which no output of the command may overwrite (:meth:`procure.output.Outputs.reads`)."""
    d = Path(directory) if directory is not None else default_ledger_dir()
    cards = models or models_dir()
    return [d / name for name in LEDGER_FILES] + sorted(cards.glob("*.toml"))


def load_ledger(directory: Path | str | None = None, models: Path | None = None) -> Ledger:
    """Read a ledger folder (``sources.csv`` and ``cluster.toml``); the default one if None."""
    d = Path(directory) if directory is not None else default_ledger_dir()
    if not d.is_dir():
        raise LedgerError(
            f"ledger = {str(d)!r} is not a folder: a ledger is a folder with sources.csv and cluster.toml"
        )
    sources, cluster = read_sources(d / "sources.csv"), read_cluster(d / "cluster.toml", models)
    if (d / CAMERAS_FILE).exists():  # a source's cameras of different sizes (procure.ledger.cameras)
        cameras = read_cameras(d / CAMERAS_FILE, sources)
        return Ledger(with_cameras(sources, cameras, cluster.gop), cluster, d, cameras)
    return Ledger(sources, cluster, d)
