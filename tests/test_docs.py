"""The documentation in the repository: complete for the ledger, and every link resolves."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from procure.ledger import CLUSTER_FIELDS, SOURCE_COLUMNS

TOP = Path(__file__).resolve().parents[1]
LEDGER_DOC = (TOP / "docs" / "ledger.md").read_text()


def _row(name: str, table: str | None = None) -> str:
    """The line of docs/ledger.md that documents a column (or a key of a cluster table)."""
    first = f"| `[{table}]` | `{name}` |" if table else f"| `{name}` |"
    lines = [line for line in LEDGER_DOC.splitlines() if line.startswith(first)]
    assert len(lines) == 1, f"{first} is documented {len(lines)} times"
    return lines[0]


@pytest.mark.parametrize("name", list(SOURCE_COLUMNS))
def test_every_source_column_is_documented(name):
    column = SOURCE_COLUMNS[name]
    row = _row(name)
    assert column.allowed() in row
    assert (column.unit or "—") in row


@pytest.mark.parametrize(("table", "key"), [(t, k) for t, keys in CLUSTER_FIELDS.items() for k in keys])
def test_every_cluster_key_is_documented(table, key):
    field = CLUSTER_FIELDS[table][key]
    row = _row(key, table)
    assert field.allowed() in row
    assert (field.unit or "—") in row


@pytest.mark.parametrize("page", ["README.md", *[f"docs/{p.name}" for p in sorted((TOP / "docs").glob("*.md"))]])
def test_links_point_into_the_repository(page):
    text = (TOP / page).read_text()
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        assert not target.startswith(("http://", "https://")), f"{page} links outside the repository: {target}"
        assert (TOP / page).parent.joinpath(target).exists(), f"{page} links to a missing file: {target}"


def test_readme_links_the_design():
    readme = (TOP / "README.md").read_text()
    for doc in ("docs/pipeline.md", "docs/program.md", "docs/ledger.md", "docs/certification.md"):
        assert f"]({doc})" in readme
    assert "DESIGN.md" not in readme
