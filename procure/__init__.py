"""procure: buy robot-learning hours with the cost of moving them counted.

The package runs in wings along the data flow; a later wing imports an earlier one, never the
reverse:

1. :mod:`procure.pipeline`: what moving an hour costs (pure, vectorised formulas, the queue);
2. :mod:`procure.ledger`: what is for sale (ledgers and cards, sources priced through the pipeline);
3. :mod:`procure.program`: how the budget is spread (the Pyomo program, solved by HiGHS);
4. :mod:`procure.analyses`: rank, sensitivity, plans under uncertainty, and the solve of a request;
5. :mod:`procure.interfaces`: the command line, the app, their tables and plots.

:mod:`procure.errors` and :mod:`procure.output` (JSON-safe values, atomic writes) sit below all
of them. :func:`solve` is the one entry point from a ledger to a plan; ``procure solve`` calls the same
rules (:mod:`procure.analyses.solving`).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .defaults import DEFAULT_TIME_LIMIT, DEFAULT_TOLERANCE
from .errors import InputError, LedgerError, ProcureError, Reason, SolveError
from .install import DISTRIBUTION as DISTRIBUTION
from .install import install_command as install_command
from .install import version as _version

if TYPE_CHECKING:
    from collections.abc import Callable

    from .analyses.fit import Fit, fit
    from .analyses.rank import rank
    from .analyses.sensitivity import byte_price_range, sweep
    from .analyses.solving import ScenarioPlan
    from .ledger import Cluster, Ledger, cluster_with, configure, load_ledger, load_model_card, transport, variant
    from .ledger.scenarios import Scenarios
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
    "Scenarios": "ledger.scenarios",
    "bill": "pipeline",
    "pipeline": "",
    "Mode": "program",
    "Plan": "program",
    "Problem": "program",
    "Status": "program",
    "from_ledger": "program",
    "ScenarioPlan": "analyses.solving",
    "rank": "analyses.rank",
    "fit": "analyses.fit",
    "Fit": "analyses.fit",
    "sweep": "analyses.sensitivity",
    "byte_price_range": "analyses.sensitivity",
}

__all__ = [
    "Cluster",
    "Fit",
    "InputError",
    "Ledger",
    "LedgerError",
    "Mode",
    "Plan",
    "Problem",
    "ProcureError",
    "Reason",
    "ScenarioPlan",
    "Scenarios",
    "SolveError",
    "Status",
    "bill",
    "byte_price_range",
    "cluster_with",
    "configure",
    "fit",
    "from_ledger",
    "load_ledger",
    "load_model_card",
    "rank",
    "solve",
    "sweep",
    "transport",
    "variant",
]


def solve(
    ledger: Ledger | Path | str | None = None,
    *,
    budget: float | None = None,
    target: float | None = None,
    periods: Path | str | None = None,
    carry: bool = True,
    formats: Sequence[str] | None = None,
    cores_choices: Sequence[float] | None = None,
    rent: Mapping[str, float] | None = None,
    held: Mapping[str, float] | None = None,
    max_share: Mapping[str, float] | None = None,
    scenarios: Scenarios | Path | str | None = None,
    samples: int | None = None,
    seed: int = 0,
    risk_weight: float | None = None,
    risk_alpha: float | None = None,
    recourse_price_x: float | None = None,
    byte_price_x: float | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
    time_limit: float = DEFAULT_TIME_LIMIT,
    evpi: bool = True,
    scheduler: str | None = None,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Plan | ScenarioPlan:
    """What to buy next: the certified plan for a ledger and a budget (or a target).

    The same rules as ``procure solve`` (:mod:`procure.analyses.solving`): with scenarios
    (``scenarios``, ``samples``, or a ``scenarios.csv`` in the ledger folder) the plan of most
    expected, or risk-adjusted, value over them, with EVPI and VSS; ``to_dict()`` of the
    result is the object ``procure solve --json`` prints for the same options.

    Parameters
    ----------
    ledger : Ledger, path or None
        A loaded ledger, or a ledger folder; ``None`` is the shipped default ledger.
    budget : float, optional
        Dollars to spend, all in (purchase and transport) [$]. Exactly one of ``budget`` and
        ``target``.
    target : float, optional
        Value to reach at the least money [own-hour equivalents] (no scenarios).
    periods : path, optional
        A periods file (``periods.csv``, read with ``period_sources.csv`` beside it) for a plan
        over time: what to buy in each period (:mod:`procure.program.numbers.periods`); default: the
        ledger folder's ``periods.csv``, if it has one. Without ``budget`` or ``target`` the
        budget is the money the periods bring; with ``budget``, it is split by their shares.
    carry : bool, default True
        Over periods, unspent money carries over to the next period (False: spent in its
        period or lost).
    formats : sequence of str, optional
        Formats every source may be kept in, for the program to choose among: ``recorded``,
        ``model_side`` (re-encoded at the model's input side), ``decoded``; default: each
        source's ``formats`` column (:mod:`procure.program.numbers.infrastructure`).
    cores_choices : sequence of float, optional
        Cores-per-accelerator counts the program chooses one of for the cluster [cores].
    rent : mapping of str to float, optional
        Most capacity the plan may rent at its price, by capacity (``accelerator_hours``,
        ``core_hours``, ``storage_gb``) [its unit]; default: the cluster's ``rent_*`` keys.
    held : mapping of str to float, optional
        Hours already held, by source, replacing the ledger's ``held_hours`` [h].
    max_share : mapping of str to float, optional
        Mix bounds by source name or kind: at most this share of all effective hours [1].
    scenarios : Scenarios, path or None
        Scenarios of the uncertain columns: loaded, or a scenarios CSV file. Default: the
        ledger folder's ``scenarios.csv``, if it has one.
    samples : int, optional
        Instead, draw this many scenarios from the ranges of the ledger's sources.csv.
    seed : int, default 0
        Seed of ``samples``.
    risk_weight : float, optional
        Weight W of the CVaR in the objective ``(1 − W) E[V] + W CVaR`` [1], 0 to 1; default 0.
    risk_alpha : float, optional
        CVaR share A: the worst share of scenarios whose mean value is the CVaR [1]; default 0.1.
    recourse_price_x : float, optional
        Let each scenario buy more later at this multiple (≥ 1) of its all-in price [1].
    byte_price_x : float, optional
        Multiplier on the byte price [1] (0: bytes are free).
    tolerance : float, default 1e-4
        Relative gap between the plan's value and the bound no plan can beat [1].
    time_limit : float, default 120
        Wall time allowed for the solves of the plan [s].
    evpi : bool, default True
        With scenarios, also compute EVPI and VSS (one solve per scenario more).
    scheduler : str, optional
        A Dask scheduler's address for the per-scenario solves.
    workers : int, optional
        Worker processes of a local Dask cluster for them (1: all in this process).
    progress : callable, optional
        ``progress(done, total)`` as chunks of the per-scenario solves finish.

    Returns
    -------
    Plan or ScenarioPlan
        The plan, its value, bounds, λ, shadow prices and notes; with scenarios, a
        :class:`ScenarioPlan` (its ``plan``, the value in each scenario, CVaR, EVPI and VSS).

    Raises
    ------
    InputError
        A bad argument, or one that needs scenarios given without any.
    LedgerError
        A ledger or scenarios file that cannot be read.
    SolveError
        No certified plan; its ``reason`` (a :class:`Reason`) says why.

    Examples
    --------
    >>> import procure
    >>> round(procure.solve(budget=100_000).value, 1)  # doctest: +SKIP
    973.8
    """
    from .analyses.solving import solve as solve_request

    return solve_request(ledger, budget=budget, target=target, periods=periods, carry=carry, formats=formats,
                         cores_choices=cores_choices, rent=rent, held=held,
                         max_share=max_share, scenarios=scenarios, samples=samples, seed=seed,
                      risk_weight=risk_weight, risk_alpha=risk_alpha,
                         recourse_price_x=recourse_price_x, byte_price_x=byte_price_x, tolerance=tolerance,
                         time_limit=time_limit, evpi=evpi, scheduler=scheduler, workers=workers,
                         progress=progress)  # fmt: skip


def __getattr__(name: str) -> Any:
    if name == "__version__":
        globals()["__version__"] = found = _version()
        return found
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if not _LAZY[name]:
        return importlib.import_module(f".{name}", __name__)
    return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
