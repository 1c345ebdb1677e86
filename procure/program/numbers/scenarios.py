"""The numbers of the program under uncertainty: one problem, several scenarios, a risk measure.

A scenario gives each source its exchange rate ρ, survival σ, saturation scale k and later price
(:class:`procure.ledger.scenarios.Scenarios`); hours bought now pay the ledger's price. The values
``V_ω``, the CVaR objective and the recourse: ``docs/program.md``, "Under uncertainty".
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ...defaults import DEFAULT_RISK_ALPHA, DEFAULT_RISK_WEIGHT
from ...errors import invalid
from ...ledger.scenarios import Scenarios
from ...ledger.schema import OPTION_FIELDS
from ...spec import check
from .problem import Mode, Problem


def cvar(values: np.ndarray, probability: np.ndarray, alpha: float) -> float:
    """Mean of the worst share ``alpha`` of ``values`` by probability [the values' unit].

    The scenario at the boundary counts with the part of its probability that fills ``alpha``;
    ``alpha = 1`` gives the expected value.
    """
    order = np.argsort(values, kind="stable")
    v = np.asarray(values, dtype=float)[order]
    p = np.asarray(probability, dtype=float)[order]
    taken = np.minimum(p, np.maximum(0.0, alpha - (np.cumsum(p) - p)))
    return float(taken @ v / alpha)


def risk_adjusted(values: np.ndarray, probability: np.ndarray, alpha: float, weight: float) -> float:
    """``(1 − weight) E[values] + weight CVaR_alpha[values]`` [the values' unit]."""
    expected = float(np.asarray(probability, dtype=float) @ np.asarray(values, dtype=float))
    if weight == 0:
        return expected
    return (1 - weight) * expected + weight * cvar(values, probability, alpha)


@dataclass(frozen=True)
class ScenarioProblem:
    """A budget-mode problem with scenarios.

    Attributes
    ----------
    base : Problem
        Today's numbers (the ledger's), in budget mode: costs, capacities, integer terms.
    names : tuple of str
        Scenario names.
    probability : numpy.ndarray
        Probability of each scenario [1].
    rate : numpy.ndarray
        Effective hours per recorded hour of each source in each scenario, ρσφ (scenarios ×
        sources) [1].
    saturation_hours : numpy.ndarray
        Saturation scale of each source in each scenario (scenarios × sources) [effective h].
    later_cost : numpy.ndarray
        All-in price of an hour bought later in each scenario: the scenario's price plus the
        transport bill (scenarios × sources) [$/h].
    mean_rate : numpy.ndarray
        Rate of each source in the mean scenario: the mean ρ times the mean σ times φ [1].
    risk_alpha : float
        Share of the worst scenarios the CVaR averages (0 < A ≤ 1) [1].
    risk_weight : float
        Weight of the CVaR in the objective (0 ≤ W ≤ 1) [1].
    recourse_price_x : float or None
        Hours bought later cost this times the scenario's all-in price (≥ 1); None: no hours
        are bought later.
    """

    base: Problem
    names: tuple[str, ...]
    probability: np.ndarray
    rate: np.ndarray
    saturation_hours: np.ndarray
    later_cost: np.ndarray
    mean_rate: np.ndarray
    risk_alpha: float = DEFAULT_RISK_ALPHA
    risk_weight: float = DEFAULT_RISK_WEIGHT
    recourse_price_x: float | None = None

    @property
    def count(self) -> int:
        """Number of scenarios."""
        return len(self.names)

    @property
    def n(self) -> int:
        """Number of sources."""
        return self.base.n

    @property
    def certain(self) -> bool:
        """True for the deterministic program: one scenario, no risk term, no recourse."""
        return self.count == 1 and self.risk_weight == 0 and self.recourse_price_x is None

    def settled(self) -> ScenarioProblem:
        """The same problem with its base at the first scenario's rates and scales: for the
        deterministic program (:attr:`certain`), whose paths read the base's numbers, a single
        scenario that differs from the ledger (a group of one posterior draw, a scenarios file
        of one scenario) is then what is solved."""
        return replace(self, base=_with_curves(self.base, self.rate[0], self.saturation_hours[0]))

    def with_base(self, problem: Problem) -> ScenarioProblem:
        """The same scenarios over ``problem``, the same sources repriced (a new byte price, say):
        the later all-in price of an hour moves with its transport bill."""
        shift = problem.column("transport_usd_per_hour") - self.base.column("transport_usd_per_hour")
        return replace(self, base=problem, later_cost=self.later_cost + shift[None, :])

    def objective(self, scenario_values: np.ndarray) -> float:
        """The risk-adjusted value of a plan worth ``scenario_values`` in the scenarios."""
        return risk_adjusted(scenario_values, self.probability, self.risk_alpha, self.risk_weight)

    def scenario(self, k: int) -> Problem:
        """The deterministic problem of scenario ``k`` known in advance: its rates and scales;
        each hour at today's all-in price, or with recourse at the cheaper of today's and the
        later one (M times the scenario's), for the sources that can be bought later."""
        problem = _with_curves(self.base, self.rate[k], self.saturation_hours[k])
        if self.recourse_price_x is None:
            return problem
        later = np.where(self.later_ok, self.recourse_price_x * self.later_cost[k], np.inf)
        return problem.with_cost(np.minimum(problem.cost, later))

    @property
    def later_ok(self) -> np.ndarray:
        """Sources that can be bought later: those without lots, a minimum order or a fee
        (those terms are for the purchase made now) [bool per source]."""
        b = self.base
        return (b.column("lot_hours") == 0) & (b.column("min_order_hours") == 0) & (b.column("fixed_fee_usd") == 0)

    def subset(self, indices: np.ndarray | list[int] | range) -> ScenarioProblem:
        """The scenarios ``indices`` alone, in that order, over the same base problem; their
        probabilities as they are (a part of the distribution, for per-scenario work)."""
        i = np.asarray(indices, dtype=np.int64)
        rows = {name: getattr(self, name)[i] for name in ("probability", "rate", "saturation_hours", "later_cost")}
        return replace(self, names=tuple(self.names[j] for j in i), **rows)

    def mean(self) -> Problem:
        """The deterministic problem of the mean scenario: each uncertain number's
        probability-weighted mean (ρ, σ and k separately; the rate is their product with φ)."""
        return _with_curves(self.base, self.mean_rate, self.probability @ self.saturation_hours)

    def mean_scenario(self) -> tuple[Problem, np.ndarray]:
        """The plan made for the mean scenario, with the same recourse, as a deterministic
        problem and the sources it buys now.

        In one scenario nothing is learnt by waiting: with recourse, an hour of a source that can
        be bought later costs the cheaper of today's all-in price and ``M`` times the mean later
        one (the probability-weighted mean of the scenarios' later prices), within the same
        budget and capacities. The plan of that problem buys now the sources whose today's price
        is the cheaper (a tie buys now); the others it would buy later. Without recourse: the
        deterministic :meth:`mean`, every source bought now.

        Returns
        -------
        (Problem, numpy.ndarray)
            The problem, and per source whether its hours are bought now [bool].
        """
        problem = self.mean()
        if self.recourse_price_x is None:
            return problem, np.ones(self.n, dtype=bool)
        later = np.where(self.later_ok, self.recourse_price_x * (self.probability @ self.later_cost), np.inf)
        return problem.with_cost(np.minimum(problem.cost, later)), problem.cost <= later


def one_scenario(problem: Problem) -> ScenarioProblem:
    """The deterministic program as a scenario problem: one scenario of probability 1 at the
    ledger's numbers, no risk term, no recourse."""
    return ScenarioProblem(
        base=problem,
        names=("ledger",),
        probability=np.ones(1),
        rate=problem.rate[None, :],
        saturation_hours=problem.column("saturation_hours")[None, :],
        later_cost=problem.cost[None, :],
        mean_rate=problem.rate,
        risk_weight=0.0,
    )


def _with_curves(problem: Problem, rate: np.ndarray, k: np.ndarray) -> Problem:
    s = problem.sources.assign(rate=np.asarray(rate, dtype=float), saturation_hours=np.asarray(k, dtype=float))
    return replace(problem, sources=s)


def scenario_problem(
    problem: Problem,
    scenarios: Scenarios,
    *,
    risk_alpha: float = DEFAULT_RISK_ALPHA,
    risk_weight: float = DEFAULT_RISK_WEIGHT,
    recourse_price_x: float | None = None,
) -> ScenarioProblem:
    """The scenario program of a budget-mode problem.

    Raises
    ------
    InputError
        The problem is in target mode; the scenarios are for another number of sources; ``A``
        outside (0, 1], ``W`` outside [0, 1], ``M`` below 1.
    """
    if problem.mode is not Mode.BUDGET:
        raise invalid("target", problem.target, "scenarios are solved for a budget: give --budget, not --target")
    alpha = check(OPTION_FIELDS["risk_alpha"], risk_alpha)
    weight = check(OPTION_FIELDS["risk_weight"], risk_weight)
    if recourse_price_x is not None:
        check(OPTION_FIELDS["recourse_price_x"], recourse_price_x)
    v = scenarios.values
    if v["exchange_rate"].shape[1] != problem.n:
        raise invalid("scenarios", scenarios.origin, f"are for {v['exchange_rate'].shape[1]} sources, not {problem.n}")
    phi = problem.column("shelf_life_factor")
    mean = scenarios.mean()
    return ScenarioProblem(
        base=problem,
        names=scenarios.names,
        probability=np.asarray(scenarios.probability, dtype=float),
        rate=v["exchange_rate"] * v["survival"] * phi[None, :],
        saturation_hours=np.asarray(v["saturation_hours"], dtype=float),
        later_cost=v["price_usd_per_hour"] + problem.column("transport_usd_per_hour")[None, :],
        mean_rate=mean["exchange_rate"] * mean["survival"] * phi,
        risk_alpha=alpha,
        risk_weight=weight,
        recourse_price_x=float(recourse_price_x) if recourse_price_x is not None else None,
    )
