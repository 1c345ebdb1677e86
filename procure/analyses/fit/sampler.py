"""The posterior drawn by emcee's affine-invariant ensemble sampler, and its diagnostics.

emcee (Foreman-Mackey et al. 2013) moves an ensemble of walkers by stretch moves: no gradient,
no tuning, a few hundred kilobytes of pure Python on numpy, and it imports in a few hundred
milliseconds. The log posterior is evaluated for every walker at once
(:class:`~procure.analyses.fit.model.Model` is vectorised). The walkers start at the best of
``start_draws`` draws of the prior (one evaluation of all of them), so that the burn-in starts
near where the runs put the mass.

Diagnostics of the kept steps: the mean acceptance fraction; the effective sample size of each
coordinate, walkers × steps over the integrated autocorrelation time (emcee's estimate); and the
split R-hat (Gelman et al., BDA3 §11.4) with the walkers in ``rhat_groups`` groups, each group
one chain of its walkers' steps, each chain split in halves.

Ctrl-C while the sampler runs stops it between two of its steps: emcee wraps the log posterior
in a handler that prints the traceback of any exception raised inside it, Ctrl-C's included, so
during sampling Ctrl-C only sets a flag, read after each step, and the interrupt is raised there
(outside emcee's wrapper): the command then ends with its one line, as every command does.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...fit_defaults import FIT_EXTRA


def require_emcee() -> Any:
    """The ``emcee`` module, or an :class:`~procure.errors.InputError` naming the command that
    installs it (the extra ``fit``)."""
    import importlib

    try:
        emcee = importlib.import_module("emcee")  # ships no type information
    except ImportError:
        from ...errors import InputError
        from ...install import install_command

        raise InputError(f"procure fit needs the sampler emcee: {install_command(FIT_EXTRA)}") from None
    return emcee


@dataclass(frozen=True)
class Chain:
    """The kept steps of a run of the sampler.

    Attributes
    ----------
    samples : numpy.ndarray
        Steps × walkers × coordinates, after the burn-in.
    log_posterior : numpy.ndarray
        Steps × walkers.
    acceptance : float
        Mean acceptance fraction of the walkers [1].
    seconds : float
        Wall time of the sampling [s].
    """

    samples: np.ndarray
    log_posterior: np.ndarray
    acceptance: float
    seconds: float

    def flat(self) -> np.ndarray:
        """Every kept step of every walker (draws × coordinates), step by step."""
        return self.samples.reshape(-1, self.samples.shape[-1])


def start_points(log_posterior: Callable[[np.ndarray], np.ndarray], centre: np.ndarray, sd: np.ndarray,
                 low: np.ndarray, high: np.ndarray, walkers: int, draws: int, rng: np.random.Generator
                 ) -> np.ndarray:  # fmt: skip
    """The ``walkers`` starting points of highest posterior among ``draws`` draws of the prior,
    each distinct (walkers × coordinates)."""
    u = centre + sd * rng.standard_normal((draws, len(centre)))
    u = np.clip(u, low, high)
    lp = log_posterior(u)
    best = np.argsort(-np.where(np.isfinite(lp), lp, -np.inf), kind="stable")[:walkers]
    return u[best]


@contextmanager
def interrupt_between_steps() -> Iterator[Callable[[], bool]]:
    """While in the block, Ctrl-C (SIGINT) sets a flag instead of raising; yields the flag's
    reader. The previous handler is restored on leaving. Off the main thread (where a handler
    cannot be set) Ctrl-C is left as it is."""
    hit = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield hit.is_set
        return
    previous = signal.signal(signal.SIGINT, lambda _signum, _frame: hit.set())
    try:
        yield hit.is_set
    finally:
        signal.signal(signal.SIGINT, previous)


def sample(log_posterior: Callable[[np.ndarray], np.ndarray], start: np.ndarray, steps: int, burn_in: int,
           seed: int, progress: Callable[[int, int], None] | None = None) -> Chain:  # fmt: skip
    """Run emcee from ``start`` (walkers × coordinates) for ``burn_in + steps`` steps;
    ``progress(done, total)`` after each step.

    Raises
    ------
    InputError
        emcee is not installed (naming the command that installs it).
    """
    import time

    emcee = require_emcee()
    walkers, dim = start.shape
    sampler = emcee.EnsembleSampler(walkers, dim, log_posterior, vectorize=True)
    sampler.random_state = np.random.RandomState(seed % 2**32).get_state()
    began = time.perf_counter()
    with interrupt_between_steps() as interrupted:
        for done, _state in enumerate(sampler.sample(start, iterations=burn_in + steps, progress=False), 1):
            if interrupted():
                raise KeyboardInterrupt
            if progress is not None:
                progress(done, burn_in + steps)
    seconds = time.perf_counter() - began
    chain = sampler.get_chain(discard=burn_in)
    lp = sampler.get_log_prob(discard=burn_in)
    return Chain(chain, lp, float(np.mean(sampler.acceptance_fraction)), seconds)


def integrated_time(x: np.ndarray) -> np.ndarray:
    """The integrated autocorrelation time of each coordinate (steps × walkers × coordinates)
    [steps], emcee's estimate (Sokal's window), without its warning on short chains."""
    import logging

    emcee = require_emcee()
    log = logging.getLogger("emcee.autocorr")
    was = log.disabled
    log.disabled = True  # the diagnostics say when the fit has too few effective draws
    try:
        return np.asarray(emcee.autocorr.integrated_time(x, quiet=True), dtype=float)
    finally:
        log.disabled = was


def effective_sizes(samples: np.ndarray) -> np.ndarray:
    """Effective sample size of each coordinate: walkers × steps / τ [draws]."""
    steps, walkers, _dim = samples.shape
    with np.errstate(all="ignore"):
        tau = integrated_time(samples)
    return steps * walkers / np.maximum(tau, 1.0)


def split_rhat(samples: np.ndarray, groups: int) -> np.ndarray:
    """The split R-hat of each coordinate, the walkers in ``groups`` groups [1].

    Each group's walkers make one chain (their steps in order, walker by walker within a
    step); each chain is split in halves, and R-hat is ``sqrt(((n − 1)/n W + B/n) / W)`` over
    the 2 × ``groups`` half-chains of ``n`` draws, W the mean of their variances and B/n the
    variance of their means. 1 when the halves agree; NaN with fewer walkers than groups.
    """
    steps, walkers, dim = samples.shape
    if walkers < groups or steps < 4:
        return np.full(dim, np.nan)
    per = walkers // groups
    chains = []
    half = steps // 2
    for g in range(groups):
        part = samples[:, g * per : (g + 1) * per, :]
        chains += [part[:half].reshape(-1, dim), part[half : 2 * half].reshape(-1, dim)]
    stacked = np.stack(chains)  # chains × n × dim
    n = stacked.shape[1]
    within = stacked.var(axis=1, ddof=1).mean(axis=0)
    between = stacked.mean(axis=1).var(axis=0, ddof=1)
    with np.errstate(all="ignore"):
        pooled = (n - 1) / n * within + between
        return np.where(within > 0, np.sqrt(pooled / within), 1.0)
