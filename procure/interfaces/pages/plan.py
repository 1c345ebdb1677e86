"""The app's Plan page: the ledger's sources and the plan for a budget.

The plan is solved in a worker process (:mod:`.work`), which keeps one built
:class:`procure.program.solve.program.Program` per browser session and re-solves it in place as the
budget moves; held hours and mix bounds rebuild it. The page's outputs change when a new plan
is there to show, never while it is being solved. The budget's slider and box follow each
other. Tables show the first :data:`procure.defaults.TABLE_ROWS` sources (the plan's those
with the most money) and the value curves the :data:`.work.APP_CURVES` with the most money,
each with a line saying how many more there are. Nothing is written to the ledger but by the
"save" button (:mod:`.held`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from typing import Any

from ...defaults import DEFAULT_BUDGET
from ...ledger import Ledger
from ..tables import visible
from . import held
from .parts import Refused, boxed, fact, figure, html_table, number, refused_mark, shown, table
from .work import APP_CURVES, Drawing, Latest, PlanRequest, PlanView, Solved, Workers, image_uri

#: What the page says of the plan it keeps showing while an input is refused.
KEPT_PLAN = "correct the marked box to see the plan it asks for"
#: Range of the budget slider, as powers of ten [$].
BUDGET_DECADES = (3.0, 7.0)
#: Step of the budget slider [decades]; the box and the slider agree when they round alike.
BUDGET_STEP = 0.01
#: Largest budget the box takes [$].
MOST_BUDGET = 1e12
#: Columns of the plan table the page shows (headings of :func:`procure.interfaces.tables.plan_rows`).
PLAN_COLUMNS = ("source", "buy h", "purchase $", "transport $", "value", "value per next $")
#: Columns of the sources table the page shows (headings of :func:`procure.interfaces.tables.rank_rows`).
SOURCE_COLUMNS = ("source", "price $/h", "transport $/h", "share", "$ per useful h")
#: Widths of the plan and sources cards, of 12: one above the other, each as wide as the page,
#: so that their tables fit a screen 1,280 px wide beside the sidebar.
LAYOUT = (12, 12)
#: Mix-bound boxes the page shows at most (the ledger's first kinds).
SHARE_BOXES = 20


def kinds(ledger: Ledger) -> list[str]:
    """The ledger's kinds, each once, in ledger order: one mix-bound input each (the first
    :data:`SHARE_BOXES`)."""
    return [str(k) for k in dict.fromkeys(ledger.sources["kind"])][:SHARE_BOXES]


def page(ledger: Ledger) -> Any:
    """The page's layout: budget, held hours and mix bounds; the plan, the sources, the curves."""
    from shiny import ui

    share_inputs = [
        ui.input_numeric(f"max_share_{i}", f"max share: {visible(kind)}", None, min=0, max=1, step=0.05)  # type: ignore[arg-type]
        for i, kind in enumerate(kinds(ledger))
    ]
    return ui.layout_sidebar(
        ui.sidebar(
            ui.input_slider(
                "budget_slider", "Budget, log₁₀ $", *BUDGET_DECADES, math.log10(DEFAULT_BUDGET), step=BUDGET_STEP
            ),
            boxed(ui.input_numeric("budget", "Budget [$]", shown(DEFAULT_BUDGET), min=0, step=1000), "budget_message"),
            ui.output_ui("refused_marks"),
            ui.h6("Hours already held"),
            *held.boxes(ledger),
            ui.h6("Mix bounds (share of effective hours)"),
            *share_inputs,
            *held.save_controls(ledger.path),
            width=300,
        ),
        ui.layout_columns(
            ui.card(
                ui.card_header("The plan"),
                fact("value", "plan_value", "own-hour equivalents"),
                fact("λ", "lambda", "value per $"),
                fact("spent", "spent_usd"),
                ui.output_text("plan_message"),
                table("plan_table"),
                ui.output_text("plan_more"),
                table("capacities"),
            ),
            ui.card(ui.card_header("The ledger's sources"), table("sources_table"), ui.output_text("sources_more")),
            col_widths=LAYOUT,
        ),
        ui.card(ui.card_header("The plan by source: point at a bar for its figure"), ui.output_ui("plan_charts")),
        *extra_cards(ledger),
        ui.card(ui.card_header("Value curves and the plan's points"), figure("curves"), ui.output_text("curves_note")),
    )


