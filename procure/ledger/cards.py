"""Model and accelerator cards, and where the shipped ledger and cards are.

``models/NAME.toml`` is a model card (``params``, ``input_side``, ``patch``, ``source``);
``models/accelerators.toml`` holds one table per accelerator type (``peak_flops``,
``nvdec_engines``, ``nvdec_codecs``, ``source``). A model card is named, in ``cluster.toml`` or by ``--model``,
by its file name in ``models/`` without ``.toml``: letters, digits, ``.``, ``_`` and ``-``, not
starting with a dot (:data:`CARD_NAME`), so no name reads a file outside ``models/``. Every
error names the file, the key, the value and what is allowed, as one line.
"""

from __future__ import annotations

import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import LedgerError
from ..install import package_data
from ..pipeline.codecs import DEFAULT_CODEC, codec_name
from ..spec import Range, bad_message, check, did_you_mean
from .csvtext import check_regular, decode, short, shown
from .schema import ACCELERATOR_FIELDS, CLUSTER_FIELDS, MODEL_CARD_KEYS

#: Keys an accelerator's table may have.
ACCELERATOR_KEYS = ("peak_flops", "nvdec_engines", "nvdec_codecs", "source")
#: Name of the accelerator file in a folder of cards.
ACCELERATOR_FILE = "accelerators.toml"
#: What a model card's name may be: its file name in ``models/`` without ``.toml``.
CARD_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")
#: What :data:`CARD_NAME` allows, as messages say it.
CARD_NAME_RULE = "a card's name is letters, digits, '.', '_' and '-', not starting with '.' (no folders)"
#: Codecs an accelerator card's NVDEC engines decode when it lists none: the lesson's H.264.
NVDEC_CODECS_DEFAULT = (DEFAULT_CODEC,)
#: Largest TOML file read [bytes]: a cluster or a card is a few hundred bytes.
MOST_TOML_BYTES = 1_000_000


def _package_data(name: str) -> Path:
    """Folder of shipped data: inside the installed package, or at the top of a checkout."""
    found = package_data(name)
    if found is None:
        raise LedgerError(f"shipped folder {name!r} not found beside {Path(__file__).parents[1]}: reinstall procure")
    return found


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
    """One accelerator type from ``models/accelerators.toml``: dense BF16 peak [FLOP/s], NVDEC
    engines [count] and the codecs they decode (ffprobe's names, :mod:`procure.pipeline.codecs`)."""

    type: str
    peak_flops: float
    nvdec_engines: int
    source: str = ""
    nvdec_codecs: tuple[str, ...] = NVDEC_CODECS_DEFAULT


def read_toml(path: Path, what: str = "") -> dict[str, Any]:
    """A TOML file as a dict; a byte-order mark (a file saved by a Windows editor) is read through.

    Parameters
    ----------
    path : Path
        The file.
    what : str, optional
        What the file is for, for the message when it is missing.

    Raises
    ------
    LedgerError
        No such file, not a regular file, larger than :data:`MOST_TOML_BYTES`, not UTF-8, not
        TOML, nested too deep, or holding a whole number too long to read.
    """
    check_regular(path, what)
    if path.stat().st_size > MOST_TOML_BYTES:
        raise LedgerError(f"{path}: larger than {MOST_TOML_BYTES:,} bytes: it is not a ledger's TOML file")
    _bom, text = decode(path, path.read_bytes())
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise LedgerError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise LedgerError(f"{path}: not valid TOML: arrays or tables nested too deep") from None
    except ValueError:  # a whole number beyond Python's digit limit for text
        raise LedgerError(
            f"{path}: not valid TOML: a number has more than {sys.get_int_max_str_digits():,} digits"
        ) from None


def check_card_name(name: object, field: str = "model", where: str = "") -> str:
    """A model card's name, checked against :data:`CARD_NAME`.

    Raises
    ------
    LedgerError
        Naming the field and the value: not text, a path, a leading dot.
    """
    prefix = f"{where}: " if where else ""
    if not isinstance(name, str) or not CARD_NAME.fullmatch(name):
        shown = short(name) if isinstance(name, str) else name
        raise LedgerError(f"{prefix}{field} = {shown!r} is invalid: {CARD_NAME_RULE}")
    return name


def check_number(path: Path | None, key: str, value: Any, spec: Range) -> float:
    """A number of a file (or of an option when ``path`` is None) checked against ``spec``.

    Raises
    ------
    LedgerError
        ``path: key = value is invalid: must be …`` (a whole number of many digits shown by
        its first ones, :func:`procure.ledger.csvtext.shown`).
    """
    where = str(path) if path is not None else ""
    try:
        return check(spec, value, key, where, error=LedgerError)
    except LedgerError:
        raise LedgerError(bad_message(spec, key, shown(value), where)) from None


