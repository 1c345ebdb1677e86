"""``procure report``: its numbers are ``procure solve --json``'s, and the page opens and hovers
in Debian's Chromium with the network blocked.

Each report is written once per module (``report_of``); the numbers are read back from the
page's ``data-key``/``data-value`` attributes (what each shown number is, exactly) and from
its embedded JSON object, and compared with the JSON object ``procure solve --json`` prints
for the same options. The browser tests skip, saying why, without Playwright or Chromium.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from procure.interfaces.cells import money, number
from procure.interfaces.cli import main
from procure.ledger import default_ledger_dir

pytest.importorskip("plotly", reason="Plotly is not installed (procure-robotics[report])")

TOP = Path(__file__).resolve().parents[2]
PERIODS = TOP / "examples" / "quarters" / "periods.csv"
CHROMIUM = os.environ.get("PROCURE_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
#: Flags for a headless Chromium on a machine with a closed network (no background requests).
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip
TIMEOUT = 30_000  # [ms]
#: Keys of the plan's object that say how long the solve took: they differ between two runs.
TIMINGS = {"build_seconds", "solve_seconds"}


def run(args: list[str]) -> tuple[int, str, str]:
    """Run the command line in this process: exit code, standard output, standard error."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()


def solve_json(args: list[str]) -> dict:
    code, out, err = run(["solve", *args, "--json"])
    assert code == 0, err
    return json.loads(out)


class Numbers(HTMLParser):
    """Each ``data-key`` of a page with its exact value and the text shown; the embedded plan."""

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, list[float | None]] = {}
        self.shown: dict[str, list[str]] = {}
        self.sections: list[str] = []
        self.plan_text = ""
        self._open: list[str | None] = []
        self._in_plan = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self.sections.append(a.get("id", ""))
        if tag == "script" and a.get("id") == "procure-plan":
            self._in_plan = True
        if tag == "span" and "data-key" in a:
            self.values.setdefault(a["data-key"], []).append(json.loads(a["data-value"]))
            self._open.append(a["data-key"])
            self.shown.setdefault(a["data-key"], []).append("")
        elif tag == "span":
            self._open.append(None)

    def handle_endtag(self, tag):
        if tag == "span" and self._open:
            self._open.pop()
        if tag == "script":
            self._in_plan = False

    def handle_data(self, data):
        if self._in_plan:
            self.plan_text += data
        elif self._open and self._open[-1] is not None:
            self.shown[self._open[-1]][-1] += data


def read_report(path: Path) -> Numbers:
    page = Numbers()
    page.feed(path.read_text(encoding="utf-8"))
    return page


@pytest.fixture(scope="module")
def report_of(tmp_path_factory):
    """The report of some options, written once: its path."""
    made: dict[tuple[str, ...], Path] = {}

    def make(*args: str) -> Path:
        if args not in made:
            path = tmp_path_factory.mktemp("report") / "report.html"
            code, _out, err = run(["report", *args, "--out", str(path)])
            assert code == 0, err
            made[args] = path
        return made[args]

    return make


BUDGET = ("--budget", "100000")


def test_every_headline_number_is_solve_json(report_of):
    expected = solve_json(list(BUDGET))
    page = read_report(report_of(*BUDGET))
    want = {key: expected[key] for key in ("value", "value_upper_bound", "gap", "tolerance", "lambda", "spent_usd",
                                           "purchase_usd", "transport_usd", "budget")}  # fmt: skip
    for row in expected["plan"]:
        for key in ("hours", "purchase_usd", "transport_usd", "held_hours", "effective_hours", "value"):
            want[f"plan.{row['source']}.{key}"] = row[key]
    for name, price in expected["shadow_prices"].items():
        want[f"shadow_prices.{name}"] = price
    for row in expected["capacities"]:
        want[f"capacities.{row['capacity']}.shadow_price"] = row["shadow_price"]
        want[f"capacities.{row['capacity']}.shadow_usd"] = row["shadow_usd"]
    for key, value in want.items():
        assert key in page.values, f"the report does not show {key}"
        assert set(page.values[key]) == {value}, f"{key}: the report has {page.values[key]}, solve --json {value}"
    # as shown, the numbers read as the command line writes them
    assert page.shown["spent_usd"][0] == money(expected["spent_usd"])
    for row in expected["plan"]:
        assert page.shown[f"plan.{row['source']}.hours"][0] == number(row["hours"])
    embedded = json.loads(page.plan_text)
    assert {k: v for k, v in embedded.items() if k not in TIMINGS} == {
        k: v for k, v in expected.items() if k not in TIMINGS
    }


