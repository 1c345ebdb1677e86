"""The cells of a format's pipeline and of its measurement: one recorded hour of a format (its
title, numbers, the stages' rates, the facts of the hour, its transport bill, and the simulated
queue beside the closed form), and a calibration of a team's own video (each file measured, the
values a ledger row takes from it, one ledger row).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .cells import Rows, money, number, percent, visible

if TYPE_CHECKING:
    from ..ledger import Cluster
    from ..pipeline.queue import SimulationResult


# ----------------------------------------------------------------------------- one format


def format_title(row: Any, cluster: Cluster) -> str:
    """One line naming a format and the cluster it runs on."""
    return (
        f"{visible(row['source'])}: {row['cameras']:g} × {row['width']:g}×{row['height']:g} at "
        f"{row['fps']:g} fps, {row['stored']}, read in {row['read']} — model {visible(cluster.model)}, "
        f"{visible(cluster.accelerator)}, {cluster.cores_per_accelerator:g} cores"
        f"{', NVDEC' if cluster.nvdec else ''}"
    )


def pipeline_numbers(row: Any) -> dict[str, str]:
    """The numbers of one recorded hour (a row of :func:`procure.ledger.variant`), formatted:
    ``busy``, ``stage``, ``cores_needed``, ``pixels_per_token``, ``gb_per_hour``,
    ``gb_decoded_per_hour``, ``bill_usd``, ``share`` and ``price_usd_per_hour``."""
    return {
        "busy": percent(row["busy"]),
        "stage": str(row["stage"]),
        "cores_needed": number(row["cores_needed"]),
        "pixels_per_token": number(row["pixels_per_token"], 0),
        "gb_per_hour": f"{row['gb_per_hour']:,.2f}",
        "gb_decoded_per_hour": f"{row['gb_decoded_per_hour']:,.0f}",
        "bill_usd": money(row["bill_usd"]),
        "share": percent(row["share"]),
        "price_usd_per_hour": money(row["price_usd_per_hour"]),
    }


def stage_rows(row: Any) -> Rows:
    """The stages' rates [frames/s], the binding one marked."""
    cells = []
    for name, rate, note in (
        ("accelerator (demand)", row["demand_fps"], f"{row['tokens_per_frame']:g} tokens a frame"),
        ("read", row["read_fps"], f"{row['bytes_per_frame']:,.0f} B a frame"),
        ("decode", row["decode_fps"], f"g = {row['g']:g} frames decoded per frame used"),
    ):
        mark = " ← binds" if name.split()[0] == row["stage"] else ""
        cells.append((name, number(rate), note + mark))
    return Rows(("stage", "frames/s", ""), cells)


def fact_rows(row: Any) -> Rows:
    """The busy fraction, the cores needed, pixels per token and the gigabytes of an hour."""
    n = pipeline_numbers(row)
    return Rows(
        ("", ""),
        [
            ("busy", n["busy"]),
            ("cores needed (Little's law)", n["cores_needed"]),
            ("pixels decoded per token π", n["pixels_per_token"]),
            ("GB stored / decoded per hour", f"{n['gb_per_hour']} / {n['gb_decoded_per_hour']}"),
        ],
    )


def bill_rows(row: Any) -> Rows:
    """The transport bill of one recorded hour by term [$], each term's share, the total."""
    total = row["bill_usd"]
    cells = [
        (name, f"{row[key]:,.2f}", percent(row[key] / total) if total > 0 else "—")
        for name, key in (("bytes", "bytes_usd"), ("cores", "cores_usd"), ("idle accelerator", "idle_usd"))
    ]
    return Rows(("term", "$", "share of bill"), cells, total=("bill", f"{total:,.2f}", ""))


def simulation_rows(row: Any, result: SimulationResult) -> Rows:
    """The simulated queue beside the closed form."""
    util = result.decoder_utilisation
    cells = [
        ("busy", percent(result.busy), percent(row["busy"])),
        (
            "frames/s to the accelerator",
            number(result.throughput_fps),
            number(min(row["demand_fps"], row["supply_fps"])),
        ),
        ("binding stage", result.stage, str(row["stage"])),
        ("decoders busy (mean)", percent(float(util.mean())) if len(util) else "—", ""),
        ("frames in the buffer (mean)", f"{result.mean_buffer:.1f}", ""),
    ]
    return Rows(("", "simulated", "closed form"), cells)


# ----------------------------------------------------------------------------- data


def calibration_rows(files: list[Any]) -> Rows:
    """Each calibrated file: codec, size, rate, bits per pixel, keyframe interval, decode rates."""
    cells = [
        (visible(f.file), visible(f.codec), f"{f.width}×{f.height}", f"{f.fps:g}", f"{f.frames:,}",
         f"{f.bits_per_pixel:.4f}", f"{f.gop:g}",
         f"{f.decode_fps:,.0f} ({f.decode_fps_min:,.0f}–{f.decode_fps_max:,.0f})",
         f"{f.core_fps_1080p:,.1f}", f"{f.random_read_frames:.2f}")
        for f in files
    ]  # fmt: skip
    headings = ("file", "codec", "size", "fps", "frames", "bit/px", "gop", "decode fps (min–max)", "1080p fps",
                "random read frames")  # fmt: skip
    return Rows(headings, cells)


def calibration_sentence(total: dict[str, Any], files: list[Any] | None = None) -> str:
    """The values a ledger row takes from a calibration; where ``files`` are of several sizes,
    the sentence names them (with ``--write`` each size is a camera of ``cameras.csv``)."""
    sizes = list(dict.fromkeys(f"{f.width}×{f.height}" for f in files or []))
    size = f"{total['width']}×{total['height']}"
    if len(sizes) > 1:
        size = (f"{size} (the clips are of {len(sizes)} sizes, {', '.join(sizes)}: with --write, a camera each in "
                "cameras.csv)")  # fmt: skip
    return (
        f"For a ledger row: codec {visible(total['codec'])}, {size} at {total['fps']:g} fps, "
        f"bits_per_pixel {total['bits_per_pixel']:.4f}, gop {total['gop']:g}, "
        f"core_fps_1080p {total['core_fps_1080p']:,.1f}"
    )


def ledger_row_rows(row: dict[str, Any]) -> Rows:
    """One ledger row, a column a line; a missing number is blank."""
    cells = []
    for column, value in row.items():
        shown = (
            ""
            if isinstance(value, float) and value != value
            else (f"{value:,.6g}" if isinstance(value, float) else visible(value))
        )
        cells.append((column, shown))
    return Rows(("column", "value"), cells)
