"""``cluster.toml``: the model, accelerators, decoders, prices, training and capacity a ledger's
hours are trained on, read into a :class:`Cluster`.

Every key may be left out and then takes its default (:data:`procure.ledger.schema.CLUSTER_FIELDS`);
every error names the file, the key, the value and what is allowed, as one line.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import LedgerError
from ..pipeline.codecs import RATE_KEY, RATED_CODECS
from ..spec import NON_EMPTY_TEXT, did_you_mean
from .cards import (
    NVDEC_CODECS_DEFAULT,
    check_card_name,
    check_number,
    check_sides,
    load_accelerators,
    load_model_card,
    read_toml,
)
from .csvtext import short
from .schema import CLUSTER_FIELDS

#: Keys of ``[model]`` besides its fields: ``card`` names the card as ``name`` does, ``source``
#: says where the figures come from.
MODEL_EXTRA_KEYS = ("card", "source")


def check_field(table: str, key: str, value: Any, name: str | None = None, where: str = "") -> float:
    """Check a number against the limits of ``cluster.toml``'s ``[table] key``.

    Parameters
    ----------
    table, key : str
        Where the limits come from (:data:`CLUSTER_FIELDS`).
    value : Any
        The value given.
    name : str, optional
        The name the user gave it by (a command option), for the message.
    where : str, optional
        A prefix that locates it (a file).

    Raises
    ------
    LedgerError
        Naming it, the value and what is allowed.
    """
    spec = CLUSTER_FIELDS[table][key]
    return check_number(Path(where) if where else None, name or f"{table}.{key}", value, spec)


@dataclass(frozen=True)
class Cluster:
    """The cluster of a ledger, every field resolved to a number [units of CLUSTER_FIELDS]."""

    model: str
    params: float
    input_side: float
    patch: float
    accelerator: str
    count: float
    mfu: float
    nvdec: bool
    peak_flops: float
    nvdec_engines: int
    cores_per_accelerator: float
    core_fps_1080p: float
    nvdec_fps_1080p: float
    link_bytes_per_s: float
    gop: float
    decoded_bytes_per_pixel: float
    accelerator_usd_per_hour: float
    core_usd_per_hour: float
    byte_usd_per_gb: float
    storage_usd_per_gb_month: float
    epochs: float
    window_hours: float
    horizon_months: float
    storage_gb: float = math.inf
    decode_core_hours: float = math.inf
    encode_fps_1080p: float = CLUSTER_FIELDS["decode"]["encode_fps_1080p"].default
    rent_accelerator_hours: float = CLUSTER_FIELDS["capacity"]["rent_accelerator_hours"].default
    rent_core_hours: float = CLUSTER_FIELDS["capacity"]["rent_core_hours"].default
    rent_storage_gb: float = CLUSTER_FIELDS["capacity"]["rent_storage_gb"].default
    nvdec_codecs: tuple[str, ...] = NVDEC_CODECS_DEFAULT
    core_fps_1080p_hevc: float = CLUSTER_FIELDS["decode"]["core_fps_1080p_hevc"].default
    core_fps_1080p_av1: float = CLUSTER_FIELDS["decode"]["core_fps_1080p_av1"].default
    core_fps_1080p_vp9: float = CLUSTER_FIELDS["decode"]["core_fps_1080p_vp9"].default
    core_fps_1080p_mjpeg: float = CLUSTER_FIELDS["decode"]["core_fps_1080p_mjpeg"].default
    core_fps_1080p_png: float = CLUSTER_FIELDS["decode"]["core_fps_1080p_png"].default

    @property
    def core_rates(self) -> dict[str, float]:
        """One core's 1080p decode rate by cluster key: ``core_fps_1080p`` (H.264) and
        ``core_fps_1080p_<codec>`` (:data:`procure.pipeline.codecs.RATED_CODECS`) [frames/s]."""
        return {RATE_KEY: self.core_fps_1080p} | {
            f"{RATE_KEY}_{codec}": float(getattr(self, f"{RATE_KEY}_{codec}")) for codec in RATED_CODECS
        }

    @property
    def accelerator_hours_capacity(self) -> float:
        """Accelerator-hours in the training window, ``count × window_hours`` [h]."""
        return self.count * self.window_hours

    @property
    def core_hours_capacity(self) -> float:
        """Decode core-hours in the window: the ledger's, else ``cores × count × window`` [h]."""
        if math.isfinite(self.decode_core_hours):
            return self.decode_core_hours
        return self.cores_per_accelerator * self.count * self.window_hours

    def replace(self, **changes: Any) -> Cluster:
        """A copy with some fields changed (see :func:`dataclasses.replace`)."""
        return dataclasses.replace(self, **changes)


