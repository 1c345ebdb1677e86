"""Shared helpers: the default ledger and one-format scenarios on it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from procure import load_ledger
from procure.ledger import cluster_with, variant

DEFAULT_LEDGER = load_ledger()


def seed_state(kind: str = "own", **changes):
    """Pipeline and bill row of one format of the default ledger with cluster/format changes."""
    cluster_keys = {"model", "params", "side", "accelerator", "cores", "nvdec", "byte_price_x"}
    cl = cluster_with(DEFAULT_LEDGER.cluster, **{k: v for k, v in changes.items() if k in cluster_keys})
    fmt = {k: v for k, v in changes.items() if k not in cluster_keys}
    row, _ = variant(DEFAULT_LEDGER, kind, cluster=cl, **fmt)
    return row


@pytest.fixture
def ledger_copy(tmp_path: Path) -> Path:
    """A writable copy of the default ledger folder."""
    dest = tmp_path / "ledger"
    shutil.copytree(DEFAULT_LEDGER.path, dest)
    return dest
