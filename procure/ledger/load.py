"""Reading and validating ledgers, model cards and accelerator cards.

A ledger is a folder with ``sources.csv`` (one row per source that can be bought) and
``cluster.toml`` (the model, accelerators, decoders, prices, training and capacity). Column
and key names are the contract of DESIGN.md §6; blank cells take the documented defaults of
:data:`SOURCE_COLUMNS` and :data:`CLUSTER_FIELDS`.

Every error names the file, the row (as its line in the file), the field, the value and what
is allowed, as one line.
"""

from __future__ import annotations

import csv
import dataclasses
import difflib
import math
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import LedgerError
from ..pipeline.formulas import PIXELS_1080P, READ_MODES, STORED_MODES

CURVES = ("linear", "log", "exp", "power", "hill")

#: Encoded stream rate of the seed's cameras: 8 Mbit/s at 1920 × 1080 and 30 fps [bit/px].
DEFAULT_BITS_PER_PIXEL = 8e6 / (PIXELS_1080P * 30)
#: Default curve shape by curve: power exponent β and hill steepness s [1].
DEFAULT_CURVE_SHAPE = {"power": 0.5, "hill": 2.0}


def _package_data(name: str) -> Path:
    """Folder of shipped data: inside the installed package, or at the top of a checkout."""
    here = Path(__file__).resolve().parent.parent  # the procure package
    for candidate in (here / "_data" / name, here.parent / name):
        if candidate.is_dir():
            return candidate
    raise LedgerError(f"shipped folder {name!r} not found beside {here}: reinstall procure")


def default_ledger_dir() -> Path:
    """The shipped default ledger, the seed's five kinds of hour."""
    return _package_data("ledgers") / "default"


def models_dir() -> Path:
    """The shipped folder of model cards and ``accelerators.toml``."""
    return _package_data("models")


# --------------------------------------------------------------------------- sources.csv


@dataclass(frozen=True)
class Column:
    """One column of ``sources.csv``: unit, default and what is allowed."""

    unit: str
    default: Any = None  # None = required
    kind: str = "number"  # number | text | choice
    low: float = 0.0
    low_open: bool = False  # True: value must be > low
    high: float = math.inf
    choices: tuple[str, ...] = ()
    blank: str = ""  # meaning of a blank cell, for the docs
    doc: str = ""

    def allowed(self) -> str:
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        if self.kind == "text":
            return "non-empty text" if self.default is None else "text"
        low = f"> {self.low:g}" if self.low_open else f"≥ {self.low:g}"
        high = f" and ≤ {self.high:g}" if math.isfinite(self.high) else ""
        return f"a number {low}{high}"


#: Largest amounts a ledger may hold. Each is far beyond any real purchase and well inside
#: floating point, so that no product of them (a bill, a plan's money) can overflow.
MOST_HOURS = 1e9  # [h]
MOST_USD = 1e12  # [$]
MOST_PIXELS = 16_384  # [px], a 16K frame's side
#: Prefix of the columns of sources.csv that procure ignores: a team's own notes.
USER_COLUMN_PREFIX = "x_"

