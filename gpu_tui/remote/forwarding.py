"""Local port forwarding over an SSH connection that may be replaced while the listener lives.

asyncssh's `forward_local_port` ties its listener to one connection: when the link drops the
listener goes, and another program may take the port before we are back. Here the listener is
ours (asyncio) and each accepted connection opens a direct-tcpip channel on whatever connection
`opener()` returns right then; asyncssh's own `SSHForwarder` protocol bridges the socket and the
channel (with its flow control), as in its `forward_local_port`. While the instance is offline
`opener()` raises ConnectionLost and the connection is closed at once: a browser sees a closed
connection, not a hang.
"""

from __future__ import annotations

import asyncio
import errno
import logging
from collections.abc import Callable
from typing import cast

import asyncssh
from asyncssh.forward import SSHForwarder

from gpu_tui.core.bilingual import say
from gpu_tui.core.errors import ConnectionLost, InputError, RemoteError
from gpu_tui.core.i18n import N_

__all__ = ["DEST", "ForwardingRefused", "LocalForward", "NothingListening", "PortInUse", "probe"]

log = logging.getLogger(__name__)

DEST = "localhost"
"""Where the instance's sshd connects: `localhost` lets it try ::1 as well as 127.0.0.1 (a
server bound to `localhost` may listen on either)."""
OPEN_TIMEOUT = 10.0
"""How long a channel open may take; past it the link is taken for dead (keepalive will agree)."""

WINDOW, MAX_PACKET = 8 * 1024 * 1024, 256 * 1024
"""Receive window and packet size offered per channel (asyncssh's defaults: 2 MiB, 32 KiB). The
window caps a channel at window / round trip: 2 MiB over a 40 ms link to a rented box is ~50 MB/s
at most, 8 MiB ~200 MB/s. On loopback the two measure the same (benchmarks/bench_forward.py)."""


class PortInUse(InputError):
    """The local port is taken (another program, another forward)."""

    title = N_("port in use")


class NothingListening(RemoteError):
    """Nothing accepts connections on that port of the instance."""

    title = N_("nothing listening")


class ForwardingRefused(RemoteError):
    """The instance's sshd does not allow TCP forwarding (AllowTcpForwarding no)."""

    title = N_("forwarding refused")


Opener = Callable[[], asyncssh.SSHClientConnection]
"""The live connection now; raises ConnectionLost while there is none."""


def channel_error(name: str, port: int, exc: BaseException) -> RemoteError:
    """Why a direct-tcpip channel to `port` of instance `name` did not open, in the user's words."""
    if isinstance(exc, asyncssh.ChannelOpenError):
        if exc.code == asyncssh.OPEN_ADMINISTRATIVELY_PROHIBITED:
            return ForwardingRefused(
                say(N_("{name}: its sshd refuses port forwarding (AllowTcpForwarding in sshd_config)"), name=name)
            )
        return NothingListening(
            say(
                N_("{name}: nothing listening on port {port} there ({reason}); start the server on the instance first"),
                name=name,
                port=port,
                reason=exc.reason or "connect failed",
            )
        )
    if isinstance(exc, ConnectionLost):
        return exc
    if isinstance(exc, TimeoutError):
        return ConnectionLost(
            say(N_("{name}: no answer from the link within {seconds:g} s"), name=name, seconds=OPEN_TIMEOUT)
        )
    return ConnectionLost(say("{name}: {reason}", name=name, reason=str(exc) or type(exc).__name__))


async def probe(conn: asyncssh.SSHClientConnection, name: str, port: int) -> None:
    """Open (and close at once) a channel to `port` on the instance: NothingListening or
    ForwardingRefused up front, rather than on the first browser request."""
    try:
        chan, _session = await asyncio.wait_for(
            conn.create_connection(asyncssh.SSHTCPSession, DEST, port), OPEN_TIMEOUT
        )
    except (asyncssh.Error, OSError, TimeoutError) as exc:
        raise channel_error(name, port, exc) from None
    chan.close()


class _Tunnel(SSHForwarder):
    """One accepted local connection; its peer is the SSH channel, once that opens."""

    def __init__(self, forward: LocalForward) -> None:
        super().__init__()
        self._forward = forward
        self._opening: asyncio.Task[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._forward.tunnels.add(self)
        self._opening = asyncio.get_running_loop().create_task(self._open())

    async def _open(self) -> None:
        fwd = self._forward
        try:
            conn = fwd.opener()
            # asyncssh's forward_local_port hands the same protocol in where a session is typed
            session = cast("Callable[[], asyncssh.SSHTCPSession[bytes]]", lambda: SSHForwarder(self))
            await asyncio.wait_for(
                conn.create_connection(session, DEST, fwd.remote_port, window=WINDOW, max_pktsize=MAX_PACKET),
                OPEN_TIMEOUT,
            )
        except (RemoteError, asyncssh.Error, OSError, TimeoutError) as exc:
            self.close()
            fwd.on_failure(channel_error(fwd.name, fwd.remote_port, exc))
            return
        if self._transport is None:  # the local side hung up while the channel opened
            self.close()
            return
        fwd.on_success()
        # what the client sent before the channel was there (SSHLocalForwarder does the same)
        assert self._peer is not None
        if self._inpbuf:
            self._peer.write(self._inpbuf)
            self._inpbuf = b""
        if self._eof_received:
            self._peer.write_eof()

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self._forward.tunnels.discard(self)


class LocalForward:
    """A listener on this machine for port `remote_port` of instance `name`."""

    def __init__(
        self,
        opener: Opener,
        name: str,
        remote_port: int,
        *,
        on_failure: Callable[[RemoteError], None],
        on_success: Callable[[], None],
    ) -> None:
        self.opener, self.name, self.remote_port = opener, name, remote_port
        self.on_failure, self.on_success = on_failure, on_success
        self.tunnels: set[_Tunnel] = set()
        """The connections being forwarded now."""
        self._server: asyncio.Server | None = None

    async def listen(self, bind: str, port: int) -> int:
        """Start listening; the port bound (`port` 0: a free one). PortInUse when taken,
        InputError when `bind` is no address of this machine."""
        loop = asyncio.get_running_loop()
        try:
            self._server = await loop.create_server(lambda: _Tunnel(self), bind, port)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise PortInUse(
                    say(
                        N_(
                            "local port {port} on {bind} is already in use (another program, or another forward); "
                            "pick another one: {remote}:{other}"
                        ),
                        port=port,
                        bind=bind,
                        remote=self.remote_port,
                        other=port + 10000 if port < 55536 else 0,
                    )
                ) from None
            raise InputError(
                say(
                    N_("cannot listen on {bind}:{port}: {reason} (check --bind)"),
                    bind=bind,
                    port=port,
                    reason=exc.strerror or str(exc),
                )
            ) from None
        return int(self._server.sockets[0].getsockname()[1])

    def close(self) -> None:
        """Stop listening and end the connections being forwarded."""
        if self._server is not None:
            self._server.close()
            self._server = None
        for tunnel in list(self.tunnels):
            tunnel.close()
        self.tunnels.clear()