def test_sections_come_in_order_question_and_answer_first(report_of):
    page = read_report(report_of(*BUDGET))
    # the default ledger gives the twin's exchange rate a range: its section closes the page
    assert page.sections == ["question", "answer", "bill", "capacities", "sensitivity", "ranges"]


def test_the_ranges_section_shows_each_range_the_ledger_gives(tmp_path):
    # ranges written into a copy of the default ledger with the csv module, read back from the
    # page's data-value attributes; the order is the ledger's order of sources
    import csv

    ledger = tmp_path / "ledger"
    shutil.copytree(default_ledger_dir(), ledger)
    with (ledger / "sources.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    given = {("own", "survival"): ("0.7", "0.95"), ("sim", "saturation_hours"): ("120", "450")}
    columns = list(rows[0])
    for (source, name), (low, high) in given.items():
        for suffix in ("_low", "_high"):
            if name + suffix not in columns:
                columns.append(name + suffix)
        row = next(r for r in rows if r["source"] == source)
        row[name + "_low"], row[name + "_high"] = low, high
    with (ledger / "sources.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, columns, restval="")
        writer.writeheader()
        writer.writerows(rows)
    path = tmp_path / "r.html"
    code, _out, err = run(["report", "--ledger", str(ledger), *BUDGET, "--out", str(path)])
    assert code == 0, err
    page = read_report(path)
    expected = {("own", "survival"), ("twin", "exchange_rate"), ("sim", "saturation_hours")}
    shown = {tuple(k.split(".")[1:3]) for k in page.values if k.startswith("ranges.")}
    assert shown == expected
    for source, name in expected:
        row = next(r for r in rows if r["source"] == source)
        for key, column in (("low", name + "_low"), ("value", name), ("high", name + "_high")):
            assert page.values[f"ranges.{source}.{name}.{key}"] == [float(row[column])]
    order = [k.split(".")[1] for k in page.values if k.startswith("ranges.") and k.endswith(".low")]
    assert order == ["own", "twin", "sim"]


def test_the_ranges_section_says_which_plan_it_stands_beside(report_of):
    # the plan of the numbers' values, or the plan over scenarios drawn from these ranges
    text = report_of(*BUDGET).read_text(encoding="utf-8")
    assert "The plan above uses each number's value" in text
    text = report_of(*BUDGET, "--samples", "20").read_text(encoding="utf-8")
    assert "The plan above is made over its scenarios" in text and "uses each number's value" not in text


def test_the_ranges_chart_puts_each_source_at_one_height_in_every_panel():
    import pandas as pd

    from procure.interfaces.report_charts import range_chart

    ranges = pd.DataFrame({"source": ["own", "twin", "sim"], "number": ["survival", "exchange_rate", "survival"],
                           "low": [0.7, 0.1, 0.5], "value": [0.8, 0.35, 0.6], "high": [0.9, 0.6, 0.7]})  # fmt: skip
    fig = range_chart(ranges, {})
    axes = [fig.layout[name] for name in ("yaxis", "yaxis2")]
    assert all(list(a.categoryarray) == ["own", "twin", "sim"] and a.categoryorder == "array" for a in axes)


def test_a_ledger_without_ranges_has_no_ranges_section(tmp_path):
    ledger = tmp_path / "ledger"
    shutil.copytree(default_ledger_dir(), ledger)
    text = (ledger / "sources.csv").read_text()
    (ledger / "sources.csv").write_text(text.replace(",0.1,0.6\n", ",,\n"))
    path = tmp_path / "r.html"
    code, _out, err = run(["report", "--ledger", str(ledger), *BUDGET, "--out", str(path)])
    assert code == 0, err
    assert "ranges" not in read_report(path).sections


def test_scenarios_section_has_evpi_and_vss_of_solve_json(report_of):
    args = (*BUDGET, "--samples", "20")
    expected = solve_json(list(args))
    page = read_report(report_of(*args))
    assert "scenarios" in page.sections
    for key in ("evpi", "vss", "expected_value", "cvar", "value", "lambda"):
        assert page.values[key] == [expected[key]] * len(page.values[key]), key
    assert len(json.loads(page.plan_text)["scenario_values"]) == 20


def test_periods_have_a_schedule_section_with_solve_jsons_numbers(report_of):
    args = ("--periods", str(PERIODS))
    expected = solve_json(list(args))
    page = read_report(report_of(*args))
    assert "schedule" in page.sections
    assert page.sections.index("schedule") > page.sections.index("sensitivity")
    for period in expected["periods"]:
        for key in ("money_usd", "purchase_usd", "transport_usd", "value", "lambda"):
            assert page.values[f"periods.{period['period']}.{key}"] == [period[key]]
    assert page.values["value"][0] == expected["value"]


def test_an_output_onto_an_input_is_refused(tmp_path):
    ledger = tmp_path / "ledger"
    shutil.copytree(default_ledger_dir(), ledger)
    before = (ledger / "sources.csv").read_bytes()
    code, _out, err = run(["report", *BUDGET, "--ledger", str(ledger), "--out", str(ledger / "sources.csv")])
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("procure: error: out = ") and "reads" in err
    assert (ledger / "sources.csv").read_bytes() == before


def test_pdf_without_chromium_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("PROCURE_CHROMIUM", str(tmp_path / "no-chromium"))
    code, _out, err = run(["report", *BUDGET, "--out", str(tmp_path / "r.html"), "--pdf", str(tmp_path / "r.pdf")])
    assert code == 2
    assert err.count("\n") == 1 and "--pdf needs Chromium" in err
    assert not (tmp_path / "r.html").exists()


def test_without_plotly_the_command_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "plotly", None)
    code, _out, err = run(["report", *BUDGET, "--out", str(tmp_path / "r.html")])
    assert code == 2
    assert err.count("\n") == 1 and "needs Plotly" in err and "pip install" in err and "[report]" in err


def test_colours_are_fixed_per_source(report_of):
    from procure.interfaces.colours import SOURCE_PALETTE

    page = report_of(*BUDGET).read_text(encoding="utf-8")
    plan = solve_json(list(BUDGET))["plan"]
    for i, row in enumerate(plan):
        assert f'<span class="swatch" style="background:{SOURCE_PALETTE[i]}"></span>{row["source"]}' in page


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (procure-robotics[test])")
    if CHROMIUM is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium)")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield b
        b.close()


