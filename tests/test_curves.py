"""The curve registry: each entry's formulas agree with each other, concavity follows the shape,
and the value functions of the program apply the entries to a mix of curves."""

from __future__ import annotations

import decimal
import math
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procure import curves
from procure.curves import REGISTRY
from procure.ledger import SOURCE_COLUMNS
from procure.program.numbers import value

K = 100.0  # [effective h]


def _shapes(name: str) -> list[float]:
    """Shapes to try for a curve: NaN if it takes none, else a spread inside its range [1]."""
    allowed = REGISTRY[name].shape_range
    if allowed is None:
        return [math.nan]
    return [s for s in (0.05, 0.3, 0.5, 1.0, 1.5, 2.0, 4.0, 20.0) if allowed.contains(s)]


CASES = [(name, s) for name in REGISTRY for s in _shapes(name)]


def _call(f, x, s, k=K):
    x = np.atleast_1d(np.asarray(x, dtype=float))
    return f(x, np.full_like(x, k), np.full_like(x, s))


@pytest.mark.parametrize(("name", "shape"), CASES)
def test_every_curve_starts_at_zero(name, shape):
    assert _call(REGISTRY[name].value, 0.0, shape)[0] == 0.0


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(CASES), st.floats(0.01, 1e4), st.floats(1, 1e4))
def test_derivative_matches_a_finite_difference_of_the_value(case, e, k):
    name, shape = case
    curve = REGISTRY[name]
    h = 1e-6 * max(1.0, e)
    fd = (_call(curve.value, e + h, shape, k) - _call(curve.value, e - h, shape, k)) / (2 * h)
    assert _call(curve.derivative, e, shape, k)[0] == pytest.approx(fd[0], rel=1e-5, abs=1e-9)


CONCAVE_CASES = [(n, s) for n, s in CASES if bool(REGISTRY[n].concave(np.asarray(s)))]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([c for c in CONCAVE_CASES if c[0] != "linear" and c != ("power", 1.0)]), st.floats(0.05, 5e3))
def test_inverse_derivative_inverts_the_derivative_on_concave_curves(case, e):
    name, shape = case
    curve = REGISTRY[name]
    slope = _call(curve.derivative, e, shape)[0]
    back = _call(curve.inverse_derivative, slope, shape)[0]
    assert back == pytest.approx(e, rel=1e-6)


def test_linear_inverse_derivative_is_all_or_nothing():
    linear = REGISTRY["linear"]
    assert _call(linear.inverse_derivative, [0.5, 1.0, 2.0], math.nan).tolist() == [math.inf, 0.0, 0.0]
    power_one = _call(REGISTRY["power"].inverse_derivative, [0.5, 1.0, 2.0], 1.0)
    assert power_one.tolist() == [math.inf, 0.0, 0.0]  # β = 1 is linear


def test_s_shaped_hill_inverts_on_its_concave_side():
    hill = REGISTRY["hill"]
    for s in (2.0, 4.0):
        steepest = K * ((s - 1) / (s + 1)) ** (1 / s)
        for e in (1.5 * steepest, 3 * K):
            slope = _call(hill.derivative, e, s)[0]
            assert _call(hill.inverse_derivative, slope, s)[0] == pytest.approx(e, rel=1e-6)
        top = _call(hill.derivative, steepest, s)[0]
        assert _call(hill.inverse_derivative, 1.01 * top, s)[0] == 0.0  # above every slope: none


@pytest.mark.parametrize(("name", "shape"), CASES)
def test_concavity_follows_the_shape(name, shape):
    """Second differences of v on a grid: never positive where the entry says concave; some
    positive where it says not (hill with s > 1 is convex first)."""
    e = np.linspace(0, 5 * K, 2001)
    v = _call(REGISTRY[name].value, e, shape)
    second = np.diff(v, 2)
    concave = bool(REGISTRY[name].concave(np.asarray(shape)))
    assert concave == (name != "hill" or shape <= 1)
    if concave:
        assert second.max() <= 1e-9 * K
    else:
        assert second.max() > 0


