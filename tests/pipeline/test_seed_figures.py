"""Every figure the lesson "Moving the bits: the infrastructure bill" prints, reproduced through
the public API at the precision the lesson prints it. Each row cites the lesson's section (seed §)
that prints it."""

from __future__ import annotations

import pytest
from conftest import DEFAULT_LEDGER, seed_state

from procure import bill, pipeline


def printed(value: float, figure: float, decimals: int) -> bool:
    """True when ``value`` rounds to the printed ``figure`` at ``decimals`` places."""
    return round(value, decimals) == pytest.approx(figure, abs=10 ** (-decimals) / 1000)


DEFAULTS = seed_state()
MB = 1e6


def _epoch_hours(cores: float) -> float:
    r = seed_state(cores=cores)
    return bill.epoch_hours(1000, DEFAULT_LEDGER.cluster.count, r["wall_seconds"])


def _predecode() -> tuple[float, float, float]:
    enc, dec = DEFAULTS, seed_state(read="decoded")
    c = DEFAULT_LEDGER.cluster
    per_epoch = enc["cores_usd"] / c.epochs
    ratio = dec["gb_per_hour"] / enc["gb_per_hour"]
    be = bill.predecode_break_even(enc["gb_per_hour"], dec["gb_per_hour"], c.storage_usd_per_gb_month, per_epoch)
    return ratio, per_epoch, be


def _budget(b: float) -> tuple[float, float]:
    return bill.budget_split(b, DEFAULTS["price_usd_per_hour"], DEFAULTS["bill_usd"])


def _nvdec_ceiling(accelerator: str) -> float:
    r = seed_state(accelerator=accelerator, nvdec=True, cores=0)
    return r["decode_fps"]


def _stall_threshold(**changes) -> float:
    r = seed_state(**changes)
    return pipeline.stall_threshold_params(r["mfu"], r["peak_flops"], r["tokens_per_frame"], r["supply_fps"])


