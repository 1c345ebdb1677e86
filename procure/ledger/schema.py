"""What a ledger may hold: each column of ``sources.csv`` and each key of ``cluster.toml`` as a
:class:`procure.spec.Range`, with its unit, default and what is allowed.

The curve columns take their names, default shapes and shape ranges from
:mod:`procure.curves`. ``docs/ledger.md`` prints these tables (``docs/ledger_tables.py``
writes them from here).
"""

from __future__ import annotations

import dataclasses
import math

from ..curves import NAMES, REGISTRY, shape_range, shaped
from ..defaults import DEFAULT_TIME_LIMIT
from ..pipeline.formulas import PIXELS_1080P, READ_MODES, STORED_MODES
from ..pipeline.queue import MAX_CV
from ..spec import Range

#: The formats a source may be kept in (the ``formats`` column).
FORMATS = ("recorded", "model_side", "decoded")
#: How a ``formats`` cell joins its formats.
FORMAT_JOIN = "+"

#: The value curves a source may have.
CURVES = NAMES
#: Encoded stream rate of the lesson's cameras: 8 Mbit/s at 1920 × 1080 and 30 fps [bit/px].
DEFAULT_BITS_PER_PIXEL = 8e6 / (PIXELS_1080P * 30)
#: Default curve shape by curve: power exponent β and hill steepness s [1].
DEFAULT_CURVE_SHAPE = {c.name: c.default_shape for c in shaped()}

#: Largest amounts a ledger may hold. Each is far beyond any real purchase and well inside
#: floating point, so that no product of them (a bill, a plan's money) can overflow.
MOST_HOURS = 1e9  # [h]
MOST_USD = 1e12  # [$]
MOST_PIXELS = 16_384  # [px], a 16K frame's side
#: Smallest value other than 0 of every number of a ledger and of the options, in the field's
#: own unit (a millionth of an hour, a dollar, a frame a second, a share), unless the field
#: has a larger low end: far below any real figure, and far above the denormals (5e-324) whose
#: quotients overflow to inf. With every number between this and its largest value, every
#: product and quotient the pipeline, the bill and the program form stays finite.
LEAST = 1e-6  # [the field's unit]
#: Smallest frame side: a frame narrower than a pixel holds nothing [px].
LEAST_PIXELS = 1.0
#: Prefix of the columns of sources.csv that procure ignores: a team's own notes.
USER_COLUMN_PREFIX = "x_"

_SHAPE_DOC = ", ".join(f"{c.name} {c.shape_symbol} ({c.default_shape:g})" for c in shaped())
_UNSCALED = ", ".join(c.name for c in REGISTRY.values() if not c.needs_scale)

