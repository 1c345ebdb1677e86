"""Slopes of an optimal value by differences of fresh solves, and whether a reported price
lies between them: the oracle of λ and the shadow prices, written apart from the readout of
duals (nothing here reads a dual, a multiplier or a row). Used by
``test_prices_by_differences.py`` and ``benchmarks/prices_by_differences.py``.
"""

from __future__ import annotations

STEPS = (1e-4, 1e-5)  # relative steps of the differences [1]
REL = 1e-4  # how far outside the one-sided slopes a price may lie [1]
FINE = 1e-8  # the tolerance of the solves the differences take [1]


def slopes(value_at, at: float) -> list[tuple[float, float, float]]:
    """The left and right slopes of ``value_at`` at ``at``, at each relative step of STEPS, and
    how far the solves' tolerance can move a slope (twice FINE of the value, over the step)."""
    now = value_at(at)
    out = []
    for rel in STEPS:
        step = rel * max(abs(at), 1.0)
        noise = 2 * FINE * max(abs(now), 1.0) / step
        out.append(((now - value_at(at - step)) / step, (value_at(at + step) - now) / step, noise))
    return out


def between(price: float, found: list[tuple[float, float, float]]) -> bool:
    """Whether ``price`` lies between the one-sided slopes, within REL, at a step whose slopes
    the solves' tolerance moves by less than REL of them; where no step is that sharp (a slope
    of 0, say), within the noise of the largest step."""
    sharp = [(a, b) for a, b, noise in found if noise <= REL * max(abs(a), abs(b))]
    if sharp:
        return any(min(a, b) * (1 - REL) <= price <= max(a, b) * (1 + REL) for a, b in sharp)
    a, b, noise = found[0]
    return min(a, b) - noise <= price <= max(a, b) + noise
