"""The log corpus (tests/data/logs) as the log rules are given it: every LogStream event, bar
states included, and every live row, in log order."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from gpu_tui.core.trainlog.stream import LogStream

LOGS = Path(__file__).resolve().parent / "data" / "logs"
CASES = sorted(LOGS.rglob("*.log"))
IDS = [str(p.relative_to(LOGS)) for p in CASES]

__all__ = ["LOGS", "CASES", "IDS", "stream_lines"]


@cache
def stream_lines(path: Path) -> tuple[str, ...]:
    """What parse_line is given for the log at `path`, fed in 4 KiB chunks."""
    stream, out = LogStream(), []
    data = path.read_bytes()
    for i in range(0, len(data), 4096):
        update = stream.feed(data[i : i + 4096])
        out += [e.text for e in update.events]
        out += update.live
    out += [e.text for e in stream.close().events]
    return tuple(out)
