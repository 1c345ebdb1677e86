"""The numbers of the procurement program, assembled from a ledger (no solver here).

One array per source, in ledger order; capacities by name. :func:`price_ledger` prices every
source's transport bill with :func:`procure.ledger.transport` and its effective-hour rate with
:func:`procure.program.numbers.value.effective_rate`; :func:`from_ledger` adds the question (a budget
or a target). The concepts every later step shares are computed here, once: the all-in cost,
the members of a mix bound, the least cost of a minimum order, the value per dollar of the
next hour.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum

import numpy as np
import pandas as pd

from ...errors import InputError, Reason, SolveError, invalid
from ...ledger import Cluster, Ledger, matches
from ...ledger.schema import OPTION_FIELDS, SOURCE_COLUMNS
from ...ledger.variants import check_byte_price_x, ledger_transport
from ...pipeline import bill
from ...spec import check, did_you_mean
from . import value
from .question import PRICE_COLUMNS, checked_question, checked_shares

#: How the library says to give a budget or a target; the command line says it in its options.
EXACTLY_ONE = "budget=B or target=V"


class Mode(StrEnum):
    """What the program is asked: the most value for a budget, or the least money for a value."""

    BUDGET = "budget"
    TARGET = "target"


def check_budget(budget: float) -> float:
    """A budget as a float [$] (``OPTION_FIELDS["budget"]``), or an :class:`InputError` naming it."""
    return check(OPTION_FIELDS["budget"], budget)


def require_sources(problem: Problem) -> None:
    """Nothing, or a :class:`SolveError` where the problem has no source to buy."""
    if problem.n == 0:
        raise SolveError("the ledger has no sources: nothing to buy", Reason.INVALID)


#: Key under which a problem keeps its all-in cost beside its columns.
ALL_IN = "all-in cost"
#: Key under which a problem keeps its curve names beside its columns.
CURVES = "curve names"
#: Hours of a source below which it counts as not bought (no fee, position "zero") [h]:
#: ten times HiGHS's primal feasibility tolerance.
BOUGHT_HOURS = 1e-6
#: Share of a capacity by which the hours already held may exceed it (the float rounding of
#: their sum) before they are said not to fit [1].
HELD_FIT_MARGIN = 1e-12

#: The capacities of the program: name → (column of the transport table, unit).
CAPACITIES = {
    "accelerator_hours": ("accelerator_hours", "accelerator-h"),
    "core_hours": ("core_hours", "core-h"),
    "storage_gb": ("gb_per_hour", "GB"),
}


@dataclass(frozen=True)
class Problem:
    """What the program allocates: sources, their costs, value curves, uses and limits.

    Attributes
    ----------
    sources : pandas.DataFrame
        One row per source with ``source``, ``kind``, ``price_usd_per_hour`` [$/h],
        ``transport_usd_per_hour`` [$/h] (of which ``bytes_usd_per_hour``,
        ``cores_usd_per_hour`` and ``idle_usd_per_hour``), ``transport_share`` (transport
        bill / price [1]), ``rate`` (ρσφ,
        effective h per h), ``exchange_rate`` (ρ), ``survival`` (σ), ``shelf_life_factor`` (φ)
        [1], ``shelf_life_months`` (L) [months], ``held_hours``, ``available_hours`` (inf = unlimited),
        ``lot_hours``, ``min_order_hours`` [h], ``fixed_fee_usd`` [$], ``curve``,
        ``saturation_hours`` [effective h], ``curve_shape`` [1], and per recorded hour the
        use of each capacity (columns named as :data:`CAPACITIES`).
    capacity : dict of str to float
        Limit of each capacity in the training window (inf = unlimited).
    budget : float or None
        Dollars to spend [$], in budget mode.
    target : float or None
        Value to reach [own-hour equivalents], in target mode (the least money that does).
    max_share : dict of str to float
        Mix bounds: sources whose ``source`` or ``kind`` is the key take at most this share
        of all effective hours [1].
    """

    sources: pd.DataFrame
    capacity: dict[str, float]
    budget: float | None = None
    target: float | None = None
    max_share: dict[str, float] = field(default_factory=dict)
    _columns: dict[str, np.ndarray] = field(default_factory=dict, init=False, repr=False, compare=False)
    #: Shared by the problems that differ from one another in prices and bills only
    #: (:data:`procure.program.numbers.question.PRICE_COLUMNS`), so that
    #: :func:`procure.program.numbers.question.other_numbers` need not compare them.
    _numbers: object = field(default_factory=object, init=False, repr=False, compare=False)

    def __getstate__(self) -> dict[str, object]:
        """What a pickle keeps: the problem without the columns read so far (each is read again,
        read-only, from :attr:`sources` when asked), so that a pickled problem is no larger than
        its numbers and no copy of a column comes back writable."""
        state = dict(self.__dict__)
        state["_columns"] = {}
        return state

    @property
    def n(self) -> int:
        """Number of sources."""
        return len(self.sources)

    @property
    def mode(self) -> Mode:
        """Budget or target mode; an :class:`InputError` if the problem asks neither."""
        if self.budget is not None:
            return Mode.BUDGET
        if self.target is not None:
            return Mode.TARGET
        raise InputError(f"budget and target: give exactly one ({EXACTLY_ONE})")

    def _kept(self, key: str, make: Callable[[], np.ndarray]) -> np.ndarray:
        """The array ``make()`` gives, made once and kept read-only under ``key``."""
        found = self._columns.get(key)
        if found is None:
            found = self._columns[key] = make()
            found.setflags(write=False)
        return found

    def column(self, name: str) -> np.ndarray:
        """One column of :attr:`sources` as floats, in source order (read once, read-only: a
        problem is not changed in place; :func:`dataclasses.replace` makes a new one)."""
        return self._kept(name, lambda: self.sources[name].to_numpy(dtype=float, copy=True))

    @property
    def curves(self) -> np.ndarray:
        """Each source's value curve by name, as strings (read once, read-only)."""
        return self._kept(CURVES, lambda: self.sources["curve"].to_numpy(str))

    def asking(self, **question: object) -> Problem:
        """The same sources asked another question: any of ``budget``, ``target``,
        ``max_share`` or ``capacity`` replaced (the columns read so far kept, being the same)."""
        if "sources" in question:
            raise invalid("question", "sources", "must leave the sources alone (see with_byte_price_x, with_cost)")
        out = replace(self, **checked_question(self.sources, question, CAPACITIES))  # type: ignore[arg-type]
        out._columns.update(self._columns)
        if "capacity" not in question:
            object.__setattr__(out, "_numbers", self._numbers)
        return out

    def _with_columns(self, changed: Mapping[str, np.ndarray]) -> Problem:
        """The problem with the columns ``changed`` (name → new values) replaced: the other
        columns read so far are kept, the all-in cost not."""
        out = replace(self, sources=self.sources.assign(**{k: np.asarray(v, dtype=float) for k, v in changed.items()}))
        out._columns.update({k: v for k, v in self._columns.items() if k not in changed and k != ALL_IN})
        if set(changed) <= set(PRICE_COLUMNS):
            object.__setattr__(out, "_numbers", self._numbers)
        return out

    @property
    def rate(self) -> np.ndarray:
        """Effective hours per recorded hour, ρσφ [1]."""
        return self.column("rate")

    @property
    def held(self) -> np.ndarray:
        """Hours already held [h]."""
        return self.column("held_hours")

    @property
    def least_order_usd(self) -> np.ndarray:
        """What the smallest purchase of each source costs, all in [$]: its minimum order or
        one lot, whichever is larger, plus its fixed fee (0 for a continuous source)."""
        hours = np.maximum(self.column("min_order_hours"), self.column("lot_hours"))
        return self.cost * hours + self.column("fixed_fee_usd")

    def bought(self, hours: np.ndarray) -> np.ndarray:
        """Sources bought at all: more than :data:`BOUGHT_HOURS` hours [bool per source]."""
        return np.asarray(hours, dtype=float) > BOUGHT_HOURS

    def spend(self, hours: np.ndarray) -> float:
        """What buying ``hours`` of each source costs, all in [$]: hours at price plus transport,
        and the fixed fee of each source bought."""
        hours = np.asarray(hours, dtype=float)
        return float(self.cost @ hours + self.column("fixed_fee_usd") @ self.bought(hours))

    def members(self, key: str) -> np.ndarray:
        """Sources whose name or kind is ``key`` (a mix bound) [bool per source]."""
        return matches(self.sources, key)

    def marginal_value_per_usd(self, hours: np.ndarray, extra_usd: np.ndarray | float = 0.0) -> np.ndarray:
        """Value per dollar of the next hour of each source [own-hour equivalents per $].

        Parameters
        ----------
        hours : numpy.ndarray
            Hours bought so far, held hours excluded [h].
        extra_usd : numpy.ndarray or float, default 0
            Charges added to the all-in price of an hour, such as capacity shadow prices
            converted to dollars [$/h].
        """
        return value.per_usd(self.marginal_value(hours), self.cost + extra_usd)

    def marginal_value(self, hours: np.ndarray) -> np.ndarray:
        """Value of the next recorded hour of each source, ``v'(ρσφ(held + hours)) · ρσφ``
        [own-hour equivalents per h].

        Parameters
        ----------
        hours : numpy.ndarray
            Hours bought so far, held hours excluded [h].
        """
        e = self.rate * (self.held + hours)
        dv = value.derivative(e, self.curves, self.column("saturation_hours"), self.column("curve_shape"))
        return np.asarray(dv, dtype=float) * self.rate

    @property
    def cost(self) -> np.ndarray:
        """All-in price of one hour bought, purchase + transport [$/h] (read-only)."""
        return self._kept(ALL_IN, lambda: self.column("price_usd_per_hour") + self.column("transport_usd_per_hour"))

    def usage(self, name: str) -> np.ndarray:
        """Use of capacity ``name`` per recorded hour [its unit per h]."""
        return self.column(name)

    def with_byte_price_x(self, multiplier: float) -> Problem:
        """The problem with the byte price multiplied by ``multiplier`` (transport rescaled).

        The bytes term of each hour's transport bill scales, its cores and idle terms do not
        (:func:`procure.pipeline.bill.at_byte_price_x`, the one route by which a multiplier
        reaches a price).
        """
        multiplier = check_byte_price_x(multiplier)
        bytes_, bill_ = bill.at_byte_price_x(self.column("bytes_usd_per_hour"), self.column("cores_usd_per_hour"),
                                             self.column("idle_usd_per_hour"), multiplier)  # fmt: skip
        share = bill.share_of_price(bill_, self.column("price_usd_per_hour"))
        changed = {"bytes_usd_per_hour": bytes_, "transport_usd_per_hour": bill_, "transport_share": share}
        return self._with_columns(changed)

    def with_cost(self, cost: np.ndarray) -> Problem:
        """The problem with new all-in prices per hour [$/h], the purchase price taking the
        change: the transport bill and its terms stay what the pipeline says they are."""
        price = np.asarray(cost, dtype=float) - self.column("transport_usd_per_hour")
        share = bill.share_of_price(self.column("transport_usd_per_hour"), price)
        return self._with_columns({"price_usd_per_hour": price, "transport_share": share})


