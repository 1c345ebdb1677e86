"""The coupling rows of the program as arrays: which capacities have a row, each mix bound's
coefficients, the rows of every scenario as labelled arrays (:class:`ScenarioRows`; ``A x ≤ b``
of one scenario, :func:`coupling_rows`), and hours pulled back inside them.

Every reader of the rows outside the Pyomo model (the dual, the wait-and-see values, the exact
hours, the plan's readout, the diagnostics) and the model's row builders take them from here:

* a capacity has a row where its limit is finite and some source uses it
  (:func:`capacity_rows_of`);
* a mix bound ``Σ_{s in G} e_s ≤ share · Σ_s e_s`` on effective hours ``e_s = rate_s (h0_s + x_s)``
  is the row ``Σ_s rate_s (member_s − share) x_s ≤ −Σ_s rate_s (member_s − share) h0_s``, its
  coefficients :func:`mix_coefficients` in any shape of rates (one scenario, scenarios × sources,
  periods × sources);
* the budget row prices each hour at its all-in cost.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .numbers.problem import Problem

#: Passes of :func:`within_rows` over the broken coupling rows [1].
WITHIN_ROWS_PASSES = 3


def has_row(limit: float | np.ndarray, use: np.ndarray, *, every: bool = False) -> bool:
    """Whether a capacity has a row: its limit finite and some source using it.

    Parameters
    ----------
    limit : float or numpy.ndarray
        The capacity's limit, or its limit in each period or at each cores count [its unit].
    use : numpy.ndarray
        Each source's use of it per hour (per purchase option) [its unit per h].
    every : bool, default False
        Over periods (False), finite in some period: a period whose limit is not skips its row.
        Over cores counts (True), finite at every count: the one row's right-hand side is the
        chosen count's, which a count with no limit would leave undefined.
    """
    finite = np.isfinite(limit)
    return bool((finite.all() if every else finite.any()) and (np.asarray(use) > 0).any())


def capacity_rows_of(problem: Problem) -> list[str]:
    """The capacities of ``problem`` that have a row (:func:`has_row`), in its order."""
    return [name for name, limit in problem.capacity.items() if has_row(limit, problem.usage(name))]


def mix_coefficients(rate: np.ndarray, members: np.ndarray, share: float) -> np.ndarray:
    """A mix bound's row coefficients ``rate · (member − share)`` [effective h per h].

    Parameters
    ----------
    rate : numpy.ndarray
        Effective hours per hour bought, ρσφ, in any shape whose last axis is the sources [1].
    members : numpy.ndarray
        Per source, whether it counts towards the bound [bool].
    share : float
        The bound's share of all effective hours [1].
    """
    return np.asarray(rate, dtype=float) * (np.asarray(members, dtype=float) - share)


def capacity_room(limit: float, use: np.ndarray, held: np.ndarray) -> float:
    """A capacity row's right-hand side: what the hours already held leave of its ``limit``,
    ``C − u·h0`` [its unit].

    Parameters
    ----------
    limit : float
        The capacity's limit (over periods, that period's) [its unit].
    use : numpy.ndarray
        Each source's use of it per hour [its unit per h].
    held : numpy.ndarray
        Hours already held [h].
    """
    return float(limit - np.asarray(use, dtype=float) @ np.asarray(held, dtype=float))


def mix_row(rate: np.ndarray, members: np.ndarray, share: float, held: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A mix bound's row ``coef · x ≤ rhs`` over the hours bought, the hours ``held`` counted:
    ``coef`` of :func:`mix_coefficients`, ``rhs = −coef · h0`` [effective h per h, effective h].

    ``rate`` (and ``held``, broadcast against it) may carry leading axes (scenarios); ``rhs``
    then has them."""
    coef = mix_coefficients(rate, members, share)
    return coef, -np.sum(coef * np.asarray(held, dtype=float), axis=-1)


@dataclass(frozen=True)
class CouplingRows:
    """The coupling rows ``A x ≤ b`` of a one-scenario program (dense: a handful of rows): one
    scenario of :class:`ScenarioRows`, without its scenario axis or row kinds.

    Attributes
    ----------
    names : list of str
        As in :class:`ScenarioRows`.
    A : numpy.ndarray
        Coefficients, rows × sources [$ per h, unit per h, effective h per h].
    b : numpy.ndarray
        Right-hand sides, rows [$, unit, effective h].
    """

    names: list[str]
    A: np.ndarray
    b: np.ndarray


