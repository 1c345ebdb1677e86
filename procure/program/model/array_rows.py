"""The model's large linear rows, built and handed over from the same arrays.

A budget, capacity or mix row and the objective have a term per source or curve: 100,000 terms
at 100,000 sources. Built as a Pyomo ``LinearExpression`` and then read back for HiGHS term by
term, each row pays Pyomo's bookkeeping per term twice. Here one function, :func:`linear`, makes
a row's body from :class:`Terms` (an indexed variable of the model, the positions of its items
in their index order, and their coefficients: numbers, or the model's mutable parameters or
expressions of them) and keeps those terms beside the body on the model. The hand-over
(:mod:`procure.program.model.highs`) then reads such a row's columns as the variable's first
column plus the positions, and its coefficients as the arrays the body was built from
(:func:`row_terms`), where any other row is read through Pyomo's expression.
Both the body and what the hand-over reads come from the one call, so they cannot differ; a
test checks the handed-over matrix against every row read through Pyomo alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression, MonomialTermExpression

from .read import column_bounds, number

#: The model's attribute that keeps, by the identity of a body :func:`linear` made, the body
#: (so that identity is never reused while the record stands) and its terms.
RECORD = "row_terms"
#: The model's attribute that keeps each indexed variable's or parameter's items in index order,
#: so a row's items are found by position without listing the component again.
ITEMS = "component_items"
#: The model's attribute that keeps, by name, the bounds of each variable :func:`variable` made.
BOUNDS = "variable_bounds"


@dataclass(frozen=True)
class Terms:
    """Terms ``Σ_q coef_q · var[item at_q]`` of a row.

    Attributes
    ----------
    var : str
        The name of a variable of the model's top block (indexed, or scalar with position 0).
    at : numpy.ndarray
        Positions of its items in their index order (int64).
    coef : numpy.ndarray or None
        The coefficients, one per position; None where they are ``exprs``.
    exprs : list or None
        The coefficients as the model's mutable parameters or expressions of them, one per
        position (the sources' costs ``c_s``; with recourse, ``c_s − M c'_sk``): re-read when
        they change.
    """

    var: str
    at: np.ndarray
    coef: np.ndarray | None = None
    exprs: list[Any] | None = None


def start(m: pyo.ConcreteModel) -> None:
    """Give a new model the record of its rows made from arrays (empty)."""
    setattr(m, RECORD, {})
    setattr(m, ITEMS, {})
    setattr(m, BOUNDS, {})


def variable(m: pyo.ConcreteModel, name: str, index: Any, lower: np.ndarray, upper: np.ndarray) -> None:
    """``m.<name>``, a variable over the reals indexed by ``index``, each item within its bounds
    ``lower``, ``upper`` (±inf: none) in index order, the bounds kept beside it for the hand-over
    (:meth:`Layout.bounds`). Its bounds are set here only."""
    lower, upper = np.array(lower, dtype=float), np.array(upper, dtype=float)

    def shared(values: np.ndarray) -> bool:
        """Every item has the same bound: the variable's own (where finite)."""
        return not len(values) or bool(np.all(values == values[0]))

    one = [float(v[0]) if len(v) and shared(v) and np.isfinite(v[0]) else None for v in (lower, upper)]
    setattr(m, name, pyo.Var(index, bounds=tuple(one)))
    for values, set_bound in ((lower, "setlb"), (upper, "setub")):
        if not shared(values):
            for v, b in zip(items(m, name), values.tolist(), strict=True):
                getattr(v, set_bound)(b if math.isfinite(b) else None)
    getattr(m, BOUNDS)[name] = (lower, upper)


def items(m: pyo.ConcreteModel, name: str) -> list[Any]:
    """The items of the model's component ``name`` in index order (kept once listed)."""
    kept: dict[str, list[Any]] = getattr(m, ITEMS)
    if name not in kept:
        kept[name] = list(getattr(m, name).values())
    return kept[name]


def sum_of(coefs: Sequence[Any], variables: Sequence[Any]) -> LinearExpression:
    """``Σ coefs · variables`` as one ``LinearExpression``: a small row, read back through its
    expression by the hand-over."""
    return LinearExpression(constant=0.0, linear_coefs=list(coefs), linear_vars=list(variables))


def linear(m: pyo.ConcreteModel, groups: Sequence[Terms]) -> LinearExpression:
    """``Σ`` of every group's terms as one ``LinearExpression``, recorded with its terms."""
    args: list[Any] = []
    for g in groups:
        found = items(m, g.var)
        variables = [found[p] for p in g.at.tolist()]
        coefs = g.exprs
        if coefs is None:  # numbers
            assert g.coef is not None
            if np.all(g.coef == 1.0):  # a term of coefficient 1 is the variable itself
                args += variables
                continue
            coefs = g.coef.tolist()
        args.extend(map(MonomialTermExpression, zip(coefs, variables, strict=True)))
    body = LinearExpression(args)
    getattr(m, RECORD)[id(body)] = (body, tuple(groups))
    return body


