"""LocalHost (`gpu-tui local`'s commands): a command past its time is stopped and reaped before
the call returns, so a CLI command's event loop can end right after it with nothing left over."""

from __future__ import annotations

import asyncio
import gc
import os
import sys
from pathlib import Path

import pytest

from gpu_tui.core.errors import CommandTimeout
from gpu_tui.remote.local import LocalHost


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_a_command_past_its_time_is_stopped_and_reaped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    unraisable: list[object] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    pids = tmp_path / "pids"

    async def slow() -> None:
        host = LocalHost(cwd=tmp_path)
        await host.connect()
        with pytest.raises(CommandTimeout):
            # the shell and its child: a group, as a pipeline would be
            await host.run(f"sleep 30 & echo $$ $! > {pids}; wait", timeout=0.5)

    asyncio.run(slow())  # the loop ends at once, as a CLI command's does
    gc.collect()  # a subprocess transport left open would complain here that its loop is closed
    assert not unraisable, unraisable
    shell, child = (int(p) for p in pids.read_text().split())
    assert not _alive(shell) and not _alive(child)


def test_a_command_cancelled_is_stopped_too(tmp_path: Path) -> None:
    pids = tmp_path / "pids"

    async def cancelled() -> None:
        host = LocalHost(cwd=tmp_path)
        await host.connect()
        task = asyncio.create_task(host.run(f"echo $$ > {pids}; exec sleep 30", timeout=None))
        while not pids.exists() or not pids.read_text().strip():
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancelled())
    assert not _alive(int(pids.read_text()))
    assert os.getpgid(0)  # this test's own group untouched
