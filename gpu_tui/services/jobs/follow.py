"""One job's log as a stream of parsed updates: what `gpu-tui logs -f` prints and the log screen
paints.

The log is read once from its end (a window, however big the file), then followed by byte offset
(tail.LogTail), so a dropped link neither loses nor repeats anything. Bytes become display lines
in core/trainlog/stream (progress bars collapse, escapes never reach the terminal; the window's
bytes decide the encoding, core/trainlog/decode) and numbers in core/trainlog/summary. Each
update says what changed since the one before: the new lines, the rows still being redrawn, and
what the log amounts to so far. Whatever the job wrote while the consumer was busy comes as one
update, and `LogInbox` merges updates further for a painter that takes them at its own pace, so a
job writing 10,000 bar states a second costs a few parses of its live row per batch, not one per
state.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, replace

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.errors import RemoteError
from gpu_tui.core.fit.oomfit import OomFit, oom_fit
from gpu_tui.core.trainlog.failures import OOM, TRACEBACK
from gpu_tui.core.trainlog.frames import last_frame
from gpu_tui.core.trainlog.model import Progress
from gpu_tui.core.trainlog.read import whole_lines, window_stream
from gpu_tui.core.trainlog.stream import LogStream, StreamUpdate
from gpu_tui.core.trainlog.summary import LogSummary
from gpu_tui.remote.host import Host
from gpu_tui.services.jobs import runner as jobsvc
from gpu_tui.services.jobs.tail import LogTail

__all__ = ["LogUpdate", "LogFollower", "LogInbox", "wait_for_link", "WINDOW_BYTES", "FEED_SLICE"]

WINDOW_BYTES = 256 * 1024
"""How much of the log's end is read first (logs can be GBs)."""
FEED_SLICE = 8192
"""A 64 KiB read of a firehose is ~10 ms of parsing: it is parsed in slices with a yield between,
so the event loop (the dashboard's keys) never waits that long."""
MAX_AHEAD = 1 << 20
"""Bytes read ahead of parsing at most; past that the tail waits (the rest stays in the SSH
channel's window), so a job faster than the parser cannot fill the laptop's memory."""


@dataclass(frozen=True, slots=True)
class LogUpdate:
    """What the log said since the update before, and what it amounts to so far."""

    lines: tuple[str, ...]
    """New completed display lines, oldest first."""
    live: tuple[str, ...]
    """The rows still being redrawn (the current `\\r` line, stacked bars), top to bottom; they
    replace the previous update's."""
    progress: Progress | None
    last_loss: float | None
    metrics: Mapping[str, float]
    """The latest value of every metric name seen (core/trainlog/summary)."""
    failure: str | None
    """What the log shows went wrong so far."""
    loss_points: tuple[tuple[float, float], ...]
    """The training loss curve as (x, value), x per `loss_axis`."""
    loss_axis: str | None
    log_bytes: int
    """Where the reading stands in the log (bytes from its start)."""
    lines_seen: int
    """Completed lines read since the follow began (the window's included)."""
    ended: bool = False
    """The job has ended and its log was read to the end: the last update."""
    oom_fit: OomFit | None = None
    """What `gpu-tui fit` says of the model the job names, once the log shows it ran out of GPU memory."""
    frame: str | None = None
    """Where the traceback that ended the job says it failed (core/trainlog/frames)."""


def wait_for_link(host: Host, every: float = 0.5) -> Callable[[], Awaitable[None]]:
    """A `reconnect` for a host someone else reconnects (the dashboard's monitor): wait for it."""

    async def wait() -> None:
        while not host.connected:
            await asyncio.sleep(every)

    return wait


