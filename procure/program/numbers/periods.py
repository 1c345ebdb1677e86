"""The numbers of the program over periods: money by period, a run at the end of each, ageing.

An hour of source ``s`` bought in period ``τ`` counts at the run of period ``t ≥ τ`` with the
shelf-life factor of its age, ``a`` measured from the start of period ``τ`` (held hours from the
start of period 1)::

    φ_sτt = 2^(−(S_t − S_τ)/L_s) · φ(L_s, m_t)

with ``S_t`` the start of period ``t``, ``m_t`` its months and ``φ(L, m)`` the mean of ``2^(−a/L)``
over ``[0, m]`` (:func:`procure.program.numbers.value.shelf_life_factor`). The money ``b_t`` is the
budget split by the periods' shares (all of it at the start of period 1 when no money is given).
The program these numbers state: ``docs/program.md``, "Plans over periods".
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ...errors import Reason, SolveError, invalid
from ...ledger.periods import PERIOD_CAPACITIES, Periods
from .problem import CAPACITIES, HELD_FIT_MARGIN, Problem
from .scenarios import ScenarioProblem
from .value import shelf_life_factor


def age_factors(shelf_life_months: np.ndarray, months: np.ndarray) -> np.ndarray:
    """Shelf-life factor of an hour bought in period ``τ`` at the run of period ``t``, per source,
    ``φ[τ, t, s]`` (0 where ``τ > t``) [1].

    Parameters
    ----------
    shelf_life_months : numpy.ndarray
        Shelf life of each source, L (inf = never stale) [months].
    months : numpy.ndarray
        Length of each period [months].
    """
    L = np.asarray(shelf_life_months, dtype=float)
    m = np.asarray(months, dtype=float)
    starts = np.concatenate([[0.0], np.cumsum(m)[:-1]])
    gap = starts[None, :] - starts[:, None]  # S_t − S_τ
    mean = np.asarray(shelf_life_factor(L[None, :], m[:, None]), dtype=float)  # [t, s]
    with np.errstate(invalid="ignore"):
        decay = np.where(np.isinf(L)[None, None, :], 1.0, np.exp2(-np.maximum(gap, 0.0)[:, :, None] / L[None, None, :]))
    out = decay * mean[None, :, :]
    return np.where((gap >= 0)[:, :, None], out, 0.0)


@dataclass(frozen=True)
class PeriodProblem:
    """A budget-mode problem over periods (see the module).

    Attributes
    ----------
    base : Problem
        The ledger's numbers, in budget mode, its budget the money of all periods ``B``; its
        price column is each source's cheapest price over the periods (it bounds the hours the
        money buys).
    names : tuple of str
        Period names, in time order.
    months : numpy.ndarray
        Length of each period [months].
    share : numpy.ndarray
        Share of the money arriving at the start of each period [1] (sums to 1).
    weight : numpy.ndarray
        Weight of each run's value [1].
    price : numpy.ndarray
        Purchase price of each source in each period (periods × sources) [$/h].
    available : numpy.ndarray
        Most hours of each source bought in each period (periods × sources; inf = no bound) [h].
    capacity : dict of str to numpy.ndarray
        Limit of each capacity at each period's run (inf = unlimited) [its unit].
    age : numpy.ndarray
        ``φ[τ, t, s]`` of :func:`age_factors` [1].
    carry : bool
        Unspent money carries over to the next period.
    scenario_names : tuple of str
        With scenarios (:func:`with_scenarios`), their names; one scenario, the ledger's, without.
    probability : numpy.ndarray or None
        :attr:`chance` [1]; None: one scenario.
    scenario_quality, scenario_scale, scenario_price : numpy.ndarray or None
        :attr:`qualities` [1], :attr:`scales` [effective h] and :attr:`prices` [$/h] as given;
        None: the ledger's (:attr:`price` in every scenario).
    """

    base: Problem
    names: tuple[str, ...]
    months: np.ndarray
    share: np.ndarray
    weight: np.ndarray
    price: np.ndarray
    available: np.ndarray
    capacity: dict[str, np.ndarray]
    age: np.ndarray
    carry: bool = True
    scenario_names: tuple[str, ...] = ("ledger",)
    probability: np.ndarray | None = None
    scenario_quality: np.ndarray | None = None
    scenario_scale: np.ndarray | None = None
    scenario_price: np.ndarray | None = None

    # The attributes the refinement reads of every formulation.
    risk_weight = 0.0
    recourse_price_x = None
    certain = False

    @property
    def periods(self) -> int:
        """Number of periods, T."""
        return len(self.names)

    @property
    def scenarios(self) -> int:
        """Number of scenarios, K (1 without)."""
        return len(self.scenario_names)

    @property
    def count(self) -> int:
        """Number of runs over all scenarios, K T: each (scenario, period) run is a block of
        curves, ``b = ω T + t``."""
        return self.scenarios * self.periods

    @property
    def chance(self) -> np.ndarray:
        """Probability of each scenario [1]."""
        return np.ones(1) if self.probability is None else self.probability

    @property
    def qualities(self) -> np.ndarray:
        """ρσ of each source in each scenario (scenarios × sources) [1]."""
        return self.quality[None, :] if self.scenario_quality is None else self.scenario_quality

    @property
    def scales(self) -> np.ndarray:
        """Saturation scale of each source in each scenario (scenarios × sources) [effective h]."""
        k = self.base.column("saturation_hours")
        return k[None, :] if self.scenario_scale is None else self.scenario_scale

    @property
    def prices(self) -> np.ndarray:
        """Price of each source in each scenario and period (scenarios × periods × sources) [$/h]."""
        return self.price[None, :, :] if self.scenario_price is None else self.scenario_price

    @property
    def block_weight(self) -> np.ndarray:
        """Weight of each run's value in the objective, π_ω w_t, per block ``b = ω T + t`` [1]."""
        return (self.chance[:, None] * self.weight[None, :]).ravel()

    @property
    def n(self) -> int:
        """Number of sources."""
        return self.base.n

    @property
    def quality(self) -> np.ndarray:
        """Effective hours per fresh recorded hour, ρσ [1 per source]."""
        return self.base.column("exchange_rate") * self.base.column("survival")

    @property
    def bill(self) -> np.ndarray:
        """Transport bill one bought hour pays at each run it is trained on [$/h per source]."""
        return self.base.column("transport_usd_per_hour")

    @property
    def money(self) -> np.ndarray:
        """Money arriving at the start of each period at the program's budget [$]."""
        return float(self.base.budget or 0.0) * self.share

    def objective(self, run_values: np.ndarray) -> float:
        """The plan's value: the weighted sum of the runs' values, per block (expected over the
        scenarios) [own-hour equivalents]."""
        return float(self.block_weight @ np.asarray(run_values, dtype=float))

    def with_base(self, problem: Problem) -> PeriodProblem:
        """Not offered: prices by period are the periods file's (a sweep rebuilds)."""
        raise invalid("reprice", "periods", "a plan over periods is priced by its periods file: re-read it to reprice")

    def spend_matrix(self, scenario: int = 0) -> np.ndarray:
        """Money of period ``t`` spent by one hour bought in period ``τ``, ``[t, τ, s]`` [$/h], in
        a scenario: its price in ``τ`` when ``t = τ`` plus its bill at run ``t`` when ``τ ≤ t``."""
        T = self.periods
        out = np.where(np.tri(T, dtype=bool)[:, :, None], self.bill[None, None, :], 0.0)
        out[range(T), range(T)] += self.prices[scenario]
        return out


