"""CRC32C (Castagnoli), as TFRecord frames use it, in pure python (the stdlib has only zlib's
CRC32, another polynomial): a table, one lookup a byte."""

from __future__ import annotations

__all__ = ["crc32c", "masked_crc32c"]


def _table() -> list[int]:
    table = []
    for n in range(256):
        crc = n
        for _bit in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _table()


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    table = _TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    """TFRecord's masked form: a CRC stored next to the data it covers reads as a different
    number from the CRC of itself."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