#: The columns of ``sources.csv``: unit, default, range and meaning of each.
SOURCE_COLUMNS: dict[str, Range] = {
    r.name: r
    for r in (
        Range("source", "text", kind="text", doc="unique name"),
        Range("kind", "text", kind="text", doc="own, twin, older_arm, force, sim, or any text"),
        Range("price_usd_per_hour", "$/h", low=0.0, high=1e7, doc="purchase price"),
        Range(
            "available_hours", "h", math.inf, low=0.0, high=MOST_HOURS, blank="unlimited", doc="most that can be bought"
        ),
        Range("held_hours", "h", 0.0, low=0.0, high=MOST_HOURS, doc="already owned"),
        Range("lot_hours", "h", 0.0, low=0.0, high=MOST_HOURS, doc="whole lots only (0 = continuous)"),
        Range("min_order_hours", "h", 0.0, low=0.0, high=MOST_HOURS, doc="least order if bought at all"),
        Range("fixed_fee_usd", "$", 0.0, low=0.0, high=MOST_USD, doc="paid once if bought at all"),
        Range("cameras", "count", low=0.0, low_open=True, high=1_000, doc="camera streams"),
        Range("width", "px", low=0.0, low_open=True, high=MOST_PIXELS, doc="frame width the model trains on"),
        Range("height", "px", low=0.0, low_open=True, high=MOST_PIXELS, doc="frame height"),
        Range("fps", "1/s", low=0.0, low_open=True, high=10_000, doc="frames per second per camera"),
        Range(
            "bits_per_pixel",
            "bit/px",
            DEFAULT_BITS_PER_PIXEL,
            low=0.0,
            low_open=True,
            high=64,
            doc="encoded stream rate (64: raw 16-bit RGBA)",
        ),
        Range("extra_bytes_per_s", "B/s", 0.0, low=0.0, high=1e10, doc="non-video channels (force/torque)"),
        Range(
            "codec",
            "text",
            "",
            kind="text",
            blank="h264, the lesson's",
            doc="the video's codec as ffprobe names it (h264, hevc, av1, vp9, …): sets the core rate and NVDEC",
        ),
        Range(
            "gop",
            "frames",
            math.nan,
            low=1.0,
            high=100_000,
            blank="the cluster's",
            doc="frames between keyframes of this source",
        ),
        Range(
            "core_fps_1080p",
            "frames/s",
            math.nan,
            low=0.0,
            low_open=True,
            high=1e6,
            blank="the cluster's",
            doc="one core's 1080p-equivalent decode rate for this source's video",
        ),
        Range("stored", "", "video", kind="choice", choices=STORED_MODES, doc="how frames are kept"),
        Range(
            "formats",
            "",
            "",
            kind="text",
            blank="as recorded only",
            doc=f"formats the program may keep it in, joined by {FORMAT_JOIN}: {', '.join(FORMATS)}",
        ),
        Range(
            "split_formats",
            "",
            "no",
            kind="choice",
            choices=("no", "yes"),
            doc="yes: its hours may be split across its formats",
        ),
        Range("read", "", "order", kind="choice", choices=READ_MODES, doc="how frames are read"),
        Range("exchange_rate", "own-hours per hour", 1.0, low=0.0, high=1_000, doc="ρ"),
        Range("survival", "1", 1.0, low=0.0, high=1.0, doc="σ, share surviving filtering"),
        Range(
            "shelf_life_months",
            "months",
            math.inf,
            low=0.0,
            low_open=True,
            high=1_200,
            blank="never stale",
            doc="L, half-life of value",
        ),
        Range("curve", "", "log", kind="choice", choices=CURVES, doc="value curve"),
        Range(
            "saturation_hours",
            "effective h",
            math.nan,
            low=0.0,
            low_open=True,
            high=MOST_HOURS,
            doc=f"k; required unless {_UNSCALED}",
        ),
        dataclasses.replace(shape_range(), default=math.nan, doc=_SHAPE_DOC),
    )
}

for _name, _column in SOURCE_COLUMNS.items():
    if _column.kind == "number" and _column.least == 0:
        _least = LEAST_PIXELS if _column.unit == "px" else LEAST
        SOURCE_COLUMNS[_name] = dataclasses.replace(_column, least=_least)

#: Columns whose value may be uncertain: a scenario may give another value, and a range
#: (``NAME_low``, ``NAME_high``) lets ``--samples`` draw one (:mod:`procure.ledger.scenarios`).
UNCERTAIN_COLUMNS = ("exchange_rate", "survival", "saturation_hours", "price_usd_per_hour")
RANGE_SUFFIXES = ("_low", "_high")

for _name in UNCERTAIN_COLUMNS:
    for _suffix, _end in zip(RANGE_SUFFIXES, ("lowest", "highest"), strict=True):
        SOURCE_COLUMNS[_name + _suffix] = dataclasses.replace(
            SOURCE_COLUMNS[_name],
            name=_name + _suffix,
            default=math.nan,
            blank="no range",
            doc=f"{_end} value of {_name} a sampled scenario draws (triangular, peak at {_name})",
        )

REQUIRED_SOURCE_COLUMNS = tuple(n for n, c in SOURCE_COLUMNS.items() if c.required)
#: Columns of sources.csv that hold numbers.
NUMBER_COLUMNS = tuple(n for n, c in SOURCE_COLUMNS.items() if c.kind == "number")


#: One core's 1080p decode rate of the codecs other than H.264 [frames/s]: the lesson's H.264
#: rate (120) times the codec's rate over H.264's, measured with PyAV (one thread, frames
#: converted to RGB) on clips encoded at 8 Mbit/s by ``benchmarks/codec_decode_rates.py``
#: (docs/pipeline.md, "Codecs"). (codec, name in messages, rate)
CODEC_CORE_FPS = (
    ("hevc", "HEVC", 72.0), ("av1", "AV1 (dav1d)", 193.0), ("vp9", "VP9", 132.0),
    ("mjpeg", "JPEG image", 187.0), ("png", "PNG image", 33.0),
)  # fmt: skip
CODEC_RATE_DOC = "120 × its rate over H.264's measured by benchmarks/codec_decode_rates.py"


def _number(name: str, unit: str, default: float | None, doc: str, **bounds: float | bool) -> Range:
    """A number key of cluster.toml: ``≥ LEAST`` (:data:`LEAST`) unless ``bounds`` says otherwise."""
    ends: dict[str, float | bool] = {"low": 0.0, "low_open": True, "least": LEAST, **bounds}
    return Range(name, unit, default, doc=doc, **ends)  # type: ignore[arg-type]


