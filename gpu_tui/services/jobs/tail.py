"""Follow a job's log over SSH by byte offset: after a dropped link it resumes where it stopped,
so nothing is lost and nothing is shown twice. Raw bytes only; follow.py makes them lines and
numbers.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.errors import ConnectionLost, RemoteError
from gpu_tui.core.i18n import _
from gpu_tui.remote.backoff import backoff_delay
from gpu_tui.remote.cancels import raise_lost_cancel
from gpu_tui.remote.host import Host
from gpu_tui.services.jobs import runner as jobsvc

__all__ = ["LogTail"]

log = logging.getLogger(__name__)


class LogTail:
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
                raise_lost_cancel()  # `logs -f` told to stop (Ctrl+C) as the link returned
                return
            except RemoteError as exc:
                delay = backoff_delay(attempt, base=0.5, cap=30.0)
                attempt += 1
                log.info("%s: log tail reconnect failed (%s); again in %.1f s", self.inst.name, exc.english, delay)
                await asyncio.sleep(delay)

    async def ensure_connected(self) -> None:
        """Wait for the link (`reconnect`) if it is down now."""
        if not self.host.connected:
            await self._reconnect()

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
