"""The curve registry: each entry's formulas agree with each other, concavity follows the shape,
and the value functions of the program apply the entries to a mix of curves."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from procure import curves
from procure.curves import REGISTRY
from procure.ledger import SOURCE_COLUMNS
from procure.program import value

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
    assert curves.NAMES == ("linear", "log", "exp", "power", "hill")
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
    assert value.CONCAVE == ("linear", "log", "exp", "power")
