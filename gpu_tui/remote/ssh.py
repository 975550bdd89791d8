"""`SshHost`: one asyncssh connection per instance, with keepalive, a channel budget and host-key policy.

asyncssh has no reconnect of its own; the monitor service loops over `connect()` with backoff.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import asyncssh
from pydantic import SecretStr

from gpu_tui.core.bilingual import say
from gpu_tui.core.errors import (
    AuthFailed,
    CommandTimeout,
    ConnectionLost,
    HostKeyChanged,
    HostKeyUnknown,
    RemoteError,
    Unreachable,
)
from gpu_tui.core.i18n import N_
from gpu_tui.remote.host import BytesResult, ByteStream, CommandResult, DuplexStream, Host, LineStream
from gpu_tui.remote.hostkeys import KnownHosts, fingerprint, host_pattern
from gpu_tui.remote.sshstreams import SshBytes, SshDuplex, SshLines, named

__all__ = ["SshHost", "SshTarget"]

log = logging.getLogger(__name__)

# OpenSSH allows 10 sessions per connection (MaxSessions); keep headroom for a shell and sftp.
CHANNEL_BUDGET = 8


class SshTarget:
    """Where and how to log in: what `SshHost` needs from an instance's config."""

    def __init__(
        self,
        name: str,
        host: str,
        port: int = 22,
        user: str = "root",
        identity_file: str | None = None,
        app_key: Path | None = None,
    ) -> None:
        self.name, self.host, self.port, self.user, self.identity_file = name, host, port, user, identity_file
        self.app_key = app_key
        """gpu-tui's own key, offered after the user's keys when it exists."""


DEFAULT_KEYS = ("id_ed25519", "id_ecdsa", "id_rsa")
CIPHERS = (
    "aes128-gcm@openssh.com",
    "aes256-gcm@openssh.com",
    "chacha20-poly1305@openssh.com",
    "aes128-ctr",
    "aes192-ctr",
    "aes256-ctr",
)
"""asyncssh's own defaults with AES-GCM first: its chacha20-poly1305 builds cipher objects in
Python for every packet (22 us a packet against 4 us for AES-GCM, measured), and a dashboard on
32 instances moves hundreds of packets a second. Every server OpenSSH 6.2 or later has AES-GCM;
a user's own `Ciphers` in the ssh config given to gpu-tui still wins."""
"""The keys OpenSSH offers by default; listed again when the app key is added to them."""


def _loadable_keys(paths: list[Path]) -> list[asyncssh.SSHKeyPair]:
    """The key pairs among `paths` that load without a passphrase, as asyncssh's own default
    key loading does (an encrypted ~/.ssh/id_rsa must not break the login)."""
    pairs: list[asyncssh.SSHKeyPair] = []
    for path in paths:
        if not path.is_file():
            continue
        try:
            pairs += asyncssh.load_keypairs([str(path)])
        except (OSError, asyncssh.KeyImportError) as exc:
            log.info("key %s not used: %s", path, exc)
    return pairs


class _Client(asyncssh.SSHClient):
    """Remembers the key a server presented and why the connection ended."""

    def __init__(self) -> None:
        self.presented_key: asyncssh.SSHKey | None = None
        self.lost: asyncio.Future[BaseException | None] = asyncio.get_running_loop().create_future()

    def validate_host_public_key(self, host: str, addr: str, port: int, key: asyncssh.SSHKey) -> bool:
        self.presented_key = key
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.lost.done():
            self.lost.set_result(exc)


def _sets_ciphers(ssh_config: Path | None) -> bool:
    """Whether the ssh config gpu-tui reads names its own `Ciphers` (asyncssh's explicit options
    would override it)."""
    if ssh_config is None or not ssh_config.is_file():
        return False
    try:
        text = ssh_config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return any(line.strip().lower().startswith("ciphers") for line in text.splitlines())


