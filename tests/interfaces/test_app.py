"""``procure app`` in a real browser: Debian's Chromium driven by Playwright.

The app is started on a free port; each test loads a page, moves inputs as a person would
(Shiny's own Playwright controllers), and checks the numbers shown against ``procure bill
--json`` and ``procure solve --json`` for the same inputs, formatted as the commands print
them. Saving is tested on copies of the default ledger, with several sessions at once; the
shipped ledger is never written. Screenshots of each page go to ``test-artifacts/`` (not
committed). Without a browser the browser tests skip, saying why; the tests of the server's
exit codes and of its worker processes run without one.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from procure.interfaces import render, tables
from procure.interfaces.cli import main
from procure.ledger import default_ledger_dir, load_ledger, variant

pytest.importorskip("shiny", reason="Shiny is not installed (procure-robotics[app])")
playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is not installed (procure-robotics[test])"
)
controller = pytest.importorskip("shiny.playwright.controller", reason="Shiny is not installed (procure-robotics[app])")

CHROMIUM = os.environ.get("PROCURE_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
#: Flags for a headless Chromium on a machine with a closed network (no background requests).
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
TIMEOUT = 30_000  # [ms]
#: Wait for what the app's drawer makes (the figures, the queue chart, the byte-price ranging and
#: sweep): it runs below the server's priority (``DRAWER_NICENESS``), so another job on the
#: machine slows it most [ms].
DRAWER_TIMEOUT = 120_000
#: The command that runs the command line in this interpreter.
CLI = [sys.executable, "-c", "import sys; from procure.interfaces.cli import main; sys.exit(main(sys.argv[1:]))"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_app(
    ledger: Path | None = None, *, group: bool = False, cwd: Path | None = None
) -> tuple[subprocess.Popen, str]:
    port = free_port()
    args = [*CLI, "app", "--port", str(port)] + (["--ledger", str(ledger)] if ledger is not None else [])
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=group,
                            cwd=cwd)  # fmt: skip
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


def stop(proc: subprocess.Popen) -> str:
    """Stop the app; what it printed on standard error."""
    proc.terminate()
    try:
        _out, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        _out, err = proc.communicate()
    return err or ""


@pytest.fixture(scope="module")
def server():
    proc, url = start_app()
    yield url
    stop(proc)


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium)")
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield b
        b.close()


def open_page(browser, url: str, *, tab: str | None = None, viewport=(1400, 1000)):
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    pg = context.new_page()
    pg.set_default_timeout(TIMEOUT)
    pg.goto(url)
    wait_text(pg, "busy", lambda t: "%" in t)
    if tab is not None:
        pg.get_by_role("tab", name=tab).click()
        if tab == "Plan":
            wait_text(pg, "plan_value", lambda t: t[:1].isdigit())
    return pg


@pytest.fixture
def page(browser, server):
    pg = open_page(browser, server)
    yield pg
    pg.context.close()


def wait_text(page, output_id: str, ok, timeout: float = TIMEOUT) -> str:
    """The text of an output once ``ok(text)`` holds (Shiny updates it asynchronously), waiting
    at most ``timeout`` [ms]."""
    deadline = time.monotonic() + timeout / 1000
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


def table_cells(page, output_id: str) -> list[list[str]]:
    return page.eval_on_selector_all(
        f"#{output_id} tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.innerText.trim()))"
    )


def plan_cells(record: dict) -> list[list[str]]:
    """The Plan page's table for a plan of ``procure solve --json``, as the tables format it."""
    rows = [[r["source"], tables.number(r["hours"]), tables.number(r["purchase_usd"], 2),
             tables.number(r["transport_usd"], 2), tables.number(r["value"], 1),
             f"{r['marginal_value_per_usd']:.3g}"] for r in record["plan"]]  # fmt: skip
    total = ["total", tables.number(sum(r["hours"] for r in record["plan"])), tables.number(record["purchase_usd"], 2),
             tables.number(record["transport_usd"], 2), tables.number(record["value"], 1), ""]  # fmt: skip
    return [*rows, total]


