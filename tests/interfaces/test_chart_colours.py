"""One colour per source in every figure: the value curves, the plan as the byte price moves and
the schedule over periods draw each source in its colour of the ledger's order
(``procure.interfaces.colours``), and the money beside them in greys that are no source's."""

from __future__ import annotations

from pathlib import Path

import pytest
from matplotlib.colors import to_hex

import procure
from procure.analyses.sensitivity import sweep
from procure.interfaces import plots
from procure.interfaces.colours import MONEY_COLOURS, SOURCE_PALETTE, source_colours
from procure.ledger import load_ledger
from procure.ledger.periods import read_periods

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def ledger():
    return load_ledger()


def test_the_value_curves_draw_each_source_in_its_colour(ledger):
    problem = procure.from_ledger(ledger, budget=100_000.0)
    plan = procure.solve(ledger, budget=100_000.0)
    want = source_colours(list(ledger.sources["source"]))
    axes = [ax for ax in plots.value_curves(plan, problem).axes if ax.get_visible()]
    assert [to_hex(ax.lines[0].get_color()) for ax in axes] == [want[s] for s in ledger.sources["source"]]


def test_the_byte_price_plot_draws_each_source_in_its_colour_with_a_legend(ledger):
    frame = sweep(ledger, "byte_price_x", 0.1, 10, 3, budget=100_000.0, workers=1)
    fig = plots.sensitivity_hours(frame)
    ax = fig.axes[0]
    want = source_colours(list(ledger.sources["source"]))
    drawn = {line.get_label(): to_hex(line.get_color()) for line in ax.lines}
    assert drawn == {s: want[s] for s in ledger.sources["source"]}
    assert ax.get_legend() is not None and not ax.texts  # names in a legend, none at the lines' ends


def test_the_schedule_draws_each_source_in_its_colour_and_money_in_greys(ledger):
    spec = read_periods(EXAMPLES / "quarters" / "periods.csv", ledger.sources)
    plan = procure.solve(ledger, periods=spec)
    top, low = plots.schedule(plan).axes[:2]
    want = source_colours(list(ledger.sources["source"]))
    for container in top.containers:
        name = container.get_label()
        assert to_hex(container.patches[0].get_facecolor()) == want[name]
    money = {to_hex(c.patches[0].get_facecolor()) for c in low.containers}
    assert money == {to_hex(MONEY_COLOURS["purchases"]), to_hex(MONEY_COLOURS["transport"])}
    assert not money & {to_hex(c) for c in SOURCE_PALETTE}
