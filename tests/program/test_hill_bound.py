"""The piecewise form of an S-shaped hill curve lies on or above the curve everywhere, for every
shape the ledger allows (s up to 20): checked on a fine grid, independently of how the form's
lift is computed."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from procure.program.model.forms import hill_upper_values
from procure.program.numbers.bounds import CurveArrays


def _hill(k: float, shape: float, rate: float = 1.0, held: float = 0.0) -> CurveArrays:
    one = np.ones(1)
    return CurveArrays(rate * one, held * one, np.full(1, np.inf), np.full(1, np.inf), np.zeros(1, bool),
                       np.array(["hill"]), k * one, shape * one, np.zeros(1, bool), np.zeros(1, bool), 0 * one,
                       np.full(1, np.inf))  # fmt: skip


def _curve(k, shape, e):
    """v(e) = k u / (1 + u), u = (e/k)^s, written here."""
    u = (e / k) ** shape
    return k * u / (1.0 + u)


def _worst_shortfall(arrays: CurveArrays, xs: np.ndarray, samples: int = 4001) -> float:
    tops = hill_upper_values(arrays, [0], [xs])[0]
    fine = np.unique(np.concatenate([np.linspace(a, b, samples) for a, b in itertools.pairwise(xs)]))
    form = np.interp(fine, xs, tops)
    e = arrays.rate[0] * (arrays.held[0] + fine)
    return float(np.max(_curve(arrays.k[0], arrays.shape[0], e) - form))


def test_the_reported_case_is_bounded():
    """k = 100, s = 12, 17 breakpoints over 20,000 h: the sampled form was 0.15 below at e = 146.8."""
    arrays = _hill(100.0, 12.0)
    xs = np.linspace(0.0, 20_000.0, 17)
    assert _worst_shortfall(arrays, xs, samples=200_001) <= 0.0
    tops = hill_upper_values(arrays, [0], [xs])[0]
    at = 146.8
    assert np.interp(at, xs, tops) >= _curve(100.0, 12.0, at)


@pytest.mark.parametrize("shape", [1.05, 1.5, 2.0, 3.0, 5.0, 8.0, 12.0, 16.0, 20.0])
@pytest.mark.parametrize("seed", range(4))
def test_form_lies_on_or_above_the_curve(shape, seed):
    rng = np.random.default_rng(seed)
    k = float(10 ** rng.uniform(0, 4))
    rate = float(rng.uniform(0.05, 2.0))
    held = float(rng.choice([0.0, rng.uniform(0, 3 * k / rate)]))
    top = float(k / rate * 10 ** rng.uniform(-0.5, 2.5))
    count = int(rng.integers(3, 40))
    xs = np.unique(np.concatenate([[0.0, top], np.sort(rng.uniform(0, top, count))]))
    arrays = _hill(k, shape, rate, held)
    assert _worst_shortfall(arrays, xs) <= 0.0


@pytest.mark.parametrize("shape", [2.0, 12.0, 20.0])
def test_form_is_tight(shape):
    """The margin is proven, and small: on fine breakpoints the form exceeds the curve by little."""
    arrays = _hill(100.0, shape)
    xs = np.linspace(0.0, 400.0, 2001)
    tops = hill_upper_values(arrays, [0], [xs])[0]
    fine = np.linspace(0.0, 400.0, 400_001)
    excess = np.interp(fine, xs, tops) - _curve(100.0, shape, fine)
    assert excess.min() >= 0.0
    assert excess.max() <= 0.02 * (shape / 2) ** 2
