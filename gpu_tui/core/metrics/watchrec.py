"""The watch loop's output (services/monitor/watch.sh): framed records, parsed from chunks of any size.

Framing lines start with `@@w<NONCE> ` (the nonce is the client's, new per loop, so a job's log
cannot fake one). The loop prints `hello VERSION PID` once, or `fail REASON` (or `missing`,
before the script is installed), then one record per tick::

    @@wN rec SEQ
    cpu ... / ncpu / load / mem ... / up ... / disk ...    host stats (core.hoststats format)
    @@wN jobs                 the job listing (core.jobs format), only when it changed
    @@wN autostop             the watchdog status probe's lines (core.autostop), when changed
    @@wN apps                 compute-apps rows (core.nvsmi), when they changed
    @@wN holders              who holds each GPU's device file (core.metrics.holders), when changed
    @@wN log ID               the end of job ID's log, raw, then a newline the loop adds
    @@wN endlog
    @@wN end

Pure: bytes in, values out. The framing and every section but the logs are UTF-8 text (invalid
bytes become U+FFFD); a log's end stays bytes, for core/trainlog/decode to decode in its own encoding.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["WatchHello", "WatchFail", "WatchRecord", "RecordParser", "WatchOutput"]


@dataclass(frozen=True, slots=True)
class WatchHello:
    version: int
    pid: int | None


@dataclass(frozen=True, slots=True)
class WatchFail:
    """The loop refused to run (`missing`: the script is not installed)."""

    reason: str


@dataclass(slots=True)
class WatchRecord:
    seq: int
    stats: list[str] = field(default_factory=list)
    jobs: str | None = None
    """The listing text when the loop sent one (it changed); None: as before."""
    autostop: str | None = None
    apps: str | None = None
    holders: str | None = None
    logs: dict[str, bytes] = field(default_factory=dict)
    """Job id -> the end of its log, exactly as `tail -c` printed it (raw bytes)."""


WatchOutput = WatchHello | WatchFail | WatchRecord

_STATS, _JOBS, _AUTOSTOP, _APPS, _LOG, _NONE, _SKIP, _HOLDERS = range(8)
"""_SKIP: after a log's end, until the next section (the loop sends nothing there)."""
_SECTIONS = {"jobs": _JOBS, "autostop": _AUTOSTOP, "apps": _APPS, "holders": _HOLDERS}


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


class RecordParser:
    """Feed it the stream's bytes in chunks; it returns what each chunk completed.

    Lines outside any record (a shell's error text before the loop started) are kept in `stray`
    (the last few), so a refusal can be explained."""

    __slots__ = ("_mark", "_cut", "_buf", "_rec", "_section", "_lines", "_log_id", "stray")

    def __init__(self, nonce: str) -> None:
        self._mark = f"@@w{nonce} ".encode()
        self._cut = len(self._mark)
        self._buf = b""
        self._rec: WatchRecord | None = None
        self._section = _NONE
        self._lines: list[bytes] = []
        self._log_id = ""
        self.stray: list[str] = []

    def feed(self, chunk: bytes) -> list[WatchOutput]:
        data = self._buf + chunk if self._buf else chunk
        lines = data.split(b"\n")
        self._buf = lines.pop()
        out: list[WatchOutput] = []
        mark, cut = self._mark, self._cut
        for line in lines:
            if line.startswith(mark):
                item = self._control(line[cut:].decode("utf-8", "replace"))
                if item is not None:
                    out.append(item)
            elif self._section is _NONE:
                if line.strip():
                    self.stray = (self.stray + [_text(line).rstrip("\r")])[-5:]
            else:
                self._lines.append(line)
        return out

    def _close_section(self) -> None:
        rec, lines, section = self._rec, self._lines, self._section
        self._lines = []
        if rec is None:
            return
        if section is _STATS:
            rec.stats = [_text(line) for line in lines]
        elif section is _JOBS:
            rec.jobs = _text(b"\n".join(lines))
        elif section is _AUTOSTOP:
            rec.autostop = _text(b"\n".join(lines))
        elif section is _APPS:
            rec.apps = _text(b"\n".join(lines))
        elif section is _HOLDERS:
            rec.holders = _text(b"\n".join(lines))
        elif section is _LOG:
            rec.logs[self._log_id] = b"\n".join(lines)

    def _control(self, rest: str) -> WatchOutput | None:
        word, _, arg = rest.rstrip("\r").partition(" ")
        if word == "rec":
            self._rec = WatchRecord(int(arg) if arg.isdigit() else 0)
            self._section = _STATS
            self._lines = []
            return None
        if word == "end":
            self._close_section()
            rec, self._rec = self._rec, None
            self._section = _NONE
            return rec
        if word in _SECTIONS:
            self._close_section()
            self._section = _SECTIONS[word]
            return None
        if word == "log":
            self._close_section()
            self._section, self._log_id = _LOG, arg
            return None
        if word == "endlog":
            self._close_section()
            self._section = _NONE if self._rec is None else _SKIP
            return None
        self._section = _NONE
        if word == "hello":
            parts = arg.split()
            version = int(parts[0]) if parts and parts[0].isdigit() else 0
            pid = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
            return WatchHello(version, pid)
        if word == "fail":
            return WatchFail(arg or "the watch loop refused to start")
        if word == "missing":
            return WatchFail("missing")
        return None
