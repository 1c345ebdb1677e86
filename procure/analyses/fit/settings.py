"""Every number of a fit, with its unit, default and range: one :class:`procure.spec.Range` each.

The sampler's walkers, steps and burn-in, the prior widths, the links' prior centres and the
limits the diagnostics warn at. A fit's arguments are checked against these
(:func:`check_setting`), and ``docs/fit.md`` lists them.
"""

from __future__ import annotations

from ...errors import InputError
from ...fit_defaults import (
    DEFAULT_BURN_IN,
    DEFAULT_DRAWS,
    DEFAULT_EVPPI_GROUPS,
    DEFAULT_FIT_SEED,
    DEFAULT_STEPS,
    DEFAULT_WALKERS,
)
from ...ledger.scenarios import MAX_SCENARIOS
from ...ledger.schema import MOST_SEED
from ...spec import Range, check

#: Most walkers, steps and burn-in steps a fit may take.
MOST_WALKERS = 2_000
MOST_STEPS = 1_000_000

#: The settings of a fit, by name.
FIT_SETTINGS: dict[str, Range] = {
    r.name: r
    for r in (
        Range("walkers", "walkers", DEFAULT_WALKERS, low=4, high=MOST_WALKERS, integer=True,
              doc="walkers of the ensemble sampler (at least twice the parameters, plus 2)"),
        Range("steps", "steps", DEFAULT_STEPS, low=10, high=MOST_STEPS, integer=True,
              doc="steps each walker takes after the burn-in"),
        Range("burn_in", "steps", DEFAULT_BURN_IN, low=0, high=MOST_STEPS, integer=True,
              doc="steps each walker takes first, left out"),
        Range("draws", "draws", DEFAULT_DRAWS, low=2, high=MAX_SCENARIOS, integer=True,
              doc="posterior draws written as scenarios and valued by --next"),
        Range("groups", "groups", DEFAULT_EVPPI_GROUPS, low=2, high=1_000, integer=True,
              doc="groups of draws by one parameter's value, for its EVPPI"),
        Range("seed", "1", DEFAULT_FIT_SEED, low=0, high=MOST_SEED, integer=True, doc="seed of every random draw"),
        # Prior widths: the standard deviation of the log of each parameter.
        Range("prior_sd_exchange_rate", "ln", 1.0, low=0.01, high=10.0,
              doc="prior sd of ln ρ (1: a factor e≈2.7 either way is one sd)"),
        Range("prior_sd_survival", "ln", 0.5, low=0.01, high=10.0, doc="prior sd of ln σ, σ ≤ 1"),
        Range("prior_sd_saturation_hours", "ln", 1.0, low=0.01, high=10.0, doc="prior sd of ln k"),
        # The success links: p = p_min + (p_max − p_min) g(V / V0).
        Range("prior_p_min", "1", 0.05, low=0.001, high=0.999, doc="prior median of p_min, the success rate at V = 0"),
        Range("prior_p_span", "1", 0.8, low=0.001, high=0.999,
              doc="prior median of (p_max − p_min) / (1 − p_min), the share of what is left that data can win"),
        Range("prior_sd_logit", "logit", 1.5, low=0.01, high=10.0, doc="prior sd of both shares on the logit scale"),
        Range("prior_sd_value_scale", "ln", 1.0, low=0.01, high=10.0,
              doc="prior sd of ln V0; its median is the runs' median V at the ledger's values"),
        # The score link: y = y_inf + (y_0 − y_inf)(1 + V / V0)^(−α).
        Range("prior_alpha", "1", 0.5, low=0.01, high=10.0, doc="prior median of the score link's exponent α"),
        Range("prior_sd_alpha", "ln", 1.0, low=0.01, high=10.0, doc="prior sd of ln α"),
        Range("prior_score_spread", "1", 2.0, low=0.01, high=100.0,
              doc="prior sd of y_0 and y_inf, in units of the observed scores' range"),
        Range("prior_noise", "1", 0.1, low=1e-4, high=10.0,
              doc="prior median of the score's noise sd where score_sd is blank, in units of the scores' range"),
        Range("prior_sd_noise", "ln", 1.0, low=0.01, high=10.0, doc="prior sd of ln of the score's noise sd"),
        Range("student_df", "1", 4.0, low=1.0, high=1e6, doc="degrees of freedom of the Student-t likelihood"),
        # Diagnostics.
        Range("rhat_limit", "1", 1.05, low=1.0, low_open=True, high=2.0, doc="largest split R-hat of a converged fit"),
        Range("ess_least", "draws", 200.0, low=1.0, high=1e9, doc="least effective sample size of a converged fit"),
        Range("correlation_limit", "1", 0.9, low=0.0, low_open=True, high=1.0,
              doc="posterior correlation (of the logs) above which two parameters cannot be told apart"),
        Range("rhat_groups", "groups", 4, low=2, high=100, integer=True,
              doc="groups of walkers the split R-hat compares"),
        Range("start_draws", "draws", 4_000, low=10, high=1e7, integer=True,
              doc="prior draws the walkers start from the best of"),
        Range("predictive_draws", "draws", 2_000, low=10, high=1e7, integer=True,
              doc="posterior draws of the predictive check"),
        Range("level", "1", 0.9, low=0.0, low_open=True, high=1.0, high_open=True,
              doc="probability of the posterior and predictive intervals"),
    )
}  # fmt: skip


def default(name: str) -> float:
    """The default of setting ``name`` [its unit]."""
    return float(FIT_SETTINGS[name].default)


def check_setting(name: str, value: object, option: str | None = None) -> float:
    """``value`` checked against setting ``name``'s range; an :class:`InputError` naming
    ``option`` (default the setting's name), the value and what is allowed."""
    return check(FIT_SETTINGS[name], value, option or name, error=InputError)


def check_settings(values: dict[str, object]) -> dict[str, float]:
    """Every setting, ``values`` over the defaults, each checked (unknown names refused)."""
    unknown = sorted(set(values) - set(FIT_SETTINGS))
    if unknown:
        raise InputError(f"setting {unknown[0]!r} is unknown: settings are {', '.join(FIT_SETTINGS)}")
    out = {name: default(name) for name in FIT_SETTINGS}
    for name, value in values.items():
        out[name] = check_setting(name, value)
    return out
