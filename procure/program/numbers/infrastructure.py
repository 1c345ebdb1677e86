"""The infrastructure the program may choose with the data: storage formats, cores, rented capacity.

Each purchase option is a (source, format, cores count), priced through the pipeline
(:func:`procure.ledger.transport` of the source's row changed; ``model_side`` re-encodes at the
default bits per pixel of ``sources.csv`` and the cluster's keyframe interval). The formats, the
cores choice and the rent: ``docs/program.md``, "Infrastructure chosen with the data".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ...errors import Reason, SolveError, invalid
from ...ledger import SOURCE_COLUMNS, Cluster, transport
from ...ledger.schema import FORMAT_JOIN, FORMATS
from ...pipeline import bill
from ...spec import did_you_mean
from .problem import CAPACITIES, HELD_FIT_MARGIN, Problem, cluster_capacity, require_sources

#: Hours in a month (365.25 × 24 / 12), for storage rented by the GB-month over the window [h].
HOURS_PER_MONTH = 730.5
#: Cluster keys of the capacity that may be rented, by capacity, and the price key of a unit.
RENT_KEYS = {
    "accelerator_hours": ("rent_accelerator_hours", "accelerator_usd_per_hour"),
    "core_hours": ("rent_core_hours", "core_usd_per_hour"),
    "storage_gb": ("rent_storage_gb", "storage_usd_per_gb_month"),
}


@dataclass(frozen=True)
class Infrastructure:
    """The purchase options of a problem: one per (source, format, cores count).

    Attributes
    ----------
    base : Problem
        The ledger's numbers in budget mode, its all-in cost the cheapest option's and its
        capacity uses the least of any option's (so that its bounds hold for every option).
    source, format, choice : numpy.ndarray
        Per option: its source (index), format (name) and cores choice (index into ``cores``).
    cost : numpy.ndarray
        Per option, all in: price, bill and the one-time cost of the format [$/h].
    bill, reformat_usd, pixels_per_token : numpy.ndarray
        Per option: its transport bill [$/h], the one-time cost of its format [$/h] and the
        decoded pixels of one token [px].
    usage : dict of str to numpy.ndarray
        Per capacity, each option's use per recorded hour [its unit].
    held_usage : dict of str to numpy.ndarray
        Per capacity, the use of the hours already held at each cores count [its unit].
    capacity : dict of str to numpy.ndarray
        Per capacity, its limit at each cores count [its unit] (inf = unlimited).
    cores : numpy.ndarray
        The cores-per-accelerator counts to choose among (one: no choice) [cores].
    split : numpy.ndarray
        Per source, whether its hours may be split across its formats.
    rent : dict of str to tuple of float
        Per capacity that may be rented: (most units, price of a unit [$]).
    """

    base: Problem
    source: np.ndarray
    format: np.ndarray
    choice: np.ndarray
    cost: np.ndarray
    bill: np.ndarray
    reformat_usd: np.ndarray
    pixels_per_token: np.ndarray
    usage: dict[str, np.ndarray]
    held_usage: dict[str, np.ndarray]
    capacity: dict[str, np.ndarray]
    cores: np.ndarray
    split: np.ndarray
    rent: dict[str, tuple[float, float]]

    # What the refinement reads of every formulation.
    risk_weight = 0.0
    recourse_price_x = None
    certain = False
    count = 1

    @property
    def n(self) -> int:
        """Number of sources."""
        return self.base.n

    @property
    def rate(self) -> np.ndarray:
        """Effective hours per recorded hour of each source, ρσφ, as one scenario (1 × sources) [1]."""
        return self.base.rate[None, :]

    @property
    def options(self) -> int:
        """Number of purchase options."""
        return len(self.source)

    def objective(self, run_values: np.ndarray) -> float:
        """The plan's value [own-hour equivalents]."""
        return float(np.sum(run_values))

    def with_base(self, problem: Problem) -> Infrastructure:
        """Not offered: the options are priced with the cluster (a sweep rebuilds them)."""
        raise invalid("reprice", "infrastructure", "options are priced with the cluster: build them anew")


def _check_held_fits(capacity: dict[str, np.ndarray], held: dict[str, np.ndarray],
                     rents: dict[str, tuple[float, float]], counts: np.ndarray) -> None:  # fmt: skip
    """A :class:`SolveError` where the hours already held (as recorded) break a capacity at every
    cores count, even with all that may be rented."""
    for name, (_column, unit) in CAPACITIES.items():
        room = capacity[name] + rents.get(name, (0.0, 0.0))[0] - held[name]
        if np.all(room < -HELD_FIT_MARGIN * np.maximum(1.0, np.abs(capacity[name]))):
            c = int(np.argmax(room))
            raise SolveError(
                f"infeasible: the hours already held need {held[name][c]:,.1f} {unit} of {name} (as recorded, at "
                f"{counts[c]:g} cores), the capacity is {capacity[name][c]:,.1f} {unit}"
                + (f" with {rents[name][0]:,.1f} to rent" if name in rents else "")
                + ": raise the capacity or lower held_hours",
                Reason.INFEASIBLE,
            )