SOURCE_COLUMNS: dict[str, Column] = {
    "source": Column("text", kind="text", doc="unique name"),
    "kind": Column("text", kind="text", doc="own, twin, older_arm, force, sim, or any text"),
    "price_usd_per_hour": Column("$/h", high=1e7, doc="purchase price"),
    "available_hours": Column("h", math.inf, high=MOST_HOURS, blank="unlimited", doc="most that can be bought"),
    "held_hours": Column("h", 0.0, high=MOST_HOURS, doc="already owned"),
    "lot_hours": Column("h", 0.0, high=MOST_HOURS, doc="whole lots only (0 = continuous)"),
    "min_order_hours": Column("h", 0.0, high=MOST_HOURS, doc="least order if bought at all"),
    "fixed_fee_usd": Column("$", 0.0, high=MOST_USD, doc="paid once if bought at all"),
    "cameras": Column("count", low=0, low_open=True, high=1_000, doc="camera streams"),
    "width": Column("px", low=0, low_open=True, high=MOST_PIXELS, doc="frame width the model trains on"),
    "height": Column("px", low=0, low_open=True, high=MOST_PIXELS, doc="frame height"),
    "fps": Column("1/s", low=0, low_open=True, high=10_000, doc="frames per second per camera"),
    "bits_per_pixel": Column(
        "bit/px", DEFAULT_BITS_PER_PIXEL, low=0, low_open=True, high=64, doc="encoded stream rate (64: raw 16-bit RGBA)"
    ),
    "extra_bytes_per_s": Column("B/s", 0.0, high=1e10, doc="non-video channels (force/torque)"),
    "codec": Column("text", "", kind="text", blank="not recorded", doc="the video's codec (h264, av1, …), as measured"),
    "gop": Column(
        "frames", math.nan, low=1, high=100_000, blank="the cluster's", doc="frames between keyframes of this source"
    ),
    "core_fps_1080p": Column(
        "frames/s",
        math.nan,
        low=0,
        low_open=True,
        high=1e6,
        blank="the cluster's",
        doc="one core's 1080p-equivalent decode rate for this source's video",
    ),
    "stored": Column("", "video", kind="choice", choices=STORED_MODES, doc="how frames are kept"),
    "read": Column("", "order", kind="choice", choices=READ_MODES, doc="how frames are read"),
    "exchange_rate": Column("own-hours per hour", 1.0, high=1_000, doc="ρ"),
    "survival": Column("1", 1.0, high=1.0, doc="σ, share surviving filtering"),
    "shelf_life_months": Column(
        "months", math.inf, low=0, low_open=True, high=1_200, blank="never stale", doc="L, half-life of value"
    ),
    "curve": Column("", "log", kind="choice", choices=CURVES, doc="value curve"),
    "saturation_hours": Column(
        "effective h", math.nan, low=0, low_open=True, high=MOST_HOURS, doc="k; required unless linear"
    ),
    "curve_shape": Column("1", math.nan, low=0, low_open=True, high=20, doc="power β (0.5), hill s (2)"),
}

#: Columns whose value may be uncertain: a scenario may give another value, and a range
#: (``NAME_low``, ``NAME_high``) lets ``--samples`` draw one (:mod:`procure.ledger.scenarios`).
UNCERTAIN_COLUMNS = ("exchange_rate", "survival", "saturation_hours", "price_usd_per_hour")
RANGE_SUFFIXES = ("_low", "_high")

for _name in UNCERTAIN_COLUMNS:
    _col = SOURCE_COLUMNS[_name]
    for _suffix, _end in zip(RANGE_SUFFIXES, ("lowest", "highest"), strict=True):
        SOURCE_COLUMNS[_name + _suffix] = dataclasses.replace(
            _col,
            default=math.nan,
            blank="no range",
            doc=f"{_end} value of {_name} a sampled scenario draws (triangular, peak at {_name})",
        )

REQUIRED_SOURCE_COLUMNS = tuple(n for n, c in SOURCE_COLUMNS.items() if c.default is None)


def _check_ranges(row: dict[str, Any], where: str) -> None:
    """Both ends of a range or neither, and low ≤ the value ≤ high."""
    for name in UNCERTAIN_COLUMNS:
        low, high = (row[name + s] for s in RANGE_SUFFIXES)
        if math.isnan(low) != math.isnan(high):
            given, blank = (f"{name}_low", f"{name}_high") if math.isnan(high) else (f"{name}_high", f"{name}_low")
            raise LedgerError(f"{where}: {blank} is blank but {given} is not: a range needs both ends")
        value = row[name]
        if math.isnan(low):
            continue
        if low > high or not (math.isnan(value) or low <= value <= high):
            raise LedgerError(
                f"{where}: {name}_low = {low:g}, {name} = {value:g}, {name}_high = {high:g} are invalid: "
                f"must be {name}_low ≤ {name} ≤ {name}_high"
            )


