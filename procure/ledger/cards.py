"""Model and accelerator cards, and where the shipped ledger and cards are.

``models/NAME.toml`` is a model card (``params``, ``input_side``, ``patch``, ``source``);
``models/accelerators.toml`` holds one table per accelerator type (``peak_flops``,
``nvdec_engines``, ``source``). Every error names the file, the key, the value and what is
allowed, as one line.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import LedgerError
from ..spec import Range, check, did_you_mean
from .schema import ACCELERATOR_FIELDS, CLUSTER_FIELDS, MODEL_CARD_KEYS

#: Name of the accelerator file in a folder of cards.
ACCELERATOR_FILE = "accelerators.toml"


def _package_data(name: str) -> Path:
    """Folder of shipped data: inside the installed package, or at the top of a checkout."""
    here = Path(__file__).resolve().parent.parent  # the procure package
    for candidate in (here / "_data" / name, here.parent / name):
        if candidate.is_dir():
            return candidate
    raise LedgerError(f"shipped folder {name!r} not found beside {here}: reinstall procure")


def default_ledger_dir() -> Path:
    """The shipped default ledger, the lesson's five kinds of hour."""
    return _package_data("ledgers") / "default"


def models_dir() -> Path:
    """The shipped folder of model cards and ``accelerators.toml``."""
    return _package_data("models")


@dataclass(frozen=True)
class ModelCard:
    """A model card from ``models/NAME.toml``: parameters [1], input side [px], patch [px]."""

    name: str
    params: float
    input_side: float
    patch: float
    source: str = ""


@dataclass(frozen=True)
class AcceleratorCard:
    """One accelerator type from ``models/accelerators.toml``: dense BF16 peak [FLOP/s] and
    NVDEC engines [count]."""

    type: str
    peak_flops: float
    nvdec_engines: int
    source: str = ""


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file as a dict.

    Raises
    ------
    LedgerError
        No such file, or not TOML.
    """
    if not path.is_file():
        raise LedgerError(f"{path}: no such file")
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise LedgerError(f"{path}: not valid TOML: {exc}") from None


def check_number(path: Path | None, key: str, value: Any, spec: Range) -> float:
    """A number of a file (or of an option when ``path`` is None) checked against ``spec``.

    Raises
    ------
    LedgerError
        ``path: key = value is invalid: must be …``.
    """
    return check(spec, value, key, str(path) if path is not None else "", error=LedgerError)


def load_accelerators(directory: Path | None = None) -> dict[str, AcceleratorCard]:
    """Read ``accelerators.toml``: one table per type with ``peak_flops`` and ``nvdec_engines``."""
    path = (directory or models_dir()) / ACCELERATOR_FILE
    data = read_toml(path)
    cards = {}
    for name, table in data.items():
        pf = check_number(path, f"{name}.peak_flops", table.get("peak_flops"), ACCELERATOR_FIELDS["peak_flops"])
        ne = check_number(
            path, f"{name}.nvdec_engines", table.get("nvdec_engines"), ACCELERATOR_FIELDS["nvdec_engines"]
        )
        cards[name] = AcceleratorCard(name, pf, int(ne), str(table.get("source", "")))
    return cards


def model_names(directory: Path | None = None) -> list[str]:
    """Names of the model cards shipped in ``models/``."""
    d = directory or models_dir()
    return sorted(p.stem for p in d.glob("*.toml") if p.stem != Path(ACCELERATOR_FILE).stem)


def load_model_card(name: str, directory: Path | None = None) -> ModelCard:
    """Read the model card ``models/NAME.toml`` (params, input_side, patch, source)."""
    d = directory or models_dir()
    path = d / f"{name}.toml"
    if name == Path(ACCELERATOR_FILE).stem or not path.is_file():
        raise LedgerError(f"model = {name!r} is unknown: model cards are {', '.join(model_names(d))} (in {d})")
    data = read_toml(path)
    spec = CLUSTER_FIELDS["model"]
    for key in data:
        if key not in MODEL_CARD_KEYS:
            allowed = ", ".join(MODEL_CARD_KEYS)
            raise LedgerError(f"{path}: {key} is unknown{did_you_mean(key, MODEL_CARD_KEYS)}: allowed are {allowed}")
    return ModelCard(
        name=str(data.get("name", name)),
        params=check_number(path, "params", data.get("params"), spec["params"]),
        input_side=check_number(path, "input_side", data.get("input_side"), spec["input_side"]),
        patch=check_number(path, "patch", data.get("patch"), spec["patch"]),
        source=str(data.get("source", "")),
    )
