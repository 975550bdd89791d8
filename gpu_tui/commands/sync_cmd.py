"""`gpu-tui sync NAME push|pull [LOCAL] [REMOTE]`, and `_transport`, rsync's remote shell."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from gpu_tui.commands import EXIT_OK
from gpu_tui.commands.support.cells import pad, truncate
from gpu_tui.commands.support.output import error_line
from gpu_tui.config.logsetup import setup_logging
from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import Settings, load_settings
from gpu_tui.core.errors import GpuTuiError
from gpu_tui.core.i18n import _, ngettext
from gpu_tui.core.syncplan import SyncProgress, SyncSummary, summary_json
from gpu_tui.core.text import printable
from gpu_tui.core.units import format_bytes, format_percent
from gpu_tui.services.hosts import build_ssh_host
from gpu_tui.services.sync.run import Transport, check_direction, plan_sync, run_sync
from gpu_tui.services.sync.transport import pump, remote_command

__all__ = ["ProgressPrinter", "run_sync_command", "run_transport", "summary_words"]

EXIT_INTERRUPTED = 130
TRANSPORT_FAILED = 255
"""What ssh exits with when it cannot connect; rsync reports it as a connection problem."""


class ProgressPrinter:
    """One line rewritten in place on a terminal; elsewhere a line at each quarter."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self._next_quarter = 25
        self._width = 0

    def __call__(self, p: SyncProgress) -> None:
        frac = p.fraction
        about = "~" if p.percent is not None else ""
        done = format_bytes(p.done)
        size = _("{done} of {total}").format(done=done, total=about + format_bytes(p.total)) if p.total else done
        if self.tty:
            pct = f"{format_percent(None if frac is None else frac * 100):>4}"
            width = max(20, shutil.get_terminal_size().columns - 1)
            text = f"{pct}  {size}  {printable(p.current)}"
            self._width = width
            self.stream.write("\r" + pad(text[:width] if text.isascii() else truncate(text, width), width))
            self.stream.flush()
        elif frac is not None and frac * 100 >= self._next_quarter:
            self.stream.write(_("sync: {percent}% ({size})").format(percent=int(frac * 100), size=size) + "\n")
            self.stream.flush()
            self._next_quarter = (int(frac * 100) // 25 + 1) * 25

    def clear(self) -> None:
        if self.tty and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0


def summary_words(s: SyncSummary, instance: str) -> str:
    """`pushed /home/me/proj -> gpu:/root/proj: 3 files, 1.2 MiB sent in 4.2 s (rsync)` (the words
    of syncplan.summary_line) in the language in force."""
    if s.direction == "push":
        arrow = f"{s.local} -> {instance}:{s.remote}"
    else:
        arrow = f"{instance}:{s.remote} -> {s.local}"
    files = ngettext("{n} file", "{n} files", s.files_sent).format(n=s.files_sent)
    size, seconds = format_bytes(s.bytes_sent), f"{s.seconds:.1f}"
    if s.dry_run:
        text = _("dry run, {arrow}: would send {files}, {size} ({method}, {seconds} s)").format(
            arrow=arrow, files=files, size=size, method=s.method, seconds=seconds
        )
    elif s.direction == "push":
        text = _("pushed {arrow}: {files}, {size} sent in {seconds} s ({method})").format(
            arrow=arrow, files=files, size=size, seconds=seconds, method=s.method
        )
    else:
        text = _("pulled {arrow}: {files}, {size} sent in {seconds} s ({method})").format(
            arrow=arrow, files=files, size=size, seconds=seconds, method=s.method
        )
    if s.skipped_links:
        text = ngettext(
            "{summary}; {n} symlink skipped (SFTP copies files only)",
            "{summary}; {n} symlinks skipped (SFTP copies files only)",
            s.skipped_links,
        ).format(summary=text, n=s.skipped_links)
    return text


def _cancel_on_signals(task: asyncio.Task[int]) -> None:
    """SIGTERM / SIGHUP cancel like Ctrl+C does, so rsync is stopped and partial files kept."""
    loop = asyncio.get_running_loop()
    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, task.cancel)


def run_sync_command(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    inst = settings.instance(args.name)
    check_direction(args.direction)
    secrets = SecretStore()
    password = secrets.get_password(inst.name)
    if password is not None:
        secrets.remember(inst.name, password)  # build_ssh_host asks again: no second keyring call
    host = build_ssh_host(inst, settings, paths, secrets, sighting=True)
    transport = Transport(str(paths.config_file.resolve()), inst.name, password)
    printer = ProgressPrinter(sys.stderr)

    async def go() -> int:
        task = asyncio.current_task()
        assert task is not None
        _cancel_on_signals(task)
        await host.connect()
        try:
            job = await plan_sync(
                host,
                inst,
                args.direction,
                args.local,
                args.remote,
                transport=transport,
                force_sftp=args.sftp,
                dry_run=args.dry_run,
                bwlimit_kib=args.bwlimit,
            )
            if job.method == "sftp" and not args.sftp:
                sys.stderr.write("gpu-tui: " + _("{why}: using SFTP").format(why=job.why) + "\n")
            try:
                summary = await run_sync(host, job, transport=transport, on_progress=printer)
            finally:
                printer.clear()
        finally:
            await host.close()
        if args.json:
            print(json.dumps(summary_json(summary, inst.name), ensure_ascii=False))
        else:
            print(summary_words(summary, inst.name))
        return EXIT_OK

    try:
        return asyncio.run(go())
    except (KeyboardInterrupt, asyncio.CancelledError):
        words = _("sync cancelled; run it again to resume (unfinished files are kept)")
        sys.stderr.write(f"gpu-tui: {inst.name}: {words}\n")
        return EXIT_INTERRUPTED


def run_transport(words: Sequence[str]) -> int:
    """`[--config CFG] _transport NAME [-l USER] HOST CMD...`: pump rsync's protocol over SSH."""
    w = list(words)
    config: str | None = None
    if w[0].startswith("--config="):
        config, w = w[0].split("=", 1)[1], w[1:]
    elif w[0] == "--config":
        config, w = w[1], w[2:]
    name, rest = w[1], w[2:]
    try:
        paths = Paths.default(Path(config) if config else None)
        settings = load_settings(paths.config_file, must_exist=True)
        setup_logging(paths.log_file)
        inst = settings.instance(name)
        command = remote_command(rest)
        host = build_ssh_host(inst, settings, paths, SecretStore())

        async def go() -> int:
            await host.connect()
            try:
                return await pump(host, command)
            finally:
                await host.close()

        return asyncio.run(go())
    except GpuTuiError as exc:
        sys.stderr.write(f"gpu-tui: {name}: {error_line(exc)}\n")
        return TRANSPORT_FAILED
    except KeyboardInterrupt:
        return TRANSPORT_FAILED
