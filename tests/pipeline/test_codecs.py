"""The codec in the pipeline: a core's rate per codec, NVDEC only for the codecs its engines
decode, the random-read cost from the source's own keyframe interval; figures by hand."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from procure.errors import LedgerError
from procure.interfaces.cli import main
from procure.ledger import load_ledger
from procure.ledger.cards import load_accelerators
from procure.ledger.schema import CLUSTER_FIELDS
from procure.pipeline import codecs

# The lesson's cluster, by hand: H100, μ = 0.4, 93 M parameters, 256 tokens, 8 cores, 7 engines.
DEMAND = 0.4 * 989.5e12 / (6 * 93e6 * 256)
FRAMES = 3 * 30 * 3600  # three 1080p30 cameras, one hour
GB = FRAMES * 1920 * 1080 * (8e6 / (1920 * 1080 * 30)) / 8 / 1e9  # 10.8 GB at 8 Mbit/s
AV1_RATE = CLUSTER_FIELDS["decode"]["core_fps_1080p_av1"].default


def hand_bill(supply: float) -> dict[str, float]:
    """The bill of the lesson's hour at a decode supply [frames/s] (read supply 45,000 is never lower)."""
    wall = FRAMES / min(DEMAND, supply)
    useful = FRAMES / DEMAND
    cores = 8 * wall * 10 / 3600 * 0.04
    idle = (wall - useful) * 10 / 3600 * 2.50
    return {"busy": min(1.0, supply / DEMAND), "bill_usd": GB * 0.44 + cores + idle, "cores_usd": cores}


def write_codec(ledger: Path, codec: str, gop: str = "") -> None:
    """Give every row of the ledger's sources.csv a ``codec`` (and ``gop``) cell."""
    path = ledger / "sources.csv"
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, [*rows[0], "codec", "gop"])
        writer.writeheader()
        writer.writerows({**r, "codec": codec, "gop": gop} for r in rows)


def bill_json(capsys, *args: str) -> dict:
    assert main(["bill", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_shipped_cards_decode_no_av1():
    cards = load_accelerators()
    for name in ("H100", "A100"):
        assert cards[name].nvdec_codecs == ("h264", "hevc", "vp9")
        assert "Support Matrix" in cards[name].source


def test_av1_source_on_h100_with_nvdec_gets_no_engines(ledger_copy, capsys):
    write_codec(ledger_copy, "av1", "2")
    out = bill_json(capsys, "--ledger", str(ledger_copy), "--nvdec")
    supply = 8 * AV1_RATE  # cores only: NVDEC decodes no AV1 on an H100
    assert out["nvdec_engines"] == 0
    assert out["decode_fps"] == pytest.approx(supply)
    assert out["codec"] == "av1"
    assert "cannot decode" in out["note"] and "H100" in out["note"]
    hand = hand_bill(supply)
    assert out["busy"] == pytest.approx(hand["busy"])
    assert out["bill_usd"] == pytest.approx(hand["bill_usd"])
    assert main(["bill", "--ledger", str(ledger_copy), "--nvdec"]) == 0
    assert "NVDEC engines cannot decode" in " ".join(capsys.readouterr().out.split())


def test_h264_source_with_nvdec_is_todays_bill(ledger_copy, capsys):
    today = bill_json(capsys, "--nvdec")
    write_codec(ledger_copy, "h264")
    out = bill_json(capsys, "--ledger", str(ledger_copy), "--nvdec")
    supply = 8 * 120 + 7 * 771  # 6,357 frames/s: above the demand, busy 100 %
    assert out["decode_fps"] == pytest.approx(supply)
    assert out["nvdec_engines"] == 7 and out["note"] is None
    hand = hand_bill(supply)
    assert out["busy"] == 1.0
    assert out["bill_usd"] == pytest.approx(hand["bill_usd"])
    assert {k: out[k] for k in ("bill_usd", "busy", "decode_fps")} == {
        k: today[k] for k in ("bill_usd", "busy", "decode_fps")
    }


@pytest.mark.parametrize(
    ("codec", "key"),
    [("hevc", "core_fps_1080p_hevc"), ("AV1", "core_fps_1080p_av1"), ("libvpx-vp9", "core_fps_1080p_vp9"),
     ("avc1", "core_fps_1080p"), ("mpeg4", "core_fps_1080p")],
)  # fmt: skip
def test_core_rate_follows_the_codec(codec, key, capsys):
    out = bill_json(capsys, "--codec", codec, "--read", "random", "--gop", "2")
    rate = CLUSTER_FIELDS["decode"][key].default
    assert out["g"] == 1.5  # (2 + 1) / 2
    assert out["cores_needed"] == pytest.approx(DEMAND * 1.5 / rate)


def test_cluster_key_sets_a_codecs_rate_and_a_source_rate_wins(ledger_copy, capsys):
    text = (ledger_copy / "cluster.toml").read_text()
    (ledger_copy / "cluster.toml").write_text(text.replace("[decode]\n", "[decode]\ncore_fps_1080p_av1 = 150\n"))
    write_codec(ledger_copy, "av1")
    out = bill_json(capsys, "--ledger", str(ledger_copy))
    assert out["decode_fps"] == pytest.approx(8 * 150)
    out = bill_json(capsys, "--ledger", str(ledger_copy), "--core-fps-1080p", "90")
    assert out["decode_fps"] == pytest.approx(8 * 90)


def test_blank_gop_is_the_clusters_at_random():
    ledger = load_ledger(None)
    from conftest import seed_state

    assert seed_state(read="random")["g"] == (ledger.cluster.gop + 1) / 2 == 15.5
    assert seed_state(read="random", gop=2)["g"] == 1.5


def test_nothing_decodes_av1_without_cores_is_said(capsys):
    assert main(["bill", "--codec", "av1", "--nvdec", "--cores", "0", "--accelerator", "A100"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "av1" in err and "A100's NVDEC engines cannot decode" in err and "Traceback" not in err


def test_bad_nvdec_codecs_is_one_line(tmp_path):
    (tmp_path / "accelerators.toml").write_text('[X1]\npeak_flops = 1e15\nnvdec_engines = 2\nnvdec_codecs = "h264"\n')
    with pytest.raises(LedgerError, match=r"accelerators.toml: X1.nvdec_codecs = 'h264' is invalid: must be a list"):
        load_accelerators(tmp_path)
    (tmp_path / "accelerators.toml").write_text("[X1]\npeak_flops = 1e15\nnvdec_engines = 2\nnvdec_codec = []\n")
    with pytest.raises(LedgerError, match=r"X1.nvdec_codec is unknown.*nvdec_codecs"):
        load_accelerators(tmp_path)
    (tmp_path / "accelerators.toml").write_text("[X1]\npeak_flops = 1e15\nnvdec_engines = 2\n")
    assert load_accelerators(tmp_path)["X1"].nvdec_codecs == ("h264",)


@pytest.mark.parametrize(
    ("given", "name"),
    [(None, "h264"), ("", "h264"), (" H264 ", "h264"), ("libsvtav1", "av1"), ("av01", "av1"), ("hvc1", "hevc"),
     ("vp9", "vp9"), ("mjpeg", "mjpeg")],
)  # fmt: skip
def test_codec_names(given, name):
    assert codecs.codec_name(given) == name
