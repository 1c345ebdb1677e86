"""The screenshots in docs/: each page of the app and the report, at 1280 × 720 and 1920 × 1080.

    python docs/screenshots.py            # writes docs/app-<page>-<W>x<H>.png and docs/report-<W>x<H>.png

Starts ``procure app`` on the shipped default ledger at a free port of 127.0.0.1, opens each page
in a headless Chromium (Debian's ``chromium``, or ``PROCURE_CHROMIUM``) once its figures are
drawn, and writes ``procure report --budget 100000`` and its screenshot the same way. Each
screenshot is the whole page at that window's width.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SIZES = ((1280, 720), (1920, 1080))
#: The app's pages, by tab, and an element each shows once drawn.
PAGES = {"pipeline": ("Pipeline", "#app-chart-queue .bars .point path"), "plan": ("Plan", "#curves img"),
         "byte-prices": ("Byte prices", "#byte_prices .js-plotly-plot")}  # fmt: skip
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
TIMEOUT = 60_000  # [ms]
CLI = [sys.executable, "-c", "import sys; from procure.interfaces.cli import main; sys.exit(main(sys.argv[1:]))"]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    from playwright.sync_api import sync_playwright

    chromium = os.environ.get("PROCURE_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.exit("no Chromium: apt-get install chromium (or set PROCURE_CHROMIUM)")
    port = _port()
    app = subprocess.Popen([*CLI, "app", "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.html"
        subprocess.run([*CLI, "report", "--budget", "100000", "--out", str(report)], check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        try:
            time.sleep(2.0)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
                for width, height in SIZES:
                    context = browser.new_context(viewport={"width": width, "height": height})
                    page = context.new_page()
                    page.set_default_timeout(TIMEOUT)
                    page.goto(f"http://127.0.0.1:{port}/")
                    for name, (tab, drawn) in PAGES.items():
                        page.get_by_role("tab", name=tab).click()
                        page.wait_for_selector(drawn)
                        time.sleep(1.0)  # the last outputs settle
                        out = HERE / f"app-{name}-{width}x{height}.png"
                        page.screenshot(path=str(out), full_page=True)
                        print(out.relative_to(HERE.parent))
                    page.goto(report.as_uri())
                    page.wait_for_selector("#chart-hours .bars")
                    out = HERE / f"report-{width}x{height}.png"
                    page.screenshot(path=str(out), full_page=True)
                    print(out.relative_to(HERE.parent))
                    context.close()
                browser.close()
        finally:
            app.terminate()
            app.wait(timeout=20)


if __name__ == "__main__":
    main()
