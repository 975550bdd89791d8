"""The rsync method: a local rsync whose remote shell is gpu-tui's `_transport` (see sync/transport.py).

rsync runs with delta transfer, `-z`, `--partial-dir` (an interrupted file is resumed, not
resent), `--timeout`, `--info=progress2,name1` (parsed for progress) and `--stats` (parsed for
the summary); never `--delete`. It runs in its own session so a cancel kills it and its
transport child together, and a terminal's Ctrl+C reaches only gpu-tui, which then does that.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import re
import shutil
import signal
import subprocess
import time
from collections import deque
from collections.abc import Callable

from gpu_tui.core.errors import RemoteError
from gpu_tui.core.i18n import _
from gpu_tui.core.syncplan import (
    RSYNC_PARTIAL_DIR,
    Direction,
    SyncProgress,
    SyncSummary,
    parse_progress,
    parse_rsync_version,
    parse_stats,
)
from gpu_tui.services.sync.transport import HOST_WORD, Transport

__all__ = ["MIN_LOCAL", "MIN_REMOTE", "PARTIAL_DIR", "TIMEOUT", "local_rsync", "rsync_argv", "run_rsync"]

MIN_LOCAL = (3, 1, 0)
"""`--info=progress2` appeared in rsync 3.1.0 (macOS's rsync 2.6.9 and openrsync lack it)."""
MIN_REMOTE = (3, 0, 0)
"""`--protect-args` (paths never meet the remote shell) needs 3.0 on the far side."""
PARTIAL_DIR = RSYNC_PARTIAL_DIR
TIMEOUT = 60
"""Seconds without any I/O before rsync gives up (`--timeout`)."""
_XFR = re.compile(r"xfr#(\d+)")


def local_rsync() -> str | None:
    """Path of a usable local rsync (>= 3.1 on a POSIX system), else None."""
    if os.name != "posix":
        return None
    exe = shutil.which("rsync")
    if exe is None:
        return None
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    version = parse_rsync_version(out.splitlines()[0] if out else "")
    return exe if version is not None and version >= MIN_LOCAL else None


def rsync_argv(
    exe: str,
    direction: str,
    local: str,
    remote: str,
    excludes: tuple[str, ...],
    transport: Transport,
    *,
    dry_run: bool = False,
    bwlimit_kib: int | None = None,
) -> list[str]:
    argv = [
        exe,
        "-rlptz",
        "--protect-args",
        "--no-inc-recursive",
        f"--partial-dir={PARTIAL_DIR}",
        f"--timeout={TIMEOUT}",
        "--info=progress2,name1",
        "--stats",
        "-e",
        transport.rsh(),
    ]
    argv += [f"--exclude={p}" for p in excludes]
    if dry_run:
        argv.append("--dry-run")
    if bwlimit_kib:
        argv.append(f"--bwlimit={bwlimit_kib}")
    src, dst = local.rstrip("/") + "/", f"{HOST_WORD}:{remote.rstrip('/')}/"
    return argv + ([src, dst] if direction == "push" else [dst, src])


def _reason(stderr: list[str], code: int) -> str:
    ours = [ln for ln in stderr if ln.startswith("gpu-tui:")]
    if ours:
        return ours[0].removeprefix("gpu-tui:").strip()
    theirs = [ln for ln in stderr if ln.startswith("rsync:") or ln.startswith("rsync error")]
    text = (theirs or stderr or [_("exit {status}").format(status=code)])[0]
    return text[:300]


async def _kill(process: asyncio.subprocess.Process) -> None:
    """TERM the session (rsync and its transport child), then KILL what is left."""
    for sig, wait in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 3.0)):
        if process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
        with contextlib.suppress(asyncio.TimeoutError, TimeoutError):
            await asyncio.wait_for(process.wait(), wait)


async def run_rsync(
    argv: list[str],
    transport: Transport,
    direction: Direction,
    local: str,
    remote: str,
    on_progress: Callable[[SyncProgress], None],
    *,
    dry_run: bool = False,
) -> SyncSummary:
    """Run rsync to the end, reporting progress; raise RemoteError with rsync's own reason."""
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=transport.environ(os.environ),
        start_new_session=True,
    )
    stats_lines: list[str] = []
    stderr_lines: deque[str] = deque(maxlen=40)
    last = SyncProgress(0, None)

    def handle(line: str) -> None:
        nonlocal last
        if stats_lines or line.startswith("Number of files:"):
            stats_lines.append(line)
            return
        progress = parse_progress(line)
        if progress is not None:
            done, percent = progress
            m = _XFR.search(line)
            files = int(m.group(1)) if m else last.files_done
            total = done * 100 // percent if percent else None
            last = SyncProgress(done, total, last.current, files, percent=float(percent))
        elif line.strip() and not line.endswith("/"):
            last = dataclasses.replace(last, current=line)
        else:
            return
        on_progress(last)

    async def read_stdout() -> None:
        assert process.stdout is not None
        buf = b""
        while chunk := await process.stdout.read(65536):
            buf += chunk
            *parts, buf = re.split(rb"[\r\n]", buf)
            for part in parts:
                handle(part.decode("utf-8", "replace"))
        if buf:
            handle(buf.decode("utf-8", "replace"))

    async def read_stderr() -> None:
        assert process.stderr is not None
        async for raw in process.stderr:
            text = raw.decode("utf-8", "replace").rstrip()
            if text:
                stderr_lines.append(text)

    try:
        await asyncio.gather(read_stdout(), read_stderr())
        code = await process.wait()
    finally:
        await _kill(process)
    if code != 0:
        raise RemoteError(
            _("rsync failed (exit {status}): {error}").format(status=code, error=_reason(list(stderr_lines), code))
        )
    stats = parse_stats(stats_lines)
    if stats is None:
        raise RemoteError(_("rsync ended without its --stats block"))
    if dry_run:
        sent = stats.transferred_size
    else:
        sent = stats.bytes_sent if direction == "push" else stats.bytes_received
    return SyncSummary(direction, "rsync", local, remote, stats.files, sent, time.monotonic() - started, dry_run)
