"""Reading the Pyomo model's rows for the hand-over to HiGHS (:mod:`procure.program.model.highs`).

Each active constraint but the tangent cuts (handed over from their blocks' arrays) and the rows
made from arrays (:mod:`procure.program.model.array_rows`) is read as its columns, coefficients
and constant: a body that is one ``LinearExpression`` over distinct variables as it stands, any
other through Pyomo's public ``generate_standard_repn``. A coefficient that is an expression of
the model's mutable parameters is kept as that expression, so the hand-over can re-read it when
they change.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence
from operator import attrgetter
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.core.base.param import ParamData
from pyomo.core.expr.numeric_expr import LinearExpression
from pyomo.repn.standard_repn import generate_standard_repn

from ...errors import Reason, SolveError

#: Rows built or handed over between two looks at the clock [rows].
ROWS_BETWEEN_CLOCK_LOOKS = 256
#: The types of a coefficient that is a plain number (not an expression of parameters).
NUMBER_TYPES = frozenset({float, int, np.float64, np.int64})


def number(c: Any) -> float:
    """The value of a coefficient: a number, a parameter or an expression of parameters."""
    if type(c) in NUMBER_TYPES:
        return float(c)
    return float(c.value) if type(c) is ParamData else float(pyo.value(c))


class LiveNumbers:
    """Coefficients that are expressions of the model's mutable parameters, read together.

    Most are one parameter each (a source's cost in the budget row): those are read by their
    ``value`` in one pass; any other expression through :func:`number`.

    Parameters
    ----------
    coefs : sequence
        The coefficients, each a parameter or an expression of parameters.
    """

    def __init__(self, coefs: Sequence[Any]) -> None:
        self.count = len(coefs)
        plain = [q for q, c in enumerate(coefs) if type(c) is ParamData]
        self._plain_at = np.array(plain, dtype=np.int64)
        self._plain = [coefs[q] for q in plain]
        self._other = [(q, c) for q, c in enumerate(coefs) if type(c) is not ParamData]

    def values(self) -> np.ndarray:
        """Their values now, in the order given."""
        out = np.empty(self.count)
        out[self._plain_at] = np.fromiter(map(_VALUE, self._plain), dtype=float, count=len(self._plain))
        for q, c in self._other:
            out[q] = number(c)
        return out


_VALUE = attrgetter("value")


def columns_of(variables: Sequence[Any], col_of: dict[int, int]) -> np.ndarray:
    """The matrix column of each variable."""
    return np.fromiter(map(col_of.__getitem__, map(id, variables)), dtype=np.int32, count=len(variables))


def coefficients(coefs: Sequence[Any]) -> tuple[np.ndarray, list[int]]:
    """The values of a row's coefficients, and which are expressions of parameters."""
    live = [q for q, c in enumerate(coefs) if type(c) not in NUMBER_TYPES]
    if not live:
        return np.array(coefs, dtype=float).reshape(len(coefs)), live
    return np.fromiter(map(number, coefs), dtype=float, count=len(coefs)), live


def linear_terms(con: Any, col_of: dict[int, int]) -> tuple[Any, Sequence[Any], np.ndarray]:
    """A linear constraint's (or objective's) body as (constant, coefficients, columns), each
    variable once, read as the module states.

    Raises
    ------
    SolveError
        The body is not linear.
    """
    body = con.expr if isinstance(con, pyo.Objective) else con.body
    if type(body) is LinearExpression:
        constant, variables, coefs = body.constant, body.linear_vars, body.linear_coefs
        _release(body)
        cols = columns_of(variables, col_of)
        if len(np.unique(cols)) == len(cols):
            return constant, coefs, cols
    repn = generate_standard_repn(body, compute_values=False, quadratic=False)
    if repn.nonlinear_expr is not None or repn.quadratic_vars:
        raise SolveError(f"constraint {con.name} is not linear", Reason.INVALID)
    return repn.constant, repn.linear_coefs, columns_of(repn.linear_vars, col_of)


def column_bounds(columns: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each variable's lower and upper bound (±inf where none) and whether it is integer.

    A variable over the reals (most of the model's) has the bounds it was given, read as they
    stand (a number or an expression of parameters); any other domain (binary, non-negative,
    integer) through Pyomo's ``bounds``, which tightens them by the domain's own.
    """
    n = len(columns)
    lower, upper = np.full(n, -np.inf), np.full(n, np.inf)
    integer = np.zeros(n, dtype=bool)
    reals = pyo.Reals
    for j, v in enumerate(columns):
        lb, ub = (v.lower, v.upper) if v.domain is reals else v.bounds
        if lb is not None:
            lower[j] = lb if type(lb) is float else float(pyo.value(lb))
        if ub is not None:
            upper[j] = ub if type(ub) is float else float(pyo.value(ub))
        integer[j] = v.domain is not reals and not v.is_continuous()
    return lower, upper, integer


def _release(body: LinearExpression) -> None:
    """Let Pyomo forget ``body``: its ``LinearExpression`` keeps the last expression whose terms
    were read, and so every variable of it (300,000 objects at 100,000 sources), in a cache of
    its class, where they would outlive the model and slow every later collection of Python's
    collector. The cache is put back as Pyomo starts it, if it has one."""
    cache = getattr(LinearExpression, "_cache", None)
    if isinstance(cache, tuple) and cache and cache[0] is body:
        LinearExpression._cache = (None,) * len(cache)


def rows_of(m: pyo.ConcreteModel, deadline: float = math.inf) -> Iterator[Any]:
    """Every active constraint of the model but the tangent cuts (handed over from their
    blocks), with a look at the clock every :data:`ROWS_BETWEEN_CLOCK_LOOKS` rows.

    Raises
    ------
    SolveError
        ``Reason.TIME_LIMIT`` once ``deadline`` (:func:`time.perf_counter`) [s] has passed.
    """
    blocks = (b for b in m.block_data_objects(active=True, descend_into=True) if b.parent_component() is not m.cuts)
    rows = (con for b in blocks for con in b.component_data_objects(pyo.Constraint, active=True, descend_into=False))
    for q, con in enumerate(rows):
        if q % ROWS_BETWEEN_CLOCK_LOOKS == 0 and time.perf_counter() > deadline:
            raise SolveError("out of time: the time limit was reached while the model was handed to HiGHS",
                             Reason.TIME_LIMIT)  # fmt: skip
        yield con


def timed_rows(m: pyo.ConcreteModel, name: str, index: Sequence[Any], rule: Any, deadline: float) -> None:
    """``m.<name>``, a constraint over the sets ``index`` whose rows ``rule(m, *i)`` gives, built
    row by row with a look at the clock every :data:`ROWS_BETWEEN_CLOCK_LOOKS` rows: a family of
    hundreds of thousands of rows (periods × scenarios × sources) stops at ``deadline``
    (:func:`time.perf_counter`) [s] rather than after it. A rule may return
    ``Constraint.Skip``.

    Raises
    ------
    SolveError
        ``Reason.TIME_LIMIT`` once the deadline has passed.
    """
    c = pyo.Constraint(*index)
    setattr(m, name, c)
    for q, i in enumerate(c.index_set()):
        if q % ROWS_BETWEEN_CLOCK_LOOKS == 0 and time.perf_counter() > deadline:
            raise SolveError(f"out of time: the time limit was reached while the model's {name} rows were built",
                             Reason.TIME_LIMIT)  # fmt: skip
        row = rule(m, *i) if isinstance(i, tuple) else rule(m, i)
        if row is not pyo.Constraint.Skip:
            c[i] = row
