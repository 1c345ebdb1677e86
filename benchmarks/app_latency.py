"""Latency of ``procure app``: from an input's change to the updated number on the page.

    python benchmarks/app_latency.py [--repeat 5]

In Debian's Chromium driven by Playwright, on the default ledger and on a random ledger of
1,000 sources: the Pipeline page (``cores`` moved, until ``busy`` shows the new value; no
solve), the Plan page (``budget`` typed, until ``plan_value`` changes: the built program
re-solved in place) and the Byte prices page (``budget`` typed, until the ranging line
changes: a sweep of 9 points and the ranging). Each figure is the median of the repeats with
its min–max.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "interfaces"))

from playwright.sync_api import sync_playwright
from shiny.playwright import controller
from test_app import CHROMIUM, CHROMIUM_FLAGS, start_app, stop, wait_text

from procure.ledger import default_ledger_dir
from procure.ledger.synthetic import random_ledger


def thousand_sources(folder: Path) -> Path:
    ledger = random_ledger(1000, 0)
    shutil.copy(default_ledger_dir() / "cluster.toml", folder / "cluster.toml")
    s = ledger.sources.copy()
    s["available_hours"] = s["available_hours"].round(1)
    s.to_csv(folder / "sources.csv", index=False)
    text = (folder / "cluster.toml").read_text()
    grow = 10  # accelerators and storage grown with the ledger, as random_ledger does
    (folder / "cluster.toml").write_text(text.replace("count = 8", f"count = {8 * grow}"))
    return folder


def timed(page, change, output_id: str) -> float:
    before = page.inner_text(f"#{output_id}")
    t0 = time.perf_counter()
    change()
    wait_text(page, output_id, lambda t: t != before and t != "—")
    return time.perf_counter() - t0


def measure(url: str, repeat: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"pipeline": [], "plan": [], "byte prices": []}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(120_000)
        page.goto(url)
        wait_text(page, "busy", lambda t: "%" in t)
        for r in range(repeat):
            cores = str(12 + (r % 2) * 12)
            out["pipeline"].append(timed(page, lambda c=cores: controller.InputSlider(page, "cores").set(c), "busy"))
        page.get_by_role("tab", name="Plan").click()
        wait_text(page, "plan_value", lambda t: t[:1].isdigit())
        for r in range(repeat):
            budget = str(80_000 + 10_000 * (r % 2))
            out["plan"].append(
                timed(page, lambda b=budget: controller.InputNumeric(page, "budget").set(b), "plan_value")
            )
        page.get_by_role("tab", name="Byte prices").click()
        wait_text(page, "ranging", lambda t: "shape" in t)
        for r in range(repeat):
            budget = str(60_000 + 10_000 * (r % 2))
            page.get_by_role("tab", name="Plan").click()
            controller.InputNumeric(page, "budget").set(budget)
            page.get_by_role("tab", name="Byte prices").click()
            t0 = time.perf_counter()
            before = page.inner_text("#ranging")
            wait_text(page, "ranging", lambda t, b=before: t != b and "shape" in t)
            out["byte prices"].append(time.perf_counter() - t0)
        browser.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name, ledger in (("default ledger", None), ("1,000 sources", thousand_sources(Path(tmp)))):
            proc, url = start_app(ledger)
            try:
                times = measure(url, args.repeat)
            finally:
                stop(proc)
            for page, v in times.items():
                values = v
                print(f"{name}, {page}: median {1000 * statistics.median(values):.0f} ms "
                      f"(min {1000 * min(values):.0f}, max {1000 * max(values):.0f}; {len(v)} repeats)")  # fmt: skip


if __name__ == "__main__":
    main()
