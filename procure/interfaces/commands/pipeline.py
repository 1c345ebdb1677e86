"""``procure bill`` and ``procure simulate``: one format's pipeline and the bill of an hour."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ...defaults import DEFAULT_BUFFER, DEFAULT_FRAMES, DEFAULT_WARMUP
from ...output import jsonable
from ..options import FieldNumber, format_options, json_out_option, ledger_option, plot_option
from ..terminal import console, outputs, plots

if TYPE_CHECKING:
    from ...ledger import Ledger

#: Keys of ``procure bill --json``, in order (README lists them under "procure bill"), and the
#: result column of each.
BILL_KEYS = {
    "demand_fps": "demand_fps",
    "supply_fps": "supply_fps",
    "read_fps": "read_fps",
    "decode_fps": "decode_fps",
    "busy": "busy",
    "stage": "stage",
    "cores_needed": "cores_needed",
    "pixels_per_token": "pixels_per_token",
    "tokens_per_frame": "tokens_per_frame",
    "gb_per_hour": "gb_per_hour",
    "bill_usd": "bill_usd",
    "bytes_usd": "bytes_usd",
    "cores_usd": "cores_usd",
    "idle_usd": "idle_usd",
}
#: Keys ``procure bill --json`` adds to the contract.
BILL_EXTRA_KEYS = (
    "source",
    "kind",
    "price_usd_per_hour",
    "share",
    "gb_decoded_per_hour",
    "frames_per_hour",
    "wall_seconds",
    "useful_seconds",
    "accelerator_hours",
    "core_hours",
    "g",
    "largest_stalling_params",
    "codec",
    "nvdec_engines",
    "note",
)


def variant_from(ledger: Ledger, o: dict[str, Any]) -> tuple[Any, Any]:
    """The ledger row and cluster the format options ``o`` describe (:func:`procure.ledger.variant`)."""
    from ...ledger import cluster_with, variant

    cluster = cluster_with(
        ledger.cluster,
        model=o["model"],
        params=o["params"],
        side=o["side"],
        accelerator=o["accelerator"],
        cores=o["cores"],
        nvdec=o["nvdec"],
        byte_price_x=o["byte_price_x"],
    )
    return variant(
        ledger,
        o["kind"],
        cluster=cluster,
        cameras=o["cameras"],
        width=o["width"],
        height=o["height"],
        fps=o["fps"],
        bits_per_pixel=o["bits_per_pixel"],
        read=o["read"],
        gop=o["gop"],
        core_fps_1080p=o["core_fps_1080p"],
        codec=o["codec"],
    )


def bill_record(row: Any) -> dict[str, Any]:
    """The JSON object of ``procure bill`` for one evaluated row."""
    from ...pipeline.codecs import codec_name

    out = {key: row[col] for key, col in BILL_KEYS.items()}
    out.update({key: row[key] for key in BILL_EXTRA_KEYS if key not in ("codec", "note")})
    out["codec"] = codec_name(row.get("codec"))
    out["note"] = row.get("nvdec_note") or None
    return jsonable(out)


@click.command("bill")
@ledger_option
@format_options
@plot_option("busy against cores")
@json_out_option
def bill_command(ledger_dir: Path | None, json_out: str | None, plot: Path | None, **options: Any) -> None:
    """One format's pipeline and the bill of one recorded hour."""
    from ...ledger import load_ledger
    from ...ledger.cameras import camera_bill
    from ...ledger.load import ledger_files
    from .. import render

    out = outputs(json_out=json_out, plot=plot)
    out.reads(ledger_files(ledger_dir))
    ledger = load_ledger(ledger_dir)
    row, cluster = variant_from(ledger, options)
    out.figure(lambda: plots().busy_vs_cores(row))
    cameras = camera_bill(ledger.cameras, row, cluster.gop)
    out.json({**bill_record(row), **({"per_camera": cameras} if cameras else {})})
    if out.tables and json_out is None:
        render.print_bill(console, row, cluster)
        for c in cameras:
            console.print(
                f"camera {c['camera']}: {c['count']:g} × {c['width']:g}×{c['height']:g} at {c['fps']:g} fps, "
                f"{c['gb_per_hour']:.2f} GB an hour, {c['decode_share']:.1%} of the decoding"
            )
    out.commit()


@click.command("simulate")
@ledger_option
@format_options
@click.option("--frames", type=int, default=DEFAULT_FRAMES, show_default=True, help="Frames simulated.")
@click.option(
    "--buffer", type=int, default=DEFAULT_BUFFER, show_default=True, help="Buffer before the accelerator [frames]."
)
@click.option(
    "--warmup", type=float, default=DEFAULT_WARMUP, show_default=True, help="Share of frames left out as warm-up."
)
@click.option(
    "--decode-cv",
    type=FieldNumber("decode_cv"),
    default=0.0,
    show_default=True,
    help="Coefficient of variation of decode times [1]: 0, or 1e-6 to 10.",
)
@click.option(
    "--train-cv",
    type=FieldNumber("train_cv"),
    default=0.0,
    show_default=True,
    help="Coefficient of variation of train times [1]: 0, or 1e-6 to 10.",
)
@click.option("--seed", type=FieldNumber("seed", integer=True), default=0, show_default=True,
              help="Seed of the jitter (a whole number ≥ 0).")  # fmt: skip
@click.option(
    "--plot", type=click.Path(path_type=Path), default=None, help="Write the timeline to FILE (.png or .svg)."
)
@json_out_option
def simulate_command(
    ledger_dir: Path | None,
    json_out: str | None,
    frames: int,
    buffer: int,
    warmup: float,
    decode_cv: float,
    train_cv: float,
    seed: int,
    plot: Path | None,
    **options: Any,
) -> None:
    """Run the pipeline as a queue and put its busy fraction beside the closed form's."""
    from ...ledger import load_ledger
    from ...ledger.load import ledger_files
    from ...pipeline.queue import simulate
    from .. import render

    out = outputs(json_out=json_out, plot=plot)
    out.reads(ledger_files(ledger_dir))
    ledger = load_ledger(ledger_dir)
    row, cluster = variant_from(ledger, options)
    result = simulate(
        row, frames=frames, buffer=buffer, warmup=warmup, decode_cv=decode_cv, train_cv=train_cv, seed=seed
    )
    out.figure(lambda: plots().timeline(result, busy_formula=row["busy"]))
    if json_out is not None:
        record = bill_record(row)
        record.update(
            jsonable(
                {
                    "busy_simulated": result.busy,
                    "busy_formula": row["busy"],
                    "throughput_fps": result.throughput_fps,
                    "mean_buffer": result.mean_buffer,
                    "decoder_utilisation": float(result.decoder_utilisation.mean())
                    if len(result.decoder_utilisation)
                    else None,
                    "stage_simulated": result.stage,
                    "frames": result.frames,
                    "note": result.note,
                    "warmup_frames": result.warmup_frames,
                    "buffer": result.buffer,
                }
            )
        )
        out.json(record)
    else:
        render.print_simulation(console, row, cluster, result)
    out.commit()
