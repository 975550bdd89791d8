"""rsync's remote shell: gpu-tui itself, carrying rsync's protocol over its own SSH login.

`rsync -e "<python> -m gpu_tui --config CFG _transport NAME" ...` runs that command with a host
word and the remote rsync command line appended, as it would run `ssh`. The `_transport` child
logs in like every other gpu-tui command (known hosts, keys, `GPU_TUI_PASSWORD_<NAME>` or the
keyring), runs the command and pumps bytes both ways until EOF, then exits with the remote
command's status. So no `sshpass`, no OpenSSH client needed, and no password on any command line:
a password the parent holds reaches the child only in its environment (`Transport.environ`).
POSIX only (rsync is used only there; elsewhere sync goes over SFTP).
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import BinaryIO

import asyncssh
from pydantic import SecretStr

from gpu_tui.config.secrets import env_var_name
from gpu_tui.core.errors import ConnectionLost, RemoteError
from gpu_tui.core.i18n import _
from gpu_tui.remote.host import Host
from gpu_tui.remote.ssh import SshHost

__all__ = ["HOST_WORD", "Transport", "pump", "remote_command", "ssh_connection"]

HOST_WORD = "gpu-tui"
"""The host part of rsync's `HOST:PATH`; the transport ignores it (it knows the instance)."""
CHUNK = 256 * 1024


def ssh_connection(host: Host) -> asyncssh.SSHClientConnection:
    """The live asyncssh connection of an SshHost (raw channels and SFTP need it)."""
    if not isinstance(host, SshHost):
        raise RemoteError(_("{name}: sync needs an SSH instance").format(name=host.name))
    return host.connection()


@dataclass(frozen=True)
class Transport:
    """How rsync's child reaches instance `name`: the same config, the password via the env."""

    config_path: str
    name: str
    password: SecretStr | None = None
    python: str = sys.executable

    def rsh(self) -> str:
        """rsync's `-e` value (rsync splits it on spaces, honouring quotes)."""
        return shlex.join([self.python, "-m", "gpu_tui", "--config", self.config_path, "_transport", self.name])

    def environ(self, base: Mapping[str, str]) -> dict[str, str]:
        """rsync's environment (its child inherits it): the password, if any, as the env var."""
        env = dict(base)
        if self.password is not None:
            env[env_var_name(self.name)] = self.password.get_secret_value()
        return env


def remote_command(words: Sequence[str]) -> str:
    """What rsync appends to `-e`: `[-l USER] HOST CMD...` -> the command line (ssh joins the
    words with spaces and the remote shell splits them again; rsync quotes for that)."""
    w = list(words)
    while len(w) >= 2 and w[0] == "-l":
        w = w[2:]
    if len(w) < 2:
        raise RemoteError("_transport: expected HOST COMMAND... after the instance name")
    return " ".join(w[1:])


async def pump(host: Host, command: str, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
    """Run `command` on the connected host; copy stdin to it and its stdout/stderr back, as
    binary, until the remote side ends. Returns its exit status (255 if it had none)."""
    conn = ssh_connection(host)
    loop = asyncio.get_running_loop()
    src = stdin or sys.stdin.buffer
    dst = stdout or sys.stdout.buffer
    reader = asyncio.StreamReader(limit=4 * CHUNK)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), src)
    w_transport, w_protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, dst)
    writer = asyncio.StreamWriter(w_transport, w_protocol, None, loop)
    try:
        process = await conn.create_process(command, encoding=None)
    except (asyncssh.Error, OSError) as exc:
        raise ConnectionLost(f"{host.name}: {exc}") from None

    async def up() -> None:
        try:
            while data := await reader.read(CHUNK):
                process.stdin.write(data)
                await process.stdin.drain()
            process.stdin.write_eof()
        except (asyncssh.Error, OSError, BrokenPipeError):
            pass

    async def down() -> None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            while data := await process.stdout.read(CHUNK):
                writer.write(data)
                await writer.drain()

    async def errors() -> None:
        while data := await process.stderr.read(CHUNK):
            sys.stderr.buffer.write(data)
            sys.stderr.buffer.flush()

    upward = asyncio.ensure_future(up())
    try:
        try:
            await asyncio.gather(down(), errors())
        except (asyncssh.Error, OSError) as exc:
            raise ConnectionLost(f"{host.name}: connection lost ({exc})") from None
        with contextlib.suppress(asyncio.TimeoutError, TimeoutError, asyncssh.Error, OSError):
            await asyncio.wait_for(process.wait_closed(), 10)
    finally:
        upward.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await upward
        with contextlib.suppress(Exception):
            writer.close()
    status = process.exit_status
    return 255 if status is None or status < 0 else status