def _where(path: Path, line: int | None = None, source: str | None = None) -> str:
    out = str(path)
    if line is not None:
        out += f": line {line}"
    if source:
        out += f" (source {source!r})"
    return out


def check_source_value(name: str, value: Any, where: str = "") -> Any:
    """Validate one value of a ``sources.csv`` column; a blank takes the column's default.

    Parameters
    ----------
    name : str
        Column name (a key of :data:`SOURCE_COLUMNS`).
    value : Any
        The cell as text, or a number given another way (a command-line option).
    where : str, optional
        Where the value came from, put before the message.

    Raises
    ------
    LedgerError
        Naming the place, the column, the value and what is allowed.
    """
    col = SOURCE_COLUMNS[name]
    prefix = f"{where}: " if where else ""
    text = value.strip() if isinstance(value, str) else value
    if text == "" or text is None:
        if col.default is None:
            raise LedgerError(f"{prefix}{name} is blank: it is required, {col.allowed()}")
        return col.default
    if col.kind in ("text", "choice"):
        text = str(text)
        if col.kind == "choice" and text not in col.choices:
            raise LedgerError(f"{prefix}{name} = {text!r} is invalid: allowed are {col.allowed()}")
        return text
    try:
        number = float(text)
    except (TypeError, ValueError):
        number = math.nan
    bad = not math.isfinite(number) or number < col.low or (col.low_open and number <= col.low) or number > col.high
    if bad:
        raise LedgerError(f"{prefix}{name} = {text!r} is invalid: must be {col.allowed()}")
    return number


