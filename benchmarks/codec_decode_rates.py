"""One core's decode rate per codec, measured with PyAV on clips encoded here.

    python benchmarks/codec_decode_rates.py [--width 1920] [--height 1080] [--frames 90] [--repeat 5]

For each codec PyAV's FFmpeg encodes (H.264 by libx264, HEVC by libx265, AV1 by libsvtav1 or
libaom-av1, VP9 by libvpx-vp9), the same synthetic clip (a moving gradient with fixed noise, so
the encoder has texture to keep) is encoded at 1920 × 1080, 30 fps, a keyframe every 30 frames,
4:2:0, at the lesson's 8 Mbit/s (:data:`BITS_PER_SECOND`); then :func:`procure.pipeline.calibrate.calibrate_file`
times its decoding on one thread (PyAV's decoder for the codec: FFmpeg's h264, hevc and vp9,
libdav1d for AV1), each frame converted to RGB as training would, median of ``--repeat`` runs
after a warm-up. Prints, per codec, the 1080p rate [frames/s], its min–max, the bits per pixel
and its ratio to H.264's rate on the same machine.

``docs/pipeline.md`` ("Codecs") prints what it measured on the machine the defaults of the
cluster's ``[decode] core_fps_1080p_<codec>`` keys come from: each is the lesson's H.264 rate
(120 frames/s) times the codec's measured ratio to H.264.
"""

from __future__ import annotations

import argparse
import tempfile
from fractions import Fraction
from pathlib import Path

import numpy as np

#: Stream rate every codec is encoded at: the lesson's 8 Mbit/s at 1080p30 [bit/s], so that the
#: codecs are timed on the same bits (a decoder's work grows with the bits it reads).
BITS_PER_SECOND = 8_000_000
#: Camera noise added to each frame, uniform in [0, NOISE_LEVELS) [8-bit levels]: new each frame.
NOISE_LEVELS = 8

#: Codec (as ffprobe names it) → encoders tried, first available wins, and their options.
ENCODERS: dict[str, tuple[tuple[str, dict[str, str]], ...]] = {
    "h264": (("libx264", {"preset": "medium", "bf": "0"}),),
    "hevc": (("libx265", {"preset": "medium", "x265-params": "log-level=none:bframes=0"}),),
    "av1": (("libsvtav1", {"preset": "8", "svtav1-params": "rc=1:tbr=8000"}), ("libaom-av1", {"cpu-used": "8"})),
    "vp9": (("libvpx-vp9", {"deadline": "good", "cpu-used": "4"}),),
}


def _encoder(av: object, candidates: tuple[tuple[str, dict[str, str]], ...]) -> tuple[str, dict[str, str]] | None:
    for name, options in candidates:
        try:
            av.codec.Codec(name, "w")  # type: ignore[attr-defined]
        except Exception:  # an encoder absent from this FFmpeg
            continue
        return name, options
    return None


