"""``procure.fit``: value curves fitted from a team's training runs, with their uncertainty.

:func:`fit` reads the runs (:mod:`procure.ledger.runs`), frees the ledger numbers they can
inform (:func:`.model.resolve`), draws the posterior with emcee (:mod:`.sampler`) and returns a
:class:`Fit`: each freed number's posterior median and interval beside its prior, the link's
parameters, the sampler's diagnostics, a posterior predictive check of each run, and warnings on
what the runs cannot tell (a source in no run, mixes all alike, two numbers the runs cannot tell
apart). A fit gives its posterior draws as scenarios (:meth:`Fit.scenarios`), for a plan under
what the runs say, and the cells that ``--write`` sets (:meth:`Fit.ledger_changes`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...arrays import DIVISION_FLOOR
from ...errors import InputError
from ...fit_defaults import SCORE_LIKELIHOODS, SCORE_LINKS, SUCCESS_LINKS
from ...ledger import Ledger, load_ledger
from ...ledger.runs import RUNS_FILE, Runs, read_runs
from ...ledger.scenarios import Scenarios
from ...ledger.schema import RANGE_SUFFIXES, UNCERTAIN_COLUMNS
from ...output import jsonable
from .model import Model, build, resolve
from .sampler import Chain, effective_sizes, sample, split_rhat, start_points
from .settings import check_settings

#: Significant digits of a number ``--write`` puts in sources.csv.
WRITTEN_DIGITS = 6
#: Points of the posterior band of the metric against V.
BAND_POINTS = 60
#: How far beyond the largest run's V the band reaches [1].
BAND_REACH = 1.25


def _quantiles(x: np.ndarray, level: float) -> np.ndarray:
    """The lower end, median and upper end of the central ``level`` interval, along axis 0."""
    tail = (1.0 - level) / 2.0
    return np.quantile(x, [tail, 0.5, 1.0 - tail], axis=0)


@dataclass(frozen=True)
class Fit:
    """A fitted posterior and what is read from it.

    Attributes
    ----------
    ledger : Ledger
        The ledger the priors are centred on.
    model : Model
        The posterior's formulas.
    chain : Chain
        The sampler's kept steps.
    settings : dict of str to float
        Every setting of :data:`.settings.FIT_SETTINGS`, as used.
    parameters : pandas.DataFrame
        One row per freed ledger number: ``source``, ``parameter``, ``median``, ``q05``, ``q95``,
        ``prior_median``, ``prior_q05``, ``prior_q95``, ``ess``, ``rhat`` [the column's unit].
    link_table : pandas.DataFrame
        One row per link parameter: ``parameter``, ``unit``, ``median``, ``q05``, ``q95``,
        ``prior_median``, ``ess``, ``rhat``.
    runs_table : pandas.DataFrame
        One row per run: ``run``, ``observed``, ``value`` (median V), ``predicted``, ``q05``,
        ``q95`` (the predictive interval of the observed metric), ``inside``.
    diagnostics : dict
        ``sampler``, ``walkers``, ``steps``, ``burn_in``, ``acceptance``, ``ess_min``,
        ``rhat_max``, ``converged``, ``correlations``, ``seconds``.
    warnings : list of str
        What the runs cannot tell, and a fit that has not converged.
    """

    ledger: Ledger
    model: Model
    chain: Chain
    settings: dict[str, float]
    parameters: pd.DataFrame
    link_table: pd.DataFrame
    runs_table: pd.DataFrame
    diagnostics: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

    @property
    def runs(self) -> Runs:
        """The runs fitted."""
        return self.model.runs

    @property
    def link(self) -> str:
        """The link's name."""
        return self.model.link.name

    def draws(self, count: int | None = None) -> np.ndarray:
        """``count`` posterior draws, evenly spaced over the kept steps (all if None) (draws × coordinates)."""
        flat = self.chain.flat()
        if count is None or count >= len(flat):
            return flat
        return flat[np.linspace(0, len(flat) - 1, count).round().astype(int)]

    def scenarios(self, count: int | None = None) -> Scenarios:
        """``count`` posterior draws (default the ``draws`` setting) as equally likely scenarios
        of the ledger's uncertain columns: the freed numbers drawn, the rest the ledger's."""
        n = int(self.settings["draws"]) if count is None else count
        u = self.draws(n)
        rho, sigma, k = self.model.columns(u)
        s = self.ledger.sources
        values = {c: np.tile(s[c].to_numpy(dtype=float), (len(u), 1)) for c in UNCERTAIN_COLUMNS}
        values.update({"exchange_rate": rho, "survival": sigma, "saturation_hours": k})
        width = len(str(len(u)))
        names = tuple(f"draw{j + 1:0{width}d}" for j in range(len(u)))
        return Scenarios(names, np.full(len(u), 1.0 / len(u)), values, f"{len(u)} posterior draws of a fit")

    def scenarios_frame(self, count: int | None = None) -> pd.DataFrame:
        """The scenarios as a ``scenarios.csv`` table: a row per draw and fitted source, a
        column per fitted column (blank where that source's column is not fitted)."""
        sc = self.scenarios(count)
        columns = [c for c in UNCERTAIN_COLUMNS if any(f.column == c for f in self.model.free)]
        fitted = sorted({f.index for f in self.model.free})
        rows = []
        for k, name in enumerate(sc.names):
            for i in fitted:
                row: dict[str, Any] = {"scenario": name, "source": self.model.runs.sources[i]}
                for c in columns:
                    hit = any(f.index == i and f.column == c for f in self.model.free)
                    row[c] = repr(float(sc.values[c][k, i])) if hit else ""
                rows.append(row)
        return pd.DataFrame(rows, columns=["scenario", "source", *columns])

    def ledger_changes(self) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, Any]]]:
        """The cells ``--write`` sets, and what the ledger holds in each now: per fitted number
        its median, and its interval as the ``_low`` / ``_high`` range columns."""
        changes: dict[str, dict[str, float]] = {}
        seen: dict[str, dict[str, Any]] = {}
        s = self.ledger.sources
        for row in self.parameters.itertuples():
            i = int(np.flatnonzero(s["source"].to_numpy() == row.source)[0])
            cells = {row.parameter: row.median, row.parameter + RANGE_SUFFIXES[0]: row.q05,
                     row.parameter + RANGE_SUFFIXES[1]: row.q95}  # fmt: skip
            for column, value in cells.items():
                changes.setdefault(row.source, {})[column] = float(f"{value:.{WRITTEN_DIGITS}g}")
                now = s[column].iloc[i]
                seen.setdefault(row.source, {})[column] = None if pd.isna(now) else float(now)
        return changes, seen

    def band(self, points: int = BAND_POINTS) -> pd.DataFrame:
        """The metric against V: the link's posterior median and interval on a grid of V from 0
        to beyond the largest run's (``value``, ``low``, ``median``, ``high``)."""
        u = self.draws(int(self.settings["predictive_draws"]))
        top = max(float(self.runs_table["value"].max()), 1e-9) * BAND_REACH
        grid = np.linspace(0.0, top, points)
        mean = self.model.link.mean(np.tile(grid, (len(u), 1)), self.model.link_values(u))
        low, mid, high = _quantiles(mean, self.settings["level"])
        return pd.DataFrame({"value": grid, "low": low, "median": mid, "high": high})

    def curves(self, points: int = BAND_POINTS) -> pd.DataFrame:
        """Each fitted source's value curve v_s(ρσh) against its hours, median and interval
        (``source``, ``hours``, ``low``, ``median``, ``high``), to the most hours a run has."""
        u = self.draws(int(self.settings["predictive_draws"]))
        frames = []
        for i in sorted({f.index for f in self.model.free}):
            most = float(self.runs.hours[:, i].max()) * BAND_REACH
            grid = np.linspace(0.0, most, points)
            hours = np.zeros((points, len(self.runs.sources)))
            hours[:, i] = grid
            low, mid, high = _quantiles(self.model.values(u, hours), self.settings["level"])
            frames.append(pd.DataFrame({"source": self.runs.sources[i], "hours": grid, "low": low, "median": mid,
                                        "high": high}))  # fmt: skip
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of ``procure fit --json``."""
        link = {"name": self.link, "formula": self.model.link.formula, "likelihood": self.model.likelihood,
                "parameters": self.link_table.to_dict("records")}  # fmt: skip
        return jsonable({
            "runs_file": str(self.runs.path), "ledger": str(self.ledger.path), "metric": self.runs.metric,
            "parameters": self.parameters.to_dict("records"), "link": link, "diagnostics": self.diagnostics,
            "runs": self.runs_table.to_dict("records"), "warnings": list(self.warnings),
        })  # fmt: skip


def _choose_link(runs: Runs, link: str | None, likelihood: str | None) -> tuple[str, str]:
    """The link and likelihood for the runs' metric (defaults: exp and binomial, power and normal)."""
    if runs.metric == "success":
        if link is not None and link not in SUCCESS_LINKS:
            raise InputError(f"link = {link!r} is invalid: {runs.path} gives successes and trials: allowed are one of "
                             f"{', '.join(SUCCESS_LINKS)}")  # fmt: skip
        if likelihood is not None and likelihood != "binomial":
            raise InputError(f"likelihood = {likelihood!r} is invalid: successes out of trials are binomial")
        return link or SUCCESS_LINKS[0], "binomial"
    if link is not None and link not in SCORE_LINKS:
        raise InputError(f"link = {link!r} is invalid: {runs.path} gives scores: allowed are one of "
                         f"{', '.join(SCORE_LINKS)}")  # fmt: skip
    if likelihood is not None and likelihood not in SCORE_LIKELIHOODS:
        raise InputError(f"likelihood = {likelihood!r} is invalid: allowed are one of {', '.join(SCORE_LIKELIHOODS)}")
    return link or SCORE_LINKS[0], likelihood or SCORE_LIKELIHOODS[0]


