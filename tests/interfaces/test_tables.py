"""One table layer: the terminal's tables and the app's pages show the same cells, and the
plots leave the caller's matplotlib as it was."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import DEFAULT_LEDGER, seed_state

from procure.analyses.rank import rank, ranking_table
from procure.interfaces import render, tables
from procure.interfaces.pages.pipeline import NUMBER_IDS, shown_numbers
from procure.interfaces.pages.plan import PLAN_COLUMNS, SOURCE_COLUMNS
from procure.output import Outputs
from procure.program import from_ledger
from procure.program.solve.program import solve_problem


def printed(print_table, *args, **kwargs) -> str:
    console = render.Console(width=250, record=True)
    print_table(console, *args, **kwargs)
    return console.export_text()


def test_the_plan_tables_print_the_cells_the_app_shows():
    problem = from_ledger(DEFAULT_LEDGER, budget=100_000.0)
    plan = solve_problem(problem)
    text = printed(render.print_plan, plan)
    lines = text.splitlines()
    for rows in (tables.plan_rows(plan, every_row=True), tables.capacity_rows(plan)):
        frame = rows.frame()
        assert list(frame.columns) == list(rows.headings)
        for cells in frame.itertuples(index=False):
            line = next(line for line in lines if line.startswith(f"│ {cells[0]} "))
            assert [c for c in cells if c] == [c.strip() for c in line.strip("│").split("│") if c.strip()]
    shown = tables.plan_rows(plan, every_row=True).frame(PLAN_COLUMNS)
    assert list(shown.columns) == list(PLAN_COLUMNS) and list(shown["source"]) == [*problem.sources["source"], "total"]
    numbers = tables.plan_numbers(plan)
    assert f"Value {numbers['value']} own-hour equivalents" in text
    assert f"λ = {numbers['lambda']}:" in text and f"All in: {numbers['spent_usd']} =" in text


def test_the_sources_page_and_the_rank_table_format_alike():
    problem = from_ledger(DEFAULT_LEDGER, budget=100_000.0)
    page = tables.rank_rows(ranking_table(problem), every_row=True).frame()
    ranked = rank(DEFAULT_LEDGER, "value")
    text = printed(render.print_rank, ranked, "value")
    assert "rank" not in page.columns and set(SOURCE_COLUMNS) <= set(page.columns)
    for name, price, useful in zip(page["source"], page["price $/h"], page["$ per useful h"], strict=True):
        line = next(line for line in text.splitlines() if f"│ {name} " in line)
        assert f" {price} " in line and f" {useful} " in line


def test_the_pipeline_page_shows_the_bills_numbers():
    row = seed_state("own", cores=24)
    numbers = shown_numbers(row)
    assert list(numbers) == list(NUMBER_IDS)
    text = printed(render.print_bill, row, DEFAULT_LEDGER.cluster)
    for key in ("busy", "cores_needed", "pixels_per_token"):
        assert numbers[key] in text
    assert numbers["bill_usd"].lstrip("$") in text and f"moving takes {numbers['share']} of it" in text


def test_the_app_is_assembled_from_its_pages():
    pytest.importorskip("shiny", reason="Shiny is not installed (procure[app])")
    from procure.interfaces.app import make_app

    app = make_app()
    html = str(app.ui(None))  # the page as a browser opening it now gets it
    for output_id in ("busy", "plan_value", "plan_table", "sources_table", "byte_prices", "ranging", "sweep_table"):
        assert f'id="{output_id}"' in html


def test_plots_keep_the_callers_backend_and_settings(tmp_path):
    code = f"""
import sys, matplotlib
matplotlib.use("svg")
fonttype = matplotlib.rcParams["svg.fonttype"]
from procure.interfaces import plots
from procure.ledger import load_ledger, variant
fig = plots.busy_vs_cores(variant(load_ledger())[0])
plots.save(fig, {str(tmp_path / "busy.svg")!r})
plots.save(fig, {str(tmp_path / "busy.png")!r})
assert matplotlib.get_backend() == "svg", matplotlib.get_backend()
assert matplotlib.rcParams["svg.fonttype"] == fonttype
assert "matplotlib.pyplot" not in sys.modules
"""
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    svg = (tmp_path / "busy.svg").read_text()
    assert "<text" in svg  # text kept as text in the file
    assert (tmp_path / "busy.png").stat().st_size > 1000


def test_outputs_load_no_terminal_or_plotting_library(tmp_path):
    code = "import sys, procure.output\nprint(' '.join(sorted(sys.modules)))"
    loaded = set(
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    )
    assert not {"click", "rich", "matplotlib"} & loaded
    said: list[str] = []
    out = Outputs(json_out=str(tmp_path / "a.json"), say=said.append)
    out.json({"x": float("nan")})
    out.commit()
    assert (tmp_path / "a.json").read_text() == '{\n  "x": null\n}\n'
    assert said == [f"JSON written to {tmp_path / 'a.json'}"]
    echoed: list[str] = []
    out = Outputs(json_out="-", echo=echoed.append, say=said.append)
    out.json({"x": 1})
    out.commit()
    assert echoed == ['{"x": 1}'] and len(said) == 1