def test_the_report_opens_offline_and_its_bars_hover_the_tables_numbers(report_of, browser):
    path = report_of(*BUDGET)
    plan = solve_json(list(BUDGET))["plan"]
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    errors, blocked = [], []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))

    def only_files(route):
        if route.request.url.startswith("file:"):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    page.route("**/*", only_files)
    page.goto(path.as_uri())
    for chart in ("chart-hours", "chart-bill", "chart-capacities", "chart-sensitivity"):
        page.wait_for_selector(f"#{chart} svg.main-svg", timeout=TIMEOUT)
    bars = page.locator("#chart-hours .barlayer .point path")
    assert bars.count() == len(plan)
    heights = [bars.nth(i).bounding_box()["height"] for i in range(len(plan))]
    tallest = max(range(len(plan)), key=lambda i: heights[i])
    page.locator("#chart-hours").scroll_into_view_if_needed()
    box = bars.nth(tallest).bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    label = page.locator("#chart-hours .hoverlayer .hovertext")
    label.wait_for(timeout=TIMEOUT)
    source = plan[tallest]["source"]
    cell = page.locator(f'#answer table span[data-key="plan.{source}.hours"]').text_content()
    assert cell == number(plan[tallest]["hours"])
    assert label.text_content() == f"{source}: {cell} h"
    assert errors == [] and blocked == []
    page.close()


def test_pdf_is_printed_where_chromium_is(tmp_path, browser):
    pdf = tmp_path / "r.pdf"
    code, out, err = run(["report", *BUDGET, "--out", str(tmp_path / "r.html"), "--pdf", str(pdf)])
    assert code == 0, err
    assert pdf.read_bytes().startswith(b"%PDF")
    assert "PDF written to" in out


def test_the_sweep_stops_when_the_time_limit_has_run_out():
    from procure.interfaces.report import SWEEP_STEPS, byte_price_points, report_html
    from procure.ledger import load_ledger
    from procure.program import from_ledger

    problem = from_ledger(load_ledger(None), budget=100000.0)
    left = iter([10.0, 10.0, 0.0])
    table = byte_price_points(problem, time_left=lambda: next(left))
    assert table["byte_price_x"].nunique() == 2 < SWEEP_STEPS
    assert len(table.attrs["notes"]) == 1 and "time limit ran out" in table.attrs["notes"][0]
    none = byte_price_points(problem, time_left=lambda: 0.0)
    assert none.empty and "time limit ran out" in none.attrs["notes"][0]
    record = solve_json(list(BUDGET))
    assert "time limit ran out" in report_html(record, [], sweep=none)