@dataclass(frozen=True)
class ScenarioRows:
    """The coupling rows of every scenario as labelled arrays over the scenario axis: in scenario
    ``k``, row ``r`` reads ``Σ_s A[k, r, s] y_ks ≤ b[k, r]``, ``y_k`` the hours its rows are read
    at (the hours bought now; with recourse, those the scenario ends with).

    The model's capacity and mix rows (:mod:`procure.program.model.scenario_rows`) are made from
    these arrays; its budget row takes the model's cost parameters, which a re-solve moves: row 0
    here is the same costs when the rows were made.

    Attributes
    ----------
    names : list of str
        ``budget``, then each capacity with a row, then ``max_share:KEY`` per mix bound.
    kinds : list of str
        Per row: ``budget``, ``capacity`` or ``mix``.
    A : numpy.ndarray
        Coefficients, scenarios × rows × sources [$ per h, unit per h, effective h per h].
    b : numpy.ndarray
        Right-hand sides, scenarios × rows, held hours counted [$, unit, effective h].
    """

    names: list[str]
    kinds: list[str]
    A: np.ndarray
    b: np.ndarray

    def of(self, kind: str) -> list[int]:
        """The rows of ``kind`` (``budget``, ``capacity``, ``mix``), in order."""
        return [r for r, k in enumerate(self.kinds) if k == kind]

    def scenario(self, k: int) -> CouplingRows:
        """Scenario ``k``'s rows ``A x ≤ b``."""
        return CouplingRows(list(self.names), self.A[k], self.b[k])


def scenario_rows(problem: Problem, rates: np.ndarray, budget: float, capacity_names: list[str]) -> ScenarioRows:
    """The budget row (``budget`` on the right), the rows of ``capacity_names`` and the mix rows
    of each scenario whose effective hours per hour are a row of ``rates`` (scenarios × sources)."""
    p = problem
    rates = np.atleast_2d(np.asarray(rates, dtype=float))
    count, n = rates.shape
    kinds = ["budget", *(["capacity"] * len(capacity_names)), *(["mix"] * len(p.max_share))]
    A, b = np.empty((count, len(kinds), n)), np.empty((count, len(kinds)))
    A[:, 0], b[:, 0] = p.cost, budget
    for r, name in enumerate(capacity_names, start=1):
        use = p.usage(name)
        A[:, r], b[:, r] = use, capacity_room(p.capacity[name], use, p.held)
    for g, (key, share) in enumerate(p.max_share.items(), start=1 + len(capacity_names)):
        A[:, g], b[:, g] = mix_row(rates, p.members(key), share, p.held)
    names = ["budget", *capacity_names, *(f"max_share:{key}" for key in p.max_share)]
    return ScenarioRows(names, kinds, A, b)


def coupling_rows(problem: Problem, budget: float, capacity_names: list[str]) -> CouplingRows:
    """Scenario 0's rows of :func:`scenario_rows` at the problem's own rates."""
    return scenario_rows(problem, problem.rate, budget, capacity_names).scenario(0)


def within_rows(A: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``x`` with the hours that break a coupling row scaled down until it holds.

    ``A`` is (problems × rows × sources), ``b`` (problems × rows), ``x`` (problems × sources).
    A broken row r's sources with a positive coefficient are scaled by
    ``β_r = (b_r + N_r) / P_r`` (``P_r``, ``N_r`` the row's positive and negative parts at ``x``),
    each source by the least β of the rows it breaks, in :data:`WITHIN_ROWS_PASSES` passes; NaN
    rows where a broken row cannot be met so (``b_r + N_r < 0``). Hours that break a row by float
    noise (a plan polished to machine precision, a dual's hours) need one pass.
    """
    for _pass in range(WITHIN_ROWS_PASSES):
        positive = np.einsum("kmn,kn->km", np.maximum(A, 0.0), x)
        negative = np.einsum("kmn,kn->km", np.maximum(-A, 0.0), x)
        over = positive - negative > b
        if not over.any():
            break
        with np.errstate(divide="ignore", invalid="ignore"):
            beta = np.where(over, (b + negative) / positive, 1.0)
        beta = np.where(over & ~(beta >= 0), np.nan, np.minimum(beta, 1.0))
        # each source: the least β of the broken rows it has a positive coefficient in
        factor = np.min(np.where(A > 0, beta[:, :, None], 1.0), axis=1)
        x = x * factor
    return x


def plan_within(problem: Problem, x: np.ndarray, rates: np.ndarray | None = None) -> np.ndarray:
    """Hours ``x`` of a plan, pulled inside the rows of ``problem`` where float noise breaks one.

    A plan read from another program (the plan made for the mean scenario, valued in every
    scenario) meets that program's rows within its feasibility tolerance, and may break this
    program's by as much; fixed as they are, its hours would leave this program no plan. The
    budget row (the fees of the sources ``x`` buys taken off ``problem.budget``), the capacity
    rows and the mix rows at each row of ``rates`` (scenarios × sources; ``problem.rate`` where
    None) are met by :func:`within_rows`.

    Returns
    -------
    numpy.ndarray
        The hours, each at most the given [h]; unchanged where every row holds.
    """
    x = np.asarray(x, dtype=float)
    fee = problem.column("fixed_fee_usd") @ problem.bought(x)
    rows = scenario_rows(problem, problem.rate if rates is None else rates, float(problem.budget or 0.0) - float(fee),
                         capacity_rows_of(problem))  # fmt: skip
    plain, mix = rows.of("budget") + rows.of("capacity"), rows.of("mix")
    A = np.concatenate([rows.A[0, plain], rows.A[:, mix].reshape(-1, problem.n)])
    b = np.concatenate([rows.b[0, plain], rows.b[:, mix].ravel()])
    within = within_rows(A[None], b[None], x[None])[0]
    return np.where(np.isfinite(within), within, x)
