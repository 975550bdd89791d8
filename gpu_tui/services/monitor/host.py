"""`HostMonitor`: keep one host connected and stream its GPUs, processes and host stats.

Per session on a host: one `nvidia-smi -lms` stream and one stats loop, both long-lived
channels on the single connection. A lost link reconnects with jittered backoff; auth and
host-key failures wait for the user instead of hammering the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from gpu_tui.core.bilingual import say
from gpu_tui.core.errors import AuthFailed, HostKeyChanged, HostKeyUnknown, RemoteError
from gpu_tui.core.i18n import N_, _
from gpu_tui.core.metrics import nvsmi
from gpu_tui.core.metrics.holders import parse_scan
from gpu_tui.core.metrics.hoststats import CpuTimes, parse_probe
from gpu_tui.core.models import GpuError, GpuErrorKind, GpuFrame
from gpu_tui.remote.backoff import backoff_delay
from gpu_tui.remote.cancels import cancel_and_wait, raise_lost_cancel
from gpu_tui.remote.host import Host
from gpu_tui.services.events import (
    ConnState,
    GpuErrorChanged,
    GpuFrameReceived,
    HoldersReceived,
    HostStatsReceived,
    MonitorEvent,
    ProcessesReceived,
    StateChanged,
)
from gpu_tui.services.monitor import probes
from gpu_tui.services.monitor.amdwatch import amd_stream
from gpu_tui.services.monitor.watchloop import WatchLoop

__all__ = ["HostMonitor"]

log = logging.getLogger(__name__)

# after nvidia-smi fails (driver gone, no GPU), try again this often while the host stays up
GPU_RETRY_SECONDS = 15.0


class _GpuStreamReader:
    """One GPU stream's text as it arrives -> the monitor's frame and error events."""

    __slots__ = ("asm", "error", "got_frame", "tail", "_monitor")

    def __init__(self, asm: nvsmi.FrameAssembler, monitor: HostMonitor, error: GpuError | None) -> None:
        self.asm = asm
        self.error = error
        """The GPU error last reported (kept across streams: a frame clears it)."""
        self.got_frame = False
        self.tail: list[str] = []
        """Until the first frame, the last non-blank lines: what a stream without frames said."""
        self._monitor = monitor

    def take(self, chunk: str) -> None:
        asm = self.asm
        outs: list[GpuFrame | GpuError]
        if self.got_frame:
            outs = asm.feed_chunk(chunk)  # the steady state: the tick's chunk parsed at once
        else:
            outs = []
            for line in asm.lines(chunk):
                out = asm.feed(line)
                if isinstance(out, GpuFrame):
                    self.got_frame = True
                elif not self.got_frame and line.strip():
                    self.tail = (self.tail + [line])[-5:]
                if out is not None:
                    outs.append(out)
        mon = self._monitor
        for out in outs:
            if isinstance(out, GpuFrame):
                mon._gpu_count = len(out.gpus)
                if self.error is not None:
                    self.error = None
                    mon._emit(GpuErrorChanged(mon.name, None))
                mon._emit(GpuFrameReceived(mon.name, out))
            elif out != self.error:
                self.error = out
                mon._emit(GpuErrorChanged(mon.name, out))


class HostMonitor:
    """Runs until cancelled; reports through `emit` (called on the event loop, must not block)."""

    def __init__(
        self,
        host: Host,
        emit: Callable[[MonitorEvent], None],
        *,
        refresh_seconds: float = 1.0,
        stats_seconds: float = 5.0,
        clock: Callable[[], float] = time.time,
        watch: WatchLoop | None = None,
        gpu_scope: Callable[[], Awaitable[str | None]] | None = None,
    ) -> None:
        self.host = host
        self.gpu_scope = gpu_scope
        """On a cluster login node: where the GPUs are, as a command prefix that runs nvidia-smi
        inside a running job's allocation (`srun --overlap --jobid=ID`), or None while no job runs."""
        self.watch = watch
        """When set, host stats and compute apps come from the on-instance watch loop, and the
        stats loop runs only where that loop cannot (its fallback)."""
        self.name = host.name
        self._emit = emit
        self._refresh = refresh_seconds
        self._stats_seconds = stats_seconds
        self._clock = clock
        self._wake = asyncio.Event()
        self.state = ConnState.CONNECTING
        self._gpu_count: int | None = None  # learned per host; kept across reconnects
        self._scope_seen: str | None = None
        self._gpus_elsewhere = False
        self._gpu_task: asyncio.Task[None] | None = None
        """The session's nvidia-smi stream (None between sessions, or while elsewhere)."""

    def gpus_from_elsewhere(self, elsewhere: bool) -> None:
        """Another source reports this host's GPUs (its lab's Prometheus, issue 26): no nvidia-smi
        stream runs here while it does. False: the stream starts again (the next session's, or
        now while connected)."""
        if elsewhere == self._gpus_elsewhere:
            return
        self._gpus_elsewhere = elsewhere
        if elsewhere and self._gpu_task is not None:
            task, self._gpu_task = self._gpu_task, None
            task.cancel()  # its stream's channel closes as it unwinds
            task.add_done_callback(lambda t: t.cancelled() or t.exception())  # retrieved: never "never retrieved"
        elif not elsewhere and self.state is ConnState.ONLINE and self.host.connected:
            self._gpu_task = asyncio.create_task(self._gpu_loop(), name=f"{self.name}-gpu")

    def retry_now(self) -> None:
        """Skip the current wait (backoff, or a failure waiting for the user) and connect again."""
        self._wake.set()

    def _state(
        self,
        state: ConnState,
        *,
        message: str | None = None,
        retry_at: float | None = None,
        fingerprint: str | None = None,
        key_line: str | None = None,
    ) -> None:
        raise_lost_cancel()
        self.state = state
        self._emit(
            StateChanged(
                self.name, state, message=message, retry_at=retry_at, fingerprint=fingerprint, key_line=key_line
            )
        )

    async def _sleep_or_wake(self, seconds: float | None) -> None:
        self._wake.clear()
        # asyncio.timeout rather than wait_for: see JobWatcher.run (a cancel racing the timeout)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                await self._wake.wait()

    async def run(self) -> None:
        attempt = 0
        try:
            while True:
                self._state(ConnState.CONNECTING)
                try:
                    await self.host.connect()
                except AuthFailed as exc:
                    self._state(ConnState.AUTH_FAILED, message=exc.message)
                    await self._sleep_or_wake(None)
                    continue
                except (HostKeyChanged, HostKeyUnknown) as exc:
                    changed = isinstance(exc, HostKeyChanged)
                    state = ConnState.HOST_KEY_CHANGED if changed else ConnState.HOST_KEY_UNKNOWN
                    self._state(state, message=exc.message, fingerprint=exc.fingerprint, key_line=exc.key_line)
                    await self._sleep_or_wake(None)
                    continue
                except RemoteError as exc:
                    delay = backoff_delay(attempt)
                    attempt += 1
                    self._state(ConnState.OFFLINE, message=exc.message, retry_at=self._clock() + delay)
                    await self._sleep_or_wake(delay)
                    continue
                attempt = 0
                self._state(ConnState.ONLINE)
                reason = await self._session()
                await self.host.close()
                # first retry comes fast: most drops are a blip or a restarted sshd
                delay = backoff_delay(0)
                attempt = 1
                lost = _("link lost: {reason}").format(reason=reason)
                self._state(ConnState.OFFLINE, message=lost, retry_at=self._clock() + delay)
                await self._sleep_or_wake(delay)
        finally:
            await self.host.close()

    async def _session(self) -> str:
        stats = asyncio.create_task(self._stats_or_watch(), name=f"{self.name}-stats")
        if not self._gpus_elsewhere:
            self._gpu_task = asyncio.create_task(self._gpu_loop(), name=f"{self.name}-gpu")
        try:
            exc = await self.host.wait_closed()
        finally:
            gpu, self._gpu_task = self._gpu_task, None
            await cancel_and_wait([stats] if gpu is None else [stats, gpu])
        return str(exc) if exc else _("connection closed")

    async def _gpu_loop(self) -> None:
        error: GpuError | None = None
        legacy = False
        while True:
            raise_lost_cancel()  # told to stop while a command ran (3.11's wait_for may drop it)
            asm = nvsmi.FrameAssembler(clock=self._clock)
            prefix = ""
            if self.gpu_scope is not None:
                scope = await self._scope()
                if scope is None:
                    error = None if error is None or error.kind is not GpuErrorKind.NO_JOB else error
                    if error is None:
                        error = nvsmi.gpu_error(
                            GpuErrorKind.NO_JOB, say(N_("no running job: a SLURM job's GPUs show here while it runs"))
                        )
                        self._emit(GpuErrorChanged(self.name, error))
                    await asyncio.sleep(GPU_RETRY_SECONDS)
                    continue
                if scope != self._scope_seen:
                    self._scope_seen, self._gpu_count = scope, None  # another job: its own GPUs
                prefix = scope
            # Knowing the GPU count up front, the first tick is a frame as soon as its rows are
            # in; otherwise it closes only when the next tick starts, a whole interval later.
            if self._gpu_count is None:
                self._gpu_count = await self._count_gpus(prefix)
            asm.expected = self._gpu_count
            reader = _GpuStreamReader(asm, self, error)
            try:
                command = prefix + probes.gpu_stream_command(self._refresh, legacy=legacy)
                async with self.host.stream(command) as lines:
                    # a chunk at a time: one wake-up per tick, not one per GPU row
                    take = reader.take
                    async for chunk in lines.chunks():
                        take(chunk)
                    take("\n")  # a last line without its newline
                    status = lines.exit_status
            except RemoteError as exc:
                error = reader.error
                log.info("%s: gpu stream: %s", self.name, exc)
                await asyncio.sleep(GPU_RETRY_SECONDS)
                continue
            error, got_frame, tail = reader.error, reader.got_frame, reader.tail
            if not got_frame and not legacy and nvsmi.unsupported_field("\n".join(tail)) == "mig.mode.current":
                legacy = True  # an old driver: ask again without the MIG field, at once
                continue
            found = error or nvsmi.detect_error("\n".join(tail), status)
            if found is not None and found.kind is GpuErrorKind.NOT_FOUND and not prefix and await self._amd_loop():
                error = None  # AMD GPUs, read until the channel ended: look again
                await asyncio.sleep(GPU_RETRY_SECONDS)
                continue
            if error is None:
                found = found or GpuError(GpuErrorKind.UNKNOWN, _("nvidia-smi exited ({status})").format(status=status))
                error = found
                self._emit(GpuErrorChanged(self.name, found))
            await asyncio.sleep(GPU_RETRY_SECONDS)

    async def _amd_loop(self) -> bool:
        """No nvidia-smi: the instance's AMD GPUs through amd-smi or rocm-smi, while the channel
        lasts (False at once where neither exists)."""
        # the stream may have said `nvidia-smi not found` already: the first frame clears it
        shown: list[GpuError | bool | None] = [True]

        def reading(got: GpuFrame | GpuError) -> None:
            if isinstance(got, GpuFrame):
                self._gpu_count = len(got.gpus)
                if shown[0] is not None:
                    shown[0] = None
                    self._emit(GpuErrorChanged(self.name, None))
                self._emit(GpuFrameReceived(self.name, got))
            elif got != shown[0]:
                shown[0] = got
                self._emit(GpuErrorChanged(self.name, got))

        return await amd_stream(self.host, self._refresh, reading)

    async def _scope(self) -> str | None:
        assert self.gpu_scope is not None
        try:
            return await self.gpu_scope()
        except RemoteError as exc:
            log.info("%s: SLURM queue: %s", self.name, exc)
            return None

    async def _count_gpus(self, prefix: str = "") -> int | None:
        try:
            res = await self.host.run(prefix + probes.gpu_count_command(), timeout=15)
        except RemoteError:
            return None
        count = sum(1 for line in res.stdout.splitlines() if line.strip().isdigit())
        return count if res.ok and count else None

    async def _stats_or_watch(self) -> None:
        if self.watch is not None:
            self.watch.reset()
            await self.watch.run_session()  # returns only when it falls back to polling
            if not self.host.connected:
                return
        await self._stats_loop()

    async def _stats_loop(self) -> None:
        prev: CpuTimes | None = None
        while True:
            block: list[str] = []
            try:
                async with self.host.stream(probes.stats_loop_command(self._stats_seconds)) as lines:
                    async for line in lines:
                        if line != probes.END_MARK:
                            block.append(line)
                            continue
                        prev = self._report_block(block, prev)
                        block = []
            except RemoteError as exc:
                log.info("%s: stats loop: %s", self.name, exc)
            await asyncio.sleep(GPU_RETRY_SECONDS)

    def _report_block(self, block: list[str], prev: CpuTimes | None) -> CpuTimes | None:
        if probes.APPS_MARK in block:
            cut = block.index(probes.APPS_MARK)
            stats_lines, apps_lines = block[:cut], block[cut + 1 :]
            if probes.HOLDERS_MARK in apps_lines:
                at = apps_lines.index(probes.HOLDERS_MARK)
                apps_lines, scan = apps_lines[:at], parse_scan("\n".join(apps_lines[at + 1 :]))
                self._emit(HoldersReceived(self.name, scan))
            procs = nvsmi.parse_compute_apps("\n".join(apps_lines))
            self._emit(ProcessesReceived(self.name, tuple(procs)))
        else:
            stats_lines = block
        stats, cpu = parse_probe(stats_lines, self._clock(), prev)
        self._emit(HostStatsReceived(self.name, stats))
        return cpu
