"""Sync use-case (CLI `gpu-tui sync` and the dashboard's `y`): resolve LOCAL and REMOTE, pick
rsync or SFTP, run it with progress, return a summary. Never deletes on the receiving side.

`plan_sync` checks what can be checked before anything moves (the direction, LOCAL, REMOTE, which
method) and raises InputError for what the user must fix; `run_sync` does the transfer. rsync is
used when both sides have one (>= 3.1 here, >= 3.0 there), this is a POSIX system and a
`Transport` (gpu-tui's config file, for the `_transport` child) is given; otherwise SFTP.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import asyncssh

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.errors import InputError, RemoteError
from gpu_tui.core.i18n import _
from gpu_tui.core.syncplan import (
    DIRECTIONS,
    Direction,
    SyncProgress,
    SyncSummary,
    parse_rsync_version,
    resolve_local,
    resolve_remote,
)
from gpu_tui.remote.host import Host
from gpu_tui.remote.quoting import quote, sh_c
from gpu_tui.services.sync.rsync import MIN_REMOTE, local_rsync, rsync_argv, run_rsync
from gpu_tui.services.sync.sftp import run_sftp
from gpu_tui.services.sync.transport import Transport, ssh_connection

__all__ = [
    "Method",
    "RemoteInfo",
    "SyncJob",
    "Transport",
    "check_direction",
    "plan_sync",
    "probe_remote",
    "resolve_paths",
    "run_sync",
]

Method = Literal["rsync", "sftp"]
PROGRESS_INTERVAL = 0.1
"""At most this many seconds between progress reports (the UI need not repaint faster)."""
PROBE = 'printf "%s\\n" "$HOME"; if command -v rsync >/dev/null 2>&1; then rsync --version 2>/dev/null; fi'


@dataclass(frozen=True)
class RemoteInfo:
    """The instance's home directory and rsync version (None: unknown / no usable rsync)."""

    home: str | None
    rsync: tuple[int, int, int] | None


@dataclass(frozen=True)
class SyncJob:
    """A sync ready to run: resolved absolute paths, the method and why it was chosen."""

    name: str
    direction: Direction
    local: str
    remote: str
    excludes: tuple[str, ...]
    method: Method
    why: str
    dry_run: bool = False
    bwlimit_kib: int | None = None
    rsync_exe: str | None = None


def check_direction(word: str) -> Direction:
    if word not in DIRECTIONS:
        raise InputError(_("direction must be push or pull, got {word!r}").format(word=word))
    return word


async def probe_remote(host: Host) -> RemoteInfo:
    """One command: `$HOME` and `rsync --version` (under sh, whatever the login shell is)."""
    res = await host.run(sh_c(PROBE), timeout=30)
    lines = res.stdout.splitlines()
    home = lines[0].strip() if res.ok and lines and lines[0].startswith("/") else None
    version = parse_rsync_version(lines[1]) if res.ok and len(lines) > 1 else None
    return RemoteInfo(home, version)


async def _sftp_home(host: Host) -> str:
    try:
        async with ssh_connection(host).start_sftp_client() as sftp:
            return str(await sftp.realpath("."))
    except (asyncssh.Error, OSError) as exc:
        raise RemoteError(
            _("{name}: cannot find the remote home directory (no shell, no SFTP: {error})").format(
                name=host.name, error=exc
            )
        ) from None


async def resolve_paths(
    host: Host, inst: InstanceConfig, local: str | None = None, remote: str | None = None, *, cwd: str | None = None
) -> tuple[str, str, RemoteInfo]:
    """(LOCAL, REMOTE, what the instance has) by the CONTRACTS rules; `host` must be connected."""
    local_dir = resolve_local(
        local, inst.sync.local, cwd=cwd or os.getcwd(), home=str(Path.home()), windows=os.name == "nt"
    )
    info = await probe_remote(host)
    home = info.home or await _sftp_home(host)
    return local_dir, resolve_remote(remote, inst.sync.remote, inst.workdir, home=home), info


