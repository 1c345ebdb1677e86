"""The infrastructure rows of the model: purchase options, the cores and format choices, rent.

Components added to the one model of :func:`procure.program.model.build.build` when it is built with
purchase options (:class:`procure.program.numbers.infrastructure.Infrastructure`): the set ``O`` of
options (source, format, cores count) and ``q[o]`` the hours bought of each, ``kept[s]`` tying
``x[s]`` (the source's hours, on its value curve) to them (``x_s = Σ_{o of s} q_o``); with several
cores counts ``core[c]`` (binary, ``one_count``: exactly one) and ``by_count[o]``
(``q_o ≤ U_o core_c``); for a source kept in one of several formats ``keep[s, f]`` (binary,
``one_format[s]``: exactly one) and ``by_format[o]`` (``q_o ≤ U_o keep_sf``, ``U_o`` the
model's bound on ``q_o``); ``rented[r]`` the capacity rented; the money row ``budget_row[0]``
and the capacity rows ``capacity[r, 0]`` in the options. No I/O and no solve here.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo

from ...errors import Reason, SolveError
from ...ledger.schema import MOST_HOURS
from ..numbers.bounds import CurveArrays, afford, model_bound
from ..numbers.infrastructure import Infrastructure
from ..rows import has_row
from . import array_rows
from .array_rows import Terms


def add_options(m: pyo.ConcreteModel, inf: Infrastructure, a: CurveArrays) -> None:
    """``O``, ``q``, ``kept``; ``C``, ``core``, ``one_count``, ``by_count``; ``KF``, ``keep``,
    ``one_format``, ``by_format``; ``Rr``, ``rented`` (see the module)."""
    n = inf.n
    # No option is bought beyond what the budget buys at its cost: a range that holds for the
    # budget the model is built for (a larger one rebuilds it, see BuiltModel.budget_dependent),
    # and keeps the big-M of the choice rows no larger than it need be.
    upper = np.minimum(a.upper[inf.source], afford(inf.cost, float(inf.base.budget or 0.0)))
    bound = model_bound(upper, inf.base.column("available_hours")[inf.source])
    pairs = sorted({(int(i), str(f)) for i, f in zip(inf.source, inf.format, strict=True)})
    formats_of: dict[int, list[str]] = {}
    for i, f in pairs:
        formats_of.setdefault(i, []).append(f)
    # a source that is not split, in one of several formats, is kept in the one chosen
    chooses = (~inf.split) & (np.array([len(formats_of.get(i, [])) for i in range(n)]) > 1)
    tied = np.ones(inf.options, bool) if len(inf.cores) > 1 else chooses[inf.source]
    wide = np.flatnonzero(tied & (upper > MOST_HOURS))  # options in a big-M row
    if len(wide):
        i = int(inf.source[wide[0]])
        name = inf.base.sources["source"].iloc[i]
        raise SolveError(
            f"{name!r} could take {upper[wide[0]]:.3g} h (what the budget buys, its availability unlimited), more than "
            f"the {MOST_HOURS:.0e} h a choice of cores or formats is made over reliably: give it available_hours",
            Reason.INVALID,
        )
    m.O = pyo.Set(initialize=range(inf.options), ordered=True)
    m.q = pyo.Var(m.O, bounds=lambda _m, o: (0.0, float(bound[o])))
    of_source: list[list[int]] = [[] for _ in range(n)]
    for o, i in enumerate(inf.source.tolist()):
        of_source[i].append(o)

    def kept_rule(_m: pyo.ConcreteModel, i: int) -> object:
        return array_rows.sum_of([1.0] + [-1.0] * len(of_source[i]), [_m.x[i]] + [_m.q[o] for o in of_source[i]]) == 0

    m.kept = pyo.Constraint(m.S, rule=kept_rule)
    counts = len(inf.cores)
    m.C = pyo.Set(initialize=range(counts) if counts > 1 else [], ordered=True)
    m.core = pyo.Var(m.C, domain=pyo.Binary)
    if counts > 1:
        m.one_count = pyo.Constraint(expr=array_rows.sum_of([1.0] * counts, list(m.core.values())) == 1)

        def by_count_rule(_m: pyo.ConcreteModel, o: int) -> object:
            return array_rows.sum_of([1.0, -float(bound[o])], [_m.q[o], _m.core[int(inf.choice[o])]]) <= 0

        m.by_count = pyo.Constraint(m.O, rule=by_count_rule)
    m.KF = pyo.Set(initialize=[(i, f) for i, f in pairs if chooses[i]], dimen=2, ordered=True)
    m.keep = pyo.Var(m.KF, domain=pyo.Binary)
    m.KS = pyo.Set(initialize=np.flatnonzero(chooses).tolist(), ordered=True)

    def one_format_rule(_m: pyo.ConcreteModel, i: int) -> object:
        return array_rows.sum_of([1.0] * len(formats_of[i]), [_m.keep[i, f] for f in formats_of[i]]) == 1

    m.one_format = pyo.Constraint(m.KS, rule=one_format_rule)
    m.OF = pyo.Set(initialize=np.flatnonzero(chooses[inf.source]).tolist(), ordered=True)

    def by_format_rule(_m: pyo.ConcreteModel, o: int) -> object:
        key = (int(inf.source[o]), str(inf.format[o]))
        return array_rows.sum_of([1.0, -float(bound[o])], [_m.q[o], _m.keep[key]]) <= 0

    m.by_format = pyo.Constraint(m.OF, rule=by_format_rule)
    m.Rr = pyo.Set(initialize=list(inf.rent), ordered=True)
    m.rented = pyo.Var(m.Rr, bounds=lambda _m, r: (0.0, inf.rent[r][0]))


def add_budget_row(m: pyo.ConcreteModel, inf: Infrastructure, fees: np.ndarray) -> None:
    """``budget_row[0]``: Σ_o c_o q_o + Σ_s fee_s buy_s + Σ_r rent_r rented_r ≤ B (``fees``: of
    the sources bought on or off, in the order of ``B``)."""
    m.Kb = pyo.Set(initialize=[0], ordered=True)
    prices = np.array([inf.rent[r][1] for r in m.Rr], dtype=float)

    def budget_rule(_m: pyo.ConcreteModel, k: int) -> object:
        money = [
            Terms("q", np.arange(inf.options), np.asarray(inf.cost, dtype=float)),
            Terms("buy", np.arange(len(_m.B)), fees),
            Terms("rented", np.arange(len(prices)), prices),
        ]
        return array_rows.linear(_m, money) <= _m.budget

    m.budget_row = pyo.Constraint(m.Kb, rule=budget_rule)


def add_capacity_rows(m: pyo.ConcreteModel, inf: Infrastructure) -> list[str]:
    """``capacity[r, 0]``: Σ_o u_ro q_o + held use − rented_r ≤ C_r, the held use and the limit
    those of the cores count chosen. Returns the capacities with rows."""
    rows = [name for name, limit in inf.capacity.items() if has_row(limit, inf.usage[name], every=True)]
    m.R = pyo.Set(initialize=rows, ordered=True)
    m.Kc = pyo.Set(initialize=[0], ordered=True)
    counts = len(inf.cores)
    rented = list(inf.rent)

    def capacity_rule(_m: pyo.ConcreteModel, r: str, k: int) -> object:
        use = np.asarray(inf.usage[r], dtype=float)
        nz = np.flatnonzero(use)
        terms = [Terms("q", nz, use[nz])]
        if r in inf.rent:
            terms.append(Terms("rented", np.array([rented.index(r)]), np.array([-1.0])))
        room = np.asarray(inf.capacity[r] - inf.held_usage[r], dtype=float)
        if counts > 1:
            terms.append(Terms("core", np.arange(counts), -room))
            return array_rows.linear(_m, terms) <= 0
        return array_rows.linear(_m, terms) <= float(room[0])

    m.capacity = pyo.Constraint(m.R, m.Kc, rule=capacity_rule)
    return rows