def hover_texts(page, chart: str) -> list[str]:
    """The hover of each horizontal bar of a Plotly chart (by its div's id), bar by bar: the
    pointer just inside each one's end (a bar on a log axis starts far left, off the chart; the
    chart's drag layer lies over its bars)."""
    bars = page.locator(f"#{chart} .bars .point path")
    label = page.locator(f"#{chart} .hoverlayer .hovertext")
    texts = []
    for i in range(bars.count()):
        page.mouse.move(0, 0)
        label.wait_for(state="detached", timeout=TIMEOUT)
        bars.nth(i).scroll_into_view_if_needed()
        box = bars.nth(i).bounding_box()
        assert box is not None
        page.mouse.move(box["x"] + box["width"] - 3, box["y"] + box["height"] / 2)
        label.wait_for(timeout=TIMEOUT)
        texts.append((label.text_content() or "").strip())
    return texts


def screenshot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def sources_csv(folder: Path) -> dict[str, float]:
    s = load_ledger(folder).sources
    return dict(zip(s["source"], s["held_hours"].astype(float), strict=True))


def save(page, ok) -> str:
    page.get_by_role("button", name="Save held hours to the ledger").click()
    return wait_text(page, "save_message", lambda t: ok(t) and t != "Saving …")


# ----------------------------------------------------------------------------- the pipeline page


def test_the_first_screen_is_the_ledgers_first_row(page, capsys):
    numbers = shown(page)
    assert numbers["busy"] == "34.6 %" and numbers["bill_usd"] == "$6.58"
    assert numbers == expected(bill_json(capsys))
    page.wait_for_selector("#stage_rates .js-plotly-plot")
    page.wait_for_selector("#app-chart-queue .bars .point path", timeout=DRAWER_TIMEOUT)
    screenshot(page, "pipeline")
    # the charts' hovers: the binding stage's rate and each term of the bill, as procure bill prints them
    record = bill_json(capsys)
    assert (
        hover_texts(page, "app-chart-stage-rates")[2]
        == f"decode: {tables.number(record['decode_fps'])} frames/s, binds"
    )
    terms = [f"bytes ${record['bytes_usd']:,.2f}", f"cores ${record['cores_usd']:,.2f}",
             f"idle accelerator ${record['idle_usd']:,.2f}"]  # fmt: skip
    assert hover_texts(page, "app-chart-bill-split") == terms


