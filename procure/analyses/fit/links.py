"""Links from a run's value V [own-hour equivalents] to the team's metric, and their likelihoods.

Pure, vectorised formulas: ``V`` is an array (walkers × runs), each link parameter an array
(walkers,) broadcast along the runs.

=============  ==================================================  =====================
link           metric                                               likelihood
=============  ==================================================  =====================
exp            p = p_min + (p_max − p_min) (1 − exp(−V / V0))       binomial
hyperbolic     p = p_min + (p_max − p_min) V / (V + V0)             binomial
power          y = y_inf + (y_0 − y_inf) (1 + V / V0)^(−α)          normal or Student-t
=============  ==================================================  =====================

``exp`` saturates fast (half of what is left is won every V0 ln 2); ``hyperbolic`` has the
heavier tail of a Michaelis–Menten curve (half at V = V0, then slowly); ``power`` is the
scaling-law form of a loss or score (a loss falls, y_0 > y_inf; a score rises). Each link's
parameters are sampled on an unbounded scale (:data:`LINKS` says which): the logit of p_min
and of the share ``(p_max − p_min) / (1 − p_min)``, the log of V0 and α.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: Success rates are kept this far from 0 and 1 inside the likelihood [1], so that a rate the
#: link puts at exactly 0 or 1 costs a large, finite log-likelihood.
RATE_FLOOR = 1e-12


def logistic(u: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(−u))`` [1]."""
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(u, dtype=float)))


def logit(p: float) -> float:
    """``ln(p / (1 − p))``, for 0 < p < 1."""
    return math.log(p / (1.0 - p))


def exp_gain(v: np.ndarray, v0: np.ndarray) -> np.ndarray:
    """``1 − exp(−V / V0)``: the share of the possible gain reached at V [1]."""
    return -np.expm1(-v / v0)


def hyperbolic_gain(v: np.ndarray, v0: np.ndarray) -> np.ndarray:
    """``V / (V + V0)`` [1]."""
    return v / (v + v0)


def success_rate(v: np.ndarray, p_min: np.ndarray, p_max: np.ndarray, v0: np.ndarray, gain: Callable[..., np.ndarray]
                 ) -> np.ndarray:  # fmt: skip
    """``p_min + (p_max − p_min) gain(V, V0)`` [1]; the parameters (walkers,), V (walkers × runs)."""
    return p_min[:, None] + (p_max - p_min)[:, None] * gain(v, v0[:, None])


def power_score(v: np.ndarray, y0: np.ndarray, y_inf: np.ndarray, alpha: np.ndarray, v0: np.ndarray) -> np.ndarray:
    """``y_inf + (y_0 − y_inf) (1 + V / V0)^(−α)`` [the score's unit]."""
    return y_inf[:, None] + (y0 - y_inf)[:, None] * (1.0 + v / v0[:, None]) ** (-alpha[:, None])


def binomial_loglik(p: np.ndarray, successes: np.ndarray, trials: np.ndarray) -> np.ndarray:
    """Σ over runs of ``y ln p + (n − y) ln(1 − p)`` per walker (the binomial coefficient, the
    same for every parameter, left out) [nats]."""
    q = np.clip(p, RATE_FLOOR, 1.0 - RATE_FLOOR)
    return np.sum(successes * np.log(q) + (trials - successes) * np.log1p(-q), axis=-1)


def normal_loglik(mean: np.ndarray, y: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """Σ over runs of the Gaussian log density of ``y`` (its constant left out) [nats]."""
    z = (y - mean) / sd
    return np.sum(-0.5 * z**2 - np.log(sd), axis=-1)


def student_loglik(mean: np.ndarray, y: np.ndarray, sd: np.ndarray, df: float) -> np.ndarray:
    """Σ over runs of the Student-t log density of ``y`` with ``df`` degrees of freedom and
    scale ``sd`` (its constant left out) [nats]: a score far off costs less than under the
    Gaussian, so one odd run moves the fit less."""
    z = (y - mean) / sd
    return np.sum(-0.5 * (df + 1.0) * np.log1p(z**2 / df) - np.log(sd), axis=-1)


@dataclass(frozen=True)
class Link:
    """One link: its metric, its parameters (natural names and units), its formula.

    Attributes
    ----------
    name : str
        As ``--link`` names it.
    metric : str
        ``success`` or ``score``.
    parameters : tuple of str
        Its parameters, in the order they are sampled.
    units : tuple of str
        Unit of each.
    formula : str
        The link as the documentation writes it.
    """

    name: str
    metric: str
    parameters: tuple[str, ...]
    units: tuple[str, ...]
    formula: str

    def natural(self, u: np.ndarray) -> dict[str, np.ndarray]:
        """The parameters in their own units from their sampled values ``u`` (walkers × parameters)."""
        if self.metric == "success":
            p_min = logistic(u[:, 0])
            p_max = p_min + (1.0 - p_min) * logistic(u[:, 1])
            return {"p_min": p_min, "p_max": p_max, "value_scale": np.exp(u[:, 2])}
        out = {"y_0": u[:, 0], "y_inf": u[:, 1], "alpha": np.exp(u[:, 2]), "value_scale": np.exp(u[:, 3])}
        if u.shape[1] > len(SCORE_PARAMETERS):
            out["noise_sd"] = np.exp(u[:, 4])
        return out

    def mean(self, v: np.ndarray, p: dict[str, np.ndarray]) -> np.ndarray:
        """The expected metric of runs of value ``v`` (walkers × runs): a rate [1] or a score."""
        if self.name == "power":
            return power_score(v, p["y_0"], p["y_inf"], p["alpha"], p["value_scale"])
        gain = exp_gain if self.name == "exp" else hyperbolic_gain
        return success_rate(v, p["p_min"], p["p_max"], p["value_scale"], gain)


#: The parameters of the success links and of the score link (``noise_sd`` only where some
#: run's ``score_sd`` is blank).
SUCCESS_PARAMETERS = ("p_min", "p_max", "value_scale")
SCORE_PARAMETERS = ("y_0", "y_inf", "alpha", "value_scale")

#: Every link by name.
LINKS: dict[str, Link] = {
    link.name: link
    for link in (
        Link("exp", "success", SUCCESS_PARAMETERS, ("1", "1", "own-hour eq."),
             "p = p_min + (p_max − p_min) (1 − exp(−V / V0))"),
        Link("hyperbolic", "success", SUCCESS_PARAMETERS, ("1", "1", "own-hour eq."),
             "p = p_min + (p_max − p_min) V / (V + V0)"),
        Link("power", "score", (*SCORE_PARAMETERS, "noise_sd"), ("score", "score", "1", "own-hour eq.", "score"),
             "y = y_inf + (y_0 − y_inf) (1 + V / V0)^(−α)"),
    )
}  # fmt: skip