def cluster_capacity(cluster: Cluster) -> dict[str, float]:
    """The limit of each capacity (:data:`CAPACITIES`) in the training window on ``cluster`` [its unit]."""
    return {"accelerator_hours": cluster.accelerator_hours_capacity, "core_hours": cluster.core_hours_capacity,
            "storage_gb": cluster.storage_gb}  # fmt: skip


def _held_overrides(sources: pd.DataFrame, held: Mapping[str, float]) -> pd.DataFrame:
    out = sources.copy()
    for name, hours in held.items():
        hit = out["source"] == name
        if not hit.any():
            near = did_you_mean(str(name), out["source"].astype(str))
            raise invalid("held", name, f"not a source of the ledger{near}: sources are {', '.join(out['source'])}")
        out.loc[hit, "held_hours"] = check(SOURCE_COLUMNS["held_hours"], hours, f"held {name}")
    return out


def price_ledger(
    ledger: Ledger,
    *,
    cluster: Cluster | None = None,
    held: Mapping[str, float] | None = None,
) -> Problem:
    """The program's numbers for a ledger, without a question (neither budget nor target).

    Parameters
    ----------
    ledger : Ledger
        Sources and cluster.
    cluster : Cluster, optional
        Instead of the ledger's (see :func:`procure.ledger.cluster_with`).
    held : mapping of str to float, optional
        Hours already held, by source, replacing the ledger's ``held_hours``.
    """
    cl = cluster or ledger.cluster
    rows = ledger.sources if held is None else _held_overrides(ledger.sources, held)
    table = ledger_transport(ledger, rows, cl)
    s = pd.DataFrame(
        {
            "source": table["source"].astype(str),
            "kind": table["kind"].astype(str),
            "price_usd_per_hour": table["price_usd_per_hour"].astype(float),
            "transport_usd_per_hour": table["bill_usd"].astype(float),
            "bytes_usd_per_hour": table["bytes_usd"].astype(float),
            "idle_usd_per_hour": table["idle_usd"].astype(float),
            "cores_usd_per_hour": table["cores_usd"].astype(float),
            "transport_share": table["share"].astype(float),
            "rate": value.effective_rate(
                table["exchange_rate"], table["survival"], table["shelf_life_months"], cl.horizon_months
            ).astype(float),
            "exchange_rate": table["exchange_rate"].astype(float),
            "survival": table["survival"].astype(float),
            "shelf_life_factor": value.shelf_life_factor(table["shelf_life_months"], cl.horizon_months).astype(float),
            "shelf_life_months": table["shelf_life_months"].astype(float),
            "held_hours": table["held_hours"].astype(float),
            "available_hours": table["available_hours"].astype(float),
            "lot_hours": table["lot_hours"].astype(float),
            "min_order_hours": table["min_order_hours"].astype(float),
            "fixed_fee_usd": table["fixed_fee_usd"].astype(float),
            "curve": table["curve"].astype(str),
            "saturation_hours": table["saturation_hours"].astype(float),
            "curve_shape": table["curve_shape"].astype(float),
        }
    )
    for name, (column, _unit) in CAPACITIES.items():
        s[name] = table[column].astype(float)
    return Problem(sources=s, capacity=cluster_capacity(cl))