class Layout:
    """The matrix columns of a model: every item of every variable, the variables in the model's
    own order (its top block's first, in the order declared, then each sub-block's), each
    variable's items in index order; the order in which Pyomo lists the model's variables.

    Attributes
    ----------
    first : dict of str to int
        The column of the first item of each variable of the model's top block, by name.
    count : int
        Columns.
    """

    def __init__(self, m: pyo.ConcreteModel) -> None:
        self.model = m
        self._parts: list[tuple[Any, int]] = []
        self.first: dict[str, int] = {}
        col = 0
        for var in m.component_objects(pyo.Var, active=True, descend_into=True):
            if var.parent_block() is m:
                self.first[var.local_name] = col
            self._parts.append((var, col))
            col += len(var)
        self.count = col
        self._col_of: dict[int, int] = {}

    def col_of(self) -> dict[int, int]:
        """The column of each variable item, by its identity (made once asked)."""
        if not self._col_of:
            for var, first in self._parts:
                self._col_of.update((id(v), j) for j, v in enumerate(var.values(), first))
        return self._col_of

    def bounds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each column's lower and upper bound (±inf where none) and whether it is integer: those
        of the variables :func:`variable` made from their arrays, any other read through Pyomo
        (:func:`procure.program.model.read.column_bounds`)."""
        lower, upper = np.full(self.count, -np.inf), np.full(self.count, np.inf)
        integer = np.zeros(self.count, dtype=bool)
        made = getattr(self.model, BOUNDS, {})
        for var, first in self._parts:
            at = slice(first, first + len(var))
            name = var.local_name if var.parent_block() is self.model else None
            if name in made:
                lower[at], upper[at] = made[name]
            else:
                lower[at], upper[at], integer[at] = column_bounds(list(var.values()))
        return lower, upper, integer


def row_terms(
    m: pyo.ConcreteModel, body: Any, first: dict[str, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[Any]] | None:
    """A body :func:`linear` made, as its columns, its coefficients now, which of its terms
    have a parameter for coefficient and those parameters; None where ``body`` was not made
    from arrays."""
    record = getattr(m, RECORD, {}).get(id(body))
    if record is None or record[0] is not body:
        return None
    cols, coefs, live_at = [], [], []
    params: list[Any] = []
    at = 0
    for g in record[1]:
        cols.append(first[g.var] + np.asarray(g.at, dtype=np.int64))
        if g.exprs is not None:  # parameters, or expressions of them
            coefs.append(np.fromiter(map(number, g.exprs), dtype=float, count=len(g.exprs)))
            live_at.append(at + np.arange(len(g.exprs)))
            params += g.exprs
        else:
            assert g.coef is not None
            coefs.append(np.asarray(g.coef, dtype=float))
        at += len(g.at)
    live = np.concatenate(live_at) if live_at else np.zeros(0, dtype=np.int64)
    return np.concatenate(cols), np.concatenate(coefs), live, params


class Arguments:
    """Where each curve's value is read: at its own hours ``w`` (the curves ``own``, in the order
    of ``Jw``) or at its source's hours bought now ``x``.

    Parameters
    ----------
    n : int
        Sources.
    own : numpy.ndarray
        The curves with hours of their own, ascending.
    count : int
        Curves (scenarios × sources, or runs × sources).
    """

    def __init__(self, n: int, own: np.ndarray, count: int) -> None:
        self.n = n
        self.own = np.asarray(own, dtype=np.int64)
        self._rank = np.full(count, -1, dtype=np.int64)
        self._rank[self.own] = np.arange(len(self.own))

    def variables(self, m: pyo.ConcreteModel) -> list[Any]:
        """Per curve, the variable its value is read at (``w[j]`` or ``x[s]``)."""
        xs, ws = items(m, "x"), items(m, "w")
        return [ws[r] if r >= 0 else xs[j % self.n] for j, r in enumerate(self._rank.tolist())]

    def columns(self, first: dict[str, int]) -> np.ndarray:
        """Per curve, the matrix column of the variable its value is read at, the variables'
        first columns being ``first`` (:class:`Layout`)."""
        curves = np.arange(len(self._rank), dtype=np.int64)
        return np.where(self._rank >= 0, first["w"] + self._rank, first["x"] + curves % self.n)

    def terms(self, curves: np.ndarray, coef: np.ndarray | None, exprs: list[Any] | None = None) -> list[Terms]:
        """``Σ coef_q · (hours of curve curves_q)`` as terms in ``w`` and in ``x``; ``exprs``: the
        coefficients as expressions of the model's parameters instead (``coef`` None)."""
        curves = np.asarray(curves, dtype=np.int64)
        rank = self._rank[curves]
        mine = rank >= 0
        groups = []
        for var, at, sel in (("w", rank[mine], mine), ("x", curves[~mine] % self.n, ~mine)):
            if exprs is not None:
                groups.append(Terms(var, at, exprs=[exprs[q] for q in np.flatnonzero(sel).tolist()]))
            else:
                groups.append(Terms(var, at, np.asarray(coef, dtype=float)[sel]))
        return [g for g in groups if len(g.at)]
