"""``procure calibrate`` and ``procure import``: rows for a ledger, measured or read."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console

from ..options import json_out_option, ledger_option
from ..terminal import console, outputs, say


@click.command("calibrate")
@click.argument("videos", nargs=-1, type=click.Path(path_type=Path))
@click.option("--repeat", type=int, default=5, show_default=True, help="Timed decoding runs of each file.")
@click.option("--ledger", "ledger_dir", type=click.Path(path_type=Path), default=None,
              help="With --source and --write: the ledger whose row takes the measured columns.")  # fmt: skip
@click.option("--source", default=None, help="The ledger row that takes the measured columns.")
@click.option("--write", is_flag=True, help="Write the measured format columns into that row (atomically).")
@json_out_option
def calibrate_command(
    videos: tuple[Path, ...], repeat: int, ledger_dir: Path | None, source: str | None, write: bool,
    json_out: str | None,
) -> None:  # fmt: skip
    """Measure your own video: codec, size, bits per pixel, keyframe interval, decode rate."""
    from ...pipeline.calibrate import LEDGER_COLUMNS, calibrate_file, require_av, summary
    from .. import render

    if not videos:
        raise click.UsageError("give one or more VIDEO files")
    if write and (ledger_dir is None or source is None):
        raise click.UsageError("--write needs --ledger DIR and --source NAME")
    out = outputs(json_out=json_out)
    require_av()
    show = json_out != "-" and sys.stderr.isatty() and len(videos) > 1
    from rich.progress import Progress

    files = []
    with Progress(console=Console(stderr=True), disable=not show, transient=True) as bar:
        task = bar.add_task(f"calibrating {len(videos)} files", total=len(videos))
        for video in videos:
            files.append(calibrate_file(video, repeat=repeat))
            bar.update(task, advance=1)
    total = summary(files)
    out.json({"files": [f.to_dict() for f in files], "summary": total})
    if json_out is None:
        render.print_calibration(console, files, total)
    if write:
        from ...ledger.edit import set_cells

        set_cells(ledger_dir, str(source), {k: total[k] for k in LEDGER_COLUMNS})  # type: ignore[arg-type]
        if out.tables:
            say(f"Wrote {', '.join(LEDGER_COLUMNS)} into {source!r} of {ledger_dir}/sources.csv")
    out.commit()


@click.group("import")
def import_group() -> None:
    """Import a dataset as a ledger row."""


@import_group.command("lerobot")
@click.argument("dataset", type=click.Path(path_type=Path))
@click.option("--source", default=None, help="The row's name. Default: the dataset folder's name.")
@click.option("--kind", default="own", show_default=True, help="The row's kind.")
@click.option("--price", type=float, default=None, help="Price of an hour [$/h]. Default 0 (held already).")
@click.option(
    "--saturation-hours",
    type=float,
    default=None,
    help="The row's value scale k [effective h]: your estimate; --append needs it (the curve is log).",
)
@ledger_option
@click.option("--append", is_flag=True, help="Add the row to the ledger's sources.csv (atomically).")
@json_out_option
def import_lerobot_command(
    dataset: Path, source: str | None, kind: str, price: float | None, saturation_hours: float | None,
    ledger_dir: Path | None, append: bool, json_out: str | None,
) -> None:  # fmt: skip
    """A LeRobot dataset (meta/info.json, v2.0, v2.1 or v3.0) as a ledger row."""
    from ...ledger.lerobot import import_lerobot
    from .. import render

    if append and ledger_dir is None:
        raise click.UsageError("--append needs --ledger DIR")
    if append and saturation_hours is None:
        raise click.UsageError(
            "--append needs --saturation-hours H: the row's value scale, which a dataset cannot tell (docs/program.md)"
        )
    out = outputs(json_out=json_out)
    row = import_lerobot(dataset, source=source, kind=kind, price=price)
    if saturation_hours is not None:
        from ...ledger.load import check_source_value

        row["saturation_hours"] = check_source_value("saturation_hours", saturation_hours, "--saturation-hours")
    out.json(row)
    if json_out is None:
        render.print_row(console, row)
    if append:
        from ...ledger.edit import append_row

        append_row(ledger_dir, row)  # type: ignore[arg-type]
        if out.tables:
            say(f"Added {row['source']!r} to {ledger_dir}/sources.csv")
    out.commit()
