"""Answers built on the program: how sources rank, how the plan moves with an input.

* :mod:`procure.analyses.rank`: sources ranked by volume, value, transport share or price;
* :mod:`procure.analyses.sensitivity`: re-solves across an input, and byte-price ranging.

The sensitivity module needs the solver and loads when first used.
"""

from __future__ import annotations

import importlib
from typing import Any

from .rank import RANK_BY, RANK_COLUMNS, rank, ranking_table

_LAZY = {"sweep": "sensitivity", "byte_price_range": "sensitivity", "PARAMETERS": "sensitivity"}

__all__ = ["RANK_BY", "RANK_COLUMNS", "rank", "ranking_table", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
