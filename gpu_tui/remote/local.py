"""`LocalHost`: the same interface over local subprocesses, for `gpu-tui local` (no SSH)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from gpu_tui.core.bilingual import say
from gpu_tui.core.errors import CommandTimeout
from gpu_tui.core.i18n import N_
from gpu_tui.remote.host import BytesResult, ByteStream, CommandResult, Host, LineStream

__all__ = ["LocalHost"]


class _LocalLines(LineStream):
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self._process = process

    async def __aiter__(self) -> AsyncIterator[str]:
        assert self._process.stdout is not None
        async for raw in self._process.stdout:
            yield raw.decode("utf-8", "replace").rstrip("\r\n")

    @property
    def exit_status(self) -> int | None:
        return self._process.returncode

    async def wait_exit(self) -> int | None:
        return await self._process.wait()


class _LocalBytes(ByteStream):
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self._process = process

    async def __aiter__(self) -> AsyncIterator[bytes]:
        assert self._process.stdout is not None
        while chunk := await self._process.stdout.read(65536):
            yield chunk

    @property
    def exit_status(self) -> int | None:
        return self._process.returncode


def _kill_group(process: asyncio.subprocess.Process, sig: int = signal.SIGTERM) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


async def _stop(process: asyncio.subprocess.Process) -> None:
    """The command's group ended (SIGTERM, then SIGKILL after 2 s) and the process reaped, so its
    transport is closed before the caller's event loop may end: one left to the garbage collector
    ran its finaliser against a closed loop, during whatever ran then (an `ast.parse`, which then
    failed with "AST constructor recursion depth mismatch", CPython 3.11)."""
    for sig, grace in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 2.0)):
        if process.returncode is not None:
            return
        _kill_group(process, sig)
        with contextlib.suppress(asyncio.TimeoutError, TimeoutError):
            await asyncio.wait_for(process.wait(), grace)


class LocalHost(Host):
    """This machine. Commands run under /bin/sh in the home directory, as they would over SSH."""

    def __init__(self, name: str = "local", *, cwd: Path | None = None) -> None:
        self.name = name
        self._cwd = cwd or Path.home()
        self._closed: asyncio.Future[BaseException | None] | None = None

    @property
    def connected(self) -> bool:
        return self._closed is not None and not self._closed.done()

    async def connect(self) -> None:
        self._closed = asyncio.get_running_loop().create_future()

    async def _spawn(
        self, command: str, *, merge: bool, stdin: bool, stderr: int | None = None
    ) -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_shell(
            command,
            stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr if stderr is not None else asyncio.subprocess.STDOUT if merge else asyncio.subprocess.PIPE,
            cwd=self._cwd,
            start_new_session=True,  # so a stop kills the whole pipeline, not just sh
        )

    async def _communicate(
        self, command: str, timeout: float | None, stdin: str | None
    ) -> tuple[int | None, bytes, bytes]:
        process = await self._spawn(command, merge=False, stdin=stdin is not None)
        try:
            out, err = await asyncio.wait_for(
                process.communicate(stdin.encode() if stdin is not None else None), timeout
            )
        except TimeoutError:
            await _stop(process)
            raise CommandTimeout(
                say(N_("{name}: command did not finish within {seconds:g} s"), name=self.name, seconds=timeout)
            ) from None
        except asyncio.CancelledError:
            await asyncio.shield(_stop(process))  # a second cancel leaves the stop running
            raise
        return process.returncode, out, err

    async def run(self, command: str, *, timeout: float | None = 30.0, stdin: str | None = None) -> CommandResult:
        status, out, err = await self._communicate(command, timeout, stdin)
        return CommandResult(status, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))

    async def run_bytes(self, command: str, *, timeout: float | None = 30.0) -> BytesResult:
        status, out, err = await self._communicate(command, timeout, None)
        return BytesResult(status, out, err.decode("utf-8", "replace"))

    @asynccontextmanager
    async def stream(self, command: str) -> AsyncIterator[LineStream]:
        process = await self._spawn(command, merge=True, stdin=False)
        try:
            yield _LocalLines(process)
        finally:
            await _stop(process)

    @asynccontextmanager
    async def stream_bytes(self, command: str) -> AsyncIterator[ByteStream]:
        process = await self._spawn(command, merge=False, stdin=False, stderr=asyncio.subprocess.DEVNULL)
        try:
            yield _LocalBytes(process)
        finally:
            await _stop(process)

    async def wait_closed(self) -> BaseException | None:
        if self._closed is None:
            return None
        return await asyncio.shield(self._closed)

    async def close(self) -> None:
        if self._closed is not None and not self._closed.done():
            self._closed.set_result(None)