async def plan_sync(
    host: Host,
    inst: InstanceConfig,
    direction: str,
    local: str | None = None,
    remote: str | None = None,
    *,
    transport: Transport | None,
    force_sftp: bool = False,
    dry_run: bool = False,
    bwlimit_kib: int | None = None,
    cwd: str | None = None,
) -> SyncJob:
    """Resolve and check everything before a byte moves; `host` must be connected."""
    way = check_direction(direction)
    local_dir, remote_dir, info = await resolve_paths(host, inst, local, remote, cwd=cwd)
    if way == "push" and not os.path.isdir(local_dir):
        if os.path.exists(local_dir):
            raise InputError(_("LOCAL {path} is not a directory").format(path=local_dir))
        raise InputError(_("LOCAL {path} does not exist").format(path=local_dir))
    if way == "pull" and os.path.exists(local_dir) and not os.path.isdir(local_dir):
        raise InputError(_("LOCAL {path} is not a directory").format(path=local_dir))
    method, why, exe = _choose(inst.name, info, transport, force_sftp)
    if method == "rsync":
        await _prepare_remote(host, inst.name, way, remote_dir, dry_run)
    return SyncJob(
        inst.name, way, local_dir, remote_dir, tuple(inst.sync.exclude), method, why, dry_run, bwlimit_kib, exe
    )


def _choose(
    name: str, info: RemoteInfo, transport: Transport | None, force_sftp: bool
) -> tuple[Method, str, str | None]:
    if force_sftp:
        return "sftp", "--sftp", None
    if transport is None:
        return "sftp", _("rsync needs a config file for its transport"), None
    exe = local_rsync()
    if exe is None:
        return "sftp", _("no rsync >= 3.1 on this machine"), None
    if info.rsync is None or info.rsync < MIN_REMOTE:
        return "sftp", _("no rsync >= 3.0 on {name}").format(name=name), None
    return "rsync", _("rsync {version} on {name}").format(version=".".join(map(str, info.rsync)), name=name), exe


async def _prepare_remote(host: Host, name: str, way: Direction, remote: str, dry_run: bool) -> None:
    if way == "pull":
        res = await host.run(f"test -d {quote(remote)}", timeout=30)
        if not res.ok:
            raise InputError(_("{name}:{path} is not a directory on the instance").format(name=name, path=remote))
        return
    if dry_run:
        return
    res = await host.run(f"mkdir -p -- {quote(remote)}", timeout=30)
    if not res.ok:
        why = res.stderr.strip()[:200] or _("exit {status}").format(status=res.exit_status)
        raise RemoteError(_("{name}: cannot create {path}: {error}").format(name=name, path=remote, error=why))


class _Throttle:
    """Pass on at most one report per PROGRESS_INTERVAL; `flush` hands on the last one held back."""

    def __init__(self, on_progress: Callable[[SyncProgress], None] | None) -> None:
        self._out = on_progress
        self._last = 0.0
        self._held: SyncProgress | None = None

    def __call__(self, p: SyncProgress) -> None:
        now = time.monotonic()
        if now - self._last >= PROGRESS_INTERVAL:
            self._last, self._held = now, None
            if self._out is not None:
                self._out(p)
        else:
            self._held = p

    def flush(self) -> None:
        if self._held is not None and self._out is not None:
            self._out(self._held)
        self._held = None


async def run_sync(
    host: Host,
    job: SyncJob,
    *,
    transport: Transport | None = None,
    on_progress: Callable[[SyncProgress], None] | None = None,
) -> SyncSummary:
    """Transfer; cancelling the calling task stops it (rsync is killed, SFTP stops between
    requests) and leaves partial files to resume from."""
    report = _Throttle(on_progress)
    if job.method == "rsync":
        assert transport is not None and job.rsync_exe is not None
        if job.direction == "pull" and not job.dry_run:
            os.makedirs(job.local, exist_ok=True)
        argv = rsync_argv(
            job.rsync_exe,
            job.direction,
            job.local,
            job.remote,
            job.excludes,
            transport,
            dry_run=job.dry_run,
            bwlimit_kib=job.bwlimit_kib,
        )
        summary = await run_rsync(argv, transport, job.direction, job.local, job.remote, report, dry_run=job.dry_run)
    else:
        summary = await run_sftp(
            ssh_connection(host),
            job.name,
            job.direction,
            job.local,
            job.remote,
            job.excludes,
            report,
            dry_run=job.dry_run,
            bwlimit_kib=job.bwlimit_kib,
        )
    report.flush()
    return summary
