"""procure: buy robot-learning hours with the cost of moving them counted.

The layers (DESIGN.md §5): :mod:`procure.pipeline` and :mod:`procure.bill` (pure formulas),
:mod:`procure.ledger` (reading and validating ledgers), :mod:`procure.transport` (a ledger's
sources through the formulas), and :mod:`procure.cli` (the only module that prints).
"""

from .errors import InputError, LedgerError, ProcureError, SolveError
from .ledger import Cluster, Ledger, load_ledger, load_model_card
from .transport import configure, transport

__all__ = [
    "Cluster",
    "InputError",
    "Ledger",
    "LedgerError",
    "ProcureError",
    "SolveError",
    "configure",
    "load_ledger",
    "load_model_card",
    "transport",
]

__version__ = "0.1.0"
