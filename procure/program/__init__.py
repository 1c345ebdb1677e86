"""How the budget is spread: the problem's numbers, the value curves, the model, the solve.

The modules and their jobs are listed in ``docs/program.md``, "Code".

The modules that need Pyomo (``model``, ``solve``) load when first used, so that reading a
problem or a plan does not import the solver.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..defaults import DEFAULT_TIME_LIMIT, DEFAULT_TOLERANCE
from .numbers.problem import CAPACITIES, Mode, Problem, from_ledger, price_ledger
from .readout.plan import Plan, Status

#: Names served lazily, and the module each comes from.
_LAZY = {
    "Program": "solve.program",
    "solve_problem": "solve.program",
    "build": "model.build",
    "build_model": "model.build",
    "BuiltModel": "model.build",
    "ScenarioPlan": "solve.stochastic",
    "solve_scenarios": "solve.stochastic",
}

__all__ = [
    "CAPACITIES",
    "DEFAULT_TIME_LIMIT",
    "DEFAULT_TOLERANCE",
    "Mode",
    "Plan",
    "Problem",
    "Status",
    "from_ledger",
    "price_ledger",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
