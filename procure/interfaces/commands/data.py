"""``procure calibrate`` and ``procure import``: rows for a ledger, measured or read."""

from __future__ import annotations

import math
import os
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ...defaults import DEFAULT_REPEAT, MAX_REPEAT
from ..options import FieldNumber, json_out_option
from ..terminal import console, note, outputs, progress, say

_REPEAT_HELP = f"Timed decoding runs of each file (1 to {MAX_REPEAT}); a note when they spread."
_IMPORT_REPEAT_HELP = f"Timed decoding runs of one video file (1 to {MAX_REPEAT}); a note when they spread."

_ENCODE_HELP = (
    "Also time one core's H.264 encode (libx264, preset medium, one thread) of each file's first 100 frames: "
    "the cluster's [decode] encode_fps_1080p, which prices re-encoding a source."
)

#: The kind of a team's own hours, whose exchange rate is 1 by definition (own-hours per hour).
OWN_KIND = "own"

_EXCHANGE_HELP = "ρ, own-hours an hour of it is worth. Default 1 (noted); needed to --append a kind other than own."
_IMPORT_LEDGER_HELP = "The ledger folder whose sources.csv --append adds the row to (needed with --append; no default)."


def _offset(tick: Callable[[int, int], None] | None, before: int, total: int) -> Callable[[int, int], None]:
    """``progress(done, _)`` of one part of a longer task: ``tick(before + done, total)``."""

    def each(done: int, _part: int) -> None:
        if tick is not None:
            tick(before + done, total)

    return each


@click.command("calibrate")
@click.argument("videos", nargs=-1, type=click.Path(path_type=Path))
@click.option("--repeat", type=int, default=DEFAULT_REPEAT, show_default=True, help=_REPEAT_HELP)
@click.option("--ledger", "ledger_dir", type=click.Path(path_type=Path), default=None, metavar="DIR",
              help="With --source and --write: the ledger whose row takes the measured columns.")  # fmt: skip
@click.option("--source", default=None, help="The ledger row that takes the measured columns.")
@click.option("--write", is_flag=True, help="Write the measured format columns into that row (atomically).")
@click.option("--encode", is_flag=True, help=_ENCODE_HELP)
@json_out_option
def calibrate_command(
    videos: tuple[Path, ...], repeat: int, ledger_dir: Path | None, source: str | None, write: bool,
    encode: bool, json_out: str | None,
) -> None:  # fmt: skip
    """Measure your own video: codec, size, bits per pixel, keyframe interval, decode rate (and encode rate)."""
    from ...pipeline.calibrate import (
        LEDGER_COLUMNS,
        calibrate_file,
        calibration_steps,
        check_repeat,
        require_av,
        require_encoder,
    )
    from ...pipeline.calibrate import summary as calibration_summary
    from .. import render

    if not videos:
        raise click.UsageError("give one or more VIDEO files")
    if write and (ledger_dir is None or source is None):
        raise click.UsageError("--write needs --ledger DIR and --source NAME")
    if write and ledger_dir is not None:
        from ...ledger.shipped import shipped

        if shipped(ledger_dir):
            raise click.UsageError(f"--ledger {ledger_dir} is the shipped default ledger, never written: copy it "
                                   "first (procure init DIR) and write into the copy")  # fmt: skip
    check_repeat(repeat)
    out = outputs(json_out=json_out)
    out.reads(videos, "a video this command reads")
    if write:
        from ...ledger.load import ledger_files

        out.reads(ledger_files(ledger_dir))
        out.will_edit(ledger_files(ledger_dir)[0])  # sources.csv
    av = require_av()
    if encode:
        require_encoder(av)
    steps = calibration_steps(repeat, encode)
    files = []
    with progress(out, f"calibrating {len(videos)} file" + ("s" if len(videos) > 1 else "")) as tick:
        for k, video in enumerate(videos):
            each = _offset(tick, k * steps, len(videos) * steps)
            files.append(calibrate_file(video, repeat=repeat, progress=each, encode=encode))
    total = calibration_summary(files)
    out.json({"files": [f.to_dict() for f in files], "summary": total})
    if json_out is None:
        render.print_calibration(console, files, total)
        if encode:
            _print_encode(files, total, write)
        for f in files:
            for text in f.notes:
                note(f"Note: {f.file}: {text}", whole=str(f.file))
    if write:
        from ...ledger.edit import cells_edit
        from ...pipeline.calibration_record import by_camera

        values = {k: total[k] for k in LEDGER_COLUMNS}
        cameras = by_camera(files)
        if len(cameras) > 1:  # files of several sizes: a camera each, in cameras.csv; the row takes the largest
            values.update(width=cameras[0]["width"], height=cameras[0]["height"])
        wrote = f"Wrote {', '.join(LEDGER_COLUMNS)} into {source!r} of {ledger_dir}/sources.csv"
        out.ledger_edit(cells_edit(ledger_dir, str(source), values), wrote)  # type: ignore[arg-type]
        if len(cameras) > 1:
            _calibrated_cameras(out, Path(str(ledger_dir)), str(source), cameras)
    out.commit()
    if write and encode and out.tables:
        rate = _toml_number(total["encode_fps_1080p"])
        say(
            f"Not written into sources.csv: encode_fps_1080p, measured {rate} frames/s, is a cluster key; "
            f"to use it, set {_ENCODE_LINE.format(rate)} in {ledger_dir}/cluster.toml"
        )