def test_the_entries_say_what_the_ledger_needs():
    assert curves.NAMES == ("linear", "log", "exp", "power", "hill", "logistic")
    assert [n for n, c in REGISTRY.items() if not c.needs_scale] == ["linear"]
    assert {c.name: c.default_shape for c in curves.shaped()} == {"power": 0.5, "hill": 2.0}
    for c in curves.shaped():
        assert c.shape_range is not None and c.shape_range.contains(c.default_shape)
    assert REGISTRY["power"].shape_range.describe() == "a number > 0 and ≤ 1"
    assert REGISTRY["hill"].shape_range.describe() == "a number > 0 and ≤ 20"
    column = SOURCE_COLUMNS["curve_shape"]
    assert (column.low, column.low_open, column.high) == (0.0, True, 20.0)
    assert SOURCE_COLUMNS["curve"].choices == curves.NAMES


def test_vectorised_lookups():
    names = np.array(["hill", "log", "linear", "sigmoid"])
    assert curves.smallest_tangent_point(names).tolist() == [1e-6, 0.0, 0.0, 0.0]
    assert curves.needs_scale(names).tolist() == [True, True, False, True]
    got = curves.default_shape(names)
    assert got[0] == 2.0 and np.isnan(got[1:]).all()
    assert curves.smallest_tangent_point("hill") == 1e-6
    hours = curves.smallest_tangent_hours(names, np.array([300.0, 50.0, math.nan, 1.0]))
    assert hours.tolist() == [3e-4, 0.0, 0.0, 0.0]
    with pytest.raises(curves.InputError, match="curve = 'sigmoid' is invalid: allowed are one of linear"):
        curves.get("sigmoid")


def test_the_program_applies_each_entry_to_its_sources():
    rng = np.random.default_rng(0)
    n = 500
    names = rng.choice([*REGISTRY, "sigmoid"], n)
    e = rng.uniform(0, 1e3, n)
    k = rng.uniform(10, 1e3, n)
    s = rng.uniform(0.2, 1.0, n)
    for fn, attr in ((value.value, "value"), (value.derivative, "derivative")):
        got = np.asarray(fn(e, names, k, s))
        for name, entry in REGISTRY.items():
            m = names == name
            assert np.array_equal(got[m], getattr(entry, attr)(e[m], k[m], s[m]))
        assert np.isnan(got[names == "sigmoid"]).all()
    assert value.CONCAVE == ("linear", "log", "exp", "power", "logistic")


# ----------------------------------------------------------------------------- logistic


def pymc_logistic_saturation(x, lam, beta):
    """PyMC-Marketing's ``LogisticSaturation``: ``beta (1 − exp(−lam x)) / (1 + exp(−lam x))``,
    written out from its documentation [the value's unit]."""
    x = np.asarray(x, dtype=float)
    return beta * (1 - np.exp(-lam * x)) / (1 + np.exp(-lam * x))


LOGISTIC = REGISTRY["logistic"]
#: The spacing of doubles just below 1: a slope of 1 − 1e-16 and one of 1 are the same double [1].
SLOPE_RESOLUTION = 2.0**-52


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.floats(0.0, 1e5), st.floats(1e-3, 1e6))
def test_logistic_is_pymc_marketings_logistic_saturation(e, k):
    """With λ = 1/k and β = 2k the two agree, and the slope at 0 is 1."""
    got = _call(LOGISTIC.value, e, math.nan, k)[0]
    assert got == pytest.approx(float(pymc_logistic_saturation(e, 1 / k, 2 * k)), rel=1e-12, abs=1e-12 * k)
    assert _call(LOGISTIC.derivative, 0.0, math.nan, k)[0] == 1.0


