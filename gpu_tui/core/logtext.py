"""A log's text (a window of its end, or all of it) as display lines or as a summary.

Pure helpers over core/logstream and core/logsummary, shared by `jobs`, `logs` and the log screen.
"""

from __future__ import annotations

from gpu_tui.core.logstream import LogStream
from gpu_tui.core.logsummary import LogSummary

__all__ = ["whole_lines", "lines_of", "tail_lines", "summarize"]


def whole_lines(text: str, *, from_start: bool) -> str:
    """The text without its first line when it does not start at the log's beginning: a window
    read from a byte offset starts mid-line."""
    if from_start:
        return text
    cut = text.find("\n")
    return "" if cut < 0 else text[cut + 1 :]


def lines_of(text: str, *, from_start: bool) -> list[str]:
    """The display lines of a log's text (progress bars collapsed)."""
    stream = LogStream(max_lines=1_000_000)
    stream.feed(whole_lines(text, from_start=from_start).encode("utf-8", "replace"))
    stream.close()
    return list(stream.lines)


def tail_lines(text: str, n: int, *, from_start: bool) -> list[str]:
    """The last `n` display lines of a log's text (see lines_of)."""
    if n <= 0:
        return []
    return lines_of(text, from_start=from_start)[-n:]


def summarize(text: str, *, from_start: bool) -> LogSummary:
    """Progress, losses and failure read from (the end of) a log."""
    stream = LogStream(max_lines=64)
    summary = LogSummary()
    summary.consume(stream.feed(whole_lines(text, from_start=from_start).encode("utf-8", "replace")))
    summary.consume(stream.close())
    return summary