def _table(*ranges: Range) -> dict[str, Range]:
    return {r.name: r for r in ranges}


#: Every key of cluster.toml by table, with its default (None = unlimited or from a card).
CLUSTER_FIELDS: dict[str, dict[str, Range]] = {
    "model": _table(
        Range("name", "", "93m", kind="text", doc="model card in models/"),
        _number("params", "parameters", None, "overrides the card", low=1e3, low_open=False, high=1e14),
        _number("input_side", "px", None, "overrides the card", low=1, low_open=False, high=MOST_PIXELS),
        _number("patch", "px", None, "overrides the card", low=1, low_open=False, high=MOST_PIXELS),
    ),
    "accelerator": _table(
        Range("type", "", "H100", kind="text", doc="accelerator card in models/accelerators.toml"),
        _number("count", "accelerators", 8, "accelerators training", high=1e7),
        _number("mfu", "1", 0.4, "share of dense peak reached (the lesson's)", high=1.0),
        Range("nvdec", "", False, kind="bool", doc="decode on the accelerator's NVDEC engines too"),
        _number("peak_flops", "FLOP/s", None, "overrides the card's dense BF16 peak", high=1e18),
    ),
    "decode": _table(
        _number(
            "cores_per_accelerator", "cores", 8, "CPU cores decoding for one accelerator", low_open=False, high=4_096
        ),
        _number("core_fps_1080p", "frames/s", 120.0, "one core's 1080p H.264 rate (the lesson's, assumed)", high=1e6),
        *(
            _number(
                f"core_fps_1080p_{codec}",
                "frames/s",
                rate,
                f"one core's 1080p {label} rate ({CODEC_RATE_DOC})",
                high=1e6,
            )
            for codec, label, rate in CODEC_CORE_FPS
        ),
        _number("nvdec_fps_1080p", "frames/s", 771.0, "one NVDEC engine's 1080p H.264 rate (the lesson's)", high=1e6),
        _number("link_bytes_per_s", "B/s", 1.5e9, "read bandwidth per accelerator (the lesson's)", high=1e13),
        _number("gop", "frames", 30, "frames between keyframes (the lesson's)", low=1, low_open=False, high=100_000),
        _number("decoded_bytes_per_pixel", "B/px", 1.5, "decoded YUV 4:2:0 pixel", high=64),
        _number(
            "encode_fps_1080p",
            "frames/s",
            25.0,
            "one core's 1080p H.264 encode rate, re-encoding a source (assumed: x264 medium; measure it "
            "with procure calibrate --encode)",
            high=1e6,
        ),
    ),
    "prices": _table(
        _number("accelerator_usd_per_hour", "$/h", 2.50, "accelerator-hour", low_open=False, high=1e4),
        _number("core_usd_per_hour", "$/h", 0.04, "core-hour", low_open=False, high=1e3),
        _number("byte_usd_per_gb", "$/GB", 0.44, "bytes of one stored GB over the plan", low_open=False, high=1e3),
        _number("storage_usd_per_gb_month", "$/GB-month", 0.02, "storage rent (break-even)", low_open=False, high=1e3),
    ),
    "training": _table(
        _number("epochs", "1", 10, "passes over each hour", high=1e5),
        _number("window_hours", "h", 720.0, "training window the capacities cover (≤ 10 years)", high=87_600),
        _number("horizon_months", "months", 12.0, "planning horizon of the shelf-life factor", high=1_200),
    ),
    "capacity": _table(
        _number("storage_gb", "GB", None, "storage capacity (blank = unlimited)", high=1e15),
        _number(
            "decode_core_hours",
            "core-h",
            None,
            "decode core-hours in the window (blank = cores × count × window)",
            high=1e15,
        ),
        _number(
            "rent_accelerator_hours",
            "accelerator-h",
            0.0,
            "most accelerator-hours the plan may rent, at accelerator_usd_per_hour",
            low_open=False,
            high=1e15,
        ),
        _number(
            "rent_core_hours",
            "core-h",
            0.0,
            "most decode core-hours the plan may rent, at core_usd_per_hour",
            low_open=False,
            high=1e15,
        ),
        _number(
            "rent_storage_gb",
            "GB",
            0.0,
            "most storage the plan may rent, at storage_usd_per_gb_month over the window",
            low_open=False,
            high=1e15,
        ),
    ),
}

