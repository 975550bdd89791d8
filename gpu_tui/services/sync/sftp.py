"""The SFTP method: for instances (or laptops) without rsync, and for `gpu-tui sync --sftp`.

Both trees are walked (sync/tree.py) with the excludes applied; a file
is sent unless the receiver has one of the same size and modification second (rsync's quick
check). Each file is written to `.NAME.gpu-tui-partial` beside its target and renamed over it
when complete, with the sender's mtime (and, between POSIX systems, permissions) set first, so
the next run skips it. An unfinished partial is resumed (from its size, less one chunk on upload,
where a chunk's parallel writes may have left holes) once the 64 KiB before that point match the
source. Symlinks are counted and skipped. Nothing is deleted. Local I/O goes through threads
and plain `os` calls: no rsync, no POSIX terminal needed (Windows, macOS).
"""

from __future__ import annotations

import asyncio
import os
import posixpath
import stat
import time
from collections.abc import Awaitable, Callable
from typing import BinaryIO

import asyncssh

from gpu_tui.core.errors import ConnectionLost, GpuTuiError, InputError, RemoteError
from gpu_tui.core.i18n import _
from gpu_tui.core.syncplan import (
    RSYNC_PARTIAL_DIR,
    Direction,
    Excludes,
    SyncProgress,
    SyncSummary,
    needs_transfer,
    partial_name,
)
from gpu_tui.services.sync.tree import FileInfo, Tree, local_path, local_tree, remote_tree

__all__ = ["CHUNK", "WORKERS", "run_sftp"]

CHUNK = 4 * 1024 * 1024
"""Bytes per read/write call; asyncssh splits each into parallel SFTP requests."""
WORKERS = 4
"""Files in flight at once (small files are latency-bound)."""
VERIFY = 64 * 1024
"""A partial is resumed only if this much of its end matches the source."""
POSIX = os.name == "posix"


class _State:
    """Counters shared by the workers; progress reports; the bandwidth limit."""

    def __init__(self, total: int, on_progress: Callable[[SyncProgress], None], bwlimit_kib: int | None) -> None:
        self.total, self.done, self.sent, self.files = total, 0, 0, 0
        self.current = ""
        self._report = on_progress
        self._rate = bwlimit_kib * 1024 if bwlimit_kib else None
        self._start = time.monotonic()

    def report(self) -> None:
        self._report(SyncProgress(self.done, self.total, self.current, self.files))

    def begin(self, rel: str, resumed: int) -> None:
        self.current = rel
        self.done += resumed
        self.report()

    async def add(self, n: int) -> None:
        self.done += n
        self.sent += n
        self.report()
        if self._rate:
            ahead = self.sent / self._rate - (time.monotonic() - self._start)
            if ahead > 0:
                await asyncio.sleep(ahead)

    def finished(self) -> None:
        self.files += 1
        self.report()