def from_ledger(
    ledger: Ledger,
    *,
    budget: float | None = None,
    target: float | None = None,
    cluster: Cluster | None = None,
    held: Mapping[str, float] | None = None,
    max_share: Mapping[str, float] | None = None,
) -> Problem:
    """Assemble the program's numbers from a ledger, with its question.

    Parameters
    ----------
    ledger : Ledger
        Sources and cluster.
    budget : float, optional
        Dollars to spend [$]. Exactly one of ``budget`` and ``target``.
    target : float, optional
        Value to reach at least cost [own-hour equivalents].
    cluster : Cluster, optional
        Instead of the ledger's (see :func:`procure.ledger.cluster_with`).
    held : mapping of str to float, optional
        Hours already held, by source, replacing the ledger's ``held_hours``.
    max_share : mapping of str to float, optional
        Mix bounds by source name or kind: at most this share of all effective hours.

    Raises
    ------
    InputError
        Neither or both of budget and target; a negative budget; a target ≤ 0; a held
        override for an unknown source; a mix bound outside [0, 1] or naming nothing.
    """
    if (budget is None) == (target is None):
        raise InputError(f"budget and target: give exactly one ({EXACTLY_ONE})")
    budget = check_budget(budget) if budget is not None else None
    target = check(OPTION_FIELDS["target"], target) if target is not None else None
    priced = price_ledger(ledger, cluster=cluster, held=held)
    return replace(priced, budget=budget, target=target, max_share=checked_shares(priced.sources, max_share or {}))