#: The cluster.toml line that takes a measured encode rate.
_ENCODE_LINE = "[decode] encode_fps_1080p = {}"


def _toml_number(value: float) -> str:
    """A rate with four significant digits, written without an exponent (as TOML reads it)."""
    digits = max(0, 3 - math.floor(math.log10(value))) if 0 < value < math.inf else 0
    return f"{value:.{digits}f}"


def _print_encode(files: list[Any], total: dict[str, Any], write: bool) -> None:
    """Each file's encode rate, and the cluster.toml line that takes their median (unless
    ``--write`` prints it after the edit)."""
    from ...pipeline.calibrate import ENCODE_FRAMES, ENCODE_PRESET, ENCODER
    from .. import render
    from ..tables import Rows, visible

    cells = [
        (visible(f.file), f"{f.width}×{f.height}", f"{f.encode_frames:,}",
         f"{f.encode_fps:,.1f} ({f.encode_fps_min:,.1f}–{f.encode_fps_max:,.1f})", f"{f.encode_fps_1080p:,.2f}")
        for f in files
    ]  # fmt: skip
    rows = Rows(("file", "size", "frames encoded", "encode fps (min–max)", "1080p encode fps"), cells)
    title = f"Encoding: one thread, {ENCODER} preset {ENCODE_PRESET}, up to {ENCODE_FRAMES} frames of each file"
    render.print_table(console, title, rows, ["left", "right", "right", "right", "right"])
    if not write:
        rate = _toml_number(total["encode_fps_1080p"])
        say(f"For cluster.toml (a cluster key, not a row's): {_ENCODE_LINE.format(rate)}")


@click.group("import")
def import_group() -> None:
    """Import a dataset as a ledger row."""


