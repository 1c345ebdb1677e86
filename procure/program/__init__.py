"""How the budget is spread: the problem's numbers, the value curves, the model, the solve.

* :mod:`procure.program.problem`: the numbers of the program, from a ledger (:class:`Problem`);
* :mod:`procure.program.value`: the value curves and the shelf-life factor;
* :mod:`procure.program.model`: the Pyomo builder (variables, named rows, cuts, piecewise forms);
* :mod:`procure.program.solve`: the refine-until-certified loop (:class:`Program`);
* :mod:`procure.program.plan`: the :class:`Plan` and its readout.

The modules that need Pyomo (``model``, ``solve``) load when first used, so that reading a
problem or a plan does not import the solver.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..defaults import DEFAULT_TIME_LIMIT, DEFAULT_TOLERANCE
from .plan import Plan, Status
from .problem import CAPACITIES, Mode, Problem, from_ledger, price_ledger

#: Names served lazily, and the module each comes from.
_LAZY = {
    "Program": "solve",
    "solve_problem": "solve",
    "build": "model",
    "build_model": "model",
    "BuiltModel": "model",
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