def test_the_queue_chart_hovers_with_the_simulations_frames(page, capsys):
    # the queue as procure simulate runs it for the app's frames: the title's busy fraction is
    # the command's, and a training bar's hover names its frame and its times
    from procure.defaults import APP_SIMULATED_FRAMES

    assert main(["simulate", "--frames", str(APP_SIMULATED_FRAMES), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    page.wait_for_selector("#app-chart-queue .bars .point path", timeout=DRAWER_TIMEOUT)
    title = page.inner_text("#app-chart-queue")
    assert f"busy {100 * record['busy_simulated']:.1f} % simulated" in title
    assert f"{100 * record['busy_formula']:.1f} % by the closed form" in title
    bar = page.locator("#app-chart-queue .bars .point path").last  # the accelerator's last frame
    bar.scroll_into_view_if_needed()
    box = bar.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    label = page.locator("#app-chart-queue .hoverlayer .hovertext")
    label.wait_for(timeout=TIMEOUT)
    assert re.fullmatch(r"frame \d+ trains: [\d.]+–[\d.]+ ms", (label.text_content() or "").strip())


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


@pytest.mark.parametrize("name, value", [("model", "/etc/passwd"), ("accelerator", "../x"), ("kind", "nobody"),
                                         ("read", 3), ("byte_price_x", "1e9"), ("cores", "eight")])  # fmt: skip
def test_a_forged_input_is_refused(page, name, value):
    page.evaluate(f"Shiny.setInputValue({json.dumps(name)}, {json.dumps(value)})")
    message = wait_text(page, "pipeline_message", lambda t: t != "")
    assert "not one of the app's choices" in message or "invalid" in message
    assert page.inner_text("#busy") == "—"


# ----------------------------------------------------------------------------- the plan page


@pytest.mark.parametrize("budget", ["100000", "200000"])
def test_the_plan_page_shows_what_solve_prints(page, capsys, budget):
    page.get_by_role("tab", name="Plan").click()
    wait_text(page, "plan_value", lambda t: t[:1].isdigit())
    if budget != "100000":
        controller.InputNumeric(page, "budget").set(budget)
    record = solve_json(capsys, "--budget", budget)
    wait_text(page, "plan_value", lambda t: t == f"{record['value']:,.2f}")
    assert page.inner_text("#lambda") == f"{record['lambda']:.4g}"
    assert page.inner_text("#spent_usd") == render.money(record["spent_usd"])
    assert table_cells(page, "plan_table") == plan_cells(record)
    page.wait_for_selector("#curves img", timeout=DRAWER_TIMEOUT)
    if budget == "100000":
        screenshot(page, "plan")


def test_held_hours_and_mix_bounds_rebuild_the_plan(page, capsys):
    page.get_by_role("tab", name="Plan").click()
    wait_text(page, "plan_value", lambda t: t[:1].isdigit())
    controller.InputNumeric(page, "budget").set("50000")
    record = solve_json(capsys, "--budget", "50000")
    wait_text(page, "plan_value", lambda t: t == f"{record['value']:,.2f}")
    controller.InputNumeric(page, "held_0").set("500")
    record = solve_json(capsys, "--budget", "50000", "--held", "own=500")
    wait_text(page, "plan_value", lambda t: t == f"{record['value']:,.2f}")
    controller.InputNumeric(page, "max_share_4").set("0.1")
    record = solve_json(capsys, "--budget", "50000", "--held", "own=500", "--max-share", "sim=0.1")
    wait_text(page, "plan_value", lambda t: t == f"{record['value']:,.2f}")
    assert table_cells(page, "plan_table") == plan_cells(record)


def test_a_refused_box_is_marked_and_the_last_plan_stays(page):
    # one bad box: that box marked, why said, and the plan and every table as they were; put
    # right, the mark goes and the plan answers again
    page.get_by_role("tab", name="Plan").click()
    value = wait_text(page, "plan_value", lambda t: t[:1].isdigit())
    plan, capacities = table_cells(page, "plan_table"), table_cells(page, "capacities")
    red = "rgb(176, 0, 32)"
    controller.InputNumeric(page, "held_1").set("-5")
    wait_text(page, "plan_message", lambda t: "held h of 'twin' = -5" in t and "marked box" in t)
    outline = lambda box: page.eval_on_selector(f"#{box}", "e => getComputedStyle(e).outlineColor")  # noqa: E731
    deadline = time.monotonic() + TIMEOUT / 1000
    while outline("held_1") != red and time.monotonic() < deadline:
        time.sleep(0.05)
    assert outline("held_1") == red and outline("held_0") != red and outline("budget") != red
    assert page.inner_text("#plan_value") == value
    assert table_cells(page, "plan_table") == plan and table_cells(page, "capacities") == capacities
    controller.InputNumeric(page, "held_1").set("0")
    wait_text(page, "plan_message", lambda t: "held h of" not in t)
    deadline = time.monotonic() + TIMEOUT / 1000
    while outline("held_1") == red and time.monotonic() < deadline:
        time.sleep(0.05)
    assert outline("held_1") != red
    assert wait_text(page, "plan_value", lambda t: t == value) == value


def test_the_plans_charts_hover_with_the_tables_figures(page):
    # Plotly served by the app itself (no network), each bar's hover the plan table's cell
    page.get_by_role("tab", name="Plan").click()
    wait_text(page, "plan_value", lambda t: t[:1].isdigit())
    page.wait_for_selector("#app-chart-hours .bars .point path", timeout=TIMEOUT)
    rows = [r for r in table_cells(page, "plan_table") if r[0] != "total"]
    bars = page.locator("#app-chart-hours .bars .point path")
    assert bars.count() == len(rows)
    label = page.locator("#app-chart-hours .hoverlayer .hovertext")
    for i, row in enumerate(rows):
        page.mouse.move(0, 0)  # off the chart: its label goes
        label.wait_for(state="detached", timeout=TIMEOUT)
        bars.nth(i).scroll_into_view_if_needed()
        box = bars.nth(i).bounding_box()
        assert box is not None
        # the bar's foot (a short bar is a few pixels high); the drag layer above it takes the pointer
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] - 1)
        label.wait_for(timeout=TIMEOUT)
        assert (label.text_content() or "").strip() == f"{row[0]}: {row[1]} h"
    assert page.locator("#app-chart-capacities .bars .point path").count() >= 1
    scripts = page.eval_on_selector_all("script[src]", "s => s.map(e => e.getAttribute('src'))")
    assert any(src.endswith("plotly.min.js") and "://" not in src for src in scripts)


