"""`StubHost`: a Host that is always connected and does nothing, for UI tests that need a
screen to ask a host one thing (override `run`, `run_bytes`, or `stream`). No SSH, no root."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

from gpu_tui.remote.host import BytesResult, ByteStream, CommandResult, Host, LineStream


class StubHost(Host):
    name = "stub"

    @property
    def connected(self) -> bool:
        return True

    async def connect(self) -> None:
        return None

    async def run(self, command: str, *, timeout: float | None = 30.0, stdin: str | None = None) -> CommandResult:
        raise AssertionError(f"{type(self).__name__} was not asked to run {command!r}")

    async def run_bytes(self, command: str, *, timeout: float | None = 30.0) -> BytesResult:
        raise AssertionError(f"{type(self).__name__} was not asked to run {command!r}")

    def stream(self, command: str) -> AbstractAsyncContextManager[LineStream]:
        raise AssertionError(f"{type(self).__name__} streams nothing")

    def stream_bytes(self, command: str) -> AbstractAsyncContextManager[ByteStream]:
        raise AssertionError(f"{type(self).__name__} streams nothing")

    async def wait_closed(self) -> BaseException | None:
        return None

    async def close(self) -> None:
        return None
