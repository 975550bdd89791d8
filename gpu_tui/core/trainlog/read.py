"""A log's bytes (a window of its end, or all of it) as display lines or as a summary.

Pure helpers over core/trainlog/stream and core/trainlog/summary, shared by `jobs`, `logs`, the log screen
and the watch loop. They take the log's raw bytes (text is taken back to the bytes it came
from) and the instance locale's `charset` where known, so a GBK log reads as it was written.
"""

from __future__ import annotations

from typing import TypeVar

from gpu_tui.core.trainlog.decode import as_log_bytes, sniff_encoding
from gpu_tui.core.trainlog.stream import LogStream
from gpu_tui.core.trainlog.summary import LogSummary

__all__ = ["whole_lines", "window_stream", "lines_of", "tail_lines", "summarize"]

_T = TypeVar("_T", str, bytes)


def whole_lines(data: _T, *, from_start: bool) -> _T:
    """The log without its first line when it does not start at the log's beginning: a window
    read from a byte offset starts mid-line (maybe mid-character)."""
    if from_start:
        return data
    cut = data.find("\n" if isinstance(data, str) else b"\n")
    return data[:0] if cut < 0 else data[cut + 1 :]


def window_stream(data: bytes, *, charset: str | None = None, max_lines: int = 5000) -> LogStream:
    """A LogStream for a log whose first bytes are `data` (whole lines): their encoding is read
    off the whole window, and the stream goes on in it for what follows."""
    return LogStream(max_lines=max_lines, charset=charset, switch=sniff_encoding(data, charset))


def lines_of(data: bytes | str, *, from_start: bool, charset: str | None = None) -> list[str]:
    """The display lines of (the end of) a log (progress bars collapsed)."""
    raw = whole_lines(as_log_bytes(data), from_start=from_start)
    stream = window_stream(raw, charset=charset, max_lines=1_000_000)
    stream.feed(raw)
    stream.close()
    return list(stream.lines)


def tail_lines(data: bytes | str, n: int, *, from_start: bool, charset: str | None = None) -> list[str]:
    """The last `n` display lines of (the end of) a log (see lines_of)."""
    if n <= 0:
        return []
    return lines_of(data, from_start=from_start, charset=charset)[-n:]


def summarize(data: bytes | str, *, from_start: bool, charset: str | None = None) -> LogSummary:
    """Progress, losses and failure read from (the end of) a log."""
    raw = whole_lines(as_log_bytes(data), from_start=from_start)
    stream = window_stream(raw, charset=charset, max_lines=64)
    summary = LogSummary()
    summary.consume(stream.feed(raw))
    summary.consume(stream.close())
    return summary