def mix_warnings(runs: Runs) -> list[str]:
    """What the runs' mixes cannot tell: all alike, or all in the same proportions."""
    h = runs.hours[:, runs.used()]
    if runs.count == 1:
        return ["only one run: the curves and the link cannot be told apart; what is fitted is mostly the prior"]
    if np.all(h == h[0]):
        return [f"all {runs.count} runs have the same mix: the runs cannot tell the sources apart nor where value "
                "saturates; what is fitted is mostly the prior"]  # fmt: skip
    if h.shape[1] > 1 and np.linalg.matrix_rank(h / np.maximum(h.sum(axis=1, keepdims=True), DIVISION_FLOOR)) <= 1:
        return ["the runs' mixes are all in the same proportions: the sources' exchange rates cannot be told apart "
                "from one another, only their weighted sum"]  # fmt: skip
    return []


def _table(model: Model, chain: Chain, settings: dict[str, float]) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """The parameter and link tables and the diagnostics of a chain."""
    flat = chain.flat()
    level = settings["level"]
    ess = effective_sizes(chain.samples)
    rhat = split_rhat(chain.samples, int(settings["rhat_groups"]))
    nf = len(model.free)
    rho, sigma, k = model.columns(flat)
    by_column = {"exchange_rate": rho, "survival": sigma, "saturation_hours": k}
    rows = []
    for j, f in enumerate(model.free):
        lo, mid, hi = _quantiles(by_column[f.column][:, f.index], level)
        z = math.sqrt(2) * _erfinv(level)
        rows.append({"source": f.source, "parameter": f.column, "median": mid, "q05": lo, "q95": hi,
                     "prior_median": f.ledger, "prior_q05": math.exp(model.centre[j] - z * model.sd[j]),
                     "prior_q95": min(math.exp(model.centre[j] + z * model.sd[j]), math.exp(model.high[j])),
                     "ess": ess[j], "rhat": rhat[j]})  # fmt: skip
    natural = model.link_values(flat)
    prior = model.link.natural(model.centre[nf:][None, :])
    units = dict(zip(model.link.parameters, model.link.units, strict=True))
    links = []
    for j, name in enumerate(model.link_parameters):
        lo, mid, hi = _quantiles(natural[name], level)
        links.append({"parameter": name, "unit": units[name], "median": mid, "q05": lo, "q95": hi,
                      "prior_median": float(prior[name][0]), "ess": ess[nf + j], "rhat": rhat[nf + j]})  # fmt: skip
    corr = np.corrcoef(flat, rowvar=False) if flat.shape[1] > 1 else np.ones((1, 1))
    pairs = []
    names = model.names
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            if abs(corr[a, b]) > settings["correlation_limit"]:
                pairs.append({"a": names[a], "b": names[b], "correlation": float(corr[a, b])})
    ess_min, rhat_max = float(np.min(ess)), float(np.nanmax(rhat)) if np.isfinite(rhat).any() else math.nan
    diagnostics = {
        "sampler": "emcee", "walkers": int(chain.samples.shape[1]), "steps": int(chain.samples.shape[0]),
        "burn_in": int(settings["burn_in"]), "acceptance": chain.acceptance, "ess_min": ess_min,
        "rhat_max": rhat_max, "converged": bool(ess_min >= settings["ess_least"] and rhat_max < settings["rhat_limit"]),
        "correlations": pairs, "seconds": chain.seconds, "coordinates": list(names),
    }  # fmt: skip
    return pd.DataFrame(rows), pd.DataFrame(links), diagnostics


