"""`Killable`: a long remote command whose output streams in, and which a user can cancel.

Closing an SSH channel does not stop the command behind it (no pty, no SIGHUP), so cancelling
a `conda create` means killing it on the instance. The command is run as
`echo MARK$$; exec COMMAND`: it then has the shell's pid, and because sshd starts every session
with setsid() (and LocalHost starts a new session too) that pid is also its process group, so a
kill of the group reaches conda's or pip's children as well.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from gpu_tui.core.errors import RemoteError
from gpu_tui.remote.host import Host

__all__ = ["Killable", "PID_MARK", "killable_command", "signal_command", "alive_command"]

log = logging.getLogger(__name__)

PID_MARK = "@gpu-tui-pid "
"""The first output line: this mark and the command's pid (= its process group)."""
CANCEL_STEPS: tuple[tuple[str, float], ...] = (("INT", 5.0), ("TERM", 3.0), ("KILL", 2.0))
"""conda rolls back on SIGINT, so that comes first; each signal gets this long to work."""


def killable_command(command: str) -> str:
    """`command` (one simple command, redirections allowed) so that its pid comes first."""
    return f'echo "{PID_MARK}$$"; exec {command}'


def signal_command(signal: str, pid: int) -> str:
    """Send `signal` (a name: INT, TERM, KILL) to `pid`'s process group, else to `pid` alone
    (a shell without group kill); exits 0 either way."""
    return f"kill -s {signal} -- -{pid} 2>/dev/null || kill -s {signal} {pid} 2>/dev/null; true"


def alive_command(pid: int) -> str:
    """Exits 0 while `pid`'s process group (or `pid`) is still there."""
    return f"kill -0 -- -{pid} 2>/dev/null || kill -0 {pid} 2>/dev/null"


class Killable:
    """Run with `async for line in k.lines()`; `await k.cancel()` (from another task, or after
    the loop itself was cancelled) stops it on the instance."""

    def __init__(self, host: Host, command: str) -> None:
        self.host = host
        self.command = command
        self.pid: int | None = None
        self.exit_status: int | None = None
        self.cancelled = False
        self._ended = asyncio.Event()
        self._pid_seen = asyncio.Event()

    async def lines(self) -> AsyncIterator[str]:
        async with self.host.stream(killable_command(self.command)) as stream:
            async for line in stream:
                if self.pid is None and line.startswith(PID_MARK):
                    with contextlib.suppress(ValueError):
                        self.pid = int(line[len(PID_MARK) :].strip())
                    self._pid_seen.set()
                    continue
                yield line
            # The output ended: the command exited (or the link dropped; nothing left to kill then).
            self.exit_status = await stream.wait_exit()
            self._ended.set()

    @property
    def ended(self) -> bool:
        return self._ended.is_set()

    async def cancel(self) -> bool:
        """Signal the command's process group, escalating; True once it is gone."""
        self.cancelled = True
        if self.ended:
            return True
        if self.pid is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._pid_seen.wait(), 5.0)
            if self.pid is None:
                return self.ended
        for signal, grace in CANCEL_STEPS:
            try:
                await self.host.run(signal_command(signal, self.pid), timeout=10)
                if await self._gone_within(self.pid, grace):
                    return True
            except RemoteError as exc:
                log.warning("%s: cancel (%s) failed: %s", self.host.name, signal, exc.english)
                return self.ended
        return False

    async def _gone_within(self, pid: int, seconds: float) -> bool:
        """Wait for the process group to vanish: the stream's end when it is still read, else `kill -0`."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while True:
            if self.ended:
                return True
            probe = await self.host.run(alive_command(pid), timeout=10)
            if not probe.ok:
                return True
            left = deadline - loop.time()
            if left <= 0:
                return False
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._ended.wait(), min(0.5, left))