class LogFollower:
    """One job's log, from the window of its end on, as LogUpdates.

    `charset`: the job's recorded locale charmap (JobFacts.charset); `max_lines`: the display
    lines the stream keeps; `reconnect` is awaited while the link is down (default: reconnect
    the host with backoff, as the CLI wants).
    """

    def __init__(
        self,
        host: Host,
        inst: InstanceConfig,
        job_id: str,
        *,
        charset: str | None = None,
        window: int = WINDOW_BYTES,
        max_lines: int = 5000,
        reconnect: Callable[[], Awaitable[None]] | None = None,
        poll_seconds: float = 2.0,
        command: str = "",
    ) -> None:
        self.host, self.inst, self.job_id = host, inst, job_id
        self._command = command  # the job's, for what fit says of an OOM (core/fit/oomfit)
        self._fit: OomFit | None = None
        self._frame: str | None = None
        self._noted: str | None = None  # the failure the two above were read for
        self._charset, self._window, self._max_lines = charset, window, max_lines
        self._tail = LogTail(host, inst, job_id, reconnect=reconnect, poll_seconds=poll_seconds)
        self._poll = poll_seconds
        self._stream = LogStream(max_lines=max_lines)
        self._opened = False
        self._summary = LogSummary()
        self._new: list[str] = []
        self._live: tuple[str, ...] = ()
        self._start = 0  # the byte the read part of the log starts at

    @property
    def offset(self) -> int:
        """Bytes of the log received so far; the follow goes on from here."""
        return self._tail.offset

    @property
    def reconnects(self) -> int:
        return self._tail.reconnects

    async def window(self, *, close: bool = False) -> LogUpdate:
        """The first update: the log's last `window` bytes (their first, cut line left out).
        `close`: a last row without its newline counts as a line now (what `logs` prints), and
        what follows starts on a fresh one."""
        await self._tail.ensure_connected()
        got = await jobsvc.read_log_bytes(self.host, self.inst, self.job_id, self._window)
        data = whole_lines(got.data, from_start=got.whole)
        self._start = got.size - len(data)
        self._tail.offset = got.size
        # the window's bytes decide the log's encoding (GBK...); the follow goes on in it
        self._stream = window_stream(data, charset=self._charset, max_lines=self._max_lines)
        self._opened = True
        await self._feed(data)
        if close:
            self._take(self._stream.close())
        return self._update()

    async def updates(self, *, until_finished: bool = False) -> AsyncIterator[LogUpdate]:
        """The window (unless `window()` was read already), then one update per batch of what
        the job writes. With `until_finished`, the last update (`ended`) comes once the job has
        ended and its log was read to the end; else it goes on until the consumer stops."""
        if not self._opened:
            yield await self.window()
        ahead = bytearray()
        arrived, drained = asyncio.Event(), asyncio.Event()
        failed: list[Exception] = []
        finished = False

        async def pump() -> None:
            try:
                async for chunk in self._tail.chunks():
                    ahead.extend(chunk)
                    arrived.set()
                    while len(ahead) >= MAX_AHEAD:
                        drained.clear()
                        await drained.wait()
            except Exception as exc:  # handed to the consumer, which raises it
                failed.append(exc)
                arrived.set()

        async def watch() -> None:
            nonlocal finished
            while True:
                await asyncio.sleep(self._poll)
                try:
                    facts = {f.id: f for f in await jobsvc.list_facts(self.host, self.inst)}
                except RemoteError:
                    continue
                f = facts.get(self.job_id)
                if f is None or f.exit_code is not None or not f.alive:
                    # every byte of the log is in `ahead` once the offset reached its size
                    if f is None or f.log_bytes is None or self.offset >= f.log_bytes:
                        finished = True
                        arrived.set()
                        return

        tasks = [asyncio.create_task(pump())]
        if until_finished:
            tasks.append(asyncio.create_task(watch()))
        try:
            while True:
                if not ahead and not failed and not finished:
                    await arrived.wait()
                arrived.clear()
                if ahead:
                    data = bytes(ahead)
                    ahead.clear()
                    drained.set()
                    await self._feed(data)
                    yield self._update()
                elif failed:
                    raise failed[0]
                elif finished:
                    self._take(self._stream.close())
                    yield self._update(ended=True)
                    return
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _feed(self, data: bytes) -> None:
        for i in range(0, len(data), FEED_SLICE):
            self._take(self._stream.feed(data[i : i + FEED_SLICE]))
            await asyncio.sleep(0)

    def _take(self, update: StreamUpdate) -> None:
        # Only finished lines are parsed here; a bar redrawn 10,000 times a second is read once
        # per update, from the live rows (_update), not once per state.
        summary = self._summary
        for event in update.events:
            if event.final:
                summary.add_line(event.text)
                self._new.append(event.text)
        self._live = update.live

    def _update(self, *, ended: bool = False) -> LogUpdate:
        s = self._summary
        s.set_live(self._live)
        if self._noted != s.failure and s.failure is not None and s.failure.startswith((OOM, TRACEBACK)):
            # once per failure: the lines kept then hold the model's name, the traceback's frames
            self._noted = s.failure
            text = "\n".join(self._stream.lines)
            self._fit = oom_fit(self._command, text) if s.failure.startswith(OOM) else None
            self._frame = last_frame(text) if s.failure.startswith(TRACEBACK) else None
        lines, self._new = tuple(self._new), []
        return LogUpdate(
            lines=lines,
            live=self._live,
            progress=s.progress,
            last_loss=s.last_loss,
            metrics=dict(s.metrics),
            failure=s.failure,
            loss_points=tuple(s.loss_points),
            loss_axis=s.loss_axis,
            log_bytes=self._start + self._stream.bytes_fed,
            lines_seen=self._stream.lines_seen,
            ended=ended,
            oom_fit=self._fit,
            frame=self._frame,
        )


class LogInbox:
    """Updates held for a painter that takes them at its own pace (the log screen, 4 times a
    second): all their new lines (the last `keep`, what the painter shows at most), and the
    newest of everything else."""

    def __init__(self, keep: int) -> None:
        self._lines: deque[str] = deque(maxlen=keep)
        self._latest: LogUpdate | None = None

    def put(self, update: LogUpdate) -> None:
        self._lines.extend(update.lines)
        self._latest = update

    def take(self) -> LogUpdate | None:
        """Everything since the last take as one update; None if nothing came."""
        latest, self._latest = self._latest, None
        if latest is None:
            return None
        lines = tuple(self._lines)
        self._lines.clear()
        return replace(latest, lines=lines)
