"""How the budget is spread: the problem's numbers, the value curves, the model, the solve.

* :mod:`procure.program.numbers.problem`: the numbers of the program, from a ledger (:class:`Problem`);
* :mod:`procure.program.numbers.value`: the value curves and the shelf-life factor;
* :mod:`procure.program.numbers.scenarios`: the scenario problem, of which the deterministic problem is
  the one-scenario case, and the risk measure;
* :mod:`procure.program.numbers.bounds`: the numbers of each curve (a (scenario, source) pair) and its bounds;
* :mod:`procure.program.model.build`: the one Pyomo builder, over sources × scenarios;
* :mod:`procure.program.model.forms`: the tangent cuts and piecewise forms that bound the curves;
* :mod:`procure.program.model.highs`: the hand-over of the model to HiGHS, kept in step with it;
* :mod:`procure.program.solve.program`: :class:`Program`, which owns the model and re-solves it;
* :mod:`procure.program.solve.refine`, :mod:`procure.program.solve.target`, :mod:`procure.program.solve.diagnose`:
  refine until certified, the least money for a value, why there is no plan;
* :mod:`procure.program.readout.plan`, :mod:`procure.program.solve.stochastic`: the :class:`Plan` and the
  scenario plan, read out of a solved program.

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
