"""The fit's formulas against independent computations: scipy's densities, the program's value
curves, and the diagnostics on chains whose answer is known."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special, stats

from procure.analyses.fit.fitting import fit
from procure.analyses.fit.links import LINKS, binomial_loglik, normal_loglik, student_loglik
from procure.analyses.fit.model import build, resolve
from procure.analyses.fit.sampler import effective_sizes, split_rhat
from procure.analyses.fit.settings import check_settings
from procure.errors import InputError
from procure.program.numbers import value

from .conftest import DEFAULT, FAST, simulated


def test_binomial_loglik_is_scipy_s_less_its_coefficient():
    rng = np.random.default_rng(0)
    n = rng.integers(20, 51, 12).astype(float)
    y = rng.binomial(n.astype(int), 0.6).astype(float)
    p = rng.uniform(0.05, 0.95, (3, 12))
    want = (stats.binom.logpmf(y, n, p) - np.log(special.comb(n, y))).sum(axis=1)
    assert binomial_loglik(p, y, n) == pytest.approx(want, rel=1e-10)


def test_normal_and_student_logliks_are_scipy_s_less_a_constant():
    rng = np.random.default_rng(1)
    y, mean, sd = rng.normal(size=8), rng.normal(size=(2, 8)), rng.uniform(0.1, 1, (2, 8))
    normal = stats.norm.logpdf(y, mean, sd).sum(axis=1)
    assert normal_loglik(mean, y, sd) - normal == pytest.approx(np.full(2, 8 * 0.5 * np.log(2 * np.pi)))
    t = stats.t.logpdf(y, 4.0, mean, sd).sum(axis=1)
    constant = -8 * (special.gammaln(2.5) - special.gammaln(2.0) - 0.5 * np.log(4 * np.pi))
    assert student_loglik(mean, y, sd, 4.0) - t == pytest.approx(np.full(2, constant))


def test_the_links_formulas():
    v = np.array([[0.0, 100.0, 1e9]])
    p = {"p_min": np.array([0.1]), "p_max": np.array([0.9]), "value_scale": np.array([100.0])}
    assert LINKS["exp"].mean(v, p)[0].tolist() == pytest.approx([0.1, 0.1 + 0.8 * (1 - np.exp(-1)), 0.9])
    assert LINKS["hyperbolic"].mean(v, p)[0].tolist() == pytest.approx([0.1, 0.5, 0.9])
    s = {"y_0": np.array([2.0]), "y_inf": np.array([1.0]), "alpha": np.array([0.5]), "value_scale": np.array([100.0])}
    assert LINKS["power"].mean(v, s)[0].tolist() == pytest.approx([2.0, 1 + 2**-0.5, 1 + (1 + 1e7) ** -0.5], rel=1e-12)


def test_run_values_are_the_program_s_own_curves():
    runs = simulated()
    free, _ = resolve(None, DEFAULT.sources, runs)
    model = build(runs, DEFAULT.sources, free, "exp", "binomial", check_settings({}))
    u = model.centre[None, :] + np.array([[0.3, -0.2, 0.1, 0.4, -0.5, 0, 0, 0]])[:, : model.dim]
    rho, sigma, k = model.columns(u)
    s = DEFAULT.sources
    e = rho[0] * sigma[0] * runs.hours
    want = value.value(e, s["curve"].to_numpy(str)[None, :], k[0][None, :], s["curve_shape"].to_numpy(float)[None, :])
    assert model.values(u)[0] == pytest.approx(np.asarray(want).sum(axis=1), rel=1e-12)
    # The numeraire's exchange rate is 1 and is not freed; the prior is centred on the ledger.
    assert "own.exchange_rate" not in model.names
    twin = model.names.index("twin.exchange_rate")
    assert np.exp(model.centre[twin]) == pytest.approx(0.35)


def test_split_rhat_is_one_for_agreeing_walkers_and_large_for_split_ones():
    rng = np.random.default_rng(2)
    same = rng.normal(size=(2000, 16, 1))
    assert split_rhat(same, 4)[0] == pytest.approx(1.0, abs=0.01)
    apart = same + np.repeat(np.arange(4.0), 4)[None, :, None] * 3
    # Four groups 3 sd apart: R-hat from its definition, computed here from the variances.
    halves = [apart[h * 1000 : (h + 1) * 1000, g * 4 : (g + 1) * 4, 0].ravel() for g in range(4) for h in range(2)]
    n = len(halves[0])
    w = np.mean([x.var(ddof=1) for x in halves])
    b = np.var([x.mean() for x in halves], ddof=1)
    assert split_rhat(apart, 4)[0] == pytest.approx(np.sqrt(((n - 1) / n * w + b) / w), rel=1e-10)
    assert split_rhat(apart, 4)[0] > 2


def test_effective_size_of_an_ar1_chain_is_near_its_known_value():
    """An AR(1) chain of coefficient φ has τ = (1 + φ) / (1 − φ): ESS = N / τ."""
    rng = np.random.default_rng(3)
    phi, steps, walkers = 0.8, 20_000, 8
    x = np.zeros((steps, walkers, 1))
    noise = rng.normal(size=(steps, walkers))
    for t in range(1, steps):
        x[t, :, 0] = phi * x[t - 1, :, 0] + noise[t]
    want = steps * walkers * (1 - phi) / (1 + phi)
    assert effective_sizes(x)[0] == pytest.approx(want, rel=0.15)


def test_settings_are_checked_against_their_ranges():
    with pytest.raises(InputError, match=r"walkers = 1 is invalid: must be a whole number ≥ 4"):
        fit(simulated(), DEFAULT, walkers=1)
    with pytest.raises(InputError, match=r"prior_sd_exchange_rate = -1 is invalid"):
        fit(simulated(), DEFAULT, prior_sd_exchange_rate=-1, **FAST)
    with pytest.raises(InputError, match="setting 'stepz' is unknown"):
        fit(simulated(), DEFAULT, stepz=3)


def test_ctrl_c_while_sampling_stops_between_steps_without_the_samplers_traceback(capfd):
    # Ctrl-C arriving inside the log posterior (where the sampler spends its time): emcee's
    # wrapper printed the whole traceback before the command's one line; now the interrupt is
    # raised after the step, outside that wrapper, and nothing is printed
    import os
    import signal

    from procure.analyses.fit.sampler import sample

    calls = [0]

    def log_posterior(theta: np.ndarray) -> np.ndarray:
        calls[0] += 1
        if calls[0] == 3:
            os.kill(os.getpid(), signal.SIGINT)
        return -0.5 * np.sum(theta**2, axis=1)

    start = np.random.default_rng(0).normal(size=(8, 2))
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        sample(log_posterior, start, steps=1_000, burn_in=0, seed=1)
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err and "emcee" not in out + err
    assert 3 <= calls[0] <= 4  # stopped at the end of the step it arrived in
    assert signal.getsignal(signal.SIGINT) is before


def test_the_sampler_reports_each_step():
    from procure.analyses.fit.sampler import sample

    seen: list[tuple[int, int]] = []
    start = np.random.default_rng(0).normal(size=(8, 2))
    sample(lambda t: -0.5 * np.sum(t**2, axis=1), start, steps=30, burn_in=10, seed=1,
           progress=lambda done, total: seen.append((done, total)))  # fmt: skip
    assert seen == [(i, 40) for i in range(1, 41)]