def _did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` naming the closest known name, or nothing if none is close."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _header(path: Path) -> list[str]:
    """The column names of a CSV file as written, stripped (pandas would rename duplicates)."""
    with path.open(newline="", encoding="utf-8", errors="replace") as fh:
        first = next(csv.reader(fh), [])
    return [name.strip() for name in first]


def read_csv_text(path: Path, what: str) -> pd.DataFrame:
    """A ledger CSV file as text cells, its column names as written (stripped) and each once.

    Blank lines are kept, so that row i is line i + 2 of the file.

    Raises
    ------
    LedgerError
        No such file (``what`` says what the file is for), not CSV, a column given twice.
    """
    if not path.is_file():
        raise LedgerError(f"{path}: no such file: {what}")
    try:
        raw = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True, skip_blank_lines=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise LedgerError(f"{path}: cannot be read as CSV: {str(exc).splitlines()[0]}") from None
    header = _header(path)
    for i, name in enumerate(header):
        if name in header[:i]:
            raise LedgerError(f"{path}: column {name!r} is given twice (columns {header.index(name) + 1} and {i + 1})")
    raw.columns = header
    return raw


def read_sources(path: Path | str) -> pd.DataFrame:
    """Read and validate ``sources.csv``.

    Parameters
    ----------
    path : path-like
        The CSV file.

    Returns
    -------
    pandas.DataFrame
        One row per source, every column of :data:`SOURCE_COLUMNS` present with defaults filled
        (``available_hours`` and ``shelf_life_months`` are ``inf`` when blank, ``curve_shape``
        the curve's default), indexed 0..n-1; columns of the user's own (prefix ``x_``) are
        kept as text.

    Raises
    ------
    LedgerError
        A missing file or column, a column given twice or unknown, an empty ledger, a
        duplicate source, a bad value.
    """
    path = Path(path)
    raw = read_csv_text(path, "a ledger folder needs sources.csv")
    header = list(raw.columns)
    for name in header:
        if name not in SOURCE_COLUMNS and not name.startswith(USER_COLUMN_PREFIX):
            raise LedgerError(
                f"{path}: column {name!r} is unknown{_did_you_mean(name, SOURCE_COLUMNS)}: columns of your own "
                f"start with {USER_COLUMN_PREFIX!r} (procure ignores them); see docs/ledger.md for the others"
            )
    missing = [c for c in REQUIRED_SOURCE_COLUMNS if c not in raw.columns]
    if missing:
        raise LedgerError(
            f"{path}: missing column(s) {', '.join(missing)}: required are {', '.join(REQUIRED_SOURCE_COLUMNS)}"
        )
    rows: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for i, rec in enumerate(raw.to_dict("records")):
        line = i + 2  # the header is line 1
        if all(str(v).strip() == "" for v in rec.values()):
            continue
        name = str(rec.get("source", "")).strip()
        row: dict[str, Any] = {}
        for col in SOURCE_COLUMNS:
            row[col] = check_source_value(col, str(rec.get(col, "")), _where(path, line, name))
        where = _where(path, line, name)
        if name in seen:
            raise LedgerError(f"{where}: source = {name!r} is a duplicate of line {seen[name]}: names must be unique")
        seen[name] = line
        curve = row["curve"]
        if curve != "linear" and math.isnan(row["saturation_hours"]):
            raise LedgerError(f"{where}: saturation_hours is blank: required for curve {curve!r}, a number > 0")
        if math.isnan(row["curve_shape"]):
            row["curve_shape"] = DEFAULT_CURVE_SHAPE.get(curve, math.nan)
        elif curve == "power" and row["curve_shape"] > 1:
            raise LedgerError(
                f"{where}: curve_shape = {row['curve_shape']:g} is invalid for curve 'power': "
                "must be > 0 and ≤ 1 (concave)"
            )
        _check_ranges(row, where)
        for extra in raw.columns:
            if extra not in SOURCE_COLUMNS:
                row[extra] = rec[extra]
        rows.append(row)
    if not rows:
        raise LedgerError(f"{path}: no sources: the ledger needs at least one row")
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- cluster.toml


@dataclass(frozen=True)
class Field:
    """One key of ``cluster.toml``: default, unit and what is allowed."""

    default: Any
    unit: str
    doc: str
    kind: str = "number"  # number | bool | text
    low: float = 0.0
    low_open: bool = True
    high: float = math.inf

    def allowed(self) -> str:
        if self.kind == "bool":
            return "true or false"
        if self.kind == "text":
            return "text"
        low = f"> {self.low:g}" if self.low_open else f"≥ {self.low:g}"
        high = f" and ≤ {self.high:g}" if math.isfinite(self.high) else ""
        return f"a number {low}{high}"


#: Every key of cluster.toml by table, with its default (None = unlimited or from a card).
CLUSTER_FIELDS: dict[str, dict[str, Field]] = {
    "model": {
        "name": Field("93m", "", "model card in models/", kind="text"),
        "params": Field(None, "parameters", "overrides the card", low=1e3, low_open=False, high=1e14),
        "input_side": Field(None, "px", "overrides the card", low=1, low_open=False, high=MOST_PIXELS),
        "patch": Field(None, "px", "overrides the card", low=1, low_open=False, high=MOST_PIXELS),
    },
    "accelerator": {
        "type": Field("H100", "", "accelerator card in models/accelerators.toml", kind="text"),
        "count": Field(8, "accelerators", "accelerators training", high=1e7),
        "mfu": Field(0.4, "1", "share of dense peak reached (seed §2)", high=1.0),
        "nvdec": Field(False, "", "decode on the accelerator's NVDEC engines too", kind="bool"),
        "peak_flops": Field(None, "FLOP/s", "overrides the card's dense BF16 peak", high=1e18),
    },
    "decode": {
        "cores_per_accelerator": Field(
            8, "cores", "CPU cores decoding for one accelerator", low_open=False, high=4_096
        ),
        "core_fps_1080p": Field(120.0, "frames/s", "one core's 1080p rate (seed §3, assumed)", high=1e6),
        "nvdec_fps_1080p": Field(771.0, "frames/s", "one NVDEC engine's 1080p H.264 rate (seed §3)", high=1e6),
        "link_bytes_per_s": Field(1.5e9, "B/s", "read bandwidth per accelerator (seed §3)", high=1e13),
        "gop": Field(30, "frames", "frames between keyframes (seed §3)", low=1, low_open=False, high=100_000),
        "decoded_bytes_per_pixel": Field(1.5, "B/px", "decoded YUV 4:2:0 pixel", high=64),
    },
    "prices": {
        "accelerator_usd_per_hour": Field(2.50, "$/h", "accelerator-hour", low_open=False, high=1e4),
        "core_usd_per_hour": Field(0.04, "$/h", "core-hour", low_open=False, high=1e3),
        "byte_usd_per_gb": Field(0.44, "$/GB", "bytes of one stored GB over the plan", low_open=False, high=1e3),
        "storage_usd_per_gb_month": Field(0.02, "$/GB-month", "storage rent (break-even)", low_open=False, high=1e3),
    },
    "training": {
        "epochs": Field(10, "1", "passes over each hour", high=1e5),
        "window_hours": Field(720.0, "h", "training window the capacities cover (≤ 10 years)", high=87_600),
        "horizon_months": Field(12.0, "months", "planning horizon of the shelf-life factor", high=1_200),
    },
    "capacity": {
        "storage_gb": Field(None, "GB", "storage capacity (blank = unlimited)", high=1e15),
        "decode_core_hours": Field(
            None, "core-h", "decode core-hours in the window (blank = cores × count × window)", high=1e15
        ),
    },
}

#: Limits of the numbers of an accelerator card.
ACCELERATOR_FIELDS = {
    "peak_flops": Field(None, "FLOP/s", "dense BF16 peak", high=1e18),
    "nvdec_engines": Field(None, "engines", "NVDEC engines", low_open=False, high=64),
}


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
    return _check_number(Path(where) if where else None, name or f"{table}.{key}", value, spec)


@dataclass(frozen=True)
class ModelCard:
    """A model card from ``models/NAME.toml``."""

    name: str
    params: float
    input_side: float
    patch: float
    source: str = ""


@dataclass(frozen=True)
class AcceleratorCard:
    """One accelerator type from ``models/accelerators.toml``."""

    type: str
    peak_flops: float
    nvdec_engines: int
    source: str = ""


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


def _read_toml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise LedgerError(f"{path}: no such file")
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise LedgerError(f"{path}: not valid TOML: {exc}") from None


def _check_number(path: Path | None, key: str, value: Any, spec: Field) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if ok:
        ok = (value > spec.low if spec.low_open else value >= spec.low) and value <= spec.high
    if not ok:
        prefix = f"{path}: " if path is not None else ""
        raise LedgerError(f"{prefix}{key} = {value!r} is invalid: must be {spec.allowed()}")
    return float(value)


def load_accelerators(directory: Path | None = None) -> dict[str, AcceleratorCard]:
    """Read ``accelerators.toml``: one table per type with ``peak_flops`` and ``nvdec_engines``."""
    path = (directory or models_dir()) / "accelerators.toml"
    data = _read_toml(path)
    cards = {}
    for name, table in data.items():
        pf = _check_number(path, f"{name}.peak_flops", table.get("peak_flops"), ACCELERATOR_FIELDS["peak_flops"])
        ne = _check_number(
            path, f"{name}.nvdec_engines", table.get("nvdec_engines"), ACCELERATOR_FIELDS["nvdec_engines"]
        )
        cards[name] = AcceleratorCard(name, pf, int(ne), str(table.get("source", "")))
    return cards


def model_names(directory: Path | None = None) -> list[str]:
    """Names of the model cards shipped in ``models/``."""
    d = directory or models_dir()
    return sorted(p.stem for p in d.glob("*.toml") if p.stem != "accelerators")


def load_model_card(name: str, directory: Path | None = None) -> ModelCard:
    """Read the model card ``models/NAME.toml`` (params, input_side, patch, source)."""
    d = directory or models_dir()
    path = d / f"{name}.toml"
    if name == "accelerators" or not path.is_file():
        raise LedgerError(f"model = {name!r} is unknown: model cards are {', '.join(model_names(d))} (in {d})")
    data = _read_toml(path)
    spec = CLUSTER_FIELDS["model"]
    known = ("name", "params", "input_side", "patch", "source")
    for key in data:
        if key not in known:
            raise LedgerError(f"{path}: {key} is unknown{_did_you_mean(key, known)}: allowed are {', '.join(known)}")
    return ModelCard(
        name=str(data.get("name", name)),
        params=_check_number(path, "params", data.get("params"), spec["params"]),
        input_side=_check_number(path, "input_side", data.get("input_side"), spec["input_side"]),
        patch=_check_number(path, "patch", data.get("patch"), spec["patch"]),
        source=str(data.get("source", "")),
    )


def read_cluster(path: Path | str, models: Path | None = None) -> Cluster:
    """Read and validate ``cluster.toml``; blank keys take the defaults of :data:`CLUSTER_FIELDS`.

    Raises
    ------
    LedgerError
        An unknown table or key, a value of the wrong type or range, an unknown model card or
        accelerator type.
    """
    path = Path(path)
    data = _read_toml(path)
    if isinstance(data.get("model"), str):
        data["model"] = {"name": data["model"]}
    values: dict[str, Any] = {}
    for table, body in data.items():
        if table not in CLUSTER_FIELDS:
            raise LedgerError(
                f"{path}: table [{table}] is unknown{_did_you_mean(table, CLUSTER_FIELDS)}: "
                f"allowed are {', '.join(CLUSTER_FIELDS)}"
            )
        if not isinstance(body, dict):
            raise LedgerError(f"{path}: {table} = {body!r} is invalid: must be a table")
        for key in body:
            if key not in CLUSTER_FIELDS[table] and not (table == "model" and key in ("card", "source")):
                raise LedgerError(
                    f"{path}: {table}.{key} is unknown{_did_you_mean(key, CLUSTER_FIELDS[table])}: "
                    f"allowed are {', '.join(CLUSTER_FIELDS[table])}"
                )
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
                    raise LedgerError(f"{path}: {qualified} = {value!r} is invalid: must be true or false")
                values[key] = value
            elif spec.kind == "text":
                if not isinstance(value, str) or not value:
                    raise LedgerError(f"{path}: {qualified} = {value!r} is invalid: must be non-empty text")
                values[key] = value
            else:
                values[key] = _check_number(path, qualified, value, spec)
    accelerators = load_accelerators(models)
    acc = values["type"]
    if acc not in accelerators:
        raise LedgerError(f"{path}: accelerator.type = {acc!r} is unknown: allowed are {', '.join(accelerators)}")
    card = load_model_card(values["name"], models)
    return Cluster(
        model=card.name,
        params=values["params"] or card.params,
        input_side=values["input_side"] or card.input_side,
        patch=values["patch"] or card.patch,
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
    )


def matches(sources: pd.DataFrame, key: str) -> np.ndarray:
    """Rows whose ``source`` or ``kind`` is ``key`` (a mix bound, a ``--kind``) [bool per row]."""
    return ((sources["source"] == key) | (sources["kind"] == key)).to_numpy(dtype=bool)


@dataclass(frozen=True)
class Ledger:
    """A validated ledger: its sources, its cluster and where it was read from."""

    sources: pd.DataFrame
    cluster: Cluster
    path: Path

    def source(self, name: str) -> pd.Series:
        """The row of source ``name``, else the first row of that kind."""
        s = self.sources
        hit = s[s["source"] == name]
        if hit.empty:
            hit = s[s["kind"] == name]
        if hit.empty:
            raise LedgerError(
                f"kind = {name!r} is not in {self.path / 'sources.csv'}: sources are {', '.join(s['source'])}"
            )
        return hit.iloc[0]


def load_ledger(directory: Path | str | None = None, models: Path | None = None) -> Ledger:
    """Read a ledger folder (``sources.csv`` and ``cluster.toml``); the default one if None."""
    d = Path(directory) if directory is not None else default_ledger_dir()
    if not d.is_dir():
        raise LedgerError(
            f"ledger = {str(d)!r} is not a folder: a ledger is a folder with sources.csv and cluster.toml"
        )
    return Ledger(read_sources(d / "sources.csv"), read_cluster(d / "cluster.toml", models), d)
