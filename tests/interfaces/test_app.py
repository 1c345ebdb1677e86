"""``procure app`` in a real browser: Debian's Chromium driven by Playwright.

The app is started on a free port; each test loads a page, moves inputs as a person would
(Shiny's own Playwright controllers), and checks the numbers shown against ``procure bill
--json`` and ``procure solve --json`` for the same inputs, formatted as the commands print
them. Screenshots of each page go to ``test-artifacts/`` (not committed). Without a browser
the tests skip, saying why.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from procure.interfaces import render
from procure.interfaces.cli import main

playwright_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (procure[test])")
controller = pytest.importorskip("shiny.playwright.controller", reason="Shiny is not installed (procure[app])")

CHROMIUM = os.environ.get("PROCURE_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (apt-get install chromium)")
#: Flags for a headless Chromium on a machine with a closed network (no background requests).
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
TIMEOUT = 30_000  # [ms]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_app(ledger: Path | None = None) -> tuple[subprocess.Popen, str]:
    port = free_port()
    args = [sys.executable, "-c", "import sys; from procure.interfaces.cli import main; sys.exit(main(sys.argv[1:]))",
            "app", "--port", str(port)]  # fmt: skip
    if ledger is not None:
        args += ["--ledger", str(ledger)]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return proc, f"http://127.0.0.1:{port}"
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"procure app exited: {proc.stderr.read() if proc.stderr else ''}") from None
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("procure app did not start listening within 60 s")


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="module")
def server():
    proc, url = start_app()
    yield url
    stop(proc)


@pytest.fixture(scope="module")
def browser():
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, server):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.set_default_timeout(TIMEOUT)
    pg.goto(server)
    wait_text(pg, "busy", lambda t: "%" in t)
    yield pg
    context.close()


def wait_text(page, output_id: str, ok) -> str:
    """The text of an output once ``ok(text)`` holds (Shiny updates it asynchronously)."""
    deadline = time.monotonic() + TIMEOUT / 1000
    text = ""
    while time.monotonic() < deadline:
        text = page.inner_text(f"#{output_id}")
        if ok(text):
            return text
        time.sleep(0.05)
    raise AssertionError(f"#{output_id} shows {text!r}")


def bill_json(capsys, *args: str) -> dict:
    assert main(["bill", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def solve_json(capsys, *args: str) -> dict:
    assert main(["solve", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def shown(page) -> dict[str, str]:
    return {k: page.inner_text(f"#{k}") for k in ("busy", "stage", "cores_needed", "pixels_per_token",
                                                     "gb_per_hour", "bill_usd", "share")}  # fmt: skip


def expected(record: dict) -> dict[str, str]:
    return {
        "busy": render.percent(record["busy"]),
        "stage": record["stage"],
        "cores_needed": render.number(record["cores_needed"]),
        "pixels_per_token": render.number(record["pixels_per_token"], 0),
        "gb_per_hour": f"{record['gb_per_hour']:,.2f}",
        "bill_usd": render.money(record["bill_usd"]),
        "share": render.percent(record["share"]),
    }


def screenshot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def test_the_first_screen_is_the_ledgers_first_row(page, capsys):
    numbers = shown(page)
    assert numbers["busy"] == "34.6 %" and numbers["bill_usd"] == "$6.58"
    assert numbers == expected(bill_json(capsys))
    page.wait_for_selector("#stage_rates img")
    page.wait_for_selector("#queue img")
    screenshot(page, "pipeline")


def test_more_cores_keep_the_accelerator_busy(page, capsys):
    controller.InputSlider(page, "cores").set("24")
    wait_text(page, "busy", lambda t: t == "100.0 %")
    assert page.inner_text("#bill_usd") == "$5.06"
    assert shown(page) == expected(bill_json(capsys, "--cores", "24"))


def test_nvdec_with_the_small_model(page, capsys):
    controller.InputSelect(page, "model").set("25m")
    controller.InputSwitch(page, "nvdec").set(True)
    wait_text(page, "busy", lambda t: t == "61.7 %")
    want = expected(bill_json(capsys, "--model", "25m", "--nvdec"))
    wait_text(page, "bill_usd", lambda t: t == want["bill_usd"])
    assert shown(page) == want


def test_decoded_frames_make_the_read_bind(page, capsys):
    controller.InputSelect(page, "read").set("decoded")
    wait_text(page, "stage", lambda t: t == "read")
    assert round(float(page.inner_text("#bill_usd").lstrip("$").replace(",", "")), 1) == 447.9
    assert shown(page) == expected(bill_json(capsys, "--read", "decoded"))


@pytest.mark.parametrize("choice", ["0.1", "10", "0"])
def test_byte_price_choices(page, capsys, choice):
    controller.InputSelect(page, "byte_price_x").set(choice)
    want = expected(bill_json(capsys, "--byte-price-x", choice))
    wait_text(page, "bill_usd", lambda t: t == want["bill_usd"])
    assert shown(page) == want


def test_a_custom_resolution(page, capsys):
    controller.InputSelect(page, "resolution").set("custom")
    controller.InputNumeric(page, "width").set("1280")
    controller.InputNumeric(page, "height").set("800")
    want = expected(bill_json(capsys, "--width", "1280", "--height", "800"))
    wait_text(page, "busy", lambda t: t == want["busy"])
    assert shown(page) == want


def test_a_bad_value_shows_a_message_and_the_app_keeps_running(page, capsys):
    controller.InputNumeric(page, "cameras").set("-2")
    message = wait_text(page, "pipeline_message", lambda t: "cameras" in t)
    assert "-2" in message and "must be" in message
    assert page.inner_text("#busy") == "—"
    controller.InputNumeric(page, "cameras").set("3")
    wait_text(page, "busy", lambda t: t == "34.6 %")
    assert page.inner_text("#pipeline_message") == ""


def test_the_plan_page_shows_what_solve_prints(page, capsys):
    page.get_by_role("tab", name="Plan").click()
    value = wait_text(page, "plan_value", lambda t: t[:1].isdigit())
    record = solve_json(capsys, "--budget", "100000")
    assert value == f"{record['value']:,.2f}"
    assert page.inner_text("#lambda") == f"{record['lambda']:.4g}"
    assert page.inner_text("#spent_usd") == render.money(record["spent_usd"])
    page.wait_for_selector("#curves img")
    screenshot(page, "plan")
    controller.InputNumeric(page, "budget").set("50000")
    record = solve_json(capsys, "--budget", "50000")
    wait_text(page, "plan_value", lambda t: t == f"{record['value']:,.2f}")
    controller.InputNumeric(page, "held_0").set("500")
    record = solve_json(capsys, "--budget", "50000", "--held", "own=500")
    wait_text(page, "plan_value", lambda t: t == f"{record['value']:,.2f}")
    controller.InputNumeric(page, "max_share_4").set("0.1")
    record = solve_json(capsys, "--budget", "50000", "--held", "own=500", "--max-share", "sim=0.1")
    wait_text(page, "plan_value", lambda t: t == f"{record['value']:,.2f}")


def test_the_budget_slider_moves_the_box(page):
    page.get_by_role("tab", name="Plan").click()
    wait_text(page, "plan_value", lambda t: t[:1].isdigit())
    controller.InputSlider(page, "budget_slider").set("4.5")
    controller.InputNumeric(page, "budget").expect_value("31622.78")


def test_a_budget_below_zero_is_named(page):
    page.get_by_role("tab", name="Plan").click()
    wait_text(page, "plan_value", lambda t: t[:1].isdigit())
    controller.InputNumeric(page, "budget").set("-5")
    wait_text(page, "budget_message", lambda t: "budget" in t)
    controller.InputNumeric(page, "budget").set("100000")
    wait_text(page, "plan_value", lambda t: t[:1].isdigit())


def test_the_byte_price_page(page):
    page.get_by_role("tab", name="Byte prices").click()
    text = wait_text(page, "ranging", lambda t: "keeps its shape" in t)
    assert "from 0.0001 to 10.9" in text
    page.wait_for_selector("#byte_prices img")
    screenshot(page, "byte_prices")


def test_two_sessions_do_not_share_inputs(browser, server):
    a, b = browser.new_context(), browser.new_context()
    pa, pb = a.new_page(), b.new_page()
    for p in (pa, pb):
        p.set_default_timeout(TIMEOUT)
        p.goto(server)
        wait_text(p, "busy", lambda t: "%" in t)
    controller.InputSlider(pa, "cores").set("24")
    wait_text(pa, "busy", lambda t: t == "100.0 %")
    pb.reload()
    wait_text(pb, "busy", lambda t: "%" in t)
    assert pb.inner_text("#busy") == "34.6 %"
    a.close()
    b.close()


def test_nothing_is_written_unless_saved(browser, ledger_copy):
    proc, url = start_app(ledger_copy)
    try:
        sources = ledger_copy / "sources.csv"
        before = sources.read_text()
        context = browser.new_context()
        p = context.new_page()
        p.set_default_timeout(TIMEOUT)
        p.goto(url)
        p.get_by_role("tab", name="Plan").click()
        wait_text(p, "plan_value", lambda t: t[:1].isdigit())
        controller.InputNumeric(p, "held_1").set("40")
        wait_text(p, "plan_value", lambda t: t[:1].isdigit())
        time.sleep(0.5)
        assert sources.read_text() == before
        p.get_by_role("button", name="Save held hours to the ledger").click()
        wait_text(p, "save_message", lambda t: t.startswith("Saved"))
        from procure.ledger import load_ledger

        saved = load_ledger(ledger_copy).sources
        assert float(saved.loc[saved["source"] == "twin", "held_hours"].iloc[0]) == 40.0
        assert float(saved.loc[saved["source"] == "own", "held_hours"].iloc[0]) == 200.0
        context.close()
    finally:
        stop(proc)