def _check_tables(path: Path, data: dict[str, Any]) -> None:
    """Every table and key of the file is known, and every table is a table."""
    for table, body in data.items():
        if table not in CLUSTER_FIELDS:
            raise LedgerError(
                f"{path}: table [{short(table)}] is unknown{did_you_mean(table, CLUSTER_FIELDS)}: "
                f"allowed are {', '.join(CLUSTER_FIELDS)}"
            )
        if not isinstance(body, dict):
            raise LedgerError(f"{path}: {short(table)} = {short(repr(body))} is invalid: must be a table")
        for key in body:
            if key not in CLUSTER_FIELDS[table] and not (table == "model" and key in MODEL_EXTRA_KEYS):
                raise LedgerError(
                    f"{path}: {table}.{short(key)} is unknown{did_you_mean(key, CLUSTER_FIELDS[table])}: "
                    f"allowed are {', '.join(CLUSTER_FIELDS[table])}"
                )


def _values(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    """Every key's value, checked, with the defaults of the keys left out (None: unlimited or
    from a card)."""
    values: dict[str, Any] = {}
    for table, fields in CLUSTER_FIELDS.items():
        body = data.get(table, {})
        if table == "model" and "card" in body:
            body = {**body, "name": body["card"]}
        for key, spec in fields.items():
            value = body.get(key, spec.default)
            qualified = f"{table}.{key}"
            if value is None:
                values[key] = None
            elif spec.kind == "bool":
                if not isinstance(value, bool):
                    raise LedgerError(f"{path}: {qualified} = {value!r} is invalid: {spec.rule()}")
                values[key] = value
            elif spec.kind == "text":
                if not isinstance(value, str) or not value:
                    raise LedgerError(
                        f"{path}: {qualified} = {short(str(value))!r} is invalid: must be {NON_EMPTY_TEXT}"
                    )
                if table == "model" and key == "name":
                    check_card_name(value, "model.card" if "card" in data.get(table, {}) else qualified, str(path))
                values[key] = value
            else:
                values[key] = check_number(path, qualified, value, spec)
    return values


def read_cluster(path: Path | str, models: Path | None = None) -> Cluster:
    """Read and validate ``cluster.toml``; blank keys take the defaults of :data:`CLUSTER_FIELDS`.

    Raises
    ------
    LedgerError
        An unknown table or key, a value of the wrong type or range, a model card name that is
        not one (:data:`procure.ledger.cards.CARD_NAME`) or names no card, an input side below
        the patch (the model would see no pixels), an unknown accelerator type.
    """
    path = Path(path)
    data = read_toml(path, "a ledger folder needs cluster.toml")
    if isinstance(data.get("model"), str):
        data["model"] = {"name": data["model"]}
    _check_tables(path, data)
    values = _values(path, data)
    accelerators = load_accelerators(models)
    acc = values["type"]
    if acc not in accelerators:
        raise LedgerError(f"{path}: accelerator.type = {acc!r} is unknown: allowed are {', '.join(accelerators)}")
    card = load_model_card(values["name"], models, field="model.name", where=str(path))
    input_side, patch = values["input_side"] or card.input_side, values["patch"] or card.patch
    side_name, patch_name = (
        f"model.{k}" if values[k] else f"{k} of card {card.name!r}" for k in ("input_side", "patch")
    )
    check_sides(path, input_side, patch, (side_name, patch_name))
    return Cluster(
        model=card.name,
        params=values["params"] or card.params,
        input_side=input_side,
        patch=patch,
        accelerator=acc,
        count=values["count"],
        mfu=values["mfu"],
        nvdec=values["nvdec"],
        peak_flops=values["peak_flops"] or accelerators[acc].peak_flops,
        nvdec_engines=accelerators[acc].nvdec_engines,
        cores_per_accelerator=values["cores_per_accelerator"],
        core_fps_1080p=values["core_fps_1080p"],
        nvdec_fps_1080p=values["nvdec_fps_1080p"],
        link_bytes_per_s=values["link_bytes_per_s"],
        gop=values["gop"],
        decoded_bytes_per_pixel=values["decoded_bytes_per_pixel"],
        accelerator_usd_per_hour=values["accelerator_usd_per_hour"],
        core_usd_per_hour=values["core_usd_per_hour"],
        byte_usd_per_gb=values["byte_usd_per_gb"],
        storage_usd_per_gb_month=values["storage_usd_per_gb_month"],
        epochs=values["epochs"],
        window_hours=values["window_hours"],
        horizon_months=values["horizon_months"],
        storage_gb=values["storage_gb"] if values["storage_gb"] is not None else math.inf,
        decode_core_hours=(values["decode_core_hours"] if values["decode_core_hours"] is not None else math.inf),
        encode_fps_1080p=values["encode_fps_1080p"],
        rent_accelerator_hours=values["rent_accelerator_hours"],
        rent_core_hours=values["rent_core_hours"],
        rent_storage_gb=values["rent_storage_gb"],
        nvdec_codecs=accelerators[acc].nvdec_codecs,
        core_fps_1080p_hevc=values["core_fps_1080p_hevc"],
        core_fps_1080p_av1=values["core_fps_1080p_av1"],
        core_fps_1080p_vp9=values["core_fps_1080p_vp9"],
        core_fps_1080p_mjpeg=values["core_fps_1080p_mjpeg"],
        core_fps_1080p_png=values["core_fps_1080p_png"],
    )