def source_formats(sources: pd.DataFrame, given: Sequence[str] | None) -> list[tuple[str, ...]]:
    """The formats each source may take: ``given`` for every source that can take them, else
    its ``formats`` cell (blank: as recorded only).

    Raises
    ------
    InputError
        An unknown format, or a format a source cannot take: re-encoding or decoding a
        rendered source (it moves no bytes and is never decoded) or one already stored decoded.
    """
    out = []
    for i in range(len(sources)):
        row = sources.iloc[i]
        cell = str(row.get("formats", "") or "").strip()
        names = tuple(given) if given is not None else tuple(f.strip() for f in cell.split(FORMAT_JOIN) if f.strip())
        names = names or ("recorded",)
        for name in names:
            if name not in FORMATS:
                field = "formats" if given is not None else f"formats of {row['source']!r}"
                hint = f" (join formats with {FORMAT_JOIN!r})" if "," in name else did_you_mean(name, FORMATS)
                raise invalid(field, name, f"allowed are {', '.join(FORMATS)}{hint}")
        if str(row["stored"]) != "video":
            other = [f for f in names if f != "recorded"]
            if other and given is None:
                why = f"its frames are stored {row['stored']}: nothing to re-encode or decode (recorded only)"
                raise invalid(f"formats of {row['source']!r}", other[0], why)
            names = ("recorded",)
        out.append(tuple(dict.fromkeys(names)))
    return out


def _variant(sources: pd.DataFrame, fmt: str, cluster: Cluster) -> pd.DataFrame:
    """The sources' rows as kept in ``fmt``."""
    s = sources.copy()
    if fmt == "model_side":
        s["width"] = cluster.input_side
        s["height"] = cluster.input_side
        s["bits_per_pixel"] = SOURCE_COLUMNS["bits_per_pixel"].default  # the default H.264 rate
        for column in ("gop", "core_fps_1080p", "codec"):  # the new stream is the cluster's H.264
            if column in s:
                s[column] = np.nan if column != "codec" else ""
    elif fmt == "decoded":
        s["stored"] = "decoded"
    return s