def _read_at(path: str, offset: int, size: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read(size)


def _partial_path(path: str, join: Callable[[str, str], str], split: Callable[[str], tuple[str, str]]) -> str:
    head, tail = split(path)
    return join(head, partial_name(tail))


async def _remote_tail(sftp: asyncssh.SFTPClient, path: str, end: int) -> bytes:
    n = min(VERIFY, end)
    async with sftp.open(path, "rb") as f:
        return await f.read(n, end - n)


async def _upload(
    sftp: asyncssh.SFTPClient, local: str, remote: str, f: FileInfo, partial: int | None, st: _State
) -> None:
    src = local_path(local, f.rel)
    target = posixpath.join(remote, f.rel)
    part = _partial_path(target, posixpath.join, posixpath.split)
    offset = 0
    if partial and partial <= f.size:
        # writes within one chunk run in parallel, so an interrupted chunk may have holes:
        # everything before the last CHUNK bytes was written completely
        safe = max(0, partial - CHUNK)
        if safe:
            theirs = await _remote_tail(sftp, part, safe)
            mine = await asyncio.to_thread(_read_at, src, safe - len(theirs), len(theirs))
            offset = safe if theirs == mine else 0
    st.begin(f.rel, offset)
    fh: BinaryIO = await asyncio.to_thread(open, src, "rb")
    try:
        async with sftp.open(part, "r+b" if offset else "wb") as out:
            pos = offset
            while pos < f.size:
                await asyncio.to_thread(fh.seek, pos)
                data = await asyncio.to_thread(fh.read, min(CHUNK, f.size - pos))
                if not data:
                    break  # the file shrank while we sent it: the next run sees the change
                await out.write(data, pos)
                pos += len(data)
                await st.add(len(data))
    finally:
        fh.close()
    attrs = asyncssh.SFTPAttrs(atime=int(f.mtime), mtime=int(f.mtime))
    if POSIX:
        attrs.permissions = stat.S_IMODE(f.mode)
    await sftp.setstat(part, attrs)
    try:
        await sftp.posix_rename(part, target)
    except asyncssh.SFTPOpUnsupported:
        if await sftp.exists(target):
            await sftp.remove(target)
        await sftp.rename(part, target)
    st.finished()


async def _download(
    sftp: asyncssh.SFTPClient, local: str, remote: str, f: FileInfo, partial: int | None, st: _State
) -> None:
    source = posixpath.join(remote, f.rel)
    target = local_path(local, f.rel)
    part = _partial_path(target, os.path.join, os.path.split)
    offset = 0
    if partial and partial <= f.size:
        theirs = await _remote_tail(sftp, source, partial)
        mine = await asyncio.to_thread(_read_at, part, partial - len(theirs), len(theirs))
        offset = partial if theirs == mine else 0
    st.begin(f.rel, offset)
    fh: BinaryIO = await asyncio.to_thread(open, part, "r+b" if offset else "wb")
    try:
        await asyncio.to_thread(fh.seek, offset)
        async with sftp.open(source, "rb") as inp:
            pos = offset
            while pos < f.size:
                data: bytes = await inp.read(min(CHUNK, f.size - pos), pos)
                if not data:
                    break
                await asyncio.to_thread(fh.write, data)
                pos += len(data)
                await st.add(len(data))
    finally:
        await asyncio.to_thread(fh.close)
    if POSIX and stat.S_IMODE(f.mode):
        os.chmod(part, stat.S_IMODE(f.mode) | 0o600)
    os.utime(part, (f.mtime, f.mtime))
    os.replace(part, target)
    st.finished()


async def _transfer_all(
    items: list[tuple[FileInfo, int | None]], one: Callable[[FileInfo, int | None], Awaitable[object]]
) -> None:
    queue = list(items)

    async def worker() -> None:
        while queue:
            f, partial = queue.pop(0)
            await one(f, partial)

    try:
        async with asyncio.TaskGroup() as tg:
            for _worker in range(min(WORKERS, len(queue))):
                tg.create_task(worker())
    except BaseExceptionGroup as group:
        first = group.exceptions[0]
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        raise first from None


async def run_sftp(
    conn: asyncssh.SSHClientConnection,
    name: str,
    direction: Direction,
    local: str,
    remote: str,
    excludes: tuple[str, ...],
    on_progress: Callable[[SyncProgress], None],
    *,
    dry_run: bool = False,
    bwlimit_kib: int | None = None,
) -> SyncSummary:
    """Copy what differs, push or pull; raise InputError / RemoteError / GpuTuiError (local)."""
    started = time.monotonic()
    ex = Excludes((*excludes, RSYNC_PARTIAL_DIR + "/"))
    try:
        sftp = await conn.start_sftp_client()
    except (asyncssh.Error, OSError) as exc:
        raise RemoteError(
            _("{name}: no SFTP on the instance ({error}); it needs rsync or SFTP for sync").format(name=name, error=exc)
        ) from None
    try:
        async with sftp:  # typed as if it could swallow an exception: the return is below
            summary = await _run(sftp, name, direction, local, remote, ex, on_progress, dry_run, bwlimit_kib, started)
    except asyncssh.SFTPError as exc:
        where = f"{name}:{remote}" if direction == "push" else local
        failed = _("{name}: SFTP: {error} (syncing {path})").format(name=name, error=exc.reason, path=where)
        raise RemoteError(failed) from None
    except (asyncssh.ConnectionLost, asyncssh.DisconnectError, BrokenPipeError, ConnectionResetError) as exc:
        raise ConnectionLost(_("{name}: connection lost during sync ({error})").format(name=name, error=exc)) from None
    except OSError as exc:
        failed = _("local {path}: {error}").format(path=exc.filename or local, error=exc.strerror or exc)
        raise GpuTuiError(failed) from None
    return summary


async def _run(
    sftp: asyncssh.SFTPClient,
    name: str,
    direction: Direction,
    local: str,
    remote: str,
    ex: Excludes,
    on_progress: Callable[[SyncProgress], None],
    dry_run: bool,
    bwlimit_kib: int | None,
    started: float,
) -> SyncSummary:
    if direction == "push":
        src = await asyncio.to_thread(local_tree, local, ex)
        if await sftp.isdir(remote):
            dst = await remote_tree(sftp, remote, ex)
        elif await sftp.exists(remote):
            raise InputError(_("{name}:{path} exists and is not a directory").format(name=name, path=remote))
        else:
            dst = Tree()
    else:
        if not await sftp.isdir(remote):
            raise InputError(_("{name}:{path} is not a directory on the instance").format(name=name, path=remote))
        src = await remote_tree(sftp, remote, ex)
        dst = await asyncio.to_thread(local_tree, local, ex) if os.path.isdir(local) else Tree()
    plan = [
        (f, dst.partials.get(rel))
        for rel, f in src.files.items()
        if needs_transfer(
            f.size, f.mtime, *((dst.files[rel].size, dst.files[rel].mtime) if rel in dst.files else (None, None))
        )
    ]
    total = sum(f.size for f, _partial in plan)
    if dry_run:
        return SyncSummary(
            direction, "sftp", local, remote, len(plan), total, time.monotonic() - started, True, src.links
        )
    have = set(dst.dirs)
    if direction == "push":
        await sftp.makedirs(remote, exist_ok=True)
        for d in src.dirs:
            if d not in have:
                await sftp.makedirs(posixpath.join(remote, d), exist_ok=True)
    else:
        for d in [""] + src.dirs:
            os.makedirs(local_path(local, d), exist_ok=True)
    st = _State(total, on_progress, bwlimit_kib)
    st.report()
    move = _upload if direction == "push" else _download
    await _transfer_all(plan, lambda f, partial: move(sftp, local, remote, f, partial, st))
    return SyncSummary(
        direction, "sftp", local, remote, st.files, st.sent, time.monotonic() - started, False, src.links
    )
