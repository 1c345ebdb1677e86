"""``procure fit``: value curves fitted from the team's training runs, and what to measure next."""

from __future__ import annotations

from pathlib import Path

import click

from ...defaults import DEFAULT_BUDGET
from ...errors import InputError
from ...fit_defaults import (
    DEFAULT_BURN_IN,
    DEFAULT_DRAWS,
    DEFAULT_EVPPI_GROUPS,
    DEFAULT_FIT,
    DEFAULT_FIT_SEED,
    DEFAULT_STEPS,
    DEFAULT_WALKERS,
    FIT_COLUMNS,
    LINKS,
    SCORE_LIKELIHOODS,
)
from ..options import WORKERS_HELP, Money, json_out_option, ledger_option, plot_option
from ..terminal import console, outputs, progress, say

_FIT_HELP = (f"What the runs free, comma-separated, repeatable: {', '.join(FIT_COLUMNS)} (for every source a run "
             f"uses) or SOURCE.COLUMN by source or kind. Default: {','.join(DEFAULT_FIT)}. An exchange rate of 1 "
             "(the unit of value) is never freed.")  # fmt: skip


def _items(given: tuple[str, ...]) -> tuple[str, ...] | None:
    """The ``--fit`` items, or ``None`` (the default) when the option is not given.

    Raises
    ------
    InputError
        A ``--fit`` value with an empty item (``''``, ``',,'``, ``'a,,b'``): it would free
        nothing the user named, so it is refused rather than read as the default.
    """
    from ...errors import invalid

    for g in given:
        if any(not p.strip() for p in g.split(",")):
            columns = ", ".join(FIT_COLUMNS)
            allowed = f"a comma-separated list with no empty item, each one of {columns} or SOURCE.COLUMN"
            raise invalid("--fit", g, allowed)
    items = tuple(p.strip() for g in given for p in g.split(","))
    return items or None


