"""The tables and the figure of a fit: the cells ``procure fit`` prints and the app shows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from .tables import Rows, money, number, visible

if TYPE_CHECKING:
    from ..analyses.fit.evppi import Information
    from ..analyses.fit.fitting import Fit


#: How each table's columns are set: names left, numbers right.
Justify = Literal["left", "right"]
PARAMETER_JUSTIFY: list[Justify] = ["left", "left", "right", "right", "right", "right", "right", "right"]
LINK_JUSTIFY: list[Justify] = ["left", "left", "right", "right", "right", "right", "right"]
RUN_JUSTIFY: list[Justify] = ["left", "right", "right", "right", "right", "right"]
NEXT_JUSTIFY: list[Justify] = ["right", "left", "left", "right", "right"]


def _g(x: float) -> str:
    """A number to four significant digits, thousands separated; — for NaN."""
    if x != x:
        return "—"
    return f"{x:,.4g}" if abs(x) < 1e15 else f"{x:.3e}"


def parameter_rows(f: Fit) -> Rows:
    """Each freed ledger number: posterior median, interval and prior, and its diagnostics."""
    cells = [(visible(r.source), r.parameter, _g(r.median), f"{_g(r.q05)} – {_g(r.q95)}", _g(r.prior_median),
              f"{_g(r.prior_q05)} – {_g(r.prior_q95)}", number(r.ess, 0), f"{r.rhat:.3f}")
             for r in f.parameters.itertuples()]  # fmt: skip
    return Rows(("source", "parameter", "median", "5 %–95 %", "prior median", "prior 5 %–95 %", "ESS", "R-hat"), cells)


def link_rows(f: Fit) -> Rows:
    """The link's parameters."""
    cells = [(r.parameter, r.unit, _g(r.median), f"{_g(r.q05)} – {_g(r.q95)}", _g(r.prior_median), number(r.ess, 0),
              f"{r.rhat:.3f}") for r in f.link_table.itertuples()]  # fmt: skip
    return Rows(("parameter", "unit", "median", "5 %–95 %", "prior median", "ESS", "R-hat"), cells)


def run_rows(f: Fit) -> Rows:
    """Each run: its observed metric beside the 90 % posterior predictive interval."""
    cells = [(visible(r.run), _g(r.value), _g(r.observed), _g(r.predicted), f"{_g(r.q05)} – {_g(r.q95)}",
              "yes" if r.inside else "NO") for r in f.runs_table.itertuples()]  # fmt: skip
    return Rows(("run", "V median", "observed", "predicted", "predictive 5 %–95 %", "inside"), cells)


def diagnostics_sentence(f: Fit) -> str:
    """One line on the sampler and its convergence."""
    d = f.diagnostics
    inside = int(f.runs_table["inside"].sum())
    return (f"emcee: {d['walkers']} walkers × {d['steps']:,} steps after {d['burn_in']:,} of burn-in "
            f"({d['seconds']:.1f} s); acceptance {d['acceptance']:.2f}; least effective sample size "
            f"{d['ess_min']:,.0f}; largest split R-hat {d['rhat_max']:.3f} "
            f"({'converged' if d['converged'] else 'NOT converged'}); {inside} of {len(f.runs_table)} runs inside "
            "their predictive interval")  # fmt: skip


def next_rows(info: Information) -> Rows:
    """EVPPI of each number, most first."""
    cells = [(str(r.rank), visible(r.source), r.parameter, number(r.evppi, 2), money(r.evppi_usd))
             for r in info.table.itertuples()]  # fmt: skip
    return Rows(("rank", "source", "parameter", "EVPPI (own-h eq.)", "EVPPI at λ"), cells)


def next_sentence(info: Information, ledger_plan: float) -> str:
    """One line on the plan under the posterior and its EVPI."""
    p = info.plan
    return (f"Plan under the posterior ({len(p.scenario_values)} draws): E[value] {number(p.expected_value, 1)}; the "
            f"plan made with the ledger's guesses: {number(ledger_plan, 1)}; EVPI {number(p.evpi, 2)} own-hour "
            f"equivalents, {money(info.usd(p.evpi))} at λ = {info.lambda_:.4g} per $")  # fmt: skip


def figure(f: Fit) -> Any:
    """The metric against V: the runs as points (the observed metric at their median V), the
    link's posterior median and its band; beside it each fitted source's value curve."""
    from matplotlib.figure import Figure

    band = f.band()
    curves = f.curves()
    fig = Figure(figsize=(10, 4.2))
    ax, bx = fig.subplots(1, 2)
    level = f"{f.settings['level']:.0%}"
    ax.fill_between(band["value"], band["low"], band["high"], alpha=0.25, label=f"{level} posterior band")
    ax.plot(band["value"], band["median"], label=f"link {f.link}, median")
    ax.scatter(f.runs_table["value"], f.runs_table["observed"], color="black", s=14, zorder=3, label="runs")
    ax.set_xlabel("V, run value [own-hour equivalents]")
    ax.set_ylabel("success rate" if f.runs.metric == "success" else "score")
    ax.legend(loc="best", fontsize=8)
    if len(curves):
        for source, part in curves.groupby("source", sort=False):
            line = bx.plot(part["hours"], part["median"], label=str(source))[0]
            bx.fill_between(part["hours"], part["low"], part["high"], alpha=0.2, color=line.get_color())
        bx.legend(loc="best", fontsize=8)
    bx.set_xlabel("hours of the source [h]")
    bx.set_ylabel("value v(ρσh) [own-hour equivalents]")
    fig.tight_layout()
    return fig
