"""Random ledgers of many sources, for tests, benchmarks and trying the program at scale."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .cluster import Cluster
from .load import Ledger, load_ledger


def random_sources(n: int, seed: int = 0, *, curves: tuple[str, ...] = ("log", "exp", "power")) -> pd.DataFrame:
    """``n`` validated-looking source rows drawn around the default ledger's five kinds.

    Prices, formats and value parameters are drawn at random (seeded); curves from
    ``curves`` (hill curves get a concave shape, s in [0.3, 1]). The frame has every column
    of :data:`procure.ledger.SOURCE_COLUMNS`.
    """
    rng = np.random.default_rng(seed)
    base = load_ledger().sources
    pick = base.iloc[rng.integers(0, len(base), n)].reset_index(drop=True)
    out = pick.copy()
    out["source"] = [f"vendor_{i:05d}" for i in range(n)]
    out["price_usd_per_hour"] = pick["price_usd_per_hour"].to_numpy() * rng.uniform(0.5, 1.5, n)
    available = rng.uniform(50, 5_000, n)
    out["available_hours"] = available
    out["held_hours"] = np.where(rng.random(n) < 0.2, rng.uniform(0, 100, n), 0.0)
    out["exchange_rate"] = pick["exchange_rate"].to_numpy() * rng.uniform(0.5, 1.5, n)
    out["survival"] = rng.uniform(0.4, 1.0, n)
    out["shelf_life_months"] = rng.choice([6.0, 12.0, 18.0, 36.0, math.inf], n)
    out["curve"] = rng.choice(curves, n)
    out["saturation_hours"] = rng.uniform(20, 2_000, n)
    out["curve_shape"] = np.select(
        [out["curve"] == "power", out["curve"] == "hill"], [rng.uniform(0.2, 0.9, n), rng.uniform(0.3, 1.0, n)], np.nan
    )
    out["width"] = rng.choice([640, 854, 1280, 1920], n)
    out["height"] = (out["width"] * 9 // 16).astype(int)
    out["cameras"] = rng.integers(1, 5, n)
    return out


def random_ledger(n: int, seed: int = 0, *, cluster: Cluster | None = None, **kwargs: object) -> Ledger:
    """A ledger of ``n`` random sources on ``cluster``, else the default ledger's cluster grown
    with the ledger (its accelerators and storage × max(1, n / 100))."""
    base = load_ledger()
    if cluster is None:
        grow = max(1.0, n / 100)
        c = base.cluster
        cluster = c.replace(count=c.count * grow, storage_gb=c.storage_gb * grow)
    return Ledger(random_sources(n, seed, **kwargs), cluster, base.path)  # type: ignore[arg-type]


def random_integer_ledger(seed: int = 0) -> Ledger:
    """Two to four sources of the default ledger's video kinds with integer terms: the first an
    S-shaped hill curve (shape 1.5–4), the others hill, log or exp; each with lots, a minimum
    order, a fee and a minimum order, or none; on a cluster of 0.3 accelerators (100 cores each)
    that the plan fills."""
    base = load_ledger()
    rng = np.random.default_rng(1_000 + seed)
    n = int(rng.integers(2, 5))
    rows = base.sources.iloc[rng.integers(0, 4, n)].reset_index(drop=True).copy()
    rows["source"] = [f"s{i}" for i in range(n)]
    rows["price_usd_per_hour"] = rng.uniform(10, 150, n)
    rows["available_hours"] = rng.uniform(100, 1_500, n)
    rows["held_hours"] = 0.0
    rows["exchange_rate"] = rng.uniform(0.2, 1.5, n)
    curves = rng.choice(["hill", "log", "exp"], n)
    curves[0] = "hill"
    rows["curve"] = curves
    rows["saturation_hours"] = rng.uniform(40, 400, n)
    rows["curve_shape"] = np.where(curves == "hill", rng.uniform(1.5, 4.0, n), np.nan)
    terms = rng.integers(0, 4, n)  # 0 none, 1 lots, 2 minimum order, 3 fee and minimum order
    rows["lot_hours"] = np.where(terms == 1, rng.choice([10.0, 25.0, 50.0], n), 0.0)
    rows["min_order_hours"] = np.where(terms >= 2, rng.uniform(5, 80, n), 0.0)
    rows["fixed_fee_usd"] = np.where(terms == 3, rng.uniform(100, 2_000, n), 0.0)
    cluster = base.cluster.replace(count=0.3, storage_gb=math.inf, cores_per_accelerator=100.0)
    return Ledger(rows, cluster, base.path)


def linear_variant(seed: int = 0) -> tuple[Ledger, float]:
    """The default ledger with a random two in five of its sources linear (at least one), half
    the time with no end to their availability, and a budget of $20,000 to $400,000 [$]."""
    default = load_ledger()
    rng = np.random.default_rng(seed)
    s = default.sources.copy()
    chosen = rng.random(len(s)) < 0.4
    if not chosen.any():
        chosen[rng.integers(len(s))] = True
    s.loc[chosen, "curve"] = "linear"
    if rng.random() < 0.5:
        s.loc[chosen, "available_hours"] = math.inf
    return Ledger(s, default.cluster, default.path), float(rng.uniform(2e4, 4e5))