@click.command("fit")
@click.argument("runs_file", metavar="[RUNS]", required=False, type=click.Path(path_type=Path))
@ledger_option
@click.option("--fit", "fit_items", multiple=True, help=_FIT_HELP)
@click.option(
    "--link",
    type=click.Choice(LINKS),
    default=None,
    help="Link of V to the metric: exp (default) or hyperbolic for successes, power for a score.",
)
@click.option(
    "--likelihood",
    type=click.Choice(SCORE_LIKELIHOODS),
    default=None,
    help="Of a score: normal (default) or student (heavier tails).",
)
@click.option("--walkers", type=int, default=DEFAULT_WALKERS, show_default=True, help="Walkers of the sampler.")
@click.option("--steps", type=int, default=DEFAULT_STEPS, show_default=True, help="Steps kept per walker.")
@click.option("--burn-in", type=int, default=DEFAULT_BURN_IN, show_default=True, help="Steps left out first.")
@click.option("--seed", type=int, default=DEFAULT_FIT_SEED, show_default=True, help="Seed of every random draw.")
@click.option(
    "--draws",
    type=int,
    default=DEFAULT_DRAWS,
    show_default=True,
    help="Posterior draws written by --scenarios and valued by --next.",
)
@click.option(
    "--write", is_flag=True, help="Write the fitted medians and _low/_high ranges into --ledger's sources.csv."
)
@click.option(
    "--scenarios",
    "scenarios_out",
    type=click.Path(path_type=Path),
    default=None,
    help="Write the posterior draws as a scenarios.csv for procure solve --scenarios.",
)
@click.option("--next", "next_", is_flag=True, help="Rank the fitted numbers by EVPPI: which to measure next.")
@click.option(
    "--budget",
    type=Money(),
    default=DEFAULT_BUDGET,
    show_default=True,
    help="Budget of the --next plan [$]: 100000, 100k, 1.5M or $100,000.",
)
@click.option(
    "--groups",
    type=int,
    default=DEFAULT_EVPPI_GROUPS,
    show_default=True,
    help="Groups of draws by each number's value, for its EVPPI.",
)
@click.option("--workers", type=int, default=None, help=WORKERS_HELP)
@plot_option("the metric against V with the runs and the posterior band, and the fitted curves")
@json_out_option
def fit_command(runs_file: Path | None, ledger_dir: Path | None, fit_items: tuple[str, ...], link: str | None,
                likelihood: str | None, walkers: int, steps: int, burn_in: int, seed: int, draws: int, write: bool,
                scenarios_out: Path | None, next_: bool, budget: float, groups: int, workers: int | None,
                plot: Path | None, json_out: str | None) -> None:  # fmt: skip
    """Fit exchange rates, survivals and saturation scales to your training runs.

    RUNS is the runs file (runs.csv: run, successes and trials or a score, hours_<source>);
    without it, the runs.csv of the --ledger folder.
    """
    from ...analyses.fit.evppi import draws_and_groups
    from ...analyses.fit.fitting import fit
    from ...analyses.fit.sampler import require_emcee
    from ...analyses.fit.settings import check_setting, default
    from ...ledger import load_ledger
    from ...ledger.cards import default_ledger_dir
    from ...ledger.load import ledger_files
    from ...ledger.runs import RUNS_FILE
    from ...program.numbers.problem import check_budget
    from .. import fit_view, render

    items = _items(fit_items)
    if write and ledger_dir is None:
        raise click.UsageError("--write needs --ledger DIR: the shipped default ledger is never written")
    if write and ledger_dir is not None:
        from ...ledger.shipped import shipped

        if shipped(ledger_dir):
            raise click.UsageError(f"--ledger {ledger_dir} is the shipped default ledger, never written: copy it "
                                   "first (procure init DIR) and write into the copy")  # fmt: skip
    for name, value in (("walkers", walkers), ("steps", steps), ("burn_in", burn_in), ("seed", seed),
                        ("draws", draws), ("groups", groups)):  # fmt: skip
        check_setting(name, value, name)
    check_budget(budget)  # every option before any work, whether --next reads it or not
    if next_:
        draws_and_groups({name: default(name) for name in ("draws", "groups")}, draws, groups)
    out = outputs(json_out=json_out, csv_out=scenarios_out, plot=plot)
    ledger_path = ledger_dir if ledger_dir is not None else default_ledger_dir()
    runs_path = runs_file if runs_file is not None else ledger_path / RUNS_FILE
    out.reads([*ledger_files(ledger_dir), runs_path])  # the ledger, its cards and the runs
    if write:
        out.will_edit(ledger_path / "sources.csv")
    require_emcee()
    ledger = load_ledger(ledger_dir)
    with progress(out, "sampling") as tick:
        result = fit(runs_path, ledger, fit=items, link=link, likelihood=likelihood, walkers=walkers,
                     steps=steps, burn_in=burn_in, seed=seed, draws=draws, groups=groups, progress=tick)  # fmt: skip
    record = result.to_dict()
    info = None
    if next_:
        from ...analyses.fit.evppi import measure_next

        with progress(out, "EVPPI groups") as tick:
            info, ledger_plan = measure_next(result, budget=budget, draws=draws, groups=groups, workers=workers,
                                             progress=tick)  # fmt: skip
        record["next"] = {**info.to_dict(), "budget": budget, "ledger_plan_expected_value": ledger_plan}
    if scenarios_out is not None:
        out.csv(result.scenarios_frame(draws))
    out.figure(lambda: fit_view.figure(result))
    out.json(record)
    if out.tables and json_out is None:
        render.print_table(console, f"Fitted from {len(result.runs_table)} runs of {runs_path}",
                           fit_view.parameter_rows(result), fit_view.PARAMETER_JUSTIFY, keys=2)  # fmt: skip
        render.print_table(console, f"Link {result.link}: {result.model.link.formula} ({result.model.likelihood})",
                           fit_view.link_rows(result), fit_view.LINK_JUSTIFY)  # fmt: skip
        render.print_table(console, "Posterior predictive check", fit_view.run_rows(result),
                           fit_view.RUN_JUSTIFY)  # fmt: skip
        say(fit_view.diagnostics_sentence(result))
        if info is not None:
            render.print_table(console, f"What to measure next (budget ${budget:,.0f}): EVPPI of each number",
                               fit_view.next_rows(info), fit_view.NEXT_JUSTIFY)  # fmt: skip
            say(fit_view.next_sentence(info, record["next"]["ledger_plan_expected_value"]))
        for warning in result.warnings:
            say(f"Warning: {warning}")
    elif json_out is not None:
        for warning in result.warnings:
            click.echo(f"procure: warning: {warning}", err=True)
    if write and not result.diagnostics["converged"]:
        raise InputError(
            f"--write: the sampler has not converged (split R-hat {result.diagnostics['rhat_max']:.3f}): nothing "
            "written; run more --steps or --burn-in"
        )
    if write:
        from ...ledger.edit import update_edit

        changes, seen = result.ledger_changes()
        columns = sorted({c for cells in changes.values() for c in cells})
        message = f"Wrote {', '.join(columns)} of {', '.join(changes)} into {ledger_path}/sources.csv"
        out.ledger_edit(update_edit(ledger_path, changes, seen), message)
    out.commit()
