"""What the autostop watchdog on an instance is doing, read from its log (pure).

The watchdog (services/autostop.sh) writes one line per decision to `<state_dir>/autostop.log`:

    2026-11-30T10:00:00Z armed pid=4242 idle=900s every=15s gpu<5% cpu<0.50 after_job=- before=no ...
    2026-11-30T10:00:15Z busy 0/900s gpu=87 cpu=0.02 jobs=1 why=1 gpu-tui job(s) running
    2026-11-30T10:15:30Z idle 120/900s gpu=0,3 cpu=0.05 jobs=0
    2026-11-30T10:28:30Z firing 900/900s gpu=0 cpu=0.01 jobs=0
    2026-11-30T10:28:30Z before running (at most 600s) | before exit 0
    2026-11-30T10:28:41Z shutdown /usr/bin/shutdown | shutdown exit 0, waiting for the power-off
    ... failed: ... | stopped (signal) | cancelled

`parse_status` turns the status probe's output (`now`, `pid`, `alive`, `@armed`, `@failed`, `@line`)
into an `AutostopStatus`, whose `summary()` is what the dashboard shows.
"""

from __future__ import annotations

import calendar
import re
import time
from dataclasses import dataclass, replace

from gpu_tui.core.i18n import _
from gpu_tui.core.units import format_duration_exact_s

__all__ = ["AutostopStatus", "parse_status", "parse_line", "LogLine"]

_LINE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ) ([a-z]+):? ?(.*)$")
_HELD = re.compile(r"^(\d+)/(\d+)s\b")
_KINDS = {"armed", "busy", "idle", "firing", "before", "shutdown", "failed", "stopped", "cancelled"}


@dataclass(frozen=True, slots=True)
class LogLine:
    """One decision line: when (instance clock, epoch seconds), what kind, and the rest."""

    epoch: int
    kind: str
    rest: str
    text: str


def parse_line(text: str) -> LogLine | None:
    """A watchdog line, or None for anything else (the before command's own output)."""
    m = _LINE.match(text.strip())
    if m is None or m[2] not in _KINDS:
        return None
    try:
        epoch = calendar.timegm(time.strptime(m[1], "%Y-%m-%dT%H:%M:%SZ"))
    except ValueError:
        return None
    return LogLine(epoch, m[2], m[3], text.strip())


def _fields(rest: str) -> dict[str, str]:
    """`a=1 b=2 why=free text`: key=value words; `why` takes the rest of the line."""
    out: dict[str, str] = {}
    head, sep, why = rest.partition(" why=")
    for word in head.split():
        key, eq, value = word.partition("=")
        if eq:
            out[key] = value
    if sep:
        out["why"] = why
    return out


@dataclass(frozen=True, slots=True)
class AutostopStatus:
    """The watchdog as last seen. `seconds_left` counts down from the moment of reading; the
    dashboard subtracts the time since (see `summary`)."""

    armed: bool
    """A watchdog process is alive on the instance."""
    state: str
    """off | watching (no check yet) | busy | idle | stopping (before / shutdown running) | failed"""
    idle_seconds: int | None = None
    """The idle time it waits for."""
    idle_for_seconds: int | None = None
    """How long it has been idle at the last check (0 when busy)."""
    seconds_left: int | None = None
    """Until it fires, as of reading (None unless idle)."""
    reason: str | None = None
    """Why it is busy (`GPU 0 at 87%`, `1 gpu-tui job(s) running`, `CPU at 1.02 cores`), or what failed."""
    after_job: str | None = None
    pid: int | None = None
    last_line: str | None = None
    """The last decision line, verbatim."""
    failure: str | None = None
    """The latest `failed` line since it was armed (a shutdown command that did not work)."""

    def summary(self, elapsed: float = 0.0) -> str:
        """A few words for the instance row: `autostop in 12m30s`, `autostop armed (busy)`,
        `autostop: shutting down`, `` when off. `elapsed`: seconds since this was read."""
        if not self.armed:
            return ""
        if self.state == "stopping":
            return _("autostop: shutting down")
        if self.state == "failed":
            return _("autostop: shutdown failed")
        if self.state == "idle" and self.seconds_left is not None:
            left = format_duration_exact_s(max(1, round(self.seconds_left - elapsed)))
            text = _("autostop in {duration}").format(duration=left)
        else:
            text = _("autostop armed (busy)") if self.state == "busy" else _("autostop armed")
        return text + (_(" (last shutdown failed)") if self.failure else "")


_OFF = AutostopStatus(armed=False, state="off")


def parse_status(text: str) -> AutostopStatus:
    """The status probe's output -> AutostopStatus (`off` for anything unreadable)."""
    now: int | None = None
    pid: int | None = None
    alive = False
    armed_line: LogLine | None = None
    failed_line: LogLine | None = None
    last: LogLine | None = None
    for raw in text.splitlines():
        key, _sep, value = raw.partition(" ")
        if key == "now" and value.strip().isdigit():
            now = int(value)
        elif key == "pid" and value.strip().isdigit():
            pid = int(value)
        elif key == "alive":
            alive = value.strip() == "1"
        elif key in ("@armed", "@failed", "@line"):
            line = parse_line(value)
            if line is None:
                continue
            if key == "@line":
                last = line
            elif key == "@armed" and line.kind == "armed":
                armed_line = line
            elif key == "@failed" and line.kind == "failed":
                failed_line = line
    armed_fields = _fields(armed_line.rest) if armed_line else {}
    idle_total = _seconds(armed_fields.get("idle"))
    after_job = armed_fields.get("after_job")
    after_job = None if after_job in (None, "-") else after_job
    if not alive:
        return AutostopStatus(
            armed=False,
            state="off",
            idle_seconds=idle_total,
            after_job=after_job,
            last_line=last.text if last else None,
        )
    failure = None
    if failed_line is not None and (armed_line is None or failed_line.epoch >= armed_line.epoch):
        failure = failed_line.rest
    status = AutostopStatus(
        armed=True,
        state="watching",
        idle_seconds=idle_total,
        after_job=after_job,
        pid=pid,
        last_line=last.text if last else None,
        failure=failure,
    )
    if last is None or last.kind == "armed":
        return status
    held = _HELD.match(last.rest)
    if held:
        status = _with(status, idle_for_seconds=int(held[1]), idle_seconds=int(held[2]))
    if last.kind == "busy":
        return _with(status, state="busy", idle_for_seconds=0, reason=_fields(last.rest).get("why"))
    if last.kind == "idle" and held:
        age = max(0, now - last.epoch) if now is not None else 0
        left = max(0, int(held[2]) - int(held[1]) - age)
        return _with(status, state="idle", seconds_left=left)
    if last.kind in ("firing", "before", "shutdown"):
        return _with(status, state="stopping")
    if last.kind == "failed":
        return _with(status, state="failed", reason=last.rest)
    return status


def _with(status: AutostopStatus, **changes: object) -> AutostopStatus:
    return replace(status, **changes)  # type: ignore[arg-type]


def _seconds(text: str | None) -> int | None:
    if text and text.endswith("s") and text[:-1].isdigit():
        return int(text[:-1])
    return None
