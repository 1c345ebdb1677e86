"""docs/fit.md documents every setting of a fit and every column of runs.csv."""

from __future__ import annotations

from pathlib import Path

import pytest

from procure.analyses.fit.settings import FIT_SETTINGS
from procure.ledger.runs import RUN_COLUMNS

DOC = (Path(__file__).resolve().parents[2] / "docs" / "fit.md").read_text()


@pytest.mark.parametrize("name", list(FIT_SETTINGS))
def test_every_setting_is_documented_with_its_range(name):
    spec = FIT_SETTINGS[name]
    lines = [line for line in DOC.splitlines() if line.startswith(f"| `{name}` |")]
    assert len(lines) == 1
    assert spec.allowed() in lines[0] and (spec.unit or "—") in lines[0]


@pytest.mark.parametrize("name", [*RUN_COLUMNS, "hours_<source>"])
def test_every_runs_column_is_documented(name):
    assert any(line.startswith(f"| `{name}` |") for line in DOC.splitlines())
