"""Defaults of ``procure fit``, in one module that imports nothing.

The command line reads them to declare its options, so that ``procure --help`` starts without
numpy; :mod:`procure.analyses.fit.settings` gives each its :class:`procure.spec.Range` (unit,
range and meaning) and checks it.
"""

from __future__ import annotations

#: The extra that installs the sampler.
FIT_EXTRA = "fit"
#: What ``--fit`` frees by default: these columns for every source some run uses.
DEFAULT_FIT = ("exchange_rate", "saturation_hours")
#: Columns of sources.csv ``--fit`` may free.
FIT_COLUMNS = ("exchange_rate", "survival", "saturation_hours")
#: Links of a success rate (binomial likelihood) and of a score (Gaussian or Student-t).
SUCCESS_LINKS = ("exp", "hyperbolic")
SCORE_LINKS = ("power",)
LINKS = (*SUCCESS_LINKS, *SCORE_LINKS)
#: Likelihoods of a score.
SCORE_LIKELIHOODS = ("normal", "student")

#: Walkers of the ensemble sampler (raised to twice the parameters, plus 2, when fewer) [walkers].
DEFAULT_WALKERS = 32
#: Steps each walker takes after the burn-in [steps].
DEFAULT_STEPS = 1500
#: Steps each walker takes first, left out of the posterior [steps].
DEFAULT_BURN_IN = 1000
#: Posterior draws written as scenarios (``--scenarios``) and valued by ``--next`` [draws].
DEFAULT_DRAWS = 100
#: Groups of equally many draws, by the value of one parameter, of the EVPPI (``--next``) [groups].
DEFAULT_EVPPI_GROUPS = 10
#: Seed of the sampler, the starting points and the predictive draws [1].
DEFAULT_FIT_SEED = 0
