"""One number, one range, wherever it enters: a ledger cell, a cluster key, a command option, a
sweep's ``--vary``. The expected verdicts are written by hand, apart from the code; every entry
point must reach the same one. No number accepted anywhere is so small that a quotient of it
overflows: at every corner of the ranges, the bill and the pipeline stay finite."""

from __future__ import annotations

import importlib
import math
import re
import warnings
from pathlib import Path

import click
import numpy as np
import pytest
from conftest import DEFAULT_LEDGER

from procure.errors import InputError, ProcureError
from procure.interfaces.cli import main
from procure.interfaces.options import FieldNumber, pairs
from procure.ledger import CLUSTER_FIELDS, SOURCE_COLUMNS, read_cluster, read_sources, transport
from procure.ledger.cards import ACCELERATOR_FIELDS
from procure.ledger.schema import OPTION_FIELDS, VARY_FIELDS

TOP = Path(__file__).resolve().parents[2]
NAN, INF = math.nan, math.inf
DENORMAL = 5e-324

#: Each number, the values tried and whether each is allowed: written from the documented
#: ranges (docs/ledger.md), not from the code.
VERDICTS = {
    "held_hours": [(0, True), (DENORMAL, False), (1e-6, True), (1e9, True), (1e10, False), (-1, False), (NAN, False)],
    "price_usd_per_hour": [(0, True), (DENORMAL, False), (1e7, True), (1.1e7, False), (-1, False), (1e308, False),
                           (NAN, False)],
    "params": [(999, False), (1000, True), (1e14, True), (1e15, False), (DENORMAL, False)],
    "core_usd_per_hour": [(0, True), (1e-7, False), (1e-6, True), (1000, True), (1001, False), (1e300, False)],
    "accelerator_usd_per_hour": [(0, True), (1e4, True), (1e5, False), (INF, False)],
    "core_fps_1080p": [(0, False), (1e-320, False), (1e-6, True), (1e6, True), (2e6, False)],
    "gop": [(0.5, False), (1, True), (1e5, True), (100_001, False)],
    "cores_per_accelerator": [(0, True), (DENORMAL, False), (4096, True), (4097, False)],
    "byte_price_x": [(0, True), (1e-7, False), (1e-6, True), (1e4, True), (1e5, False)],
    "budget": [(0, True), (DENORMAL, True), (1e12, True), (1e13, False), (-1, False), (INF, False)],  # a bound only
    "max_share": [(0, True), (1e-9, False), (1, True), (1.5, False)],
}  # fmt: skip


def _run(args, capsys):
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.err


def _accepted_by_cli(args, capsys) -> bool:
    """True when the command got past checking its numbers (it may fail later, on other grounds)."""
    code, err = _run(args, capsys)
    assert code in (0, 2), err
    assert err.count("\n") <= 1, err
    return "is invalid" not in err


@pytest.fixture
def stop_before_solving(monkeypatch):
    """Solves replaced by an error: a run that gets there has accepted its numbers."""

    def reached(*args, **kwargs):
        raise ProcureError("reached the solver")

    for module, name in (("solving", "prepare"), ("sensitivity", "sweep"), ("rank", "rank")):
        monkeypatch.setattr(importlib.import_module(f"procure.analyses.{module}"), name, reached)


def _cell(folder: Path, column: str, value: float) -> bool:
    path = folder / "sources.csv"
    lines = path.read_text().splitlines()
    header = lines[0].split(",")
    if column not in header:
        lines = [lines[0] + f",{column}", *[line + "," for line in lines[1:]]]
        header.append(column)
    cells = lines[2].split(",")  # twin's row
    cells += [""] * (len(header) - len(cells))
    cells[header.index(column)] = repr(value)
    lines[2] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")
    try:
        read_sources(path)
    except ProcureError as exc:
        assert "is invalid" in str(exc)
        return False
    return True


def _key(folder: Path, table: str, key: str, value: float) -> bool:
    path = folder / "cluster.toml"
    text = re.sub(rf"(?m)^{key} = .*$\n?", "", path.read_text())
    literal = "nan" if math.isnan(value) else ("inf" if value == INF else repr(value))
    path.write_text(text.replace(f"[{table}]\n", f"[{table}]\n{key} = {literal}\n", 1))
    try:
        read_cluster(path)
    except ProcureError as exc:
        assert "is invalid" in str(exc)
        return False
    return True


