"""TFRecord files read without TensorFlow: the record framing, and what each feature of a
``tf.train.Example`` holds.

A TFRecord file is a run of records, each ``length`` (8 bytes, little-endian), the masked
CRC-32C of those 8 bytes (4), the ``length`` bytes of data, and the masked CRC-32C of the data
(4). The length's check is verified (it tells a file that is not TFRecord, or is cut, from one
that is); the data's is not, since computing CRC-32C in Python over gigabytes of images would
take longer than the import is for. A record of an RLDS dataset is one episode, a serialized
``tf.train.Example`` whose step features are flattened (``steps/observation/image`` holds one
value per step); :func:`example_features` gives each feature's kind, number of values and
bytes, from the protocol buffer's wire format.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError

#: Bytes before a record's data (its length and that length's check) and after it (its check).
HEADER_BYTES, FOOTER_BYTES = 12, 4
#: Largest record read [B]: 2 GiB, the largest protocol buffer message.
MOST_RECORD_BYTES = 2**31
#: CRC-32C's polynomial (Castagnoli), reversed; and the mask TFRecord adds to a check.
_POLY, _MASK_DELTA = 0x82F63B78, 0xA282EAD8


def _table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ _POLY if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE = _table()


def masked_crc32c(data: bytes) -> int:
    """TFRecord's check of ``data``: CRC-32C, rotated right by 15 bits plus ``0xa282ead8``."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _CRC_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def records(path: Path) -> Iterator[bytes]:
    """Each record's data, in order.

    Raises
    ------
    InputError
        Naming the file and the byte offset: a length whose check fails (not a TFRecord file),
        a record larger than :data:`MOST_RECORD_BYTES`, a file cut short.
    """
    with Path(path).open("rb") as f:
        offset = 0
        while head := f.read(HEADER_BYTES):
            if len(head) < HEADER_BYTES:
                raise InputError(f"{path}: cut short at byte {offset:,}: not a whole TFRecord record")
            (length,), (check,) = struct.unpack("<Q", head[:8]), struct.unpack("<I", head[8:])
            if masked_crc32c(head[:8]) != check:
                raise InputError(f"{path}: byte {offset:,}: the record's length fails its check: not a TFRecord file")
            if length > MOST_RECORD_BYTES:
                raise InputError(
                    f"{path}: byte {offset:,}: a record of {length:,} bytes, more than {MOST_RECORD_BYTES:,}"
                )
            data = f.read(length)
            if len(data) < length or len(f.read(FOOTER_BYTES)) < FOOTER_BYTES:
                raise InputError(f"{path}: cut short in the record at byte {offset:,}")
            offset += HEADER_BYTES + length + FOOTER_BYTES
            yield data


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if i >= len(buf):
            raise ValueError("varint past the end")
        byte = buf[i]
        value |= (byte & 0x7F) << shift
        i += 1
        if not byte & 0x80:
            return value, i
        shift += 7


def _fields(buf: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """``(field number, wire type, value)`` of a message: an int, or the bytes of a
    length-delimited field."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i)
            yield number, wire, value
        elif wire == 2:
            size, i = _varint(buf, i)
            if i + size > len(buf):
                raise ValueError("field past the end")
            yield number, wire, buf[i : i + size]
            i += size
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            yield number, wire, int.from_bytes(buf[i : i + width], "little")
            i += width
        else:
            raise ValueError(f"wire type {wire}")


@dataclass(frozen=True)
class Feature:
    """What one feature of an Example holds: ``kind`` (``bytes``, ``float`` or ``int64``),
    ``values`` [count] and, for bytes, ``bytes`` [B] (the values' own bytes)."""

    kind: str
    values: int
    bytes: int


_KINDS = {1: "bytes", 2: "float", 3: "int64"}


def _feature(buf: bytes) -> Feature:
    kind, values, size = "bytes", 0, 0
    for number, _wire, body in _fields(buf):
        kind = _KINDS.get(number, kind)
        if not isinstance(body, bytes):
            continue
        for _n, _wire, value in _fields(body):
            if kind == "bytes" and isinstance(value, bytes):
                values, size = values + 1, size + len(value)
            elif kind == "float":
                values += len(value) // 4 if isinstance(value, bytes) else 1
            elif isinstance(value, bytes):  # packed int64 varints: one ends at each byte below 0x80
                values += sum(1 for b in value if b < 0x80)
            else:
                values += 1
    return Feature(kind, values, size)


def example_features(record: bytes) -> dict[str, Feature]:
    """Each feature of a serialized ``tf.train.Example``, by its key.

    Raises
    ------
    ValueError
        The record is not a protocol buffer message of that shape.
    """
    out: dict[str, Feature] = {}
    for number, _wire, features in _fields(record):
        if number != 1 or not isinstance(features, bytes):
            continue
        for n, _w, entry in _fields(features):
            if n != 1 or not isinstance(entry, bytes):
                continue
            key, value = "", b""
            for m, _x, part in _fields(entry):
                if m == 1 and isinstance(part, bytes):
                    key = part.decode("utf-8")
                elif m == 2 and isinstance(part, bytes):
                    value = part
            out[key] = _feature(value)
    return out
