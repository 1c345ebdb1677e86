"""The posterior of a fit: which ledger numbers are freed, their priors, and the log posterior.

A run r trained on ``h_rs`` hours of each source is worth the program's own value,
``V_r = Σ_s v_s(ρ_s σ_s h_rs)`` [own-hour equivalents], each ``v_s`` the source's curve of
:data:`procure.curves.REGISTRY` with its scale ``k_s`` and shape (the one definition of a
curve). A link (:mod:`.links`) maps ``V_r`` to the metric. The freed numbers are sampled as
their logs, each with a normal prior centred on the log of the ledger's value (log-normal ρ
and k; σ the same, cut at 1) and cut to the range its ledger column allows; every other
number stays at the ledger's value. An exchange rate of exactly 1 is the unit of value (the
numeraire) and is never freed: the link's scale V0 and the rates could not be told apart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...curves import get
from ...errors import InputError, LedgerError
from ...fit_defaults import DEFAULT_FIT, FIT_COLUMNS
from ...ledger import matches
from ...ledger.runs import Runs
from ...ledger.schema import SOURCE_COLUMNS
from ...spec import did_you_mean
from .links import LINKS, SCORE_PARAMETERS, Link, binomial_loglik, logit, normal_loglik, student_loglik

#: The exchange rate of the unit of value, the own-robot hour [own-hour equivalents per hour].
NUMERAIRE = 1.0
#: Widest the sampled logit of a share may go [logit]: beyond it a share is 0 or 1 to the last digit.
MOST_LOGIT = 30.0
#: Range of the link's value scale V0 [own-hour equivalents].
VALUE_SCALE_RANGE = (1e-6, 1e12)
#: Range of the score link's exponent α the sampler may reach [1] (its prior, ``prior_alpha``
#: at most 10, lies well inside).
ALPHA_RANGE = (1e-3, 1e3)
#: Range of the score's noise sd the sampler may reach, in units of the scores' range [1] (its
#: prior, ``prior_noise``, lies within 1e-4 to 10).
NOISE_RANGE = (1e-9, 1e3)


@dataclass(frozen=True)
class Free:
    """One ledger number the runs inform: a column of one source.

    Attributes
    ----------
    source : str
        The source.
    index : int
        Its row in the ledger.
    column : str
        ``exchange_rate``, ``survival`` or ``saturation_hours``.
    ledger : float
        The ledger's value, the prior's median [the column's unit].
    """

    source: str
    index: int
    column: str
    ledger: float

    @property
    def name(self) -> str:
        """``source.column``."""
        return f"{self.source}.{self.column}"


def _fit_error(item: str, why: str) -> InputError:
    return InputError(f"fit = {item!r} is invalid: {why}")


def _allowed() -> str:
    return f"allowed are {', '.join(FIT_COLUMNS)}, or SOURCE.COLUMN (a source or kind of the ledger)"


def resolve(items: tuple[str, ...] | None, sources: pd.DataFrame, runs: Runs) -> tuple[list[Free], list[str]]:
    """The numbers to free for ``--fit`` items, and warnings on what cannot be learned.

    Parameters
    ----------
    items : tuple of str or None
        ``exchange_rate`` (every source some run uses), ``twin.exchange_rate`` (by source or
        kind); None: :data:`procure.fit_defaults.DEFAULT_FIT`.
    sources : pandas.DataFrame
        The ledger's sources.
    runs : Runs
        The runs.

    Raises
    ------
    InputError
        An item that is not a column that can be fitted, a source or kind the ledger does not
        have, the numeraire's exchange rate, a source in no run, a curve without a scale.
    """
    names = [str(s) for s in sources["source"]]
    used = runs.used()
    chosen: dict[tuple[int, str], None] = {}
    warnings: list[str] = []
    for item in items if items is not None else DEFAULT_FIT:
        key, dot, column = item.strip().rpartition(".")
        if column not in FIT_COLUMNS:
            raise _fit_error(item, _allowed() + did_you_mean(column, FIT_COLUMNS))
        if not dot:
            rows = [i for i in range(len(names)) if used[i]]
            explicit = False
        else:
            hit = matches(sources, key)
            if not hit.any():
                known = dict.fromkeys([*names, *(str(k) for k in sources["kind"])])
                raise _fit_error(item, f"{key!r} is not a source or kind of the ledger{did_you_mean(key, known)}; "
                                       f"{_allowed()}")  # fmt: skip
            rows = np.flatnonzero(hit).tolist()
            explicit = True
        for i in rows:
            value = float(sources[column].iloc[i])
            numeraire = float(sources["exchange_rate"].iloc[i]) == NUMERAIRE
            if column == "survival" and numeraire:
                if explicit:
                    why = (
                        f"{names[i]} is the unit of value (exchange rate 1): its survival, like its rate, is never "
                        "fitted (ρσ of the unit is what the link's scale is measured in)"
                    )
                    raise _fit_error(item, why)
                continue
            if column == "exchange_rate" and value == NUMERAIRE:
                if explicit:
                    why = (
                        f"{names[i]}'s exchange rate is 1, the unit of value (the numeraire): it is never "
                        "fitted, or the link's scale and the rates could not be told apart"
                    )
                    raise _fit_error(item, why)
                continue
            if column == "saturation_hours" and not get(str(sources["curve"].iloc[i])).needs_scale:
                if explicit:
                    raise _fit_error(item, f"{names[i]}'s curve {sources['curve'].iloc[i]!r} has no scale to fit")
                continue
            if not used[i]:
                raise _fit_error(item, f"source {names[i]!r} is in no run of {runs.path}: nothing can be learned "
                                       "about it")  # fmt: skip
            if not (math.isfinite(value) and value > 0):
                warnings.append(f"{names[i]}.{column} is {value:g} in the ledger: a prior cannot be centred on it, "
                                "so it is not fitted")  # fmt: skip
                continue
            chosen[(i, column)] = None
    for i in sorted({i for i, _column in chosen}):
        if (i, "exchange_rate") in chosen and (i, "survival") in chosen:
            warnings.append(f"{names[i]}'s exchange_rate and survival enter only as their product ρσ: the runs inform "
                            "the product, its split between them comes from the priors")  # fmt: skip
    for i in np.flatnonzero(~used).tolist():
        warnings.append(f"source {names[i]!r} is in no run: its {', '.join(FIT_COLUMNS)} cannot be learned and stay "
                        "at the ledger's values")  # fmt: skip
    free = [Free(names[i], i, c, float(sources[c].iloc[i])) for i, c in sorted(chosen, key=lambda ic: (ic[0], ic[1]))]
    return free, warnings


@dataclass(frozen=True)
class Model:
    """The log posterior of a fit, evaluated for many walkers at once.

    Attributes
    ----------
    runs : Runs
        The runs.
    link : Link
        The link of the metric.
    likelihood : str
        ``binomial``, ``normal`` or ``student``.
    free : tuple of Free
        The freed ledger numbers (the first coordinates sampled, as logs).
    link_parameters : tuple of str
        The link's sampled parameters (the last coordinates).
    centre, sd, low, high : numpy.ndarray
        Each coordinate's prior: a normal of that centre and sd, cut to [low, high] [its scale].
    rate, survival, scale, shape : numpy.ndarray
        The ledger's ρ [1], σ [1], k [effective h] and curve shape [1] of each source.
    curves : tuple of str
        The curve of each source.
    student_df : float
        Degrees of freedom of the Student-t likelihood [1].
    """

    runs: Runs
    link: Link
    likelihood: str
    free: tuple[Free, ...]
    link_parameters: tuple[str, ...]
    centre: np.ndarray
    sd: np.ndarray
    low: np.ndarray
    high: np.ndarray
    rate: np.ndarray
    survival: np.ndarray
    scale: np.ndarray
    shape: np.ndarray
    curves: tuple[str, ...]
    student_df: float = 4.0

    @property
    def dim(self) -> int:
        """Coordinates sampled."""
        return len(self.centre)

    @property
    def names(self) -> tuple[str, ...]:
        """Each coordinate's name: ``source.column``, then ``link.parameter``."""
        return (*(f.name for f in self.free), *(f"link.{p}" for p in self.link_parameters))

    def columns(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """ρ, σ and k of each source for each walker (walkers × sources), freed ones from ``u``."""
        w = u.shape[0]
        out = {"exchange_rate": np.tile(self.rate, (w, 1)), "survival": np.tile(self.survival, (w, 1)),
               "saturation_hours": np.tile(self.scale, (w, 1))}  # fmt: skip
        for j, f in enumerate(self.free):
            out[f.column][:, f.index] = np.exp(u[:, j])
        return out["exchange_rate"], out["survival"], out["saturation_hours"]

    def values(self, u: np.ndarray, hours: np.ndarray | None = None) -> np.ndarray:
        """``V`` of each run (or of each row of ``hours``) for each walker (walkers × runs) [own-hour eq.]."""
        h = self.runs.hours if hours is None else hours
        rho, sigma, k = self.columns(u)
        total = np.zeros((u.shape[0], h.shape[0]))
        for s in np.flatnonzero((h > 0).any(axis=0)).tolist():
            e = (rho[:, s] * sigma[:, s])[:, None] * h[None, :, s]
            kk = np.broadcast_to(k[:, s][:, None], e.shape)
            shape = np.full(e.shape, self.shape[s])
            total += get(self.curves[s]).value(e, kk, shape)
        return total

    def link_values(self, u: np.ndarray) -> dict[str, np.ndarray]:
        """The link's parameters in their own units (walkers,)."""
        return self.link.natural(u[:, len(self.free) :])

    def metric(self, u: np.ndarray, hours: np.ndarray | None = None) -> np.ndarray:
        """The expected metric of each run for each walker (walkers × runs)."""
        return self.link.mean(self.values(u, hours), self.link_values(u))

    def score_sd(self, u: np.ndarray) -> np.ndarray:
        """The sd of each run's score for each walker: its ``score_sd``, else the fitted noise."""
        given = np.asarray(self.runs.score_sd, dtype=float)
        if "noise_sd" not in self.link_parameters:
            return np.broadcast_to(given, (u.shape[0], len(given)))
        noise = self.link_values(u)["noise_sd"][:, None]
        return np.where(np.isnan(given)[None, :], noise, given[None, :])

    def log_prior(self, u: np.ndarray) -> np.ndarray:
        """The log prior of each walker (−inf outside the bounds) [nats]."""
        inside = np.all((u >= self.low) & (u <= self.high), axis=1)
        lp = -0.5 * np.sum(((u - self.centre) / self.sd) ** 2, axis=1)
        return np.where(inside, lp, -np.inf)

    def log_likelihood(self, u: np.ndarray) -> np.ndarray:
        """The log likelihood of the runs for each walker [nats]."""
        mean = self.metric(u)
        r = self.runs
        if self.likelihood == "binomial":
            assert r.successes is not None and r.trials is not None
            return binomial_loglik(mean, r.successes, r.trials)
        assert r.score is not None
        sd = self.score_sd(u)
        if self.likelihood == "student":
            return student_loglik(mean, r.score, sd, self.student_df)
        return normal_loglik(mean, r.score, sd)

    def __call__(self, u: np.ndarray) -> np.ndarray:
        """The log posterior of each walker (walkers × coordinates), up to a constant [nats]."""
        u = np.atleast_2d(np.asarray(u, dtype=float))
        lp = self.log_prior(u)
        ok = np.isfinite(lp)
        out = np.full(u.shape[0], -np.inf)
        if ok.any():
            with np.errstate(all="ignore"):
                ll = self.log_likelihood(u[ok])
            out[ok] = np.where(np.isfinite(ll), lp[ok] + ll, -np.inf)
        return out


def _bounds(column: str) -> tuple[float, float]:
    spec = SOURCE_COLUMNS[column]
    low = max(spec.low, spec.least) if spec.least > 0 else spec.low
    return math.log(low), math.log(spec.high)


def build(runs: Runs, sources: pd.DataFrame, free: list[Free], link_name: str, likelihood: str,
          settings: dict[str, float]) -> Model:  # fmt: skip
    """The model of ``runs`` with ``free`` freed and link ``link_name`` (see :class:`Model`).

    Raises
    ------
    LedgerError
        No run has hours of any source (the link's scale has nothing to be centred on).
    """
    link = LINKS[link_name]
    centre, sd, low, high = [], [], [], []
    for f in free:
        centre.append(math.log(f.ledger))
        sd.append(settings[f"prior_sd_{f.column}"])
        low.append(_bounds(f.column)[0])
        high.append(_bounds(f.column)[1])
    curves = tuple(str(c) for c in sources["curve"])
    arrays = {c: sources[c].to_numpy(dtype=float) for c in ("exchange_rate", "survival", "saturation_hours",
                                                             "curve_shape")}  # fmt: skip
    base = Model(runs, link, likelihood, (), (), np.zeros(0), np.ones(0), np.zeros(0), np.zeros(0),
                 arrays["exchange_rate"], arrays["survival"], arrays["saturation_hours"], arrays["curve_shape"],
                 curves, settings["student_df"])  # fmt: skip
    at_ledger = base.values(np.zeros((1, 0)))[0]
    positive = at_ledger[at_ledger > 0]
    if not len(positive):
        raise LedgerError(f"{runs.path}: no run has hours of any source: the runs cannot tell what data is worth")
    v_ref = float(np.median(positive))
    vs_low, vs_high = (math.log(b) for b in VALUE_SCALE_RANGE)
    if link.metric == "success":
        names: tuple[str, ...] = link.parameters
        centre += [logit(settings["prior_p_min"]), logit(settings["prior_p_span"]), math.log(v_ref)]
        sd += [settings["prior_sd_logit"], settings["prior_sd_logit"], settings["prior_sd_value_scale"]]
        low += [-MOST_LOGIT, -MOST_LOGIT, vs_low]
        high += [MOST_LOGIT, MOST_LOGIT, vs_high]
    else:
        assert runs.score is not None and runs.score_sd is not None
        order = np.argsort(at_ledger, kind="stable")
        spread = float(np.ptp(runs.score)) or 1.0
        width = settings["prior_score_spread"] * spread
        names = SCORE_PARAMETERS + (("noise_sd",) if np.isnan(runs.score_sd).any() else ())
        centre += [float(runs.score[order[0]]), float(runs.score[order[-1]]), math.log(settings["prior_alpha"]),
                   math.log(v_ref)]  # fmt: skip
        sd += [width, width, settings["prior_sd_alpha"], settings["prior_sd_value_scale"]]
        low += [-math.inf, -math.inf, math.log(ALPHA_RANGE[0]), vs_low]
        high += [math.inf, math.inf, math.log(ALPHA_RANGE[1]), vs_high]
        if "noise_sd" in names:
            centre.append(math.log(settings["prior_noise"] * spread))
            sd.append(settings["prior_sd_noise"])
            low.append(math.log(NOISE_RANGE[0] * spread))
            high.append(math.log(NOISE_RANGE[1] * spread))
    return Model(runs, link, likelihood, tuple(free), names, np.array(centre), np.array(sd), np.array(low),
                 np.array(high), base.rate, base.survival, base.scale, base.shape, curves,
                 settings["student_df"])  # fmt: skip
