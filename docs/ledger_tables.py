"""Rewrite the two reference tables of docs/ledger.md from the ledger's schema.

    python docs/ledger_tables.py

``tests/test_docs.py`` checks that every column and key is documented with its unit and range;
this script writes the tables so that they are.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from procure.ledger import CLUSTER_FIELDS, SOURCE_COLUMNS
from procure.ledger.periods import PERIOD_FIELDS, PERIOD_SOURCE_FIELDS

DOC = Path(__file__).with_name("ledger.md")


def _default(c) -> str:
    if c.default is None:
        return "required"
    if c.blank:
        return c.blank
    if isinstance(c.default, float) and math.isnan(c.default):
        return "(see below)"
    if isinstance(c.default, float) and 0 < c.default < 1:
        return f"{c.default:.4g}"
    return f"{c.default:g}" if isinstance(c.default, float) else str(c.default)


def source_table() -> str:
    lines = ["| column | unit | blank means | allowed | meaning |", "|---|---|---|---|---|"]
    for name, c in SOURCE_COLUMNS.items():
        lines.append(f"| `{name}` | {c.unit or '—'} | {_default(c)} | {c.allowed()} | {c.doc} |")
    return "\n".join(lines)


def cluster_table() -> str:
    lines = ["| table | key | unit | default | allowed | meaning |", "|---|---|---|---|---|---|"]
    for table, fields in CLUSTER_FIELDS.items():
        for key, f in fields.items():
            if f.default is None:
                d = "—"
            elif isinstance(f.default, bool):
                d = str(f.default).lower()
            elif isinstance(f.default, int | float):
                d = f"{f.default:g}"
            else:
                d = str(f.default)
            lines.append(f"| `[{table}]` | `{key}` | {f.unit or '—'} | {d} | {f.allowed()} | {f.doc} |")
    return "\n".join(lines)


def period_table(fields) -> str:
    lines = ["| column | unit | blank | allowed | meaning |", "|---|---|---|---|---|"]
    for name, c in fields.items():
        # A column that sources.csv has too is named with where it applies (one row per name there).
        label = f"`{name}` (by period)" if name in SOURCE_COLUMNS else f"`{name}`"
        lines.append(f"| {label} | {c.unit or '—'} | {_default(c)} | {c.allowed()} | {c.doc} |")
    return "\n".join(lines)


def main() -> None:
    text = DOC.read_text()
    # Each table from its header line to the blank line after it; the scenarios table of the
    # same page ("| column | unit | blank |") is written by hand and left as it is.
    text = re.sub(
        r"\| column \| unit \| blank means \|.*?\n\n", lambda _m: source_table() + "\n\n", text, count=1, flags=re.S
    )
    text = re.sub(r"\| table \| key \|.*?\n\n", lambda _m: cluster_table() + "\n\n", text, count=1, flags=re.S)
    for marker, fields in (("periods.csv", PERIOD_FIELDS), ("period_sources.csv", PERIOD_SOURCE_FIELDS)):
        text = re.sub(rf"(<!-- {marker} -->\n).*?\n\n", lambda m, f=fields: m.group(1) + period_table(f) + "\n\n",
                      text, count=1, flags=re.S)  # fmt: skip
    DOC.write_text(text)


if __name__ == "__main__":
    main()