def has_periods(ledger: Ledger) -> bool:
    """True where the ledger folder has a ``periods.csv``: the plan is a schedule."""
    from ...ledger.periods import ledger_periods

    return ledger_periods(ledger.path, None) is not None


def extra_cards(ledger: Ledger) -> list[Any]:
    """The schedule's card over periods, and the infrastructure's where the ledger asks for a choice."""
    from shiny import ui

    from ...analyses.infra import chooses

    cards = []
    if has_periods(ledger):
        cards.append(ui.card(ui.card_header("The schedule: hours bought by period"), table("schedule_table"),
                             table("period_table")))  # fmt: skip
    elif chooses(ledger):
        cards.append(ui.card(ui.card_header("Infrastructure: formats, cores and rented capacity"),
                             ui.output_text("infra_lines"), table("formats_table")))  # fmt: skip
    return cards


def setting(input: Any, ledger: Ledger) -> tuple[tuple[tuple[str, float], ...], tuple[tuple[str, float], ...]]:
    """The held hours and mix bounds the inputs give, each checked.

    Raises
    ------
    Refused
        A blank or out-of-range box, naming its source or kind.
    """
    hours = held.read_boxes(input, held.editable(ledger))
    shares = {}
    for i, kind in enumerate(kinds(ledger)):
        share = number(input[f"max_share_{i}"](), f"max share of {visible(kind)!r}", high=1.0, blank=True,
                       field=f"max_share_{i}")  # fmt: skip
        if share is not None:
            shares[kind] = share
    return tuple(hours.items()), tuple(shares.items())


def plan_charts_html(record: dict[str, Any]) -> str:
    """The plan's charts, interactive (Plotly, loaded once by the page): hours to buy, purchase
    and transport, and the capacities, each source in its colour; a bar's hover shows the
    figure the plan table shows. Nothing where Plotly is not installed."""
    try:
        from ..report_charts import bill_chart, capacity_chart, chart_html, hours_chart
    except ImportError:
        return ""
    from ..colours import source_colours

    rows = record["plan"]
    colours = source_colours([row["source"] for row in rows])
    try:
        return "".join((chart_html(hours_chart(rows, colours), "app-chart-hours"),
                        chart_html(bill_chart(rows, colours), "app-chart-bill"),
                        chart_html(capacity_chart(record["capacities"]), "app-chart-capacities")))  # fmt: skip
    except ImportError:  # report_charts imports Plotly when a chart is made
        return ""


def _more(left_out: int) -> str:
    return f"… {left_out:,} more sources not shown: procure solve --all prints every one." if left_out > 0 else ""