def _entries(name: str, folder: Path, capsys) -> dict[str, object]:
    """The ways ``name`` enters, each a function of a value to "accepted?"."""
    bill = lambda option: lambda v: _accepted_by_cli(["bill", option, repr(v)], capsys)  # noqa: E731
    vary = lambda v: _accepted_by_cli(["sensitivity", "--vary", name, repr(v), repr(v), "--steps", "2"], capsys)  # noqa: E731
    entries: dict[str, dict[str, object]] = {
        "held_hours": {"cell": lambda v: _cell(folder, name, v),
                       "--held": lambda v: _accepted_by_cli(["solve", "--budget", "1", "--held", f"own={v!r}"], capsys)},
        "price_usd_per_hour": {"cell": lambda v: _cell(folder, name, v), "--price": _price_option},
        "params": {"key": lambda v: _key(folder, "model", name, v), "--params": bill("--params"), "--vary": vary},
        "core_usd_per_hour": {"key": lambda v: _key(folder, "prices", name, v), "--vary": vary},
        "accelerator_usd_per_hour": {"key": lambda v: _key(folder, "prices", name, v), "--vary": vary},
        "core_fps_1080p": {"cell": lambda v: _cell(folder, name, v), "key": lambda v: _key(folder, "decode", name, v),
                           "--core-fps-1080p": bill("--core-fps-1080p")},
        "gop": {"cell": lambda v: _cell(folder, name, v), "key": lambda v: _key(folder, "decode", name, v),
                "--gop": bill("--gop")},
        "cores_per_accelerator": {"key": lambda v: _key(folder, "decode", name, v), "--cores": bill("--cores")},
        "byte_price_x": {"--byte-price-x": bill("--byte-price-x"), "--vary": vary},
        "budget": {"solve --budget": lambda v: _accepted_by_cli(["solve", "--budget", repr(v)], capsys),
                   "rank --budget": lambda v: _accepted_by_cli(["rank", "--budget", repr(v)], capsys),
                   "--vary": vary},
        "max_share": {"--max-share": lambda v: _accepted_by_cli(["solve", "--budget", "1", "--max-share",
                                                                 f"sim={v!r}"], capsys)},
    }  # fmt: skip
    return entries[name]


def _price_option(value: float) -> bool:
    """``--price`` as ``procure import lerobot`` declares it (its range is the ledger column's)."""

    @click.command()
    @click.option("--price", type=FieldNumber("price_usd_per_hour"))
    def command(price: float) -> None:
        assert price == value

    try:
        command.main(["--price", repr(value)], standalone_mode=False)
    except InputError as exc:
        assert str(exc).startswith("price = ") and "is invalid" in str(exc)
        return False
    return True


@pytest.mark.parametrize("name", list(VERDICTS))
def test_a_number_has_one_range_wherever_it_enters(name, ledger_copy, capsys, stop_before_solving):
    entries = _entries(name, ledger_copy, capsys)
    for entry, check in entries.items():
        verdicts = [check(value) for value, _ok in VERDICTS[name]]
        # A sweep's points are log-spaced: its ends are the range above 0.
        expected = [ok and (entry != "--vary" or value > 0) for value, ok in VERDICTS[name]]
        assert verdicts == expected, f"{name} through {entry}: {verdicts} for {VERDICTS[name]}"


def test_a_sweep_refuses_what_its_input_refuses_elsewhere(capsys):
    code, err = _run(["sensitivity", "--vary", "params", "1", "10"], capsys)
    assert code == 2 and "LO = 1 is invalid: params must be a number ≥ 1000 and ≤ 1e+14" in err
    code, err = _run(["sensitivity", "--vary", "core_usd_per_hour", "1", "1e300"], capsys)
    assert code == 2 and "HI = 1e+300 is invalid: core_usd_per_hour must be 0 or a number ≥ 1e-06 and ≤ 1000" in err
    code, err = _run(["sensitivity", "--byte-price-x", "0", "1"], capsys)
    assert code == 2 and "LO = 0 is invalid: must be > 0" in err  # log-spaced: the ends above 0


# ----------------------------------------------------------------------------- options given twice


@pytest.mark.parametrize("option", ["--held", "--max-share"])
def test_an_option_repeated_for_one_name_is_refused(option, capsys):
    code, err = _run(["solve", "--budget", "1e5", option, "sim=0.1", option, " sim=0.2"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert f"Invalid value for '{option}': 'sim' is given twice (sim=0.1 and  sim=0.2)" in err


def test_pairs_check_each_number_against_its_field():
    assert pairs("--held", ("own=3", "twin=0"), "held_hours") == {"own": 3.0, "twin": 0.0}
    with pytest.raises(InputError, match=r"^held own = 10000000000.0 is invalid: must be 0 or a number ≥ 1e-06"):
        pairs("--held", ("own=1e10",), "held_hours")


# ----------------------------------------------------------------------------- the simulation's options


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--decode-cv", "1e-320"], "decode_cv = 1e-320 is invalid: must be 0 or a number ≥ 1e-06 and ≤ 10"),
        (["--train-cv", "nan"], "train_cv = nan is invalid"),
        (["--seed", "-1"], "seed = -1 is invalid: must be a whole number ≥ 0 and ≤ 18446744073709551615"),
        (["--seed", "1.5"], "'1.5' is not a whole number"),
    ],
)
def test_simulation_options_out_of_range_are_one_line(args, message, capsys):
    code, err = _run(["simulate", "--frames", "2000", *args], capsys)
    assert code == 2 and err.count("\n") == 1 and message in err


