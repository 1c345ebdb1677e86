"""procure: buy robot-learning hours with the cost of moving them counted.

The package runs in wings along the data flow; a later wing imports an earlier one, never the
reverse:

1. :mod:`procure.pipeline`: what moving an hour costs (pure, vectorised formulas, the queue);
2. :mod:`procure.ledger`: what is for sale (ledgers and cards, sources priced through the pipeline);
3. :mod:`procure.program`: how the budget is spread (the Pyomo program, solved by HiGHS);
4. :mod:`procure.analyses`: rank and sensitivity;
5. :mod:`procure.interfaces`: the command line, its tables and plots.

:mod:`procure.errors` and :mod:`procure.output` (JSON-safe values, atomic writes) sit below all
of them. :func:`solve` is the one entry point from a ledger to a plan.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .defaults import DEFAULT_TOLERANCE
from .errors import InputError, LedgerError, ProcureError, SolveError

if TYPE_CHECKING:
    from .analyses.rank import rank
    from .analyses.sensitivity import byte_price_range, sweep
    from .ledger import Cluster, Ledger, cluster_with, configure, load_ledger, load_model_card, transport, variant
    from .pipeline import bill
    from .program import Mode, Plan, Problem, Status, from_ledger

#: Public names served lazily (so that ``import procure`` and ``procure --help`` stay light),
#: and the module each comes from.
_LAZY = {
    "Cluster": "ledger",
    "Ledger": "ledger",
    "cluster_with": "ledger",
    "configure": "ledger",
    "load_ledger": "ledger",
    "load_model_card": "ledger",
    "transport": "ledger",
    "variant": "ledger",
    "bill": "pipeline",
    "pipeline": "",
    "Mode": "program",
    "Plan": "program",
    "Problem": "program",
    "Status": "program",
    "from_ledger": "program",
    "rank": "analyses.rank",
    "sweep": "analyses.sensitivity",
    "byte_price_range": "analyses.sensitivity",
}

__all__ = [
    "Cluster",
    "InputError",
    "Ledger",
    "LedgerError",
    "Mode",
    "Plan",
    "Problem",
    "ProcureError",
    "SolveError",
    "Status",
    "bill",
    "byte_price_range",
    "cluster_with",
    "configure",
    "from_ledger",
    "load_ledger",
    "load_model_card",
    "rank",
    "solve",
    "sweep",
    "transport",
    "variant",
]

__version__ = "0.1.0"


def solve(
    ledger: Ledger | Path | str | None = None,
    *,
    budget: float | None = None,
    target: float | None = None,
    held: Mapping[str, float] | None = None,
    max_share: Mapping[str, float] | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
) -> Plan:
    """What to buy next: the certified plan for a ledger and a budget (or a target).

    Parameters
    ----------
    ledger : Ledger, path or None
        A loaded ledger, or a ledger folder; ``None`` is the shipped default ledger.
    budget : float, optional
        Dollars to spend, all in (purchase and transport) [$]. Exactly one of ``budget`` and
        ``target``.
    target : float, optional
        Value to reach at the least money [own-hour equivalents].
    held : mapping of str to float, optional
        Hours already held, by source, replacing the ledger's ``held_hours`` [h].
    max_share : mapping of str to float, optional
        Mix bounds by source name or kind: at most this share of all effective hours [1].
    tolerance : float, default 1e-4
        Relative gap between the plan's value and the bound no plan can beat [1].

    Returns
    -------
    Plan
        The plan, its value, bounds, λ, shadow prices and notes.

    Examples
    --------
    >>> import procure
    >>> round(procure.solve(budget=100_000).value, 1)  # doctest: +SKIP
    973.8
    """
    from .ledger import Ledger, load_ledger
    from .program import from_ledger
    from .program.solve import solve_problem

    loaded = ledger if isinstance(ledger, Ledger) else load_ledger(ledger)
    problem = from_ledger(loaded, budget=budget, target=target, held=held, max_share=max_share)
    return solve_problem(problem, tolerance=tolerance)


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if not _LAZY[name]:
        return importlib.import_module(f".{name}", __name__)
    return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