def server(
    input: Any, output: Any, ledger: Ledger, token: Hashable, workers: Workers, session: str
) -> tuple[list[Latest], Callable[[], tuple[PlanRequest | None, str]]]:
    """Register the page's outputs in the running session; returns its jobs, to close when the
    session ends, and what its inputs ask (the request of the plan, or why there is none),
    which the Byte prices page reads."""
    from shiny import reactive, ui
    from shiny import render as shiny_render

    @reactive.effect
    @reactive.event(input.budget_slider, ignore_init=True)
    def _slider_to_box() -> None:
        try:
            x = number(input.budget_slider(), "budget slider", low=BUDGET_DECADES[0], high=BUDGET_DECADES[1])
        except Refused:
            return
        box = input.budget()
        agree = isinstance(box, int | float) and box > 0 and round(math.log10(box), 2) == round(float(x or 0), 2)
        if not agree:
            ui.update_numeric("budget", value=round(10 ** float(x or 0), 2))

    @reactive.effect
    @reactive.event(input.budget, ignore_init=True)
    def _box_to_slider() -> None:
        try:
            box = number(input.budget(), "budget", high=MOST_BUDGET)
        except Refused:
            return
        if box is None or box <= 0:
            return
        x = min(max(math.log10(box), BUDGET_DECADES[0]), BUDGET_DECADES[1])
        try:
            slider = number(input.budget_slider(), "budget slider", low=BUDGET_DECADES[0], high=BUDGET_DECADES[1])
        except Refused:  # a forged slider value: put the slider where the box says
            slider = None
        if slider is None or round(x, 2) != round(slider, 2):
            ui.update_slider("budget_slider", value=round(x, 2))

    @reactive.calc
    def request() -> tuple[PlanRequest | None, str, str | None]:
        """The plan asked for, or why the page does not take its inputs now and which input
        (its id, to mark it; None when every one is taken)."""
        try:
            hours, shares = setting(input, ledger)
            budget = number(input.budget(), "budget", high=MOST_BUDGET, field="budget")
        except Refused as exc:
            return None, str(exc), exc.field
        return PlanRequest(ledger, token, hours, shares, float(budget or 0.0)), "", None

    async def solve(asked: PlanRequest) -> Any:
        return await workers.solve(session, asked)

    plans = Latest(solve)
    #: The plan shown, with the request it answers, or why there is none: set once a solve
    #: is done, so that the outputs change once, when there is something new to show.
    shown_plan: Any = reactive.value((None, (None, "")))

    @reactive.effect
    def _ask() -> None:
        asked, message, _field = request()
        if asked is not None:
            shown_plan.set((asked, plans.get(asked)))
            return
        # a value the page does not take: the last plan stays shown, with why the new one is not
        with reactive.isolate():
            last, (solved, _before) = shown_plan()
        kept = f" (the plan shown is the last one asked for: {KEPT_PLAN})" if solved is not None else ""
        shown_plan.set((last, (solved, message + kept)))

    @shiny_render.ui
    def refused_marks() -> Any:
        return refused_mark(request()[2])

    def plan() -> tuple[Solved | None, str]:
        return shown_plan()[1]

    def fact_text(key: str) -> Any:
        def text() -> str:
            solved = plan()[0]
            return solved.view.numbers[key] if solved is not None else "—"

        return text

    for output_id, key in (("plan_value", "value"), ("lambda", "lambda"), ("spent_usd", "spent_usd")):
        output(id=output_id)(shiny_render.text(fact_text(key)))

    @shiny_render.text
    def budget_message() -> str:
        message = plan()[1]
        return message if message.startswith("budget") else ""

    @shiny_render.text
    def plan_message() -> str:
        return plan()[1]

    def view() -> PlanView | None:
        solved = plan()[0]
        return solved.view if solved is not None else None

    @shiny_render.ui
    def plan_table() -> Any:
        v = view()
        return html_table(v.plan, PLAN_COLUMNS) if v is not None else None

    @shiny_render.text
    def plan_more() -> str:
        v = view()
        return _more(v.plan.left_out) if v is not None else ""

    @shiny_render.ui
    def capacities() -> Any:
        v = view()
        return html_table(v.capacities) if v is not None else None

    @shiny_render.ui
    def schedule_table() -> Any:
        v = view()
        return html_table(v.schedule) if v is not None else None

    @shiny_render.ui
    def period_table() -> Any:
        v = view()
        return html_table(v.periods) if v is not None else None

    @shiny_render.text
    def infra_lines() -> str:
        v = view()
        return " ".join(v.infrastructure) if v is not None else ""

    @shiny_render.ui
    def formats_table() -> Any:
        v = view()
        return html_table(v.formats) if v is not None else None

    @shiny_render.ui
    def sources_table() -> Any:
        v = view()
        return html_table(v.sources, SOURCE_COLUMNS) if v is not None else None

    @shiny_render.text
    def sources_more() -> str:
        v = view()
        return _more(v.sources.left_out) if v is not None else ""

    @shiny_render.ui
    def plan_charts() -> Any:
        solved = plan()[0]
        if solved is None:
            return None
        return ui.HTML(plan_charts_html(solved.plan.to_dict()))

    async def draw(drawing: Drawing) -> tuple[bytes | None, str]:
        return await workers.draw(drawing), ""

    pictures = Latest(draw)

    @shiny_render.ui
    def curves() -> Any:
        asked, (solved, _) = shown_plan()
        if solved is None:
            return None
        png, message = pictures.get(Drawing("curves", asked, (solved.plan, solved.problem)))
        alt = "Each source's value against the dollars spent on it, with the plan's point"
        return ui.img(src=image_uri(png), alt=alt) if png is not None else ui.span(message)

    @shiny_render.text
    def curves_note() -> str:
        solved = plan()[0]
        if solved is None or solved.problem.n <= APP_CURVES:
            return ""
        return f"The {APP_CURVES} sources with the most money of {solved.problem.n:,}; the plan table lists more."

    def asked() -> tuple[PlanRequest | None, str]:
        """The request of the plan, or why there is none (for the byte-price page)."""
        return request()[:2]

    held.server(input, ledger)
    return [plans, pictures], asked