def test_a_simulation_with_jitter_and_a_large_seed_runs(capsys):
    code, err = _run(
        ["simulate", "--frames", "2000", "--decode-cv", "1e-6", "--seed", str(2**64 - 1), "--json"], capsys
    )
    assert code == 0, err


# ----------------------------------------------------------------------------- no tiny numbers, no overflow


def _ranges():
    for name, spec in SOURCE_COLUMNS.items():
        yield f"sources.csv {name}", spec
    for table, fields in CLUSTER_FIELDS.items():
        for key, spec in fields.items():
            yield f"cluster.toml {table}.{key}", spec
    for name, spec in {**ACCELERATOR_FIELDS, **OPTION_FIELDS}.items():
        yield name, spec


def test_no_number_anywhere_accepts_a_denormal():
    for where, spec in _ranges():
        if spec.kind == "number" and where != "budget":  # a budget is a bound: nothing is divided by it
            assert not spec.contains(DENORMAL) and not spec.contains(1e-320), where
            assert not spec.mask(np.array([DENORMAL, -0.0 + 1e-310]))[0], where


def test_the_ranges_of_the_options_are_documented():
    doc = (TOP / "docs" / "ledger.md").read_text()
    for name, spec in OPTION_FIELDS.items():
        rows = [line for line in doc.splitlines() if line.startswith(f"| `{name}` |") and spec.describe() in line]
        assert len(rows) == 1, f"docs/ledger.md documents {name} with {spec.describe()!r} {len(rows)} times"
    assert set(VARY_FIELDS) == {"byte_price_x", "budget", "accelerator_usd_per_hour", "core_usd_per_hour", "params"}


#: Format columns and cluster keys set to an end of their range at each corner tried.
CORNER_COLUMNS = ("cameras", "width", "height", "fps", "bits_per_pixel", "extra_bytes_per_s", "gop", "core_fps_1080p",
                  "price_usd_per_hour")  # fmt: skip
CORNER_KEYS = (("model", "params"), ("model", "input_side"), ("model", "patch"), ("accelerator", "count"),
               ("accelerator", "mfu"), ("accelerator", "peak_flops"), ("decode", "cores_per_accelerator"),
               ("decode", "core_fps_1080p"), ("decode", "nvdec_fps_1080p"), ("decode", "link_bytes_per_s"),
               ("decode", "decoded_bytes_per_pixel"), ("prices", "accelerator_usd_per_hour"),
               ("prices", "core_usd_per_hour"), ("prices", "byte_usd_per_gb"), ("training", "epochs"))  # fmt: skip
#: What one recorded hour costs and takes: finite at every corner.
FINITE = ("bill_usd", "bytes_usd", "cores_usd", "idle_usd", "accelerator_hours", "core_hours", "wall_seconds",
          "useful_seconds", "demand_fps", "busy", "cores_needed", "pixels_per_token", "gb_per_hour", "share",
          "largest_stalling_params")  # fmt: skip


def _smallest(spec) -> float:
    """The smallest value above 0 a range allows."""
    return max(spec.low, spec.least) if spec.low > 0 or spec.least > 0 else 1e-6


def test_at_every_corner_of_the_ranges_an_hour_costs_a_finite_amount():
    rng = np.random.default_rng(7)
    row = DEFAULT_LEDGER.sources.iloc[[0]].reset_index(drop=True)
    for _corner in range(200):
        r = row.copy()
        for column in CORNER_COLUMNS:
            spec = SOURCE_COLUMNS[column]
            r[column] = (_smallest(spec), spec.high)[rng.integers(2)]
        r["stored"], r["read"] = rng.choice(["video", "decoded", "rendered"]), rng.choice(["order", "random"])
        change = {
            k: (_smallest(CLUSTER_FIELDS[t][k]), CLUSTER_FIELDS[t][k].high)[rng.integers(2)] for t, k in CORNER_KEYS
        }
        change["input_side"] = max(change["input_side"], change["patch"])  # a model sees a patch at least
        cluster = DEFAULT_LEDGER.cluster.replace(nvdec=bool(rng.integers(2)), **change)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no overflow or division by zero on the way
            out = transport(r, cluster).iloc[0]
        assert all(math.isfinite(out[c]) for c in FINITE), {c: out[c] for c in FINITE if not math.isfinite(out[c])}
