"""The `Host` interface every transport implements, and the small types it returns."""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass

from gpu_tui.core.errors import RemoteError

__all__ = ["ByteStream", "BytesResult", "CommandResult", "DuplexStream", "Host", "LineStream"]


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What a finished command left: its exit status (None if killed by a signal) and output."""

    exit_status: int | None
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.exit_status == 0


@dataclass(frozen=True, slots=True)
class BytesResult:
    """What `run_bytes` left: stdout exactly as the command wrote it (a job's log, any encoding)."""

    exit_status: int | None
    stdout: bytes
    stderr: str

    @property
    def ok(self) -> bool:
        return self.exit_status == 0


class LineStream(abc.ABC):
    """Lines of a long-running command's stdout (stderr merged), without line endings."""

    @abc.abstractmethod
    def __aiter__(self) -> AsyncIterator[str]: ...

    @property
    @abc.abstractmethod
    def exit_status(self) -> int | None:
        """The exit status once the command ended, else None."""

    async def wait_exit(self) -> int | None:
        """After the output ended: the exit status, waiting briefly for it to arrive."""
        return self.exit_status

    async def chunks(self) -> AsyncIterator[str]:
        """The same output as text chunks as they arrive (lines may be cut anywhere): fewer
        wake-ups than a line at a time. Transports override it; this default rebuilds lines."""
        async for line in self:
            yield line + "\n"


class DuplexStream(abc.ABC):
    """A long-running command whose stdin the caller writes (text) while reading its output."""

    @abc.abstractmethod
    def chunks(self) -> AsyncIterator[bytes]:
        """stdout (stderr merged) as raw byte chunks, undecoded (the watch loop's records carry
        job logs in any encoding); ends at EOF, ConnectionLost if the link dies."""

    @abc.abstractmethod
    def write(self, text: str) -> None:
        """Queue `text` for the command's stdin (never blocks)."""

    @property
    @abc.abstractmethod
    def exit_status(self) -> int | None: ...


class ByteStream(abc.ABC):
    """Raw stdout chunks of a long-running command (a log tail: offsets count these bytes)."""

    @abc.abstractmethod
    def __aiter__(self) -> AsyncIterator[bytes]: ...

    @property
    @abc.abstractmethod
    def exit_status(self) -> int | None:
        """The exit status once the command ended, else None."""


class Host(abc.ABC):
    """One machine: connect once, run commands and long-lived streams over that connection."""

    name: str

    @property
    @abc.abstractmethod
    def connected(self) -> bool: ...

    @abc.abstractmethod
    async def connect(self) -> None:
        """Open the connection; raise a RemoteError subclass saying why not."""

    @abc.abstractmethod
    async def run(self, command: str, *, timeout: float | None = 30.0, stdin: str | None = None) -> CommandResult:
        """Run a shell command line to completion; raise CommandTimeout or ConnectionLost."""

    async def run_bytes(self, command: str, *, timeout: float | None = 30.0) -> BytesResult:
        """Like `run`, but stdout as raw bytes, undecoded. Transports override it; this default
        (for hosts whose `run` is all they have) takes `run`'s text back to UTF-8."""
        res = await self.run(command, timeout=timeout)
        return BytesResult(res.exit_status, res.stdout.encode("utf-8", "surrogateescape"), res.stderr)

    @abc.abstractmethod
    def stream(self, command: str) -> AbstractAsyncContextManager[LineStream]:
        """Start a long-running command; leaving the context stops it."""

    @abc.abstractmethod
    def stream_bytes(self, command: str) -> AbstractAsyncContextManager[ByteStream]:
        """Like `stream`, but stdout as raw bytes, undecoded (stderr is not read)."""

    def duplex(self, command: str) -> AbstractAsyncContextManager[DuplexStream]:
        """Start a long-running command with a writable stdin; leaving the context stops it.
        Transports without one raise RemoteError (callers fall back to one-shot commands)."""
        raise RemoteError(f"{self.name}: this transport cannot keep a command's stdin open")

    @abc.abstractmethod
    async def wait_closed(self) -> BaseException | None:
        """Wait until the connection is gone; return why (None for a clean close)."""

    @abc.abstractmethod
    async def close(self) -> None: ...