def test_the_budget_slider_and_box_follow_each_other(page):
    page.get_by_role("tab", name="Plan").click()
    wait_text(page, "plan_value", lambda t: t[:1].isdigit())
    controller.InputSlider(page, "budget_slider").set("4.5")
    controller.InputNumeric(page, "budget").expect_value("31622.78")
    controller.InputNumeric(page, "budget").set("50000")
    controller.InputSlider(page, "budget_slider").expect_value("4.7")
    time.sleep(0.5)  # the box keeps what was typed: the slider's move does not round it
    controller.InputNumeric(page, "budget").expect_value("50000")


def test_a_budget_below_zero_is_named(page):
    page.get_by_role("tab", name="Plan").click()
    wait_text(page, "plan_value", lambda t: t[:1].isdigit())
    controller.InputNumeric(page, "budget").set("-5")
    wait_text(page, "budget_message", lambda t: "budget" in t)
    controller.InputNumeric(page, "budget").set("100000")
    wait_text(page, "plan_value", lambda t: t[:1].isdigit())


def test_the_byte_price_page_uses_the_plan_pages_inputs(page, capsys):
    assert main(["solve", "--budget", "100000", "--ranging"]) == 0
    sentence = next(line for line in capsys.readouterr().out.splitlines() if "keeps its shape" in line)
    page.get_by_role("tab", name="Byte prices").click()
    text = wait_text(page, "ranging", lambda t: "keeps its shape" in t, DRAWER_TIMEOUT)
    assert "from below 0.0001 to 10.87" in text and text.startswith(sentence.rstrip())
    # the sweep's table is drawn after the ranging line, as its solves end: waited for, not read once
    assert sweep_value_at_one(page) == f"{solve_json(capsys, '--budget', '100000')['value']:,.1f}"
    page.wait_for_selector("#byte_prices .js-plotly-plot", timeout=DRAWER_TIMEOUT)
    screenshot(page, "byte_prices")
    page.get_by_role("tab", name="Plan").click()
    controller.InputNumeric(page, "held_0").set("500")
    controller.InputNumeric(page, "max_share_1").set("0.3")
    record = solve_json(capsys, "--budget", "100000", "--held", "own=500", "--max-share", "twin=0.3")
    wait_text(page, "plan_value", lambda t: t == f"{record['value']:,.2f}")
    page.get_by_role("tab", name="Byte prices").click()
    want = f"{record['value']:,.1f}"
    assert sweep_value_at_one(page, want) == want


def sweep_value_at_one(page, want: str | None = None) -> str | None:
    """The byte-price table's value at ×1 once the table has that row (and shows ``want``, if
    given), or what it shows when the wait ends."""
    deadline = time.monotonic() + DRAWER_TIMEOUT / 1000
    shown = None
    while time.monotonic() < deadline:
        at_one = next((row for row in table_cells(page, "sweep_table") if row and row[0] == "1"), None)
        shown = at_one[1] if at_one else None
        if shown is not None and (want is None or shown == want):
            return shown
        time.sleep(0.1)
    return shown


def test_two_sessions_do_not_share_inputs(browser, server):
    pa, pb = open_page(browser, server), open_page(browser, server)
    controller.InputSlider(pa, "cores").set("24")
    wait_text(pa, "busy", lambda t: t == "100.0 %")
    pb.reload()
    wait_text(pb, "busy", lambda t: "%" in t)
    assert pb.inner_text("#busy") == "34.6 %"
    pa.context.close()
    pb.context.close()


