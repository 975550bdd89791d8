"""HostMonitor stops when told to and goes offline when the link does, even when a library
swallowed the cancel.

Python 3.11's asyncio.wait_for (asyncssh's run() and connect() use it, and so does
SshHost.close) returns the inner result when the cancel arrives in the same tick as that
result. A link that dies ends a command, the session and the close at once, so the cancel that
comes with it was lost: seen with a real sshd, (1) stopped right after the login, while the GPU
count ran: the GPU loop went on retrying and the instance stayed `online` forever; (2) shut down
by `S`: the monitor, cancelled as the instance was marked `stopped`, reported `offline` over it
and kept reconnecting."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from waiting import until

from gpu_tui.core.errors import ConnectionLost, Unreachable
from gpu_tui.remote.host import ByteStream, CommandResult, Host, LineStream
from gpu_tui.services.events import ConnState, MonitorEvent, StateChanged
from gpu_tui.services.monitor.host import HostMonitor


class SwallowingHost(Host):
    """Logs in once (then refuses); `swallow_in` ("run" or "close") swallows the first cancel
    that arrives while it waits, as 3.11's wait_for does when its inner result is ready."""

    name = "box"

    def __init__(self, swallow_in: str) -> None:
        self.swallow_in = swallow_in
        self.swallowed = 0
        self.logins = 0
        self.closing = asyncio.Event()
        self._lost: asyncio.Future[BaseException | None] | None = None

    @property
    def connected(self) -> bool:
        return self._lost is not None and not self._lost.done()

    def lose(self) -> None:
        assert self._lost is not None
        if not self._lost.done():
            self._lost.set_result(None)

    async def _wait_swallowing(self, where: str) -> None:
        try:
            await asyncio.sleep(0.2)
        except asyncio.CancelledError:
            if where != self.swallow_in or self.swallowed:
                raise
            self.swallowed += 1

    async def connect(self) -> None:
        if self.logins:
            raise Unreachable("box: connection refused")
        self.logins += 1
        self._lost = asyncio.get_running_loop().create_future()

    async def run(self, command: str, *, timeout: float | None = 30.0, stdin: str | None = None) -> CommandResult:
        if self.swallow_in == "run":
            self.lose()  # the link drops while the command runs: the session learns it in this tick
        await self._wait_swallowing("run")
        return CommandResult(255, "", "")

    @contextlib.asynccontextmanager
    async def stream(self, command: str) -> AsyncIterator[LineStream]:
        raise ConnectionLost("box: not connected")
        yield  # pragma: no cover

    @contextlib.asynccontextmanager
    async def stream_bytes(self, command: str) -> AsyncIterator[ByteStream]:
        raise ConnectionLost("box: not connected")
        yield  # pragma: no cover

    async def wait_closed(self) -> BaseException | None:
        assert self._lost is not None
        return await asyncio.shield(self._lost)

    async def close(self) -> None:
        if self._lost is not None and self._lost.done() and not self.closing.is_set():
            self.closing.set()
            await self._wait_swallowing("close")


def states(events: list[MonitorEvent]) -> list[ConnState]:
    return [e.state for e in events if isinstance(e, StateChanged)]


async def test_a_cancel_lost_in_a_probe_does_not_keep_the_instance_online() -> None:
    host = SwallowingHost("run")
    events: list[MonitorEvent] = []
    task = asyncio.create_task(HostMonitor(host, events.append, refresh_seconds=0.5).run())
    try:
        await until(lambda: ConnState.OFFLINE in states(events), 10, detail=lambda: f"states: {states(events)}")
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert host.swallowed == 1  # the case this is about did happen
    assert states(events)[:3] == [ConnState.CONNECTING, ConnState.ONLINE, ConnState.OFFLINE]


async def test_a_cancel_lost_in_close_stops_the_monitor() -> None:
    host = SwallowingHost("close")
    events: list[MonitorEvent] = []
    task = asyncio.create_task(HostMonitor(host, events.append, refresh_seconds=0.5).run())
    await until(lambda: ConnState.ONLINE in states(events))
    host.lose()  # shut down: the link closes
    await until(host.closing.is_set)
    task.cancel()  # marked stopped, while the monitor closes the dead link
    await asyncio.wait({task}, timeout=5)
    stopped = task.done()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert host.swallowed == 1
    assert stopped, f"still running after its cancel: {states(events)}"
    assert states(events) == [ConnState.CONNECTING, ConnState.ONLINE]  # nothing over `stopped`
