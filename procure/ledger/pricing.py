"""The pipeline and bill of every source of a ledger: its format joined with its cluster."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import LedgerError
from ..pipeline import bill, codecs, formulas
from .cluster import Cluster


def _own_or(sources: pd.DataFrame, column: str, cluster_value: float) -> np.ndarray:
    """A source's own value of ``column`` where it has one, else the cluster's."""
    if column not in sources:
        return np.full(len(sources), float(cluster_value))
    own = pd.to_numeric(sources[column], errors="coerce").to_numpy(dtype=float)
    return np.where(np.isnan(own), float(cluster_value), own)


def configure(sources: pd.DataFrame, cluster: Cluster, cores: np.ndarray | None = None) -> pd.DataFrame:
    """One configuration row per source: the source's format with the cluster's numbers.

    Parameters
    ----------
    sources : pandas.DataFrame
        Validated rows of ``sources.csv`` (:func:`procure.ledger.read_sources`).
    cluster : Cluster
        The cluster the hours are trained on.
    cores : numpy.ndarray, optional
        Per row, the cores per accelerator it is priced at instead of the cluster's [cores]: rows
        stacked at several counts are priced in one pass.

    Returns
    -------
    pandas.DataFrame
        The source columns with the columns of :data:`procure.pipeline.formulas.CONFIG_COLUMNS` and
        :data:`procure.bill.BILL_COLUMNS` added.
    """
    out = sources.copy()
    out["extra_bytes_per_frame"] = out["extra_bytes_per_s"] / (out["cameras"] * out["fps"])
    out["params"] = cluster.params
    out["input_side"] = cluster.input_side
    out["patch"] = cluster.patch
    out["mfu"] = cluster.mfu
    out["peak_flops"] = cluster.peak_flops
    out["cores"] = cluster.cores_per_accelerator if cores is None else np.asarray(cores, dtype=float)
    # The codec sets a core's rate and whether the NVDEC engines decode it at all.
    codec = codecs.codec_names(sources["codec"]) if "codec" in sources else np.full(len(sources), codecs.DEFAULT_CODEC)
    decodes = codecs.nvdec_decodes(codec, cluster.nvdec_codecs)
    out["nvdec_engines"] = np.where(decodes, cluster.nvdec_engines, 0) if cluster.nvdec else 0
    notes = np.full(len(sources), "", dtype=object)
    names = sources["source"].to_numpy()
    for i in np.flatnonzero(~decodes).tolist() if cluster.nvdec else []:
        notes[i] = codecs.nvdec_note(str(names[i]), codec[i], cluster.accelerator, cluster.nvdec_codecs)
    out["nvdec_note"] = notes
    # Per-source decoding columns: blank (NaN) takes the cluster's value (for the source's codec).
    own = _own_or(sources, "core_fps_1080p", np.nan)
    out["core_fps_1080p"] = np.where(np.isnan(own), codecs.core_fps_1080p(codec, cluster.core_rates), own)
    out["nvdec_fps_1080p"] = cluster.nvdec_fps_1080p
    out["link_bytes_per_s"] = cluster.link_bytes_per_s
    out["gop"] = _own_or(sources, "gop", cluster.gop)
    out["decoded_bytes_per_pixel"] = cluster.decoded_bytes_per_pixel
    out["epochs"] = cluster.epochs
    out["accelerator_usd_per_hour"] = cluster.accelerator_usd_per_hour
    out["core_usd_per_hour"] = cluster.core_usd_per_hour
    out["byte_usd_per_gb"] = cluster.byte_usd_per_gb
    return out


def transport(sources: pd.DataFrame, cluster: Cluster, cores: np.ndarray | None = None) -> pd.DataFrame:
    """Pipeline, bill and share of price of one recorded hour of every source.

    ``cores``, where given, is each row's cores per accelerator (:func:`configure`).

    Returns
    -------
    pandas.DataFrame
        :func:`configure`'s table with the result columns of :func:`procure.pipeline.formulas.evaluate`
        and :func:`procure.bill.evaluate`, plus ``share`` (bill / price [1]) and
        ``largest_stalling_params`` (models below this many parameters stall [parameters]).

    Raises
    ------
    LedgerError
        A source whose video nothing decodes (no cores and NVDEC off).
    """
    piped = formulas.evaluate(configure(sources, cluster, cores))
    stalled = (piped["supply_fps"] <= 0).to_numpy()
    if stalled.any():
        first = int(np.flatnonzero(stalled)[0])
        name, note = piped["source"].iloc[first], piped["nvdec_note"].iloc[first]
        raise LedgerError(
            f"cores_per_accelerator = {float(piped['cores'].iloc[first]):g} with NVDEC "
            f"{'on' if cluster.nvdec else 'off'}: nothing decodes the video of source {name!r}, so the "
            "accelerator never trains on it: give cores ≥ 1" + (f" ({note})" if note else " or turn NVDEC on")
        )
    table = bill.evaluate(piped)
    table["share"] = bill.share_of_price(table["bill_usd"], table["price_usd_per_hour"])
    table["largest_stalling_params"] = formulas.stall_threshold_params(
        table["mfu"], table["peak_flops"], table["tokens_per_frame"], table["supply_fps"]
    )
    return table
