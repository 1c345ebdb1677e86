"""The lesson's five kinds of hour from the default ledger: bytes, bill and share per kind, and
its three rankings."""

from __future__ import annotations

import pytest
from conftest import DEFAULT_LEDGER

from procure import transport

TABLE = transport(DEFAULT_LEDGER.sources, DEFAULT_LEDGER.cluster).set_index("source")


def ranking(column: str) -> list[set[str]]:
    """Sources from largest to smallest ``column``, equal values grouped."""
    groups: list[set[str]] = []
    last = None
    for name, value in TABLE[column].sort_values(ascending=False).items():
        if last is not None and value == pytest.approx(last, rel=1e-12):
            groups[-1].add(name)
        else:
            groups.append({name})
        last = value
    return groups


def test_rank_by_bytes():
    """The lesson: force-bearing hour, own = twin, older arm, simulator."""
    assert ranking("gb_per_hour") == [{"force"}, {"own", "twin"}, {"older_arm"}, {"sim"}]


def test_rank_by_price():
    """The lesson: force-bearing hour, own, twin = older arm, simulator."""
    assert ranking("price_usd_per_hour") == [{"force"}, {"own"}, {"twin", "older_arm"}, {"sim"}]


def test_rank_by_share():
    """The lesson: twin, own, force-bearing hour, older arm (the simulator moves nothing)."""
    assert ranking("share") == [{"twin"}, {"own"}, {"force"}, {"older_arm"}, {"sim"}]


@pytest.mark.parametrize(
    ("source", "share_pct", "decimals"),
    [("own", 5.3, 1), ("twin", 44, 0)],
)
def test_share_per_kind(source, share_pct, decimals):
    """The lesson: moving is 5.3 % of an own hour, 44 % of a twin hour."""
    assert round(100 * TABLE.loc[source, "share"], decimals) == share_pct


def test_own_and_twin_cost_the_same_to_move():
    """The lesson: the twin's hour costs as much to move as the own robot's."""
    assert TABLE.loc["twin", "bill_usd"] == pytest.approx(TABLE.loc["own", "bill_usd"], rel=1e-12)
    assert round(TABLE.loc["own", "bill_usd"], 2) == 6.58


def test_force_channel_bytes():
    """The lesson: the force channel adds 0.086 GB, 0.8 % of a camera hour's bytes."""
    extra = TABLE.loc["force", "gb_per_hour"] - TABLE.loc["own", "gb_per_hour"]
    assert round(extra, 3) == 0.086
    assert round(100 * extra / TABLE.loc["own", "gb_per_hour"], 1) == 0.8
    assert TABLE["price_usd_per_hour"].idxmax() == "force"


def test_older_arm_never_stalls():
    """The lesson: the older arm's small frames fit 8 cores (4.6 needed) and never stall."""
    row = TABLE.loc["older_arm"]
    assert round(row["cores_needed"], 1) == 4.6
    assert row["busy"] == 1.0
    assert row["idle_usd"] == 0.0


def test_simulated_moves_nothing():
    """The lesson: a simulated hour moves nothing; stored as video it would cost 35 × its price."""
    sim = TABLE.loc["sim"]
    assert sim["bill_usd"] == 0.0 and sim["gb_per_hour"] == 0.0 and sim["core_hours"] == 0.0
    assert sim["accelerator_hours"] > 0  # its frames still take accelerator time
    as_video = DEFAULT_LEDGER.sources.set_index("source").loc[["sim"]].reset_index()
    as_video["stored"] = "video"
    moved = transport(as_video, DEFAULT_LEDGER.cluster).iloc[0]
    assert round(moved["bill_usd"] / sim["price_usd_per_hour"]) == 35


def test_table_has_every_source():
    assert list(TABLE.index) == ["own", "twin", "older_arm", "force", "sim"]


def test_a_source_of_its_own_gop_prices_random_reads_by_hand():
    """LeRobot-like AV1 with a keyframe every 2 frames, read at random: g = (2 + 1) / 2 = 1.5.

    By hand (the lesson's arithmetic with g = 1.5): decode supply 8 × 120 / 1.5 = 640 frames/s against a
    demand of 2,770.8, so busy 640 / 2,770.8 = 23.1 %; an hour's 324,000 frames take 506.25 s of
    wall time an epoch, so cores 8 × 506.25 × 10 / 3600 × $0.04 = $0.45, idle (506.25 − 116.93)
    × 10 / 3600 × $2.50 = $2.7036, bytes 10.8 GB × $0.44 = $4.752: bill $7.9056.
    """
    rows = DEFAULT_LEDGER.sources.iloc[[0]].copy()
    rows["read"] = "random"
    rows["gop"] = 2.0
    row = transport(rows, DEFAULT_LEDGER.cluster).iloc[0]
    demand = 0.4 * 989.5e12 / (6 * 93e6 * 256)
    assert row["g"] == 1.5
    assert row["decode_fps"] == pytest.approx(640.0)
    assert row["busy"] == pytest.approx(640.0 / demand)
    wall = 324_000 / 640.0
    useful = 324_000 / demand
    assert row["cores_usd"] == pytest.approx(8 * wall * 10 / 3600 * 0.04)
    assert row["idle_usd"] == pytest.approx((wall - useful) * 10 / 3600 * 2.5)
    assert row["bill_usd"] == pytest.approx(
        10.8 * 0.44 + 8 * wall * 10 / 3600 * 0.04 + (wall - useful) * 10 / 3600 * 2.5
    )
    assert round(row["bill_usd"], 4) == 7.9056


def test_blank_decoding_columns_take_the_clusters():
    rows = DEFAULT_LEDGER.sources.copy()
    assert rows["gop"].isna().all() and rows["core_fps_1080p"].isna().all() and (rows["codec"] == "").all()
    own = transport(rows, DEFAULT_LEDGER.cluster).iloc[0]
    assert own["gop"] == 30 and own["core_fps_1080p"] == 120
    faster = rows.iloc[[0]].copy()
    faster["core_fps_1080p"] = 240.0
    assert transport(faster, DEFAULT_LEDGER.cluster).iloc[0]["decode_fps"] == pytest.approx(2 * own["decode_fps"])
