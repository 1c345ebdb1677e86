"""Value curves fitted from a team's training runs, and which number is worth measuring next.

* :mod:`.links`: the links from a run's value to its metric, and their likelihoods;
* :mod:`.model`: the freed ledger numbers, their priors and the log posterior;
* :mod:`.sampler`: emcee, and the diagnostics of its chain;
* :mod:`.fitting`: :func:`fit`, the :class:`Fit` and what is read from it;
* :mod:`.evppi`: EVPPI of each fitted number from the posterior draws;
* :mod:`.simulate`: runs simulated from known numbers;
* :mod:`.settings`: every number of a fit, with its unit, default and range.

The sampler is the extra ``fit`` (``pip install 'procure-robotics[fit]'``).
"""

from __future__ import annotations

from .fitting import Fit, fit

__all__ = ["Fit", "fit"]