@pytest.mark.parametrize("viewport", [(1400, 900), (1280, 720)])
def test_the_tables_fit_the_window(browser, server, viewport):
    pg = open_page(browser, server, viewport=viewport)
    name = f"{viewport[0]}x{viewport[1]}"
    for tab, ready in (("Plan", "#curves img"), ("Byte prices", "#byte_prices .js-plotly-plot")):
        pg.get_by_role("tab", name=tab).click()
        pg.wait_for_selector(ready, timeout=DRAWER_TIMEOUT)
        pg.wait_for_selector(".procure-table table:visible")
        overflow = pg.evaluate(
            "() => [...document.querySelectorAll('.procure-table')].filter(e => e.offsetParent !== null)"
            ".map(e => [e.scrollWidth - e.clientWidth, e.closest('.card').getBoundingClientRect().right"
            " - e.querySelector('table')?.getBoundingClientRect().right])"
        )
        assert overflow and all(spill <= 1 and room >= 0 for spill, room in overflow), (tab, overflow)
        assert pg.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
        screenshot(pg, f"{tab.lower().replace(' ', '_')}-{name}")
    pg.context.close()


# ----------------------------------------------------------------------------- saving


def test_nothing_is_written_unless_saved(browser, ledger_copy):
    proc, url = start_app(ledger_copy)
    try:
        sources = ledger_copy / "sources.csv"
        before = sources.read_text()
        p = open_page(browser, url, tab="Plan")
        controller.InputNumeric(p, "held_1").set("40")
        wait_text(p, "plan_value", lambda t: t[:1].isdigit())
        time.sleep(0.5)
        assert sources.read_text() == before
        assert save(p, lambda t: t.startswith("Saved")).endswith(f"{sources}")
        assert sources_csv(ledger_copy) == {**sources_csv(default_ledger_dir()), "twin": 40.0}
        assert save(p, lambda t: t.startswith("Nothing to save"))
    finally:
        stop(proc)


def test_a_save_writes_only_what_the_session_changed(browser, ledger_copy, capsys):
    proc, url = start_app(ledger_copy)
    try:
        a = open_page(browser, url, tab="Plan")
        b = open_page(browser, url, tab="Plan")
        controller.InputNumeric(b, "held_0").set("999")
        save(b, lambda t: t.startswith("Saved"))
        controller.InputNumeric(a, "held_1").set("40")
        save(a, lambda t: t.startswith("Saved"))
        assert sources_csv(ledger_copy)["own"] == 999.0 and sources_csv(ledger_copy)["twin"] == 40.0
        controller.InputNumeric(a, "held_0").set("5")  # own, which b changed since a read it
        message = save(a, lambda t: t.startswith("Not saved"))
        assert "'own'" in message and "999" in message and "someone else changed it" in message
        assert sources_csv(ledger_copy)["own"] == 999.0
        c = open_page(browser, url, tab="Plan")  # opened after the saves: it reads them
        controller.InputNumeric(c, "held_0").expect_value("999")
        record = solve_json(capsys, "--ledger", str(ledger_copy), "--budget", "100000")
        wait_text(c, "plan_value", lambda t: t == f"{record['value']:,.2f}")
        for p in (a, b, c):
            p.context.close()
    finally:
        stop(proc)


@pytest.mark.parametrize("twin", ["2e9", "", "1e400", "-3"])
def test_a_bad_box_saves_nothing(browser, ledger_copy, twin, capsys):
    proc, url = start_app(ledger_copy)
    try:
        before = (ledger_copy / "sources.csv").read_bytes()
        p = open_page(browser, url, tab="Plan")
        controller.InputNumeric(p, "held_0").set("5")
        record = solve_json(capsys, "--ledger", str(ledger_copy), "--budget", "100000", "--held", "own=5")
        wait_text(p, "plan_value", lambda t: t == f"{record['value']:,.2f}")
        controller.InputNumeric(p, "held_1").set(twin)
        message = save(p, lambda t: t.startswith("Not saved"))
        assert "twin" in message and "own" not in message
        assert (ledger_copy / "sources.csv").read_bytes() == before
        assert "twin" in wait_text(p, "plan_message", lambda t: "twin" in t)
        # the plan shown stays the last one asked for with every box taken
        assert p.inner_text("#plan_value") == f"{record['value']:,.2f}"
        p.context.close()
    finally:
        stop(proc)


