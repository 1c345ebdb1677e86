"""``procure report``: one self-contained HTML page of a plan, to hand to whoever holds the budget.

The command takes ``procure solve``'s options for the request (the same click options, its
command's ``params``, and the same :func:`procure.analyses.solving.prepare`), solves it, and writes the page of
:func:`procure.interfaces.report.report_html` from the plan's JSON object, the one ``procure
solve --json`` prints; ``--pdf`` prints that page with a headless Chromium. The page and the PDF
are outputs of the command like ``solve``'s (:class:`procure.output.Outputs`): checked before
any work, never onto a file the command reads, written together or not at all.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import click

from ...errors import InputError
from ...output import Outputs, check_output_path
from ..terminal import say
from .plan import OPTION_NAMES, solve_command

#: ``procure solve``'s options the report takes too, by their parameter's name: the request's.
REQUEST_PARAMETERS = ("ledger_dir", "budget", "target", "periods_file", "no_carry", "formats", "cores_choices", "rent",
                      "held", "max_share", "tolerance", "time_limit", "byte_price_x", "ranging", "scenarios_file",
                      "samples", "seed", "risk_alpha", "risk_weight", "recourse_price_x", "no_evpi", "scheduler",
                      "workers")  # fmt: skip
#: The optional extra that brings Plotly.
REPORT_EXTRA = "report"
#: Environment variable naming the Chromium to print with, before ``chromium`` on the PATH.
CHROMIUM_VARIABLE = "PROCURE_CHROMIUM"
#: Programs looked for on the PATH to print the PDF, in this order.
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
#: Chromium's flags for printing: headless, no sandbox (as root in a container), no background
#: requests, no header or footer, and time for the charts' scripts to draw [ms of virtual time].
CHROMIUM_PRINT_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        "--no-pdf-header-footer", "--virtual-time-budget=10000")  # fmt: skip
#: Longest Chromium may take to print the page [s].
PDF_TIMEOUT = 120.0


def chromium() -> str | None:
    """The Chromium to print with: :data:`CHROMIUM_VARIABLE`, else the first of
    :data:`CHROMIUM_NAMES` on the PATH; None when there is none."""
    given = os.environ.get(CHROMIUM_VARIABLE)
    if given:
        return given if shutil.which(given) else None
    return next((found for name in CHROMIUM_NAMES if (found := shutil.which(name))), None)


def print_pdf(page: str, pdf: Path, browser: str) -> None:
    """Print an HTML page to ``pdf`` with a headless Chromium.

    Raises
    ------
    InputError
        Chromium failed, took longer than :data:`PDF_TIMEOUT`, or wrote nothing (one line).
    """
    with tempfile.TemporaryDirectory(prefix="procure-report-") as folder:
        source = Path(folder) / "report.html"
        source.write_text(page, encoding="utf-8")
        args = [browser, *CHROMIUM_PRINT_FLAGS, f"--user-data-dir={folder}/profile", f"--print-to-pdf={pdf}",
                source.as_uri()]  # fmt: skip
        try:
            done = subprocess.run(args, capture_output=True, text=True, timeout=PDF_TIMEOUT, check=False)
        except subprocess.TimeoutExpired:
            raise InputError(f"pdf: Chromium did not print the page within {PDF_TIMEOUT:g} s") from None
        if done.returncode != 0 or not pdf.exists() or pdf.stat().st_size == 0:
            last = (done.stderr.strip().splitlines() or [""])[-1]
            raise InputError(f"pdf: Chromium did not print the page (exit code {done.returncode}): {last}".rstrip(": "))


class ReportOutputs(Outputs):
    """The report's files: the page and, asked for, its PDF, with :class:`Outputs`' checks
    (each path before any work, never two options onto one file, never onto a file read).

    Raises
    ------
    InputError
        A path that cannot be written (:func:`procure.output.check_output_path`), or one file
        given to two options.
    """

    def __init__(self, out: Path, pdf: Path | None) -> None:
        self.out, self.pdf = check_output_path(out, "out"), None if pdf is None else check_output_path(pdf, "pdf")
        super().__init__(say=say)

    def _paths(self) -> list[tuple[str, Path]]:
        return [*super()._paths(), ("out", self.out), *([("pdf", self.pdf)] if self.pdf is not None else [])]

    def file(self, path: Path, write: Any, what: str) -> None:
        """A file to write with the others: ``write(tmp)`` writes its content into ``tmp``."""
        self._files.append((path, write, what))


def _question(ctx: click.Context, ledger_dir: Path | None) -> list[tuple[str, str]]:
    """What was asked, for the page: the ledger, then each request option given, as typed."""
    from ...ledger import default_ledger_dir

    shipped = f"the shipped ledger {default_ledger_dir().name!r}"
    lines = [("ledger", str(ledger_dir) if ledger_dir is not None else shipped)]
    for param in ctx.command.params:
        if param.name in REQUEST_PARAMETERS and param.name != "ledger_dir" and isinstance(param, click.Option):
            if ctx.get_parameter_source(param.name) is click.core.ParameterSource.DEFAULT:
                continue
            value = ctx.params[param.name]
            shown = "yes" if value is True else ", ".join(map(str, value)) if isinstance(value, tuple) else str(value)
            lines.append((param.opts[0], shown))
    return lines


def _request(options: dict[str, Any]) -> Any:
    """The request of ``procure solve``'s options, read as that command reads them."""
    from ...analyses.infra import parse_cores
    from ...analyses.solving import prepare
    from ..options import check_number, format_list, pairs

    o = options
    budget, target = check_number("budget", o["budget"], "--budget"), check_number("target", o["target"], "--target")
    kept = format_list(o["formats"], "--formats")
    counts = parse_cores(o["cores_choices"], "--cores-choices") if o["cores_choices"] is not None else None
    return prepare(o["ledger_dir"], budget=budget, target=target, periods=o["periods_file"], carry=not o["no_carry"],
                   formats=kept, cores_choices=counts, rent=pairs("--rent", o["rent"]) or None,
                   held=pairs("--held", o["held"], "held_hours"), max_share=pairs("--max-share", o["max_share"],
                                                                                "max_share"),
                   scenarios=o["scenarios_file"], samples=o["samples"], seed=o["seed"], risk_weight=o["risk_weight"],
                   risk_alpha=o["risk_alpha"], recourse_price_x=o["recourse_price_x"],
                   byte_price_x=o["byte_price_x"], tolerance=o["tolerance"], time_limit=o["time_limit"],
                   evpi=not o["no_evpi"], scheduler=o["scheduler"], workers=o["workers"], ranging=o["ranging"],
                   names=OPTION_NAMES)  # fmt: skip


