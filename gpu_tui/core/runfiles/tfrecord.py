"""TFRecord framing, the container of TensorBoard event files, split from bytes that arrive
in pieces (an event file grows while the job runs).

A record is: the data's length (uint64, little-endian), the masked CRC32C of those 8 bytes,
the data, the masked CRC32C of the data. A record cut off at the end is kept for the next
`feed` and is no error: the writer is mid-write, or the job died there.

The length's CRC is always checked: a wrong length would make every later record garbage, and
checking 8 bytes is cheap. The data's CRC is checked only on request (`check_data=True`): in
pure python it costs a table lookup per byte, which more than doubles the time to read a file
of scalars (benchmarks/bench_runfiles.py), and a flipped bit inside one record can only spoil
that record, which the Event decoder then skips.
"""

from __future__ import annotations

import struct

from gpu_tui.core.i18n import _
from gpu_tui.core.runfiles.crc32c import masked_crc32c

__all__ = ["HEADER", "FOOTER", "RecordSplitter", "frame"]

HEADER = 12
"""Length (8) and its CRC (4)."""
FOOTER = 4
_HEAD = struct.Struct("<QI")
_CRC = struct.Struct("<I")


def frame(data: bytes) -> bytes:
    """`data` as one TFRecord (tests write damaged files with it)."""
    length = struct.pack("<Q", len(data))
    return length + _CRC.pack(masked_crc32c(length)) + data + _CRC.pack(masked_crc32c(data))


class RecordSplitter:
    """Feed it a file's bytes from its start, in pieces of any size; each `feed` returns the
    data of the records it completed.

    After a length that fails its checksum, the file cannot be followed past it: `error` says
    where, and later feeds return nothing. Records whose data fails its checksum (only checked
    with `check_data`) are counted in `bad_records` and left out."""

    __slots__ = ("check_data", "_buf", "_offset", "error", "bad_records")

    def __init__(self, check_data: bool = False) -> None:
        self.check_data = check_data
        self._buf = b""
        self._offset = 0
        self.error: str | None = None
        self.bad_records = 0

    @property
    def offset(self) -> int:
        """Bytes of the file taken as whole records so far."""
        return self._offset

    @property
    def pending(self) -> int:
        """Bytes held for a record that is not whole yet."""
        return len(self._buf)

    def feed(self, data: bytes) -> list[bytes]:
        if self.error is not None:
            return []
        buf = self._buf + data if self._buf else bytes(data)
        records: list[bytes] = []
        pos, size = 0, len(buf)
        check_data = self.check_data
        while size - pos >= HEADER:
            length, length_crc = _HEAD.unpack_from(buf, pos)
            if masked_crc32c(buf[pos : pos + 8]) != length_crc:
                self.error = _(
                    "the event file is damaged at byte {offset} (a record's length fails its checksum): "
                    "read up to there"
                ).format(offset=self._offset + pos)
                self._buf = b""
                self._offset += pos
                return records
            start = pos + HEADER
            end = start + length
            if end + FOOTER > size:
                break
            record = buf[start:end]
            if check_data and masked_crc32c(record) != _CRC.unpack_from(buf, end)[0]:
                self.bad_records += 1
            else:
                records.append(record)
            pos = end + FOOTER
        self._buf = buf[pos:]
        self._offset += pos
        return records