class SshHost(Host):
    """An instance reached over SSH."""

    def __init__(
        self,
        target: SshTarget,
        *,
        known_hosts: KnownHosts,
        password: SecretStr | None = None,
        ssh_config: Path | None = None,
        connect_timeout: float = 10.0,
        keepalive_interval: float = 5.0,
        keepalive_count_max: int = 2,
        on_connect: Callable[[SshHost], Awaitable[object]] | None = None,
    ) -> None:
        self.name = target.name
        self.target = target
        self._known_hosts = known_hosts
        self._password = password
        self._ssh_config = ssh_config
        self._connect_timeout = connect_timeout
        self._keepalive = (keepalive_interval, keepalive_count_max)
        self._conn: asyncssh.SSHClientConnection | None = None
        self._client: _Client | None = None
        self._channels = asyncio.Semaphore(CHANNEL_BUDGET)
        self._on_connect = on_connect
        """Run after each successful connect (the CLI records a ledger sighting there)."""

    def set_password(self, password: SecretStr | None) -> None:
        """Use this password from the next connect on (typed by the user after `auth failed`)."""
        self._password = password

    @property
    def connected(self) -> bool:
        return self._conn is not None and self._client is not None and not self._client.lost.done()

    def _options(self) -> dict[str, object]:
        t = self.target
        opts: dict[str, object] = dict(
            port=t.port,
            username=t.user,
            connect_timeout=self._connect_timeout,
            login_timeout=self._connect_timeout,
            keepalive_interval=self._keepalive[0],
            keepalive_count_max=self._keepalive[1],
            agent_forwarding=False,
            x11_forwarding=False,
            known_hosts=self._known_hosts.lookup,
            config=[str(self._ssh_config)] if self._ssh_config and self._ssh_config.is_file() else None,
        )
        keys: list[str | asyncssh.SSHKeyPair] = [str(Path(t.identity_file).expanduser())] if t.identity_file else []
        if t.app_key is not None and t.app_key.is_file():
            if not keys:  # an explicit client_keys replaces asyncssh's defaults: keep them
                ssh_dir = Path.home() / ".ssh"
                keys += _loadable_keys([ssh_dir / k for k in DEFAULT_KEYS])
            keys += _loadable_keys([t.app_key])
        if keys:
            opts["client_keys"] = keys
        if not _sets_ciphers(self._ssh_config):
            opts["encryption_algs"] = CIPHERS
        if self._password is not None:
            opts["password"] = self._password.get_secret_value()
            # a password host with many agent keys hits "Too many authentication failures"
            opts["preferred_auth"] = ("password", "keyboard-interactive", "publickey")
        return opts

    async def connect(self) -> None:
        await self.close()
        client = _Client()
        t = self.target
        try:
            conn = await asyncssh.connect(t.host, client_factory=lambda: client, **self._options())
        except asyncssh.HostKeyNotVerifiable as exc:
            raise self._host_key_error(client, exc) from None
        except asyncssh.PermissionDenied:
            refused = (
                N_("{address} refused the login (password); check the user and credentials")
                if self._password is not None
                else N_("{address} refused the login (keys); check the user and credentials")
            )
            raise AuthFailed(say(refused, address=f"{t.user}@{t.host}:{t.port}")) from None
        except TimeoutError:
            raise Unreachable(
                say(
                    N_("{address}: no SSH answer within {seconds:g} s"),
                    address=f"{t.host}:{t.port}",
                    seconds=self._connect_timeout,
                )
            ) from None
        except (OSError, asyncssh.Error) as exc:
            raise Unreachable(named(f"{t.host}:{t.port}", exc)) from None
        self._conn, self._client = conn, client
        log.info("%s: connected to %s:%s", self.name, t.host, t.port)
        if self._on_connect is not None:
            await self._on_connect(self)

    def _host_key_error(self, client: _Client, exc: Exception) -> RemoteError:
        t = self.target
        key = client.presented_key
        if key is None:
            return Unreachable(
                say(N_("{address}: host key rejected ({error})"), address=f"{t.host}:{t.port}", error=exc)
            )
        fp = fingerprint(key)
        line = key.export_public_key("openssh").decode().strip()
        if self._known_hosts.has_keys_for(t.host, t.host, t.port if t.port != 22 else None):
            # "host key changed" / "unknown host key" are CONTRACTS.md's words (in English)
            return HostKeyChanged(
                say(
                    N_(
                        "host key changed for {host}: it now offers {fingerprint}. "
                        "This can be an attack, or the instance was re-created (AutoDL changes keys then). "
                        "Refused; re-trust it only if you expected the change."
                    ),
                    host=host_pattern(t.host, t.port),
                    fingerprint=fp,
                ),
                fp,
                line,
            )
        return HostKeyUnknown(
            say(
                N_(
                    "unknown host key for {host}: {fingerprint}. "
                    "Check it against your provider's console, then trust it in the dashboard (`gpu-tui`) "
                    "or run `{command}` once and accept it."
                ),
                host=host_pattern(t.host, t.port),
                fingerprint=fp,
                command=f"ssh -p {t.port} {t.user}@{t.host}",
            ),
            fp,
            line,
        )

    def server_key_line(self) -> str | None:
        """The connected server's host key as a known_hosts key (`ssh-ed25519 AAAA...`)."""
        if self._conn is None:
            return None
        key = self._conn.get_server_host_key()
        return key.export_public_key("openssh").decode().strip() if key is not None else None

    def trust_presented_key(self, key_line: str) -> None:
        """Record a key the user accepted (see HostKeyUnknown/HostKeyChanged.key_line)."""
        self._known_hosts.trust(self.target.host, self.target.port, key_line)

    def connection(self) -> asyncssh.SSHClientConnection:
        """The live asyncssh connection, for what the Host interface does not cover (SFTP, a raw
        binary channel for rsync); ConnectionLost when not connected."""
        return self._require()

    def _require(self) -> asyncssh.SSHClientConnection:
        if self._conn is None or not self.connected:
            raise ConnectionLost(say(N_("{name}: not connected"), name=self.name))
        return self._conn

    async def run(self, command: str, *, timeout: float | None = 30.0, stdin: str | None = None) -> CommandResult:
        conn = self._require()
        async with self._channels:
            try:
                process = await conn.create_process(command, encoding="utf-8", errors="replace")
                if stdin is not None:
                    _send_input(process, stdin)
                res = await process.wait(check=False, timeout=timeout)
            except asyncssh.TimeoutError:
                raise CommandTimeout(
                    say(N_("{name}: command did not finish within {seconds:g} s"), name=self.name, seconds=timeout)
                ) from None
            except (asyncssh.Error, OSError) as exc:
                raise ConnectionLost(named(self.name, exc)) from None
        return CommandResult(res.exit_status, str(res.stdout or ""), str(res.stderr or ""))

    async def run_bytes(self, command: str, *, timeout: float | None = 30.0) -> BytesResult:
        conn = self._require()
        async with self._channels:
            try:
                process = await conn.create_process(command, encoding=None)
                res = await process.wait(check=False, timeout=timeout)
            except asyncssh.TimeoutError:
                raise CommandTimeout(
                    say(N_("{name}: command did not finish within {seconds:g} s"), name=self.name, seconds=timeout)
                ) from None
            except (asyncssh.Error, OSError) as exc:
                raise ConnectionLost(named(self.name, exc)) from None
        out, err = res.stdout or b"", res.stderr or b""
        return BytesResult(
            res.exit_status,
            out if isinstance(out, bytes) else out.encode(),
            err.decode("utf-8", "replace") if isinstance(err, bytes) else err,
        )

    @asynccontextmanager
    async def _text_process(
        self, command: str, encoding: str | None = "utf-8"
    ) -> AsyncIterator[asyncssh.SSHClientProcess[Any]]:
        """A long-lived command on one channel of the budget, stderr merged, closed on exit;
        `encoding` None: its output stays bytes."""
        conn = self._require()
        async with self._channels:
            try:
                process = await conn.create_process(
                    command, encoding=encoding, errors="replace", stderr=asyncssh.STDOUT
                )
            except (asyncssh.Error, OSError) as exc:
                raise ConnectionLost(named(self.name, exc)) from None
            try:
                yield process
            finally:
                process.close()

    @asynccontextmanager
    async def stream(self, command: str) -> AsyncIterator[LineStream]:
        async with self._text_process(command) as process:
            assert self._client is not None
            yield SshLines(process, self._client.lost)

    @asynccontextmanager
    async def duplex(self, command: str) -> AsyncIterator[DuplexStream]:
        async with self._text_process(command, encoding=None) as process:
            assert self._client is not None
            yield SshDuplex(process, self._client.lost, self.name)

    @asynccontextmanager
    async def stream_bytes(self, command: str) -> AsyncIterator[ByteStream]:
        conn = self._require()
        async with self._channels:
            try:
                process = await conn.create_process(command, encoding=None, stderr=asyncssh.DEVNULL)
            except (asyncssh.Error, OSError) as exc:
                raise ConnectionLost(named(self.name, exc)) from None
            try:
                assert self._client is not None
                yield SshBytes(process, self._client.lost, self.name)
            finally:
                process.close()

    @asynccontextmanager
    async def open_terminal(
        self,
        command: str | None,
        *,
        term_type: str | None = None,
        term_size: tuple[int, int] | None = None,
        term_modes: dict[int, int] | None = None,
    ) -> AsyncIterator[asyncssh.SSHClientProcess[bytes]]:
        """A process with raw byte stdin/stdout/stderr, for `gpu-tui ssh`: `command` None is the
        login shell; with `term_type` it runs on a pty of `term_size` (columns, rows)."""
        conn = self._require()
        async with self._channels:
            try:
                process = await conn.create_process(
                    command,
                    encoding=None,
                    term_type=term_type,
                    term_size=term_size,
                    term_modes=term_modes if term_modes is not None else (),
                )
            except (asyncssh.Error, OSError) as exc:
                raise ConnectionLost(named(self.name, exc)) from None
            try:
                yield process
            finally:
                process.close()

    async def wait_closed(self) -> BaseException | None:
        if self._client is None:
            return None
        return await asyncio.shield(self._client.lost)

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
            try:
                await asyncio.wait_for(conn.wait_closed(), 2.0)
            except (TimeoutError, OSError, asyncssh.Error):
                pass


def _send_input(process: asyncssh.SSHClientProcess[str], text: str) -> None:
    """`text` on the command's stdin, then EOF (what conn.run(input=...) does). A command can
    exit before it reads its input, a refusal such as `exit 91`: its channel may be closed by
    the time we write, and its exit status and output, not a broken pipe, say how it went."""
    try:
        process.stdin.write(text)
        process.stdin.write_eof()
    except BrokenPipeError:
        log.debug("%s: exited before reading its input", process.command)