@click.command("report", params=[p for p in solve_command.params if p.name in REQUEST_PARAMETERS])
@click.option("--out", "out", type=click.Path(path_type=Path), required=True, metavar="FILE",
              help="Write the report to FILE (.html; one file that opens with no network).")  # fmt: skip
@click.option("--pdf", type=click.Path(path_type=Path), default=None, metavar="FILE",
              help="Also print it to FILE (.pdf) with a headless Chromium (chromium on the PATH, or "
                   "PROCURE_CHROMIUM).")  # fmt: skip
@click.option("--title", default="What to buy next", show_default=True, help="The report's heading.")
@click.pass_context
def report_command(ctx: click.Context, out: Path, pdf: Path | None, title: str, **options: Any) -> None:
    """One HTML page of the plan for a budget (or a target), to hand on.

    Takes procure solve's options. The page: the question and the answer (what to buy, what it
    costs to buy and to move, the value and its certificate), the bill per source, the
    capacities and what one more unit is worth, the plan as the byte price moves, and where
    present the schedule, the scenarios with EVPI and VSS, the formats chosen, and the ranges of
    the ledger's uncertain numbers (procure fit --write's intervals). Every number of the plan
    is procure solve --json's for the same options.

    \b
    Examples:
      procure report --budget 100000 --out plan.html
      procure report --budget 100000 --samples 20 --out plan.html --pdf plan.pdf
      procure report --periods examples/quarters/periods.csv --out quarters.html
    """
    try:
        import plotly  # noqa: F401
    except ImportError:
        from ...install import install_command

        raise InputError(f"procure report needs Plotly: {install_command(REPORT_EXTRA)}") from None
    browser = None
    if pdf is not None:
        browser = chromium()
        if browser is None:
            raise InputError(f"--pdf needs Chromium: none found (install chromium, or set {CHROMIUM_VARIABLE}=PATH); "
                             "--out FILE.html alone needs no browser")  # fmt: skip
    from ...ledger.load import ledger_files, load_ledger
    from ...ledger.periods import PERIOD_SOURCES_FILE
    from ...ledger.scenarios import range_table
    from ..report import byte_price_points, report_html

    files = ReportOutputs(out, pdf)
    periods_file, scenarios_file = options["periods_file"], options["scenarios_file"]
    period_files = [periods_file, periods_file.parent / PERIOD_SOURCES_FILE] if periods_file else []
    files.reads([*ledger_files(options["ledger_dir"]), *([scenarios_file] if scenarios_file else []), *period_files])
    request = _request(options)
    start = time.monotonic()
    solution = request.solve()
    sweep = byte_price_points(solution.problem, time_left=lambda: request.time_limit - (time.monotonic() - start))
    record = solution.to_dict()
    ranges = range_table(load_ledger(options["ledger_dir"]).sources)
    page = report_html(record, _question(ctx, options["ledger_dir"]), sweep=sweep, ranges=ranges, title=title)
    files.file(out, lambda tmp: tmp.write_text(page, encoding="utf-8"), "Report")
    if pdf is not None and browser is not None:
        files.file(pdf, lambda tmp: print_pdf(page, tmp, browser), "PDF")
    files.commit()
    say(_summary(record))


def _summary(record: dict[str, Any]) -> str:
    """One line of what the report holds: the money, the value and its certificate."""
    value, gap = float(record["value"]), float(record["gap"])
    money = f"${float(record['spent_usd']):,.2f}"
    asked = f"the least money, {money}," if record["mode"] == "target" else f"{money}"
    return f"The plan: {asked} for a value of {value:,.2f} own-hour equivalents (gap {100 * gap:.4f} %)."