def test_the_shipped_ledger_is_never_written(browser, server, tmp_path):
    shipped = default_ledger_dir()
    digest = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in shipped.iterdir()}
    p = open_page(browser, server, tab="Plan")
    controller.InputNumeric(p, "held_1").set("40")
    message = save(p, lambda t: "shipped default ledger" in t)
    assert "procure init DIR" in message
    # outside the app's folder and the user's home: refused, nothing made
    controller.InputText(p, "copy_to").set("/etc/procure-copy-refused")
    p.get_by_role("button", name="Copy the default ledger there").click()
    assert "is outside this folder" in wait_text(p, "save_message", lambda t: t.startswith("Not copied"))
    assert not Path("/etc/procure-copy-refused").exists()
    copy = tmp_path / "mine"
    copy.mkdir()  # an empty folder that exists may be anywhere
    controller.InputText(p, "copy_to").set(str(copy))
    p.get_by_role("button", name="Copy the default ledger there").click()
    wait_text(p, "save_message", lambda t: t.startswith("Copied"))
    assert save(p, lambda t: t.startswith("Saved")).endswith(str(copy / "sources.csv"))
    assert sources_csv(copy)["twin"] == 40.0
    # a second copy: the page saves there, from what that copy holds (before: a false conflict)
    second = tmp_path / "second"
    second.mkdir()
    controller.InputText(p, "copy_to").set(str(second))
    p.get_by_role("button", name="Copy the default ledger there").click()
    wait_text(p, "save_message", lambda t: t.startswith("Copied") and "second" in t)
    controller.InputNumeric(p, "held_1").set("41")
    assert save(p, lambda t: t.startswith(("Saved", "Not saved"))).endswith(str(second / "sources.csv"))
    assert sources_csv(second)["twin"] == 41.0 and sources_csv(copy)["twin"] == 40.0
    assert {q.name: hashlib.sha256(q.read_bytes()).hexdigest() for q in shipped.iterdir()} == digest
    p.context.close()


# ----------------------------------------------------------------------------- load and the server


def test_a_large_ledger_shows_its_first_plan_soon(browser, tmp_path):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from app_latency import many_sources

    ledger = many_sources(tmp_path, 2000)
    proc, url = start_app(ledger)
    try:
        p = open_page(browser, url)
        p.get_by_role("tab", name="Plan").click()
        # how soon is the benchmark's to measure (benchmarks/app_latency.py): a loaded machine
        # moves it; that the page shows it is the test's
        wait_text(p, "plan_value", lambda t: t[:1].isdigit())
        p.wait_for_selector("#curves img", timeout=DRAWER_TIMEOUT)
        assert "The 12 sources with the most money of 2,000" in p.inner_text("#curves_note")
        assert "… 1,950 more sources not shown" in p.inner_text("#plan_more")
        assert p.locator("#held_49").count() == 1 and p.locator("#held_50").count() == 0
        p.context.close()
    finally:
        stop(proc)


def test_no_warning_reaches_the_terminal(browser):
    proc, url = start_app()
    try:
        p = open_page(browser, url)
        p.wait_for_selector("#app-chart-queue", timeout=DRAWER_TIMEOUT)
        for tab, ready in (("Plan", "#curves img"), ("Byte prices", "#byte_prices .js-plotly-plot")):
            p.get_by_role("tab", name=tab).click()
            p.wait_for_selector(ready, timeout=DRAWER_TIMEOUT)
        p.context.close()
    finally:
        err = stop(proc)
    assert "Warning" not in err and "Traceback" not in err, err


def test_ctrl_c_stops_the_app_as_it_stops_every_command():
    proc, _url = start_app(group=True)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: to the whole process group
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and err == "procure: aborted\n", err
    deadline = time.monotonic() + 10
    while left := subprocess.run(["pgrep", "-g", str(proc.pid)], capture_output=True, text=True).stdout.split():
        assert time.monotonic() < deadline, f"processes outlive the server: {left}"
        time.sleep(0.2)


