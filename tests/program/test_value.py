"""Value curves, shelf life and effective hours."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procure.program.numbers import value

CURVES = [("linear", math.nan), ("log", math.nan), ("exp", math.nan), ("power", 0.5), ("power", 0.2), ("hill", 1.0)]


@pytest.mark.parametrize(("curve", "shape"), CURVES)
def test_origin(curve, shape):
    """v(0) = 0 and v'(0) = 1: a first effective hour is worth one own-hour equivalent."""
    assert value.value(0.0, curve, 100.0, shape) == 0.0
    assert value.derivative(0.0, curve, 100.0, shape) == pytest.approx(1.0)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([*CURVES, ("hill", 2.0), ("hill", 4.0)]), st.floats(0.01, 1e4), st.floats(1, 1e4))
def test_derivative_matches_finite_difference(cs, e, k):
    curve, shape = cs
    h = 1e-6 * max(1.0, e)
    fd = (value.value(e + h, curve, k, shape) - value.value(e - h, curve, k, shape)) / (2 * h)
    assert value.derivative(e, curve, k, shape) == pytest.approx(fd, rel=1e-5, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(CURVES), st.floats(0, 1e4), st.floats(0, 1e4), st.floats(1, 1e4))
def test_tangents_lie_above_concave_curves(cs, point, e, k):
    curve, shape = cs
    slope, intercept = value.tangent(point, curve, k, shape)
    assert value.value(e, curve, k, shape) <= slope * e + intercept + 1e-9 * max(1.0, e)


def test_hill_is_s_shaped():
    assert not value.is_concave("hill", 2.0) and value.is_concave("hill", 1.0) and value.is_concave("log")
    assert value.value(100.0, "hill", 100.0, 3.0) == pytest.approx(50.0)  # half its ceiling at e = k
    assert value.derivative(0.0, "hill", 100.0, 3.0) == 0.0


def test_shelf_life_factor():
    """φ = L / (H ln 2) (1 − 2^(−H/L)), the mean of 2^(−t/L) over [0, H]; checked by quadrature."""
    for L, H in [(36, 12), (18, 12), (12, 12), (6, 24)]:
        t = np.linspace(0, H, 200_001)
        mean = np.trapezoid(2 ** (-t / L), t) / H
        assert value.shelf_life_factor(L, H) == pytest.approx(mean, rel=1e-9)
    assert value.shelf_life_factor(math.inf, 12) == 1.0
    assert value.shelf_life_factor(12, 0) == 1.0


def test_effective_rate():
    assert value.effective_rate(0.35, 0.9, 18, 12) == pytest.approx(0.35 * 0.9 * value.shelf_life_factor(18, 12))


@pytest.mark.parametrize(("curve", "shape"), [("log", math.nan), ("exp", math.nan), ("power", 0.5)])
def test_inverse_derivative(curve, shape):
    for y in (0.9, 0.5, 0.1):
        e = value.inverse_derivative(y, curve, 100.0, shape)
        assert value.derivative(e, curve, 100.0, shape) == pytest.approx(y)