def period_problem(problem: Problem, periods: Periods, *, carry: bool = True) -> PeriodProblem:
    """The program over ``periods`` of a budget-mode problem (its budget the money of all
    periods: give it as the sum of the periods' money, or another total split by their shares).

    Raises
    ------
    InputError
        The problem is in target mode with scenarios, or its sources are not the periods'.
    SolveError
        The hours held break a period's capacity (infeasible, with the period and figures).
    """
    if periods.price.shape[1] != problem.n:
        raise invalid("periods", periods.origin, f"are for {periods.price.shape[1]} sources, not {problem.n}")
    T = periods.count
    money = periods.money
    share = money / money.sum() if money.sum() > 0 else np.eye(T)[0]
    price = np.where(np.isnan(periods.price), problem.column("price_usd_per_hour")[None, :], periods.price)
    capacity = {}
    for name in CAPACITIES:
        limit = np.full(T, float(problem.capacity[name]))
        given = periods.capacity.get(name) if name in PERIOD_CAPACITIES else None
        if given is not None:
            limit = np.where(np.isnan(given), limit, given)
        capacity[name] = limit
        used = float(problem.usage(name) @ problem.held)
        over = np.flatnonzero(used > limit * (1 + HELD_FIT_MARGIN))
        if len(over):
            t = int(over[0])
            unit = CAPACITIES[name][1]
            raise SolveError(
                f"infeasible: in period {periods.names[t]!r} the hours already held need {used:,.1f} {unit} of "
                f"{name}, the period's capacity is {limit[t]:,.1f} {unit}: raise it in {periods.origin} or lower "
                "held_hours",
                Reason.INFEASIBLE,
            )
    s = problem.sources.assign(price_usd_per_hour=price.min(axis=0))
    base = replace(problem, sources=s, capacity={k: float(v.max()) for k, v in capacity.items()})
    return PeriodProblem(
        base=base,
        names=periods.names,
        months=periods.months,
        share=share,
        weight=periods.value_weight,
        price=price,
        available=periods.available,
        capacity=capacity,
        age=age_factors(problem.column("shelf_life_months"), periods.months),
        carry=carry,
    )