#: Limits of the numbers of an accelerator card.
ACCELERATOR_FIELDS = _table(
    _number("peak_flops", "FLOP/s", None, "dense BF16 peak", high=1e18),
    _number("nvdec_engines", "engines", None, "NVDEC engines", low_open=False, high=64),
)
#: Keys a model card may have.
MODEL_CARD_KEYS = ("name", "params", "input_side", "patch", "source")

#: Largest multiplier on the byte price [1].
MOST_BYTE_PRICE_X = 1e4
#: Largest value a plan may be asked to reach [own-hour equivalents]: a billion hours at the
#: largest exchange rate.
MOST_VALUE = MOST_HOURS * 1_000
#: Largest multiple of its price an hour bought later may cost [1].
MOST_RECOURSE_X = 1e4
#: Largest seed of a random draw: 64 bits [1].
MOST_SEED = 2**64 - 1
#: Longest time limit a command takes [s]: about 11.6 days. A limit is a number of seconds
#: after which the command stops with what it finished; there is no "no limit".
MOST_TIME_LIMIT = 1e6
#: Shortest time limit a command takes [s]: a nanosecond, a limit past before any work starts.
LEAST_TIME_LIMIT = 1e-9

#: Numbers given only as an argument or a command option (not a column or a key), with the
#: same conventions; ``docs/ledger.md`` lists them.
OPTION_FIELDS = _table(
    # A budget only bounds the money spent (nothing is divided by it): any amount from 0 up.
    Range("budget", "$", None, low=0.0, high=MOST_USD, doc="dollars to spend"),
    Range(
        "target", "own-hour equivalents", None, low=0.0, low_open=True, high=MOST_VALUE, least=LEAST,
        doc="value to reach at least cost",
    ),
    Range(
        "byte_price_x", "1", 1.0, low=0.0, high=MOST_BYTE_PRICE_X, least=LEAST,
        doc="multiplier on the byte price (0: bytes are free)",
    ),
    Range("max_share", "1", None, low=0.0, high=1.0, least=LEAST, doc="most share of effective hours from a source"),
    Range("decode_cv", "1", 0.0, low=0.0, high=MAX_CV, least=LEAST, doc="coefficient of variation of decode times"),
    Range("train_cv", "1", 0.0, low=0.0, high=MAX_CV, least=LEAST, doc="coefficient of variation of train times"),
    Range("seed", "1", 0, low=0, high=MOST_SEED, integer=True, doc="seed of the random draws"),
    Range(
        "risk_alpha", "1", 0.1, low=0.0, low_open=True, high=1.0, least=LEAST,
        doc="worst share of scenarios whose mean is the CVaR",
    ),
    Range("risk_weight", "1", 0.0, low=0.0, high=1.0, least=LEAST, doc="weight of the CVaR in the objective"),
    Range(
        "recourse_price_x", "1", None, low=1.0, high=MOST_RECOURSE_X,
        doc="multiple of its price a scenario pays for hours bought later",
    ),
    Range(
        "time_limit", "s", DEFAULT_TIME_LIMIT, low=0.0, low_open=True, high=MOST_TIME_LIMIT, least=LEAST_TIME_LIMIT,
        doc="wall-time limit of a command's solves and loops",
    ),
)  # fmt: skip
#: What each input a sweep varies (``procure.defaults.VARY_PARAMETERS``) accepts: the
#: same :class:`~procure.spec.Range` as where it enters otherwise.
VARY_FIELDS: dict[str, Range] = {
    "byte_price_x": OPTION_FIELDS["byte_price_x"],
    "budget": OPTION_FIELDS["budget"],
    "accelerator_usd_per_hour": CLUSTER_FIELDS["prices"]["accelerator_usd_per_hour"],
    "core_usd_per_hour": CLUSTER_FIELDS["prices"]["core_usd_per_hour"],
    "params": CLUSTER_FIELDS["model"]["params"],
}


def field(name: str) -> Range:
    """The :class:`~procure.spec.Range` of a number by its name: a column of ``sources.csv``,
    an option (:data:`OPTION_FIELDS`), an input a sweep varies (:data:`VARY_FIELDS`), or a key
    of ``cluster.toml`` as ``table.key``.

    Raises
    ------
    KeyError
        No field of that name.
    """
    if name in SOURCE_COLUMNS:
        return SOURCE_COLUMNS[name]
    if name in OPTION_FIELDS:
        return OPTION_FIELDS[name]
    if name in VARY_FIELDS:
        return VARY_FIELDS[name]
    table, _dot, key = name.partition(".")
    return CLUSTER_FIELDS[table][key]
