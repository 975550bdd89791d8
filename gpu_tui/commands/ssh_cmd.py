"""`gpu-tui ssh NAME [-t] [-- CMD...]`: an interactive shell on an instance, or one command.

Logs in with the stored credentials (`build_ssh_host`: the env var, then the keyring); when the
server refuses them and stdin is a terminal, asks for the password once (never in argv, never
stored). The shell gets a pty of the local terminal's type and size, the local terminal goes raw
(restored however the session ends) and resizes follow. A command streams its output as bytes,
reads our stdin when that is not a terminal (or with `-t`), and its exit code is ours.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import os
import sys
from dataclasses import dataclass

from pydantic import SecretStr

from gpu_tui.config.logsetup import redact
from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import InstanceConfig, Settings
from gpu_tui.core.errors import AuthFailed, ConnectionLost, InputError, RemoteError
from gpu_tui.core.i18n import _
from gpu_tui.remote import terminal
from gpu_tui.remote.quoting import command_line
from gpu_tui.remote.ssh import SshHost
from gpu_tui.services.hosts import build_ssh_host

__all__ = ["SessionPlan", "plan_session", "run_ssh"]

STDIN = 0
DEFAULT_TERM = "xterm"


@dataclass(frozen=True)
class SessionPlan:
    """What one `gpu-tui ssh` asks of the instance and of the local terminal."""

    command: str | None
    """The remote command line; None: the login shell."""
    pty: bool
    """Ask for a pty (type from $TERM, size from the local terminal)."""
    raw: bool
    """Put the local terminal (stdin) in raw mode for the session."""
    forward_stdin: bool
    """Copy our stdin to the remote one; else the remote stdin is empty."""


def plan_session(cmd: list[str] | None, *, force_tty: bool, stdin_tty: bool) -> SessionPlan:
    """Like ssh: a shell gets a pty when stdin is a terminal (or `-t`); a command only with `-t`,
    and reads our stdin when that is not a terminal (a pipe or a file), or with `-t`."""
    if cmd is None:
        pty = stdin_tty or force_tty
        return SessionPlan(None, pty, pty and stdin_tty, True)
    if not cmd:
        raise InputError(_("nothing after `--`: give the command to run, or leave `--` out for a shell"))
    try:
        line = command_line(cmd)
    except ValueError as exc:
        raise InputError(f"-- CMD: {exc}") from None
    return SessionPlan(line, force_tty, force_tty and stdin_tty, force_tty or not stdin_tty)


async def _session(host: SshHost, plan: SessionPlan) -> int:
    await host.connect()
    try:
        term_type = size = modes = None
        if plan.pty:
            term_type = os.environ.get("TERM") or DEFAULT_TERM
            size = terminal.terminal_size(STDIN, 1)
            modes = terminal.term_modes()
        async with host.open_terminal(plan.command, term_type=term_type, term_size=size, term_modes=modes) as process:
            with terminal.raw_mode(STDIN) if plan.raw else contextlib.nullcontext(False):
                try:
                    code = await terminal.pump(
                        process,
                        host.wait_closed(),
                        name=host.name,
                        stdin_fd=STDIN if plan.forward_stdin else None,
                        winch_fd=STDIN if plan.raw else None,
                    )
                except ConnectionLost:
                    if plan.raw:
                        os.write(1, b"\r\n")  # the message below starts on a line of its own
                    raise
    finally:
        await host.close()
    if code is None:
        raise RemoteError(_("{name}: the session ended without an exit status").format(name=host.name))
    return code


def _ask_password(inst: InstanceConfig, refused: AuthFailed) -> SecretStr | None:
    """Ask once on the terminal; None when there is no terminal or nothing was typed."""
    if not sys.stdin.isatty():
        return None
    try:
        # getpass writes to the terminal itself: the reason shows even where stderr is a pipe
        question = _("password for {user}@{host}:{port} ({name}): ").format(
            user=inst.user, host=inst.host, port=inst.port, name=inst.name
        )
        answer = getpass.getpass(f"gpu-tui: {refused.message}\n{question}")
    except EOFError:
        return None
    if not answer:
        return None
    redact(answer)
    return SecretStr(answer)


def run_ssh(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    inst = settings.instance(args.name)
    plan = plan_session(args.cmd, force_tty=args.tty, stdin_tty=os.isatty(STDIN))
    host = build_ssh_host(inst, settings, paths, SecretStore(), sighting=True)
    try:
        return asyncio.run(_session(host, plan))
    except AuthFailed as exc:
        # outside any event loop, so that Ctrl+C at the prompt simply interrupts
        password = _ask_password(inst, exc)
        if password is None:
            raise
    host.set_password(password)
    return asyncio.run(_session(host, plan))