def test_a_fitted_logistic_saturation_is_a_scale_and_an_exchange_rate():
    """A PyMC-Marketing curve (λ, β) on recorded hours x: k = β/2 and ρ = λβ/2, so that
    v(ρx) = β (1 − exp(−λx)) / (1 + exp(−λx)) for every x."""
    x = np.linspace(0, 5_000, 501)
    for lam, beta in ((1e-3, 40.0), (0.02, 7.5), (2.0, 300.0)):
        k, rate = beta / 2, lam * beta / 2
        got = _call(LOGISTIC.value, rate * x, math.nan, k)
        assert np.allclose(got, pymc_logistic_saturation(x, lam, beta), rtol=1e-12, atol=1e-12 * beta)


def test_logistic_saturates_at_twice_its_scale():
    far = _call(LOGISTIC.value, [10 * K, 100 * K, 1e6 * K], math.nan)
    assert far[0] == pytest.approx(2 * K * math.tanh(5.0), rel=1e-14)
    assert far[1:].tolist() == [2 * K, 2 * K]
    assert _call(LOGISTIC.derivative, [1e3 * K, 1e6 * K], math.nan).tolist() == [0.0, 0.0]  # no overflow


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.floats(1e-3, 40.0), st.floats(1e-3, 1e6))
def test_logistic_slope_is_a_finite_difference_of_the_pymc_formula(r, k):
    """v' against central differences of PyMC-Marketing's formula at shrinking steps."""
    e = r * k
    slope = _call(LOGISTIC.derivative, e, math.nan, k)[0]
    lam, beta = 1 / k, 2 * k
    steps = [1e-3 * k * min(r, 1.0) / 4**j for j in range(4)]
    fd = [
        (pymc_logistic_saturation(e + h, lam, beta) - pymc_logistic_saturation(e - h, lam, beta)) / (2 * h)
        for h in steps
    ]
    assert min(abs(f - slope) for f in fd) <= 1e-6 * max(slope, 1e-12) + 1e-9


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.floats(1e-12, 1.0, exclude_max=True), st.floats(1e-3, 1e6))
def test_logistic_inverse_slope_is_where_the_pymc_formula_has_that_slope(y, k):
    """At e = inverse(y) a central difference of PyMC-Marketing's formula is y, and the slope
    just left of e is above y, just right below it (v' falls)."""
    e = _call(LOGISTIC.inverse_derivative, y, math.nan, k)[0]
    assert math.isfinite(e) and e > 0
    lam, beta = 1 / k, 2 * k
    h = 1e-4 * min(e, k)
    fd = (pymc_logistic_saturation(e + h, lam, beta) - pymc_logistic_saturation(e - h, lam, beta)) / (2 * h)
    # Central-difference error: truncation (h²/6)|v'''| ≤ h²/k², and rounding ≈ 2k·1e-16 / h.
    assert fd == pytest.approx(y, rel=1e-6, abs=(h / k) ** 2 + 1e-15 * k / h)
    left, right = _call(LOGISTIC.derivative, [e * (1 - 1e-6), e * (1 + 1e-6)], math.nan, k)
    assert left >= y - SLOPE_RESOLUTION and right <= y + SLOPE_RESOLUTION


def test_logistic_inverse_slope_at_its_ends():
    """0 where the slope asked for is v'(0) = 1 or more, inf at 0 or below, NaN for NaN; and
    the closed form 2k arcosh(1/√y) far from the ends."""
    got = _call(LOGISTIC.inverse_derivative, [1.0, 1.5, 0.0, -0.5, math.nan], math.nan)
    assert got[:4].tolist() == [0.0, 0.0, math.inf, math.inf] and math.isnan(got[4])
    y = [1 - 1e-12, 0.9, 0.5, 1e-3, 1e-100, 1e-300]
    with decimal.localcontext() as ctx:
        ctx.prec = 60  # digits: arcosh near 1 cancels about 12 of them
        x = [1 / Decimal(v).sqrt() for v in y]
        exact = [float(2 * Decimal(K) * (c + (c * c - 1).sqrt()).ln()) for c in x]
    assert np.allclose(_call(LOGISTIC.inverse_derivative, y, math.nan), exact, rtol=1e-13)
