"""``procure bill``: the JSON keys README lists and the readable table."""

from __future__ import annotations

import json

import pytest

from procure.interfaces.cli import main
from procure.interfaces.commands.pipeline import BILL_KEYS

CONTRACT = [
    "demand_fps",
    "supply_fps",
    "read_fps",
    "decode_fps",
    "busy",
    "stage",
    "cores_needed",
    "pixels_per_token",
    "tokens_per_frame",
    "gb_per_hour",
    "bill_usd",
    "bytes_usd",
    "cores_usd",
    "idle_usd",
]


def run_json(args, capsys) -> dict:
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_contract_keys(capsys):
    out = run_json(["bill"], capsys)
    assert list(BILL_KEYS) == CONTRACT
    assert set(CONTRACT) <= set(out)
    assert out["stage"] == "decode"
    assert round(out["bill_usd"], 2) == 6.58


def test_decoded_has_no_decode_stage(capsys):
    out = run_json(["bill", "--read", "decoded"], capsys)
    assert out["decode_fps"] is None  # infinite: JSON null
    assert out["stage"] == "read"
    assert round(out["bill_usd"], 1) == 447.9


@pytest.mark.parametrize(
    ("args", "key", "value", "decimals"),
    [
        (["--width", "3840", "--height", "2160"], "cores_needed", 92.4, 1),
        (["--params", "411e6"], "cores_needed", 5.2, 1),
        (["--model", "25m", "--nvdec"], "busy", 0.617, 3),
        (["--read", "random"], "pixels_per_token", 125_550, 0),
        (["--cores", "24"], "bill_usd", 5.06, 2),
        (["--byte-price-x", "10"], "bill_usd", 49.4, 1),
        (["--side", "112"], "tokens_per_frame", 64, 0),
        (["--accelerator", "A100"], "demand_fps", 0.4 * 312e12 / (6 * 93e6 * 256), 6),
        (["--kind", "twin"], "bill_usd", 6.58, 2),
        (["--kind", "older_arm"], "cores_needed", 4.6, 1),
    ],
)
def test_options(args, key, value, decimals, capsys):
    out = run_json(["bill", *args], capsys)
    assert round(out[key], decimals) == round(value, decimals)


def test_readable_table(capsys):
    assert main(["bill"]) == 0
    text = capsys.readouterr().out
    for needle in ("2,770.8", "960.0", "34.6 %", "23.1", "8,100", "10.80", "6.58", "72.2 %", "5.3 %", "binds"):
        assert needle in text, needle