def check_nvdec_codecs(path: Path, name: str, value: Any) -> tuple[str, ...]:
    """An accelerator's ``nvdec_codecs``: a list of codec names (absent: :data:`NVDEC_CODECS_DEFAULT`).

    Raises
    ------
    LedgerError
        Naming the file, the key and the value, when it is not a list of non-empty names.
    """
    if value is None:
        return NVDEC_CODECS_DEFAULT
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise LedgerError(
            f"{path}: {short(name)}.nvdec_codecs = {short(repr(value))} is invalid: must be a list of codec "
            'names, as ffprobe names them (["h264", "hevc", "vp9"]), or [] for engines that decode nothing'
        )
    return tuple(dict.fromkeys(codec_name(v) for v in value))


def load_accelerators(directory: Path | None = None) -> dict[str, AcceleratorCard]:
    """Read ``accelerators.toml``: one table per type with ``peak_flops``, ``nvdec_engines`` and
    ``nvdec_codecs``."""
    path = (directory or models_dir()) / ACCELERATOR_FILE
    data = read_toml(path)
    cards = {}
    for name, table in data.items():
        if not isinstance(table, dict):
            raise LedgerError(f"{path}: {short(name)} = {short(str(table))!r} is invalid: must be a table")
        pf = check_number(path, f"{name}.peak_flops", table.get("peak_flops"), ACCELERATOR_FIELDS["peak_flops"])
        ne = check_number(
            path, f"{name}.nvdec_engines", table.get("nvdec_engines"), ACCELERATOR_FIELDS["nvdec_engines"]
        )
        for key in table:
            if key not in ACCELERATOR_KEYS:
                raise LedgerError(
                    f"{path}: {short(name)}.{short(key)} is unknown{did_you_mean(key, ACCELERATOR_KEYS)}: "
                    f"allowed are {', '.join(ACCELERATOR_KEYS)}"
                )
        codecs = check_nvdec_codecs(path, name, table.get("nvdec_codecs"))
        cards[name] = AcceleratorCard(name, pf, int(ne), str(table.get("source", "")), codecs)
    return cards


def model_names(directory: Path | None = None) -> list[str]:
    """Names of the model cards shipped in ``models/``."""
    d = directory or models_dir()
    stems = (p.stem for p in d.glob("*.toml") if p.stem != Path(ACCELERATOR_FILE).stem)
    return sorted(s for s in stems if CARD_NAME.fullmatch(s))


def check_sides(path: Path | None, input_side: float, patch: float, names: tuple[str, str]) -> None:
    """A model must see at least one patch of a frame: ``input_side ≥ patch``.

    Raises
    ------
    LedgerError
        Naming both (``names``, as the user gave them) and their values.
    """
    if input_side < patch:
        where = f"{path}: " if path is not None else ""
        raise LedgerError(
            f"{where}{names[0]} = {input_side:g} is invalid: must be at least {names[1]} = {patch:g} px "
            "(a model with a side below its patch sees no pixels: 0 tokens a frame)"
        )


def load_model_card(name: str, directory: Path | None = None, *, field: str = "model", where: str = "") -> ModelCard:
    """Read the model card ``models/NAME.toml`` (params, input_side, patch, source).

    ``name`` is a card's name (:data:`CARD_NAME`), never a path: only files of ``directory``
    (default: the shipped ``models/``) are read.

    Raises
    ------
    LedgerError
        A name that is not a card's name or names no card; a card with an unknown key, a bad
        number, or an input side below its patch.
    """
    d = directory or models_dir()
    check_card_name(name, field, where)
    path = d / f"{name}.toml"
    if name == Path(ACCELERATOR_FILE).stem or not path.is_file():
        prefix = f"{where}: " if where else ""
        raise LedgerError(
            f"{prefix}{field} = {name!r} is unknown: model cards are {', '.join(model_names(d))} (in {d})"
        )
    data = read_toml(path)
    spec = CLUSTER_FIELDS["model"]
    for key in data:
        if key not in MODEL_CARD_KEYS:
            allowed = ", ".join(MODEL_CARD_KEYS)
            raise LedgerError(
                f"{path}: {short(key)} is unknown{did_you_mean(key, MODEL_CARD_KEYS)}: allowed are {allowed}"
            )
    card = ModelCard(
        name=str(data.get("name", name)),
        params=check_number(path, "params", data.get("params"), spec["params"]),
        input_side=check_number(path, "input_side", data.get("input_side"), spec["input_side"]),
        patch=check_number(path, "patch", data.get("patch"), spec["patch"]),
        source=str(data.get("source", "")),
    )
    check_sides(path, card.input_side, card.patch, ("input_side", "patch"))
    return card