def encode_clip(path: Path, encoder: str, options: dict[str, str], width: int, height: int, frames: int) -> Path:
    """Encode ``frames`` frames of a moving, textured gradient at 30 fps, a keyframe every 30."""
    import av

    rng = np.random.default_rng(0)
    container = av.open(str(path), "w")
    stream = container.add_stream(encoder, rate=30)
    stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
    stream.codec_context.gop_size = 30
    stream.codec_context.bit_rate = BITS_PER_SECOND
    stream.options = options
    stream.codec_context.time_base = Fraction(1, 30)
    y, x = np.mgrid[0:height, 0:width]
    for i in range(frames):
        base = np.stack([(x // 4 + i * 3) % 256, (y // 4 + i * 5) % 256, ((x + y) // 8 + i) % 256], axis=-1)
        noise = rng.integers(0, NOISE_LEVELS, (height, width, 3), dtype=np.uint16)
        image = (base.astype(np.uint16) + noise).clip(0, 255).astype(np.uint8)
        frame = av.VideoFrame.from_ndarray(image, format="rgb24")
        frame.pts = i
        for packet in stream.encode(frame):
            container.mux(packet)
    for packet in stream.encode():
        container.mux(packet)
    container.close()
    return path


#: Image codecs (ffprobe's names) → PyAV encoder, for frames stored as images (RLDS).
IMAGE_ENCODERS = {"mjpeg": "mjpeg", "png": "png"}


def image_rate(codec: str, width: int, height: int, frames: int, repeat: int) -> tuple[float, float]:
    """One core's 1080p decode rate of frames stored as images [frames/s], median of ``repeat``
    runs, each frame decoded on one thread and converted to RGB; and the bits per pixel."""
    import statistics
    import time

    import av

    rng = np.random.default_rng(0)
    encoder = av.CodecContext.create(IMAGE_ENCODERS[codec], "w")
    encoder.width, encoder.height = width, height
    encoder.pix_fmt = "yuvj420p" if codec == "mjpeg" else "rgb24"
    encoder.time_base = Fraction(1, 30)
    encoder.open()
    y, x = np.mgrid[0:height, 0:width]
    packets = []
    for i in range(frames):
        base = np.stack([(x // 4 + i * 3) % 256, (y // 4 + i * 5) % 256, ((x + y) // 8 + i) % 256], axis=-1)
        image = (base + rng.integers(0, NOISE_LEVELS, (height, width, 3))).clip(0, 255).astype(np.uint8)
        frame = av.VideoFrame.from_ndarray(image, format="rgb24").reformat(format=encoder.pix_fmt)
        packets.extend(bytes(p) for p in encoder.encode(frame))
    rates = []
    for _ in range(repeat + 1):  # the first run warms up
        decoder = av.CodecContext.create(codec, "r")
        decoder.thread_count = 1
        t0 = time.perf_counter()
        for data in packets:
            for frame in decoder.decode(av.Packet(data)):
                frame.to_ndarray(format="rgb24")
        rates.append(len(packets) / (time.perf_counter() - t0))
    bits = sum(len(p) for p in packets) * 8 / (len(packets) * width * height)
    return statistics.median(rates[1:]) * width * height / (1920 * 1080), bits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=1920)
    parser.add_argument("--height", type=int, default=1080)
    parser.add_argument("--frames", type=int, default=90)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    import av

    from procure.pipeline.calibrate import calibrate_file

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for codec, candidates in ENCODERS.items():
            chosen = _encoder(av, candidates)
            if chosen is None:
                print(f"{codec}: no encoder in PyAV's FFmpeg ({', '.join(n for n, _ in candidates)}), skipped")
                continue
            name, options = chosen
            clip = encode_clip(Path(tmp) / f"{codec}.mkv", name, options, args.width, args.height, args.frames)
            c = calibrate_file(clip, repeat=args.repeat, reads=10)
            rows.append((codec, name, c))
    h264 = next((c.core_fps_1080p for codec, _n, c in rows if codec == "h264"), float("nan"))
    size = f"{args.width}×{args.height}"
    print(f"PyAV {av.__version__}, {size}, {args.frames} frames, one thread, median of {args.repeat}")
    print(f"{'codec':6} {'encoder':11} {'bit/px':>7} {'1080p fps':>10} {'min–max':>15} {'÷ H.264':>8}")
    for codec in IMAGE_ENCODERS:
        rate, bits = image_rate(codec, args.width, args.height, args.frames, args.repeat)
        print(f"{codec:6} {IMAGE_ENCODERS[codec]:11} {bits:7.4f} {rate:10.1f} {'(images)':>15} {rate / h264:8.3f}")
    for codec, name, c in rows:
        scale = c.core_fps_1080p / c.decode_fps  # the file's rate to its 1080p-equivalent
        spread = f"{c.decode_fps_min * scale:.0f}–{c.decode_fps_max * scale:.0f}"
        print(
            f"{codec:6} {name:11} {c.bits_per_pixel:7.4f} {c.core_fps_1080p:10.1f} {spread:>15} "
            f"{c.core_fps_1080p / h264:8.3f}"
        )


if __name__ == "__main__":
    main()