def _row_text(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A text column given by an option (``--source``, ``--kind``), checked as the ledger
    checks it and stripped, before any work; not given (``None``) stays ``None``.

    Raises
    ------
    LedgerError
        A blank value (empty or only spaces), naming the option.
    """
    if value is None:
        return None
    from ...ledger.load import check_source_value

    option = f"--{param.name}"
    return str(check_source_value(str(param.name), value, option)).strip()


def _import_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The options every ``import`` takes: the row's name, kind, price and worth, and where it goes."""
    options = [
        click.option(
            "--source", default=None, callback=_row_text, help="The row's name. Default: the dataset's name."
        ),
        click.option("--kind", default=OWN_KIND, show_default=True, callback=_row_text, help="The row's kind."),
        click.option(
            "--price", type=FieldNumber("price_usd_per_hour"), default=None,
            help="Price of an hour that can be bought [$/h]; with --available-hours. Default: held, nothing to buy.",
        ),
        click.option(
            "--available-hours", type=FieldNumber("available_hours"), default=None,
            help="Hours that can be bought at --price [h]; with --price. Default 0: nothing to buy.",
        ),
        click.option("--exchange-rate", type=FieldNumber("exchange_rate"), default=None, help=_EXCHANGE_HELP),
        click.option(
            "--saturation-hours", type=float, default=None,
            help="The row's value scale k [effective h]: your estimate; --append needs it (the curve is log).",
        ),
        click.option("--ledger", "ledger_dir", type=click.Path(path_type=Path), default=None, metavar="DIR",
                     help=_IMPORT_LEDGER_HELP),
        click.option("--append", is_flag=True, help="Add the row to the ledger's sources.csv (atomically)."),
        json_out_option,
    ]  # fmt: skip
    for option in reversed(options):
        f = option(f)  # type: ignore[assignment, arg-type]
    return f


def _start_import(o: dict[str, Any], read: list[Path]) -> Any:
    """The outputs of an import, checked before any work: ``--append``'s needs, and no output
    onto a file the import reads (``read``) or the ledger's."""
    append, ledger_dir, kind = o["append"], o["ledger_dir"], o["kind"]
    if append and ledger_dir is None:
        raise click.UsageError("--append needs --ledger DIR")
    if append and o["saturation_hours"] is None:
        raise click.UsageError(
            "--append needs --saturation-hours H: the row's value scale, which a dataset cannot tell (docs/program.md)"
        )
    if append and o["exchange_rate"] is None and kind.strip() != OWN_KIND:
        raise click.UsageError(
            f"--append of a row of kind {kind.strip()!r} needs --exchange-rate ρ: what an hour of it is worth in "
            f"your own hours (1 only for kind {OWN_KIND!r}, which is your own data)"
        )
    out = outputs(json_out=o["json_out"])
    out.reads(read, "a file of the dataset this import reads")
    if append:
        from ...ledger.load import ledger_files

        out.reads(ledger_files(ledger_dir))
        out.will_edit(ledger_files(ledger_dir)[0])  # sources.csv
        _not_read(ledger_files(ledger_dir)[0], read)
    return out


def _finish_import(out: Any, result: Any, dataset: Path, o: dict[str, Any]) -> None:
    """Print or write the imported row and its notes, and append it to the ledger if asked."""
    from .. import render

    row = dict(result.row)
    if o["saturation_hours"] is not None:
        from ...ledger.load import check_source_value

        row["saturation_hours"] = check_source_value("saturation_hours", o["saturation_hours"], "--saturation-hours")
    cameras = [c.to_dict() for c in getattr(result, "cameras", ())]
    episodes = [e.to_dict() for e in getattr(result, "episodes", ())]
    out.json({**row, "notes": list(result.notes), **({"per_camera": cameras} if cameras else {}),
              **({"per_episode": episodes} if episodes else {})})  # fmt: skip
    if o["json_out"] is None:
        render.print_row(console, row)
        for c in cameras:
            say(
                f"{c['camera']}: {c['width']}×{c['height']} {c['codec'] or '?'}, gop {c['gop']:g}, {c['files']:,} "
                f"file(s), {c['frames']:,} frames, {c['bytes']:,} B, {c['bits_per_pixel']:.4f} bit/px"
            )
            rates = [e["bits_per_pixel"] for e in episodes if e["camera"] == c["camera"] and e["frames"]]
            if rates:
                say(f"  per episode ({len(rates):,}): {min(rates):.4f} to {max(rates):.4f} bit/px, median "
                    f"{statistics.median(rates):.4f}")  # fmt: skip
        for text in result.notes:
            note(f"Note: {text}", whole=str(dataset))  # its files' paths start with the dataset's
    if o["append"]:
        from ...ledger.edit import row_edit

        added = f"Added {row['source']!r} to {o['ledger_dir']}/sources.csv"
        out.ledger_edit(row_edit(o["ledger_dir"], row), added)
        measured = list(getattr(result, "cameras", ()))
        if len({(c.width, c.height) for c in measured}) > 1:  # priced camera by camera (cameras.csv)
            _cameras_edit(out, Path(o["ledger_dir"]), str(row["source"]), measured)
    out.commit()


def _calibrated_cameras(out: Any, folder: Path, source: str, cameras: list[dict[str, Any]]) -> None:
    """A source's cameras as ``calibrate --write`` measured them (grouped by size), in place of
    the ones ``cameras.csv`` had for it."""
    from ...ledger.lerobot_v3 import Camera

    measured = [Camera(**c) for c in cameras]
    _cameras_edit(out, folder, source, measured, replace=True)


def _cameras_edit(out: Any, folder: Path, source: str, cameras: list[Any], replace: bool = False) -> None:
    """Add a source's cameras of different sizes to the ledger's ``cameras.csv`` with the row
    (made first with only its header, which prices nothing, when the ledger has none)."""
    from ...ledger.cameras import CAMERA_COLUMNS, CAMERAS_FILE
    from ...ledger.cameras_edit import CamerasEdit

    path = folder / CAMERAS_FILE
    if not path.exists():
        path.write_text(",".join(CAMERA_COLUMNS) + "\n", encoding="utf-8")
    done = "Wrote" if replace else "Added"
    out.ledger_edit(
        CamerasEdit(folder, source, cameras, replace=replace), f"{done} {len(cameras)} cameras of {source!r} to {path}"
    )


@import_group.command("lerobot")
@click.argument("dataset", type=click.Path(path_type=Path), metavar="DIR")
@_import_options
@click.option("--repeat", type=int, default=DEFAULT_REPEAT, show_default=True, help=_IMPORT_REPEAT_HELP)
@click.option("--per-episode", is_flag=True,
              help="Also each episode's bits per pixel per camera (v3.0, from the packets in its span; "
                   "with PyAV).")  # fmt: skip
def import_lerobot_command(dataset: Path, repeat: int, per_episode: bool, **o: Any) -> None:
    """A LeRobot dataset (meta/info.json, v2.0, v2.1 or v3.0) as a ledger row: its hours held, with nothing to buy
    unless --price and --available-hours say what more costs."""
    from ...ledger.lerobot import dataset_files, import_lerobot

    out = _start_import(o, dataset_files(dataset))
    with progress(out, "reading the dataset's videos") as tick:
        result = import_lerobot(
            dataset, source=o["source"], kind=o["kind"], price=o["price"], available_hours=o["available_hours"],
            exchange_rate=o["exchange_rate"], repeat=repeat, progress=tick, per_episode=per_episode,
        )  # fmt: skip
    _finish_import(out, result, dataset, o)


@import_group.command("rlds")
@click.argument("dataset", type=click.Path(path_type=Path), metavar="DIR")
@_import_options
@click.option("--hz", type=FieldNumber("fps"), default=None,
              help="Control frequency [steps/s]. Default: the dataset's in a table of public datasets.")  # fmt: skip
def import_rlds_command(dataset: Path, hz: float | None, **o: Any) -> None:
    """An Open X-Embodiment (RLDS) dataset folder (dataset_info.json, features.json, TFRecord shards) as a ledger
    row: frames stored as images, steps counted in the shards, hours at the control frequency."""
    from ...ledger.rlds import import_rlds, rlds_files

    out = _start_import(o, rlds_files(dataset))
    result = import_rlds(
        dataset, hz=hz, source=o["source"], kind=o["kind"], price=o["price"], available_hours=o["available_hours"],
        exchange_rate=o["exchange_rate"],
    )  # fmt: skip
    _finish_import(out, result, dataset, o)


def _not_read(edited: Path, read: list[Path]) -> None:
    """Refuse, before any work, a ledger file the import would edit that is one of the files it
    reads (a ``sources.csv`` linked to the dataset's ``info.json``).

    Raises
    ------
    InputError
        Naming the ledger file and the dataset file.
    """
    from ...errors import invalid

    for file in read:
        try:
            same = os.path.samefile(edited, file)
        except OSError:
            same = False
        if same:
            raise invalid("ledger", str(edited), f"it is a file of the dataset this import reads ({file})")