def _erfinv(level: float) -> float:
    """``erfinv(level)``, by bisection on :func:`math.erf` (to 1e-12)."""
    lo, hi = 0.0, 10.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if math.erf(mid) < level else (lo, mid)
    return (lo + hi) / 2


def _predictive(model: Model, chain: Chain, settings: dict[str, float], rng: np.random.Generator) -> pd.DataFrame:
    """Each run's observed metric beside its posterior predictive interval."""
    flat = chain.flat()
    pick = np.linspace(0, len(flat) - 1, min(int(settings["predictive_draws"]), len(flat))).round().astype(int)
    u = flat[pick]
    mean = model.metric(u)
    r = model.runs
    if r.metric == "success":
        assert r.trials is not None
        simulated = rng.binomial(r.trials.astype(np.int64)[None, :], np.clip(mean, 0.0, 1.0)) / r.trials[None, :]
    else:
        sd = model.score_sd(u)
        noise = rng.standard_normal(mean.shape) if model.likelihood == "normal" else rng.standard_t(
            settings["student_df"], mean.shape)  # fmt: skip
        simulated = mean + sd * noise
    lo, mid, hi = _quantiles(simulated, settings["level"])
    observed = r.observed()
    values = np.median(model.values(u), axis=0)
    table = pd.DataFrame({"run": list(r.names), "observed": observed, "value": values, "predicted": mid,
                          "q05": lo, "q95": hi, "inside": (observed >= lo) & (observed <= hi)})  # fmt: skip
    if r.metric == "success":
        table.insert(2, "successes", r.successes)
        table.insert(3, "trials", r.trials)
    return table


