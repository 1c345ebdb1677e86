"""Calibrate a team's own video, and see the plan move when measured numbers replace assumed ones.

python examples/calibrate_own_video.py        (needs PyAV: pip install 'procure[video]')

The clip is made here, by ``procure sample``'s encoder: 60 frames of 320 × 180 at 30 fps, H.264
with a keyframe every 2 frames, as LeRobot stores its datasets. The team trains on frames
sampled at random, so each frame used costs (gop + 1) / 2 decoded frames: 15.5 with the
cluster's assumed keyframe every 30 frames, 1.5 with the measured one. The decode rate measured
on this machine goes to standard error (it varies from run to run); what follows from the
keyframe interval goes to standard output.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import procure
from procure.analyses.sample import encode_clip
from procure.pipeline.calibrate import calibrate_file

with tempfile.TemporaryDirectory() as folder:
    clip = encode_clip(Path(folder) / "own.mp4", width=320, height=180, frames=60, fps=30, gop=2)
    measured = calibrate_file(clip, repeat=3, reads=1_000)
print(f"clip: {measured.codec}, {measured.width} x {measured.height} at {measured.fps:g} fps, {measured.frames} frames")
print(f"keyframe every {measured.gop:g} frames; a random frame decodes {measured.random_read_frames:.2f} frames")
print(
    f"decode: {measured.decode_fps:,.0f} frames/s ({measured.decode_fps_min:,.0f}-{measured.decode_fps_max:,.0f}), "
    f"{measured.core_fps_1080p:,.1f} at 1080p, one thread on this machine",
    file=sys.stderr,
)

ledger = procure.load_ledger()
rows = ledger.sources.copy()
rows["read"] = "random"  # the team samples frames at random
assumed = procure.Ledger(rows, ledger.cluster, ledger.path)
rows = rows.copy()
rows["gop"] = measured.gop  # the measured keyframe interval, per source
calibrated = procure.Ledger(rows, ledger.cluster, ledger.path)

for name, book in (("assumed gop 30", assumed), (f"measured gop {measured.gop:g}", calibrated)):
    own = procure.transport(book.sources, book.cluster).iloc[0]
    plan = procure.solve(book, budget=100_000, tolerance=1e-6)
    hours = plan.sources.set_index("source")["hours"]
    print(
        f"{name:<15} own hour: busy {100 * own['busy']:5.1f} %, bill ${own['bill_usd']:6.2f}; "
        f"$100,000 plan value {plan.value:6.1f}, transport {100 * plan.transport_share:4.1f} %, "
        f"own {hours['own']:5.0f} h, twin {hours['twin']:5.0f} h"
    )
