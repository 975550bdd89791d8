"""The streams of an `SshHost` channel (lines, bytes, duplex), and how a lost link is named.

A channel's output ends a moment before its exit status arrives, and the connection can drop
while a read waits: every read races the connection's `lost` future, so a dead link is a
`ConnectionLost` naming the instance, never a hang.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, AnyStr

import asyncssh

from gpu_tui.core.bilingual import Said, say
from gpu_tui.core.errors import ConnectionLost
from gpu_tui.core.i18n import N_
from gpu_tui.remote.host import ByteStream, DuplexStream, LineStream

__all__ = ["EXIT_STATUS_WAIT", "SshBytes", "SshDuplex", "SshLines", "named", "reason"]


EXIT_STATUS_WAIT = 5.0
"""After a stream's output ended, how long to wait for its exit status."""


async def _await_exit_status(
    process: asyncssh.SSHClientProcess[AnyStr], lost: asyncio.Future[BaseException | None]
) -> None:
    """EOF on stdout comes a moment before the exit status: poll for it, briefly. Only for
    callers that need the status (conda operations); the monitors' streams do not wait, since
    a link whose far end died is noticed sooner by their next channel open."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + EXIT_STATUS_WAIT
    while process.exit_status is None and process.exit_signal is None and not lost.done() and loop.time() < deadline:
        await asyncio.sleep(0.01)


class SshLines(LineStream):
    def __init__(self, process: asyncssh.SSHClientProcess[str], lost: asyncio.Future[BaseException | None]) -> None:
        self._process = process
        self._lost = lost

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self._process.stdout:
            if not line:
                # asyncssh's iterator hands out readline()'s '' when EOF arrives while it waits;
                # a real empty line is "\n".
                break
            yield line.rstrip("\r\n")

    async def wait_exit(self) -> int | None:
        await _await_exit_status(self._process, self._lost)
        return self._process.exit_status

    async def chunks(self) -> AsyncIterator[str]:
        read = self._process.stdout.read
        while True:
            chunk = await read(65536)
            if not chunk:
                return
            yield chunk

    @property
    def exit_status(self) -> int | None:
        return self._process.exit_status


class SshBytes(ByteStream):
    def __init__(
        self, process: asyncssh.SSHClientProcess[bytes], lost: asyncio.Future[BaseException | None], name: str
    ) -> None:
        self._process = process
        self._lost = lost
        self._name = name

    async def __aiter__(self) -> AsyncIterator[bytes]:
        # A read on a channel whose connection died can wait forever: race it with the loss.
        while True:
            read = asyncio.ensure_future(self._process.stdout.read(65536))
            racing: set[asyncio.Future[Any]] = {read, self._lost}
            await asyncio.wait(racing, return_when=asyncio.FIRST_COMPLETED)
            if not read.done():
                read.cancel()
                raise ConnectionLost(say(N_("{name}: connection lost"), name=self._name))
            try:
                chunk = read.result()
            except (asyncssh.Error, OSError) as exc:
                raise ConnectionLost(named(self._name, exc)) from None
            if not chunk:
                if self._lost.done():
                    raise ConnectionLost(say(N_("{name}: connection lost"), name=self._name))
                return
            yield chunk

    @property
    def exit_status(self) -> int | None:
        return self._process.exit_status


async def _read_chunks(
    stdout: asyncssh.SSHReader[bytes], lost: asyncio.Future[BaseException | None], name: str
) -> AsyncIterator[bytes]:
    """Chunks of a channel's bytes, raced with the connection's loss (a read on a channel whose
    connection died can wait forever)."""
    while True:
        read = asyncio.ensure_future(stdout.read(65536))
        waiting: set[asyncio.Future[Any]] = {read, lost}
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        if not read.done():
            read.cancel()
            raise ConnectionLost(f"{name}: connection lost")
        try:
            chunk = read.result()
        except (asyncssh.Error, OSError) as exc:
            raise ConnectionLost(f"{name}: {reason(exc)}") from None
        if not chunk:
            if lost.done():
                raise ConnectionLost(f"{name}: connection lost")
            return
        yield chunk


class SshDuplex(DuplexStream):
    def __init__(
        self, process: asyncssh.SSHClientProcess[bytes], lost: asyncio.Future[BaseException | None], name: str
    ) -> None:
        self._process = process
        self._lost = lost
        self._name = name

    def chunks(self) -> AsyncIterator[bytes]:
        return _read_chunks(self._process.stdout, self._lost, self._name)

    def write(self, text: str) -> None:
        try:
            self._process.stdin.write(text.encode("utf-8"))
        except (asyncssh.Error, OSError, BrokenPipeError) as exc:
            raise ConnectionLost(f"{self._name}: {reason(exc)}") from None

    @property
    def exit_status(self) -> int | None:
        return self._process.exit_status


def reason(exc: BaseException) -> Said:
    if isinstance(exc, ConnectionRefusedError):
        return say(N_("connection refused (is the instance running? is the port right?)"))
    if isinstance(exc, asyncssh.DisconnectError):
        text = exc.reason or type(exc).__name__
    else:
        text = str(exc).strip() or type(exc).__name__
    return Said(text, text)  # the server's or the OS's words, as they came


def named(name: str, exc: BaseException) -> Said:
    """`name: why`, the why in the language in force when it is ours."""
    return say("{name}: {reason}", name=name, reason=reason(exc))