# (seed section, what, computed value, printed figure, decimals)
FIGURES = [
    ("§1", "GB stored an hour", lambda: DEFAULTS["gb_per_hour"], 10.8, 1),
    ("§1", "GB decoded an hour", lambda: DEFAULTS["gb_decoded_per_hour"], 1008, 0),
    ("§1", "frames an hour", lambda: DEFAULTS["frames_per_hour"], 324_000, 0),
    ("§2", "M tokens an hour", lambda: DEFAULTS["frames_per_hour"] * DEFAULTS["tokens_per_frame"] / MB, 82.9, 1),
    ("§2", "tokens at 224 px", lambda: pipeline.tokens_per_frame(224, 14), 256, 0),
    ("§2", "tokens at 384 px", lambda: pipeline.tokens_per_frame(384, 14), 729, 0),
    ("§2", "MFLOPs a token", lambda: pipeline.FLOPS_PER_PARAM_TOKEN * DEFAULTS["params"] / MB, 558, 0),
    ("§2", "tokens a second", lambda: DEFAULTS["demand_fps"] * DEFAULTS["tokens_per_frame"], 709_319, 0),
    ("§2", "frames a second", lambda: DEFAULTS["demand_fps"], 2771, 0),
    ("§1", "s to train on an hour", lambda: DEFAULTS["useful_seconds"], 116.9, 1),
    ("§1", "s to decode an hour", lambda: DEFAULTS["wall_seconds"], 337.5, 1),
    ("§3", "busy %", lambda: 100 * DEFAULTS["busy"], 34.6, 1),
    ("§3", "cores needed", lambda: DEFAULTS["cores_needed"], 23.1, 1),
    ("§3", "px per token", lambda: DEFAULTS["pixels_per_token"], 8100, 0),
    ("§3", "decode tokens/s", lambda: DEFAULTS["decode_fps"] * DEFAULTS["tokens_per_frame"], 245_760, 0),
    ("§3", "read tokens/s, decoded", lambda: seed_state(read="decoded")["read_fps"] * 256, 123_457, 0),
    ("§3", "B of pixels per token", lambda: 1.5 * DEFAULTS["pixels_per_token"], 12_150, 0),
    ("§3", "B of stream per token", lambda: DEFAULTS["bytes_per_frame"] / 256, 130, 0),
    ("§3", "B per frame read", lambda: DEFAULTS["bytes_per_frame"], 33_333, 0),
    ("§3", "H100 NVDEC ceiling", lambda: _nvdec_ceiling("H100"), 5397, 0),
    ("§3", "A100 NVDEC ceiling", lambda: _nvdec_ceiling("A100"), 3855, 0),
    ("§3", "93 M supply with NVDEC", lambda: seed_state(nvdec=True)["decode_fps"], 6357, 0),
    ("§4", "bill $", lambda: DEFAULTS["bill_usd"], 6.58, 2),
    ("§6", "share of own %", lambda: 100 * DEFAULTS["share"], 5.3, 1),
    ("§4", "2160p GB", lambda: seed_state(width=3840, height=2160)["gb_per_hour"], 43.2, 1),
    ("§4", "2160p cores needed", lambda: seed_state(width=3840, height=2160)["cores_needed"], 92.4, 1),
    ("§4", "2160p busy %", lambda: 100 * seed_state(width=3840, height=2160)["busy"], 8.7, 1),
    ("§4", "480p cores needed", lambda: seed_state(width=854, height=480)["cores_needed"], 4.6, 1),
    ("§4", "480p busy %", lambda: 100 * seed_state(width=854, height=480)["busy"], 100, 1),
    ("§4", "480p GB", lambda: seed_state(width=854, height=480)["gb_per_hour"], 2.13, 2),
    ("§4", "480p bill $", lambda: seed_state(width=854, height=480)["bill_usd"], 1.04, 2),
    ("§4", "23 cores busy %", lambda: 100 * seed_state(cores=23)["busy"], 99.6, 1),
    ("§4", "24 cores busy %", lambda: 100 * seed_state(cores=24)["busy"], 100, 1),
    ("§4", "24 cores bill $", lambda: seed_state(cores=24)["bill_usd"], 5.06, 2),
    ("§5", "24 cores bill falls by $", lambda: DEFAULTS["bill_usd"] - seed_state(cores=24)["bill_usd"], 1.52, 2),
    ("§5", "24 cores cost $ more", lambda: seed_state(cores=24)["cores_usd"] - DEFAULTS["cores_usd"], 0.01, 2),
    ("§4", "411 M cores needed", lambda: seed_state(model="411m")["cores_needed"], 5.2, 1),
    ("§4", "411 M busy %", lambda: 100 * seed_state(model="411m")["busy"], 100, 1),
    ("§4", "25 M cores needed", lambda: seed_state(model="25m")["cores_needed"], 85.9, 1),
    ("§4", "25 M busy %", lambda: 100 * seed_state(model="25m")["busy"], 9.3, 1),
    ("§3", "25 M busy with NVDEC %", lambda: 100 * seed_state(model="25m", nvdec=True)["busy"], 61.7, 1),
    ("§3", "4K busy with NVDEC %", lambda: 100 * seed_state(width=3840, height=2160, nvdec=True)["busy"], 57.4, 1),
    ("§4", "decoded GB", lambda: seed_state(read="decoded")["gb_per_hour"], 1008, 0),
    ("§3", "decoded busy %", lambda: 100 * seed_state(read="decoded")["busy"], 17.4, 1),
    ("§4", "decoded bill $", lambda: seed_state(read="decoded")["bill_usd"], 447.9, 1),
    ("§4", "random cores needed", lambda: seed_state(read="random")["cores_needed"], 357.9, 1),
    ("§4", "random busy %", lambda: 100 * seed_state(read="random")["busy"], 2.2, 1),
    ("§3", "random px per token", lambda: seed_state(read="random")["pixels_per_token"], 125_550, 0),
    ("§3", "224×224 px per token", lambda: seed_state(width=224, height=224)["pixels_per_token"], 196, 0),
    ("§4", "bytes ×10 bill $", lambda: seed_state(byte_price_x=10)["bill_usd"], 49.4, 1),
    (
        "§4",
        "bytes ×10 idle %",
        lambda: 100 * (lambda r: r["idle_usd"] / r["bill_usd"])(seed_state(byte_price_x=10)),
        3,
        0,
    ),
    ("§4", "bytes ×0.1 bill $", lambda: seed_state(byte_price_x=0.1)["bill_usd"], 2.31, 2),
    (
        "§4",
        "bytes ×0.1 idle %",
        lambda: 100 * (lambda r: r["idle_usd"] / r["bill_usd"])(seed_state(byte_price_x=0.1)),
        66,
        0,
    ),
    ("§3", "stall threshold M params", lambda: _stall_threshold() / MB, 268, 0),
    ("§3", "4K stall threshold M", lambda: _stall_threshold(width=3840, height=2160) / MB, 1074, 0),
    ("§3", "random stall threshold M", lambda: _stall_threshold(read="random") / MB, 4160, 0),
    ("§5", "112 px cores needed", lambda: seed_state(side=112)["cores_needed"], 92.4, 1),
    ("§5", "112 px busy %", lambda: 100 * seed_state(side=112)["busy"], 8.7, 1),
    ("§5", "pre-decoding storage ×", lambda: _predecode()[0], 93.3, 1),
    ("§5", "decoding $ an epoch", lambda: _predecode()[1], 0.03, 2),
    ("§5", "break-even epochs a month", lambda: _predecode()[2], 665, 0),
    ("§5", "epoch of 1,000 h, 8 cores [h]", lambda: _epoch_hours(8), 11.7, 1),
    ("§5", "epoch of 1,000 h, 24 cores [h]", lambda: _epoch_hours(24), 4.1, 1),
    (
        "§6",
        "bytes share of bill %",
        lambda: 100 * bill.split(DEFAULTS["bytes_usd"], DEFAULTS["cores_usd"], DEFAULTS["idle_usd"])[0],
        72,
        0,
    ),
    (
        "§6",
        "cores share of bill %",
        lambda: 100 * bill.split(DEFAULTS["bytes_usd"], DEFAULTS["cores_usd"], DEFAULTS["idle_usd"])[1],
        5,
        0,
    ),
    (
        "§6",
        "stall share of bill %",
        lambda: 100 * bill.split(DEFAULTS["bytes_usd"], DEFAULTS["cores_usd"], DEFAULTS["idle_usd"])[2],
        23,
        0,
    ),
    ("§6", "$100 buys own h", lambda: _budget(100)[0], 0.81, 2),
    ("§6", "$100 moving $", lambda: _budget(100)[1], 5.33, 2),
    ("§6", "$100,000 buys own h", lambda: _budget(100_000)[0], 809, 0),
    # The seed truncates this one: 100,000 / 123.60 × 6.5837 = 5,326.62 prints as 5,326.
    ("§6", "$100,000 moving $ (truncated)", lambda: int(_budget(100_000)[1]), 5326, 0),
    ("§6", "moving share of budget %", lambda: 100 * _budget(100_000)[1] / 100_000, 5.33, 2),
]


@pytest.mark.parametrize(
    ("section", "what", "compute", "figure", "decimals"), FIGURES, ids=[f"{f[0]} {f[1]}" for f in FIGURES]
)
def test_seed_figure(section, what, compute, figure, decimals):
    value = compute()
    assert printed(value, figure, decimals), f"seed {section} prints {what} = {figure}, got {value}"


@pytest.mark.parametrize(
    ("changes", "stage"),
    [({}, "decode"), ({"read": "decoded"}, "read"), ({"cores": 24}, "accelerator"), ({"model": "411m"}, "accelerator")],
)
def test_binding_stage(changes, stage):
    """Seed §3/§4: decode binds at the defaults, read when stored decoded, none at 24 cores."""
    assert seed_state(**changes)["stage"] == stage
