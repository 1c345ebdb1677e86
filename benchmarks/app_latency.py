"""Latency of ``procure app``: the server's time from an input's change to the new number.

    python benchmarks/app_latency.py [--repeat 10] [--browser]

One session over a websocket on 127.0.0.1, as a browser on the page speaks to the server
(:mod:`app_load`), on the default ledger and on a random ledger of 1,000 sources: the Plan
page's budget changed, timed until the new ``plan_value`` arrives (the session's built
program re-solved in place in its worker process, the tables formatted there, the outputs
sent), and the Pipeline page's cores changed, until the new ``busy`` arrives (no solve). No
browser is in the loop, so the figure is the server's time plus a local round trip. Each
figure is the median of the repeats with its min–max. Goal: < 100 ms for a budget change on
the default ledger.

With ``--browser``, the same changes made in Debian's Chromium driven by Playwright, timed
until the page shows the new number (the server's time plus the browser's).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from app_load import init_message, open_session, plan_shown, settle, start_server

#: Budgets the repeats alternate between [$].
BUDGETS = (80_000.0, 90_000.0)
#: Cores the repeats alternate between.
CORES = (12.0, 24.0)
#: Seconds one change may take before the benchmark gives up.
TIMEOUT = 120.0


def many_sources(folder: Path, n: int = 1000) -> Path:
    """A ledger folder of ``n`` random sources, its accelerators and storage grown with it."""
    from procure.ledger import default_ledger_dir
    from procure.ledger.synthetic import random_ledger

    folder.mkdir(parents=True, exist_ok=True)
    ledger = random_ledger(n, 0)
    shutil.copy(default_ledger_dir() / "cluster.toml", folder / "cluster.toml")
    s = ledger.sources.copy()
    s["available_hours"] = s["available_hours"].round(1)
    s = s.replace([math.inf, -math.inf], math.nan)  # a blank cell: unlimited, as the ledger writes it
    s.to_csv(folder / "sources.csv", index=False)
    text = (folder / "cluster.toml").read_text()
    grow = max(1, n // 100)  # accelerators and storage grown with the ledger, as random_ledger does
    (folder / "cluster.toml").write_text(text.replace("count = 8", f"count = {8 * grow}"))
    return folder


async def server_times(port: int, ledger: Path | None, repeat: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"plan (budget)": [], "pipeline (cores)": []}
    for page, output, key, values in (("Plan", "plan_value", "budget:shiny.number", BUDGETS),
                                      ("Pipeline", "busy", "cores", CORES)):  # fmt: skip
        session = await open_session(port, init_message(ledger, port, page))
        await session.wait(output, plan_shown if page == "Plan" else (lambda v: "%" in str(v)), TIMEOUT)
        for r in range(repeat):
            before = session.values.get(output)
            t0 = time.perf_counter()
            await session.send(**{key: values[r % 2]})
            await session.wait(output, lambda v, b=before: v != b and v != "—", TIMEOUT)
            out[f"{page.lower()} ({'budget' if page == 'Plan' else 'cores'})"].append(time.perf_counter() - t0)
        await session.close()
    return out


def browser_times(url: str, repeat: int) -> dict[str, list[float]]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "interfaces"))
    from playwright.sync_api import sync_playwright
    from shiny.playwright import controller
    from test_app import CHROMIUM, CHROMIUM_FLAGS, wait_text

    out: dict[str, list[float]] = {"browser, plan (budget)": [], "browser, pipeline (cores)": []}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(int(TIMEOUT * 1000))
        page.goto(url)
        wait_text(page, "busy", lambda t: "%" in t)
        for r in range(repeat):
            before = page.inner_text("#busy")
            t0 = time.perf_counter()
            controller.InputSlider(page, "cores").set(str(int(CORES[r % 2])))
            wait_text(page, "busy", lambda t, b=before: t != b and t != "—")
            out["browser, pipeline (cores)"].append(time.perf_counter() - t0)
        page.get_by_role("tab", name="Plan").click()
        wait_text(page, "plan_value", lambda t: t[:1].isdigit())
        for r in range(repeat):
            before = page.inner_text("#plan_value")
            t0 = time.perf_counter()
            controller.InputNumeric(page, "budget").set(str(int(BUDGETS[r % 2])))
            wait_text(page, "plan_value", lambda t, b=before: t != b and t != "—")
            out["browser, plan (budget)"].append(time.perf_counter() - t0)
        browser.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--browser", action="store_true", help="Also time the changes in Chromium.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name, ledger in (("default ledger", None), ("1,000 sources", many_sources(Path(tmp) / "many"))):
            proc, port = start_server(ledger)
            try:
                settle(proc.pid)
                times = asyncio.run(server_times(port, ledger, args.repeat))
                if args.browser:
                    times |= browser_times(f"http://127.0.0.1:{port}", args.repeat)
            finally:
                proc.terminate()
                proc.wait(30)
            for what, v in times.items():
                print(f"{name}, {what}: median {1000 * statistics.median(v):.0f} ms "
                      f"(min {1000 * min(v):.0f}, max {1000 * max(v):.0f}; {len(v)} repeats)")  # fmt: skip


if __name__ == "__main__":
    main()