def single_period(pp: PeriodProblem) -> Problem:
    """The problem of a one-period program as today's program states it: the period's prices,
    availability and capacities, and the shelf-life factor over its months (with the cluster's
    horizon as its length, the ledger's problem itself)."""
    if pp.count != 1:
        raise invalid("periods", pp.count, "a single-period problem has one period and no scenarios")
    p = pp.base
    phi, available = pp.age[0, 0], np.minimum(p.column("available_hours"), pp.available[0])
    s = p.sources.assign(
        price_usd_per_hour=pp.price[0], available_hours=available, shelf_life_factor=phi, rate=pp.quality * phi
    )
    capacity = {name: float(limit[0]) for name, limit in pp.capacity.items()}
    return replace(p, sources=s, capacity=capacity)


def with_scenarios(pp: PeriodProblem, sp: ScenarioProblem) -> PeriodProblem:
    """The periods under scenarios: the first period's purchases are one decision for all
    scenarios, later periods' may differ by scenario. A scenario's exchange rates, survivals
    and saturation scales hold at every run; its prices are those of hours bought after the
    first period (each period's price scaled by the scenario's price over the ledger's).
    The objective is the expected value. The base problem's prices become the cheapest of any
    period in any scenario, so that what the money buys at them bounds every plan's hours (as
    :func:`period_problem` makes them the cheapest of any period).

    Raises
    ------
    InputError
        A risk weight above 0 or a recourse price: plans over periods maximise the expected value
        and buy later in their own periods.
    """
    if sp.risk_weight > 0:
        raise invalid("risk_weight", sp.risk_weight, "a plan over periods maximises the expected value: 0")
    if sp.recourse_price_x is not None:
        raise invalid("recourse_price_x", sp.recourse_price_x, "over periods, later hours are bought in later periods")
    base_price = pp.base.column("price_usd_per_hour")
    ledger_price = sp.base.column("price_usd_per_hour")
    later = sp.later_cost - sp.base.column("transport_usd_per_hour")[None, :]  # the scenarios' prices
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(ledger_price[None, :] > 0, later / np.where(ledger_price > 0, ledger_price, 1.0)[None, :], 1.0)
    prices = np.repeat(pp.price[None, :, :], sp.count, axis=0)
    zero = ledger_price[None, :] == 0
    prices[:, 1:, :] = np.where(zero[:, None, :], later[:, None, :], prices[:, 1:, :] * scale[:, None, :])
    s = pp.base.sources.assign(price_usd_per_hour=np.minimum(base_price, prices.min(axis=(0, 1))))
    phi = sp.base.column("shelf_life_factor")
    with np.errstate(divide="ignore", invalid="ignore"):
        quality = np.where(phi[None, :] > 0, sp.rate / np.where(phi > 0, phi, 1.0)[None, :], 0.0)
    return replace(pp, base=replace(pp.base, sources=s), scenario_names=sp.names,
                   probability=np.asarray(sp.probability, dtype=float), scenario_quality=quality,
                   scenario_scale=np.asarray(sp.saturation_hours, dtype=float), scenario_price=prices)  # fmt: skip