def infrastructure(
    problem: Problem,
    sources: pd.DataFrame,
    cluster: Cluster,
    *,
    formats: Sequence[str] | None = None,
    cores: Sequence[float] | None = None,
    rent: bool = True,
    byte_price_x: float = 1.0,
) -> Infrastructure:
    """The purchase options of a budget-mode problem made from ``sources`` on ``cluster``.

    Parameters
    ----------
    problem : Problem
        The program's numbers (its held hours, budget and mix bounds are kept).
    sources, cluster : pandas.DataFrame, Cluster
        The ledger's rows and cluster the problem was priced from.
    formats : sequence of str, optional
        Formats every source may take (those it can); None: each source's ``formats`` column.
    cores : sequence of float, optional
        Cores-per-accelerator counts to choose among; None: the cluster's.
    rent : bool, default True
        Let the plan rent the capacity the cluster's ``rent_*`` keys allow.
    byte_price_x : float, default 1
        The multiplier on the byte price the problem was priced with [1].

    Raises
    ------
    InputError
        An empty or bad cores list, an unknown or impossible format.
    """
    require_sources(problem)
    counts = np.array([cluster.cores_per_accelerator] if cores is None else list(cores), dtype=float)
    if len(counts) == 0:
        raise invalid("cores_choices", "", "give at least one count of cores per accelerator")
    if not np.all(np.isfinite(counts) & (counts >= 1) & (counts == np.round(counts))):
        raise invalid("cores_choices", ",".join(f"{c:g}" for c in counts), "whole numbers ≥ 1, comma-separated")
    counts = np.unique(counts)
    allowed = source_formats(sources, formats)
    price = problem.column("price_usd_per_hour")
    n = problem.n
    # Every format some source takes, at every count, priced in one pass: the blocks of rows
    # (count, format) stacked count by count, each format's rows as kept in it.
    kept = {fmt: np.array([fmt in a for a in allowed]) for fmt in FORMATS}
    variants = {fmt: sources if fmt == "recorded" else _variant(sources, fmt, cluster)
                for fmt in FORMATS if fmt == "recorded" or kept[fmt].any()}  # fmt: skip
    blocks = [(c, fmt) for c in range(len(counts)) for fmt in variants]
    stacked = pd.concat([variants[fmt] for _c, fmt in blocks], ignore_index=True)
    table = transport(stacked, cluster, cores=np.repeat(counts[[c for c, _fmt in blocks]], n))
    column = {name: table[name].to_numpy(dtype=float) for name in
              ("bytes_usd", "cores_usd", "idle_usd", "pixels_per_token", "core_fps_1080p",
               *(col for col, _unit in CAPACITIES.values()))}  # fmt: skip
    frames = bill.frames_per_hour(sources["cameras"].to_numpy(float), sources["fps"].to_numpy(float))
    once = np.zeros(len(stacked))  # each row's one-time cost of its format [$/h]
    held_usage: dict[str, list[float]] = {name: [] for name in CAPACITIES}
    capacity: dict[str, list[float]] = {name: [] for name in CAPACITIES}
    recorded_least: dict[str, np.ndarray] = {}
    for b, (c, fmt) in enumerate(blocks):
        at = slice(b * n, (b + 1) * n)
        if fmt == "recorded":  # each count's first block
            limits = cluster_capacity(cluster.replace(cores_per_accelerator=float(counts[c])))
            recorded = at
            for name, (col, _unit) in CAPACITIES.items():
                capacity[name].append(limits[name])
                per_hour = column[col][at]
                held_usage[name].append(float(per_hour @ problem.held))
                recorded_least[name] = np.minimum(recorded_least.get(name, per_hour), per_hour)
        else:
            side = cluster.input_side if fmt == "model_side" else 0.0
            hours = bill.reformat_core_hours(frames, sources["width"].to_numpy(float),
                                             sources["height"].to_numpy(float), column["core_fps_1080p"][recorded],
                                             side, side, cluster.encode_fps_1080p)  # fmt: skip
            once[at] = np.asarray(hours, dtype=float) * cluster.core_usd_per_hour
    # The options: the stacked rows of the formats each source may take.
    takes = np.concatenate([kept[fmt] for _c, fmt in blocks])
    source = np.tile(np.arange(n, dtype=np.int64), len(blocks))[takes]
    bytes_usd, cores_usd, idle_usd = (column[k][takes] for k in ("bytes_usd", "cores_usd", "idle_usd"))
    charge = np.asarray(bill.at_byte_price_x(bytes_usd, cores_usd, idle_usd, byte_price_x)[1], dtype=float)
    cost = np.tile(price, len(blocks))[takes] + charge + once[takes]
    use = {name: column[col][takes] for name, (col, _unit) in CAPACITIES.items()}
    # The base problem: the cheapest option's cost and the least use of each source, so that the
    # bounds built from it hold for every option.
    least_cost = np.full(n, np.inf)
    np.minimum.at(least_cost, source, cost)
    s = problem.sources.copy()
    s["transport_usd_per_hour"] = least_cost - price
    for name in CAPACITIES:
        np.minimum.at(recorded_least[name], source, use[name])  # held hours stay recorded
        s[name] = recorded_least[name]
    months = {"storage_gb": cluster.window_hours / HOURS_PER_MONTH}  # storage is rented by the GB-month
    rents = {name: (float(getattr(cluster, most)), float(getattr(cluster, unit)) * months.get(name, 1.0))
             for name, (most, unit) in RENT_KEYS.items() if rent and float(getattr(cluster, most)) > 0}  # fmt: skip
    caps = {name: np.array(v, dtype=float) for name, v in capacity.items()}
    formats_of = np.repeat([fmt for _c, fmt in blocks], n)[takes]
    if "decoded" in formats_of and np.all(caps["storage_gb"] <= 0) and "storage_gb" not in rents:
        raise invalid("formats", "decoded", "there is no storage to keep decoded frames in (storage_gb is 0 and none "
                      "may be rented): give storage or leave decoded out")  # fmt: skip
    _check_held_fits(caps, {k: np.array(v) for k, v in held_usage.items()}, rents, counts)
    most = {name: float(caps[name].max() + rents.get(name, (0.0, 0.0))[0]) for name in CAPACITIES}
    base = replace(problem, sources=s, capacity=most)
    split = (
        (sources["split_formats"].astype(str) == "yes").to_numpy() if "split_formats" in sources else np.zeros(n, bool)
    )
    return Infrastructure(
        base=base,
        source=source,
        format=formats_of,
        choice=np.repeat(np.array([c for c, _fmt in blocks], dtype=np.int64), n)[takes],
        cost=cost,
        bill=charge,
        reformat_usd=once[takes],
        pixels_per_token=column["pixels_per_token"][takes],
        usage=use,
        held_usage={name: np.array(v, dtype=float) for name, v in held_usage.items()},
        capacity=caps,
        cores=counts,
        split=split,
        rent=rents,
    )
