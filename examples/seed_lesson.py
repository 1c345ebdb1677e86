"""The figures of the lesson "Moving the bits: the infrastructure bill", from the library.

python examples/seed_lesson.py
"""

from __future__ import annotations

from procure import bill, cluster_with, load_ledger, pipeline, variant

ledger = load_ledger()


def state(kind: str = "own", **changes):
    """Pipeline and bill of one format of the default ledger, with cluster or format changes."""
    cluster_keys = {"model", "params", "side", "accelerator", "cores", "nvdec", "byte_price_x"}
    cluster = cluster_with(ledger.cluster, **{k: v for k, v in changes.items() if k in cluster_keys})
    row, _ = variant(ledger, kind, cluster=cluster, **{k: v for k, v in changes.items() if k not in cluster_keys})
    return row


d = state()
print("§1 An hour, weighed")
print(
    f"  {d['gb_per_hour']:.1f} GB stored and {d['gb_decoded_per_hour']:,.0f} GB decoded an hour, "
    f"{d['frames_per_hour']:,.0f} frames, {d['frames_per_hour'] * d['tokens_per_frame'] / 1e6:.1f} M tokens"
)
print("§2 What the accelerator eats")
print(
    f"  {pipeline.FLOPS_PER_PARAM_TOKEN * d['params'] / 1e6:.0f} MFLOPs a token, "
    f"{d['demand_fps'] * d['tokens_per_frame']:,.0f} tokens/s, {d['demand_fps']:,.0f} frames/s; "
    f"{d['useful_seconds']:.1f} s to train on an hour, {d['wall_seconds']:.1f} s to decode it"
)
print("§3 What each token costs the decoders")
print(
    f"  busy {100 * d['busy']:.1f} %, {d['stage']} binds, {d['cores_needed']:.1f} cores needed, "
    f"{d['pixels_per_token']:,.0f} px/token"
)
for name, changes in [("random frames", {"read": "random"}), ("stored at 224 × 224", {"width": 224, "height": 224})]:
    print(f"  {name}: {state(**changes)['pixels_per_token']:,.0f} px/token")
stall = pipeline.stall_threshold_params(d["mfu"], d["peak_flops"], d["tokens_per_frame"], d["supply_fps"])
print(f"  models below {stall / 1e6:,.0f} M parameters stall at 1080p in order with 8 cores")
print("§4 What to try")
for name, changes in [
    ("defaults", {}),
    ("2160p", {"width": 3840, "height": 2160}),
    ("480p", {"width": 854, "height": 480}),
    ("23 cores", {"cores": 23}),
    ("24 cores", {"cores": 24}),
    ("411 M", {"model": "411m"}),
    ("25 M", {"model": "25m"}),
    ("25 M, NVDEC", {"model": "25m", "nvdec": True}),
    ("4K, NVDEC", {"width": 3840, "height": 2160, "nvdec": True}),
    ("stored decoded", {"read": "decoded"}),
    ("random frames", {"read": "random"}),
    ("byte prices × 10", {"byte_price_x": 10}),
    ("byte prices × 0.1", {"byte_price_x": 0.1}),
]:
    r = state(**changes)
    print(
        f"  {name:<18} busy {100 * r['busy']:5.1f} %  {r['stage']:<11} cores needed {r['cores_needed']:6.1f}  "
        f"{r['gb_per_hour']:8.2f} GB  bill ${r['bill_usd']:7.2f}  idle {100 * r['idle_usd'] / r['bill_usd']:4.1f} %"
    )
print("§5 Three roads")
dec = state(read="decoded")
per_epoch = d["cores_usd"] / ledger.cluster.epochs
be = bill.predecode_break_even(d["gb_per_hour"], dec["gb_per_hour"], ledger.cluster.storage_usd_per_gb_month, per_epoch)
print(
    f"  pre-decoding: storage × {dec['gb_per_hour'] / d['gb_per_hour']:.1f} to save ${per_epoch:.2f} of decoding "
    f"an epoch; break-even {be:.0f} epochs a month"
)
for cores in (8, 24):
    wall = state(cores=cores)["wall_seconds"]
    print(
        f"  an epoch of 1,000 hours on 8 accelerators with {cores} cores each: "
        f"{bill.epoch_hours(1000, ledger.cluster.count, wall):.1f} h"
    )
print("§6 The bill, per hour and per source")
b, c, i = bill.split(d["bytes_usd"], d["cores_usd"], d["idle_usd"])
print(f"  bytes {100 * b:.0f} %, stall {100 * i:.0f} %, cores {100 * c:.0f} %")
for budget in (100, 100_000):
    hours, moving = bill.budget_split(budget, d["price_usd_per_hour"], d["bill_usd"])
    print(f"  ${budget:,} buys {hours:,.2f} own hours and ${moving:,.2f} of moving ({100 * moving / budget:.2f} %)")
for kind in ("own", "twin", "older_arm", "force", "sim"):
    r = state(kind)
    share = f"{100 * r['share']:.1f} %" if r["price_usd_per_hour"] > 0 else "—"
    print(
        f"  {kind:<10} {r['gb_per_hour']:6.3f} GB  price ${r['price_usd_per_hour']:7.2f}  "
        f"moving ${r['bill_usd']:5.2f}  {share}"
    )