def fit(
    runs: Runs | Path | str | None = None,
    ledger: Ledger | Path | str | None = None,
    *,
    fit: tuple[str, ...] | list[str] | None = None,
    link: str | None = None,
    likelihood: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    **settings: float,
) -> Fit:
    """Fit the ledger's value numbers to a team's training runs.

    Parameters
    ----------
    runs : Runs, path or None
        The runs: read, or a ``runs.csv``; None: the ledger folder's ``runs.csv``.
    ledger : Ledger, path or None
        The ledger whose values centre the priors; None: the shipped default ledger.
    fit : sequence of str, optional
        What to free: ``exchange_rate``, ``survival``, ``saturation_hours`` (for every source a
        run uses), or ``SOURCE.COLUMN`` by source or kind; default ``exchange_rate`` and
        ``saturation_hours``. An exchange rate of 1 (the unit of value) is never freed.
    link : str, optional
        ``exp`` or ``hyperbolic`` for successes (default ``exp``), ``power`` for a score.
    likelihood : str, optional
        For a score: ``normal`` (default) or ``student``.
    progress : callable, optional
        ``progress(done, total)`` after each of the sampler's steps.
    **settings : float
        Any of :data:`procure.analyses.fit.settings.FIT_SETTINGS` (``walkers``, ``steps``,
        ``burn_in``, ``seed``, prior widths …), each checked against its range.

    Returns
    -------
    Fit
        The posterior, its tables, diagnostics and warnings.

    Raises
    ------
    InputError
        A bad setting, ``fit`` item, link or likelihood.
    LedgerError
        A ledger or runs file that cannot be read (one line naming file, line, field and value).
    InputError
        Also when emcee is not installed (the message names the command that installs it).
    """
    values = check_settings(dict(settings))
    loaded = ledger if isinstance(ledger, Ledger) else load_ledger(ledger)
    if not isinstance(runs, Runs):
        runs = read_runs(runs if runs is not None else loaded.path / RUNS_FILE, loaded.sources)
    link_name, like = _choose_link(runs, link, likelihood)
    free, warnings = resolve(tuple(fit) if fit is not None else None, loaded.sources, runs)
    warnings += mix_warnings(runs)
    model = build(runs, loaded.sources, free, link_name, like, values)
    rng = np.random.default_rng(int(values["seed"]))
    walkers = max(int(values["walkers"]), 2 * model.dim + 2)
    walkers += walkers % 2
    start = start_points(model, model.centre, model.sd, model.low, model.high, walkers, int(values["start_draws"]),
                         rng)  # fmt: skip
    chain = sample(model, start, int(values["steps"]), int(values["burn_in"]), int(values["seed"]), progress)
    parameters, link_table, diagnostics = _table(model, chain, values)
    diagnostics["walkers"] = walkers
    for pair in diagnostics["correlations"]:
        a, b = (str(pair[key]).rpartition(".") for key in ("a", "b"))
        product = a[0] == b[0] and {a[2], b[2]} == {"exchange_rate", "survival"}
        advice = ("they enter only as their product ρσ, which no run can split: fit one of them" if product
                  else "add runs whose mixes move them separately")  # fmt: skip
        warnings.append(f"the runs cannot tell {pair['a']} and {pair['b']} apart (posterior correlation "
                        f"{pair['correlation']:+.2f}): {advice}")  # fmt: skip
    if not diagnostics["converged"]:
        warnings.append(f"the sampler has not converged (split R-hat {diagnostics['rhat_max']:.3f}, least effective "
                        f"sample size {diagnostics['ess_min']:.0f}): run more --steps or --burn-in")  # fmt: skip
    table = _predictive(model, chain, values, rng)
    return Fit(loaded, model, chain, values, parameters, link_table, table, diagnostics, warnings)