def test_a_port_in_use_is_one_line_naming_it():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        out = subprocess.run([*CLI, "app", "--port", str(port)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.splitlines() == [f"procure: error: --port {port}: 127.0.0.1:{port} is in use by another "
                                       "program: give another --port"]  # fmt: skip


def test_a_session_that_ends_leaves_nothing_in_the_workers():
    from procure.interfaces.pages.work import PlanRequest, Workers, forget

    def run(coroutine):  # in a thread of its own: Playwright's loop may run in this one
        with ThreadPoolExecutor(1) as thread:
            return thread.submit(asyncio.run, coroutine).result()

    workers = Workers(solvers=1, drawers=1)
    workers.start()  # in this thread, which outlives the work
    try:
        ledger = load_ledger()
        for budget in (100_000.0, 200_000.0):
            result, message = run(workers.solve("a", PlanRequest(ledger, 0, (), (), budget)))
            assert message == "" and result.plan.budget == budget
        run(workers.solve("b", PlanRequest(ledger, 0, (), (), 50_000.0)))
        workers.forget("a")
        assert workers._solvers[0].submit(forget, "nobody").result(timeout=30) == 1  # only b's is kept
        workers.forget("b")
        assert workers._solvers[0].submit(forget, "nobody").result(timeout=30) == 0
    finally:
        workers.shutdown()


def test_recycled_workers_are_fresh_processes_that_still_solve_and_draw():
    from procure.interfaces.pages.work import Drawing, PlanRequest, Workers

    def run(coroutine):  # in a thread of its own: Playwright's loop may run in this one
        with ThreadPoolExecutor(1) as thread:
            return thread.submit(asyncio.run, coroutine).result()

    def pids(pool):
        return {p.pid for p in pool._processes.values()}

    workers = Workers(solvers=1, drawers=1)
    workers.start()  # in this thread, which outlives the work
    try:
        ledger = load_ledger()
        solved, message = run(workers.solve("a", PlanRequest(ledger, 0, (), (), 100_000.0)))
        assert message == ""
        row = variant(ledger)[0]
        assert run(workers.draw(Drawing("bill_terms", None, (row,))))[:4] == b"\x89PNG"
        assert workers.recycle() == 0  # the solver serves a, and the drawers every session
        workers.forget("a")
        old = [pids(workers._solvers[0]), pids(workers._drawers)]
        assert workers.recycle() == 2  # no session is left
        assert workers.recycle() == 0  # fresh pools are not replaced again
        assert not {*pids(workers._solvers[0]), *pids(workers._drawers)} & {*old[0], *old[1]}
        t0 = time.monotonic()
        solved, message = run(workers.solve("b", PlanRequest(ledger, 0, (), (), 200_000.0)))
        assert message == "" and solved.plan.budget == 200_000.0
        assert run(workers.draw(Drawing("bill_terms", None, (row,))))[:4] == b"\x89PNG"
        print(f"first solve and figure after a recycle: {time.monotonic() - t0:.2f} s")
        deadline = time.monotonic() + 30
        while any(p.is_alive() for pool in workers._retired for p in (pool._processes or {}).values()):
            assert time.monotonic() < deadline, "the replaced processes did not end"
            time.sleep(0.1)
    finally:
        workers.shutdown()
    assert not any(p.is_alive() for pool in workers._retired for p in (pool._processes or {}).values())


def test_a_closed_job_lets_go_of_its_work_and_its_result():
    import gc
    import weakref

    from shiny import reactive
    from shiny.types import SilentOperationInProgressException

    from procure.interfaces.pages.latest import Latest

    class Held:  # what a session's job holds (its inputs, its workers)
        pass

    def job_holding() -> tuple:
        held = Held()

        async def job(args):
            return held, args

        return job, weakref.ref(held)

    async def main():
        job, gone = job_holding()
        latest = Latest(job)
        del job
        with reactive.isolate(), pytest.raises(SilentOperationInProgressException):
            latest.get(1)  # asked: in progress
        for _ in range(100):
            await asyncio.sleep(0.01)
            if latest._task is None:
                break
        with reactive.isolate():
            assert latest.get(1) == (gone(), 1)
        latest.close()
        gc.collect()
        assert gone() is None and latest.closed
        with reactive.isolate(), pytest.raises(SilentOperationInProgressException):
            latest.get(2)  # nothing runs once closed
        assert latest._task is None

    with ThreadPoolExecutor(1) as thread:
        thread.submit(asyncio.run, main()).result()


def test_a_ledger_with_periods_shows_the_schedule_solve_prints(browser, tmp_path, capsys):
    folder = tmp_path / "ledger"
    shutil.copytree(default_ledger_dir(), folder)
    (folder / "periods.csv").write_text("period,months,money_usd\nQ1,3,25000\nQ2,3,25000\nQ3,3,25000\nQ4,3,25000\n")
    record = solve_json(capsys, "--ledger", str(folder), "--budget", "100000")
    proc, url = start_app(folder)
    try:
        p = open_page(browser, url, tab="Plan")
        wait_text(p, "plan_value", lambda t: t == f"{record['value']:,.2f}")
        p.wait_for_selector("#schedule_table tbody tr")
        rows = table_cells(p, "schedule_table")
        heads = p.eval_on_selector_all("#schedule_table thead th", "ths => ths.map(t => t.innerText.trim())")
        assert heads == ["source", "Q1", "Q2", "Q3", "Q4", "all"]
        sim = next(r for r in rows if r[0] == "sim")
        first = next(s for s in record["schedule"] if s["period"] == "Q1" and s["source"] == "sim")
        assert sim[1] == tables.number(first["hours"])
        lam = [r[-1] for r in table_cells(p, "period_table")]
        assert lam == [f"{record['lambda_by_period'][q]:.4g}" for q in ("Q1", "Q2", "Q3", "Q4")]
        p.context.close()
    finally:
        stop(proc)


def test_a_ledger_that_asks_for_formats_shows_the_infrastructure(browser, tmp_path, capsys):
    import pandas as pd

    folder = tmp_path / "ledger"
    shutil.copytree(default_ledger_dir(), folder)
    table = pd.read_csv(folder / "sources.csv", dtype=str, keep_default_na=False)
    table["formats"] = ["recorded+model_side" if kind != "sim" else "" for kind in table["kind"]]
    table.to_csv(folder / "sources.csv", index=False)
    record = solve_json(capsys, "--ledger", str(folder), "--budget", "100000")
    proc, url = start_app(folder)
    try:
        p = open_page(browser, url, tab="Plan")
        wait_text(p, "plan_value", lambda t: t == f"{record['value']:,.2f}")
        p.wait_for_selector("#formats_table tbody tr")
        assert "Cores per accelerator: 8." in p.inner_text("#infra_lines")
        names = [r[0] for r in table_cells(p, "plan_table")]
        assert "twin (model_side)" in names
        p.context.close()
    finally:
        stop(proc)


def test_a_ledger_with_runs_shows_the_fitted_curves(browser, tmp_path):
    from procure.analyses.fit.simulate import runs_frame, simulate_runs

    folder = tmp_path / "ledger"
    shutil.copytree(default_ledger_dir(), folder)
    sources = load_ledger(folder).sources
    runs = simulate_runs(sources, {"twin.exchange_rate": 0.5}, {"p_min": 0.1, "p_max": 0.85, "value_scale": 300.0},
                         runs=12, most_hours={"own": 800.0, "twin": 3000.0, "sim": 20000.0}, seed=3)  # fmt: skip
    runs_frame(runs).to_csv(folder / "runs.csv", index=False)
    proc, url = start_app(folder)
    try:
        p = open_page(browser, url, tab="Fit")
        p.wait_for_selector("#fit_figure img", timeout=DRAWER_TIMEOUT)
        rows = table_cells(p, "fit_parameters")
        assert any(r[0] == "twin" and r[1] == "exchange_rate" for r in rows)
        p.context.close()
    finally:
        stop(proc)
