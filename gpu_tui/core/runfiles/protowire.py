"""The protobuf wire format, just enough to read TensorBoard's Event messages without the
protobuf package (the instance may not have it): varints, fixed64, fixed32, length-delimited.

`fields(buf)` yields `(number, wire_type, value)`: an int for a varint, the raw bytes for the
other three. A message that ends inside a field raises `WireError`; unknown fields are just
yielded, so a newer writer's additions are skipped by whoever does not ask for them.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

__all__ = [
    "VARINT",
    "FIXED64",
    "LENGTH",
    "FIXED32",
    "WireError",
    "fields",
    "signed64",
    "packed_varints",
    "packed_fixed",
    "as_double",
    "as_float",
]

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5
_START_GROUP, _END_GROUP = 3, 4
_DOUBLE = struct.Struct("<d")
_FLOAT = struct.Struct("<f")


class WireError(ValueError):
    """Bytes that are not a whole protobuf message."""


def _varint(buf: bytes, pos: int, end: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while pos < end:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise WireError("varint longer than 10 bytes")
    raise WireError("message ends inside a varint")


def fields(buf: bytes, start: int = 0, end: int = -1) -> Iterator[tuple[int, int, int | bytes]]:
    """The fields of the message in `buf[start:end]` (all of `buf` by default), in wire order."""
    pos = start
    stop = len(buf) if end < 0 else end
    while pos < stop:
        key, pos = _varint(buf, pos, stop)
        number, wire = key >> 3, key & 7
        if wire == VARINT:
            value, pos = _varint(buf, pos, stop)
            yield number, wire, value
        elif wire == LENGTH:
            size, pos = _varint(buf, pos, stop)
            if pos + size > stop:
                raise WireError("message ends inside a field")
            yield number, wire, buf[pos : pos + size]
            pos += size
        elif wire == FIXED64 or wire == FIXED32:
            size = 8 if wire == FIXED64 else 4
            if pos + size > stop:
                raise WireError("message ends inside a field")
            yield number, wire, buf[pos : pos + size]
            pos += size
        elif wire == _START_GROUP or wire == _END_GROUP:
            # proto2 groups: nothing TensorBoard writes uses them, and they carry no length
            raise WireError("protobuf groups are not read")
        else:
            raise WireError(f"unknown wire type {wire}")


def signed64(value: int) -> int:
    """An int64 varint as the signed number it encodes (negatives are 10-byte two's complement)."""
    return value - (1 << 64) if value >= 1 << 63 else value


def packed_varints(data: bytes) -> list[int]:
    out = []
    pos, end = 0, len(data)
    while pos < end:
        value, pos = _varint(data, pos, end)
        out.append(value)
    return out


def packed_fixed(data: bytes, code: str) -> list[float]:
    """A packed repeated float (`code` "f") or double ("d") field."""
    size = struct.calcsize("<" + code)
    if len(data) % size:
        raise WireError(f"packed field of {len(data)} bytes is not whole values")
    return list(struct.unpack(f"<{len(data) // size}{code}", data))


def as_double(raw: int | bytes) -> float:
    if not isinstance(raw, bytes) or len(raw) != 8:
        raise WireError("expected a double")
    return float(_DOUBLE.unpack(raw)[0])


def as_float(raw: int | bytes) -> float:
    if not isinstance(raw, bytes) or len(raw) != 4:
        raise WireError("expected a float")
    return float(_FLOAT.unpack(raw)[0])
