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
    assert OUTSIDE_DESIGN.lower() not in readme.lower()


#: Folders that are not files of the repository: tools' caches, virtual environments, and what
#: builds and test runs write.
NOT_THE_REPOSITORY = {
    ".git",
    ".venv",
    ".ci-venv",
    "__pycache__",
    ".pytest_cache",
    ".hypothesis",
    ".ruff_cache",
    ".mypy_cache",
    "build",
    "dist",
    "test-artifacts",
    "_build",
    "_api",
}


def _repository_files() -> list[Path]:
    """Every file of the repository, without what tools and builds write into the checkout."""
    return [
        path
        for path in TOP.rglob("*")
        if path.is_file()
        and not any(part in NOT_THE_REPOSITORY or part.endswith(".egg-info") for part in path.relative_to(TOP).parts)
    ]


#: The name of a design document outside the repository (spelt in two parts, so that this file
#: does not name it either).
OUTSIDE_DESIGN = "DESIGN" + ".md"


def test_no_file_names_a_design_file_outside_the_repository():
    """The design is in docs/; no file points at a design document the repository does not hold."""
    this = Path(__file__).resolve()
    naming = [
        str(path.relative_to(TOP))
        for path in _repository_files()
        if path.resolve() != this and OUTSIDE_DESIGN.lower().encode() in path.read_bytes().lower()
    ]
    assert not naming, f"these files name {OUTSIDE_DESIGN}, which is not in the repository: {naming}"


#: A path into the repository, as code and docs write it: a top-level folder, then the rest.
REPOSITORY_PATH = re.compile(
    r"(?<![\w/.])((?:benchmarks|docs|examples|ledgers|models|procure|tests)/[\w./-]*\w\.(?:csv|json|md|png|py|toml))"
)


@pytest.mark.parametrize(
    "page",
    sorted(
        str(p.relative_to(TOP))
        for folder in ("procure", "tests", "examples", "benchmarks", "ledgers", "models", "docs")
        for p in (TOP / folder).rglob("*")
        if p.suffix in {".py", ".md", ".toml"} and not {"_build", "_api", "__pycache__"} & set(p.parts)
    ),
)
def test_paths_named_in_code_and_docs_exist(page):
    """Every repository path a docstring, comment or page names is a file of the repository (a
    placeholder segment in capitals, such as ``models/NAME.toml``, stands for any file)."""
    text = (TOP / page).read_text()
    for target in REPOSITORY_PATH.findall(text):
        if any(part.split(".")[0].isupper() for part in target.split("/")):
            continue
        assert (TOP / target).exists(), f"{page} names a file the repository does not hold: {target}"


#: A section of a page as code and pages name it: ``docs/PAGE.md``, "Heading", the heading whole
#: or its part before a colon (a name wrapped over lines, comment marks and indentation included,
#: is read as one line).
SECTION_REFERENCE = re.compile(r'docs/([\w-]+\.md)`{0,2}, "([^"]+)"')


def _headings(page: str) -> set[str]:
    """The headings of a page of docs/, without their ``#`` marks, each also by its part before a
    colon."""
    found = re.findall(r"^#+\s+(.+?)\s*$", (TOP / "docs" / page).read_text(), flags=re.MULTILINE)
    return set(found) | {h.split(":")[0] for h in found if ":" in h}


def test_a_section_reference_can_fail():
    """The reference pattern reads a name wrapped over comment lines, and a name no page holds is
    not among the headings."""
    wrapped = 'see ``docs/program.md``, "Plans\n    #: over periods"'
    one_line = re.sub(r"\s*\n\s*(?:#:?\s*)?", " ", wrapped)
    assert SECTION_REFERENCE.findall(one_line) == [("program.md", "Plans over periods")]
    assert "Plans over periods" in _headings("program.md")
    assert "Plans over decades" not in _headings("program.md")
    assert "Codecs" in _headings("pipeline.md")


@pytest.mark.parametrize(
    "page",
    sorted(
        str(p.relative_to(TOP))
        for folder in ("procure", "examples", "benchmarks", "docs")
        for p in (TOP / folder).rglob("*")
        if p.suffix in {".py", ".md"} and not {"_build", "_api", "__pycache__"} & set(p.parts)
    ),
)
def test_sections_named_in_code_and_docs_exist(page):
    """Every section a docstring, comment or page names by its heading is a heading of that page."""
    text = re.sub(r"\s*\n\s*(?:#:?\s*)?", " ", (TOP / page).read_text())
    for doc, heading in SECTION_REFERENCE.findall(text):
        assert (TOP / "docs" / doc).exists(), f"{page} names a page docs/ does not hold: {doc}"
        assert heading in _headings(doc), f"{page} names a section docs/{doc} does not have: {heading!r}"
