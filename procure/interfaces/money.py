"""Amounts of money as people write them: ``100000``, ``100,000``, ``$100,000``, ``100k``,
``1.5M``, ``2.5e5``.

:func:`parse_money` reads one; a text it does not read is ``None`` (the option says what it
takes). The range of the amount is the option's field's, checked after.
"""

from __future__ import annotations

import re

#: Suffixes of an amount and what they multiply it by: thousands, millions, billions [1].
MONEY_SUFFIXES = {"k": 1e3, "m": 1e6, "b": 1e9}
#: How an amount may be written: an optional ``$``, a number (thousands in groups of three
#: separated by commas, or none; a decimal part; an exponent), an optional suffix.
MONEY_TEXT = re.compile(
    r"^\$?\s*(?P<number>[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?(?:[eE][+-]?\d+)?|[+-]?\.\d+)\s*(?P<suffix>[kKmMbB])?$"
)
#: What the options that take money say they take.
MONEY_FORMS = "dollars like 100000, 100,000, $100,000, 100k or 1.5M"


def parse_money(text: str) -> float | None:
    """The amount ``text`` writes [$], or None where it is not an amount (see the module);
    ``nan`` and ``inf`` are read as such (the option's range refuses them)."""
    cleaned = text.strip()
    if cleaned.lower().lstrip("+-") in ("nan", "inf", "infinity"):
        return float(cleaned)
    found = MONEY_TEXT.match(cleaned)
    if found is None:
        return None
    value = float(found.group("number").replace(",", ""))
    suffix = found.group("suffix")
    return value * MONEY_SUFFIXES[suffix.lower()] if suffix else value
