"""Format variants: one ledger row on one cluster, with changes, as ``procure bill`` and
``procure simulate`` take them."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..defaults import READ_CHOICES
from ..errors import LedgerError, invalid
from ..spec import check
from .cards import load_accelerators, load_model_card
from .cluster import Cluster, check_field
from .load import Ledger
from .pricing import transport
from .schema import MOST_BYTE_PRICE_X, OPTION_FIELDS
from .sources import check_source_value

__all__ = [
    "MOST_BYTE_PRICE_X",
    "READ_CHOICES",
    "check_byte_price_x",
    "cluster_with",
    "format_with",
    "ledger_transport",
    "variant",
]


def check_byte_price_x(value: float) -> float:
    """A byte-price multiplier [1]: 0 (bytes are free), or between
    :data:`procure.ledger.schema.LEAST` and :data:`procure.ledger.schema.MOST_BYTE_PRICE_X`
    (``OPTION_FIELDS["byte_price_x"]``).

    Raises
    ------
    InputError
        Naming ``byte_price_x``, the value and what is allowed.
    """
    return check(OPTION_FIELDS["byte_price_x"], value)


def cluster_with(
    cluster: Cluster,
    *,
    model: str | None = None,
    params: float | None = None,
    side: float | None = None,
    accelerator: str | None = None,
    cores: float | None = None,
    nvdec: bool | None = None,
    byte_price_x: float | None = None,
) -> Cluster:
    """The cluster with some of its numbers changed.

    Parameters
    ----------
    cluster : Cluster
        The ledger's cluster.
    model : str, optional
        A model card name: takes its params, input side and patch.
    params : float, optional
        Model parameters [1]; wins over ``model``.
    side : float, optional
        Model input side [px].
    accelerator : str, optional
        An accelerator card (peak FLOP/s and NVDEC engines).
    cores : float, optional
        CPU cores decoding for one accelerator [cores].
    nvdec : bool, optional
        Use the accelerator's NVDEC engines.
    byte_price_x : float, optional
        Multiplier on the byte price [1].
    """
    changes: dict[str, object] = {}
    if model is not None:
        card = load_model_card(model)
        changes.update(model=card.name, params=card.params, input_side=card.input_side, patch=card.patch)
    if params is not None:
        changes.update(params=check_field("model", "params", params, "params"), model=f"{params:.4g} parameters")
    if side is not None:
        side = check_field("model", "input_side", side, "side")
        patch = float(changes.get("patch", cluster.patch))  # type: ignore[arg-type]
        if side < patch:
            raise invalid("side", side, f"must be at least the patch, {patch:g} px")
        changes["input_side"] = side
    if accelerator is not None:
        cards = load_accelerators()
        if accelerator not in cards:
            raise invalid("accelerator", accelerator, f"allowed are {', '.join(cards)}")
        chip = cards[accelerator]
        changes.update(
            accelerator=accelerator,
            peak_flops=chip.peak_flops,
            nvdec_engines=chip.nvdec_engines,
            nvdec_codecs=chip.nvdec_codecs,
        )
    if cores is not None:
        changes["cores_per_accelerator"] = check_field("decode", "cores_per_accelerator", cores, "cores")
    if nvdec is not None:
        changes["nvdec"] = bool(nvdec)
    if byte_price_x is not None:
        changes["byte_usd_per_gb"] = cluster.byte_usd_per_gb * check_byte_price_x(byte_price_x)
    return cluster.replace(**changes)


def format_with(
    row: pd.Series,
    *,
    cameras: float | None = None,
    width: float | None = None,
    height: float | None = None,
    fps: float | None = None,
    bits_per_pixel: float | None = None,
    read: str | None = None,
    gop: float | None = None,
    core_fps_1080p: float | None = None,
    codec: str | None = None,
) -> pd.Series:
    """A source row with its format changed; each value is checked as a ledger cell would be.

    ``read`` is ``"order"`` or ``"random"`` (stored video) or ``"decoded"`` (frames stored
    decoded, read in order); ``gop`` [frames] and ``core_fps_1080p`` [frames/s] are this
    source's own decoding numbers, which win over the cluster's; ``codec`` is its video's codec
    (:mod:`procure.pipeline.codecs`).
    """
    out = row.copy()
    if codec is not None:
        out["codec"] = check_source_value("codec", codec)
    for name, value in (
        ("cameras", cameras),
        ("width", width),
        ("height", height),
        ("fps", fps),
        ("bits_per_pixel", bits_per_pixel),
        ("gop", gop),
        ("core_fps_1080p", core_fps_1080p),
    ):
        if value is not None:
            out[name] = check_source_value(name, value)
    if read is not None:
        if read not in READ_CHOICES:
            raise invalid("read", read, f"allowed are {', '.join(READ_CHOICES)}")
        out["stored"], out["read"] = ("decoded", "order") if read == "decoded" else ("video", read)
    return out


def variant(
    ledger: Ledger,
    kind: str | None = None,
    *,
    cluster: Cluster | None = None,
    **format_changes: object,
) -> tuple[pd.Series, Cluster]:
    """The pipeline and bill of one format: ledger row ``kind`` (the first row if None).

    Parameters
    ----------
    ledger : Ledger
        Where the row and the cluster come from.
    kind : str, optional
        A source name or kind of the ledger.
    cluster : Cluster, optional
        The cluster to use instead of the ledger's (see :func:`cluster_with`).
    **format_changes
        Passed to :func:`format_with`.

    Returns
    -------
    row : pandas.Series
        One row of :func:`procure.ledger.pricing.transport`.
    cluster : Cluster
        The cluster it was computed on.
    """
    base = ledger.source(kind) if kind is not None else ledger.sources.iloc[0]
    row = format_with(base, **format_changes)  # type: ignore[arg-type]
    cl = cluster or ledger.cluster
    return ledger_transport(ledger, pd.DataFrame([row]).reset_index(drop=True), cl).iloc[0], cl


def ledger_transport(ledger: Ledger, sources: pd.DataFrame, cluster: Cluster) -> pd.DataFrame:
    """:func:`procure.ledger.pricing.transport` of ``sources`` on ``cluster``, for a ledger's rows.

    A cluster on which nothing decodes is named as the ledger's ``cluster.toml`` where its
    decoding (``cores_per_accelerator`` and ``nvdec``) is the file's own, not an option's.

    Raises
    ------
    LedgerError
        A source whose video nothing decodes (no cores and NVDEC off).
    """
    try:
        return transport(sources, cluster)
    except LedgerError as exc:
        own = ledger.cluster
        if ledger.path is not None and (cluster.cores_per_accelerator, cluster.nvdec) == (
            own.cores_per_accelerator,
            own.nvdec,
        ):
            raise LedgerError(f"{Path(ledger.path) / 'cluster.toml'}: {exc}") from None
        raise
