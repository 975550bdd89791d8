"""Follow a job's log over SSH by byte offset: after a dropped link it resumes where it stopped,
so nothing is lost and nothing is shown twice. Bytes become lines in core/trainlog/stream.py.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.errors import ConnectionLost, RemoteError
from gpu_tui.core.i18n import _
from gpu_tui.core.trainlog.stream import LogStream
from gpu_tui.remote.backoff import backoff_delay
from gpu_tui.remote.host import Host
from gpu_tui.services.jobs import runner as jobsvc

__all__ = ["LogFollower"]

log = logging.getLogger(__name__)


class LogFollower:
    """`tail -F` of one job's log from a byte offset, surviving reconnects.

    `reconnect` is awaited after the link dropped (the CLI reconnects its own host with
    backoff; the dashboard passes a function that waits for its monitor to reconnect).
    """

    def __init__(
        self,
        host: Host,
        inst: InstanceConfig,
        job_id: str,
        offset: int = 0,
        *,
        reconnect: Callable[[], Awaitable[None]] | None = None,
        poll_seconds: float = 2.0,
    ) -> None:
        self.host, self.inst, self.job_id = host, inst, job_id
        self.offset = offset
        """Bytes of the log already delivered; the next read starts here."""
        self.reconnects = 0
        self._reconnect = reconnect or self._reconnect_host
        self._poll = poll_seconds

    async def _reconnect_host(self) -> None:
        attempt = 0
        while True:
            try:
                await self.host.connect()
                return
            except RemoteError as exc:
                delay = backoff_delay(attempt, base=0.5, cap=30.0)
                attempt += 1
                log.info("%s: log tail reconnect failed (%s); again in %.1f s", self.inst.name, exc.english, delay)
                await asyncio.sleep(delay)

    async def chunks(self) -> AsyncIterator[bytes]:
        """Raw bytes of the log from `offset` on, forever (stop by leaving the loop)."""
        while True:
            try:
                if not self.host.connected:
                    raise ConnectionLost(_("{name}: not connected").format(name=self.inst.name))
                command = jobsvc.follow_log_command(self.inst, self.job_id, self.offset)
                async with self.host.stream_bytes(command) as out:
                    async for chunk in out:
                        self.offset += len(chunk)
                        yield chunk
                # tail ended by itself (killed on the instance): start again from the offset
                await asyncio.sleep(self._poll)
            except (ConnectionLost, OSError) as exc:
                log.info("%s: log tail of %s dropped at byte %d: %s", self.inst.name, self.job_id, self.offset, exc)
                self.reconnects += 1
                await self._reconnect()

    async def lines(self, *, until_finished: bool = False, stream: LogStream | None = None) -> AsyncIterator[str]:
        """Completed display lines from `offset` on. With `until_finished`, stop once the job has
        ended and its log has been read to the end. `stream`: one that knows the log's encoding
        (core/trainlog/read.window_stream of the window read before), else a fresh UTF-8 one."""
        stream = stream if stream is not None else LogStream()
        queue: asyncio.Queue[bytes | BaseException | None] = asyncio.Queue()

        async def pump() -> None:
            try:
                async for chunk in self.chunks():
                    await queue.put(chunk)
            except Exception as exc:  # handed to the reader, which raises it
                await queue.put(exc)

        async def watch() -> None:
            while True:
                await asyncio.sleep(self._poll)
                try:
                    facts = {f.id: f for f in await jobsvc.list_facts(self.host, self.inst)}
                except RemoteError:
                    continue
                f = facts.get(self.job_id)
                if f is None or (f.exit_code is not None or not f.alive):
                    if f is None or f.log_bytes is None or self.offset >= f.log_bytes:
                        await queue.put(None)
                        return

        tasks = [asyncio.create_task(pump())]
        if until_finished:
            tasks.append(asyncio.create_task(watch()))
        try:
            while True:
                chunk = await queue.get()
                if chunk is None:
                    break
                if isinstance(chunk, BaseException):
                    raise chunk
                for line in stream.feed(chunk).lines:
                    yield line
            for line in stream.close().lines:
                yield line
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
