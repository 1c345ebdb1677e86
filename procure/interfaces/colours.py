"""The colours of every chart: one per source, the same in the command line's plots, the app's
and the report's charts, and the colours of money that are none of the sources'."""

from __future__ import annotations

from collections.abc import Sequence

#: Colours of the sources, in the ledger's order, repeating past the tenth: matplotlib's
#: ``tab10`` cycle, in the same order in every chart.
SOURCE_PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
#: Colours of money split in two beside the sources' bars: purchases and the transport bill
#: (greys, none of :data:`SOURCE_PALETTE`'s) [matplotlib grey levels].
MONEY_COLOURS = {"purchases": "0.35", "transport": "0.72"}


def source_colours(sources: Sequence[str]) -> dict[str, str]:
    """Each source's colour: :data:`SOURCE_PALETTE` in the order given (the ledger's)."""
    return {name: SOURCE_PALETTE[i % len(SOURCE_PALETTE)] for i, name in enumerate(sources)}
