"""One simulated instance's SSH server: asyncssh on 127.0.0.1, password and keyboard-interactive
login, exec requests answered by shellsim.plan, and (for a flaky profile) drops.

Built on asyncssh's session API rather than process streams: a long-lived stream is one
`loop.call_at` timer per channel writing one string per tick, cancelled when the channel closes
(or, for a Program with `exit_when`, once that gives an exit status). Channels carry bytes; a
command that reads its stdin (a job's start) is answered after the client's EOF (Program.on_stdin).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import random
import socket
from collections.abc import Callable, Sequence

import asyncssh
from asyncssh.auth import KbdIntChallenge

from gpu_tui.demo.program import MAX_STDIN, Output, Program
from gpu_tui.demo.shellsim import plan
from gpu_tui.demo.simulate import InstanceSim

__all__ = ["DemoServer", "HOST"]

log = logging.getLogger(__name__)

HOST = "127.0.0.1"
_MAX_BUFFER = 256 * 1024  # a client that stops reading loses ticks instead of growing our memory
_SHELL_TEXT = (
    "This is a simulated instance of `gpu-tui demo`: it answers gpu-tui's own probes\n"
    "(nvidia-smi queries, host stats, jobs), not an interactive shell.\n"
)


def _bytes(data: Output) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data


class _Session(asyncssh.SSHServerSession[bytes]):
    """One channel: run the planned program, repeat its tick until the client closes."""

    def __init__(self, node: DemoServer) -> None:
        self._node = node
        self._sim = node.sim
        self._chan: asyncssh.SSHServerChannel[bytes] | None = None
        self._command: str | None = None
        self._program: Program | None = None
        self._handle: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._next = 0.0
        self._i = 0
        self._stdin: bytearray | None = None
        """What the client sent so far, while a command reads its stdin (Program.on_stdin)."""
        self._on_stdin: Callable[[bytes], Program] | None = None
        self._on_data: Callable[[bytes], Output] | None = None
        """Answers each piece of stdin, while a command is ticked by the client (Program.on_data)."""

    def connection_made(self, chan: asyncssh.SSHServerChannel[bytes]) -> None:
        self._chan = chan

    def pty_requested(self, term_type: str, term_size: object, term_modes: object) -> bool:
        return True

    def shell_requested(self) -> bool:
        self._command = None
        return True

    def exec_requested(self, command: str) -> bool:
        self._command = command
        return True

    def subsystem_requested(self, subsystem: str) -> bool:
        return False  # no sftp on a simulated box

    def session_started(self) -> None:
        chan = self._chan
        assert chan is not None
        if self._command is None:
            chan.write_stderr(_bytes(_SHELL_TEXT))
            chan.exit(1)
            return
        command = self._command
        self._run(lambda: plan(command, self._sim))

    def _run(self, make: Callable[[], Program]) -> None:
        """Answer with the Program `make` builds: its output, then its exit or its stream."""
        chan = self._chan
        if chan is None:
            return
        try:
            program = make()
        except Exception:  # a bug in the simulation must not take the fleet down
            log.exception("demo %s: cannot answer %r", self._sim.profile.name, (self._command or "")[:200])
            chan.write_stderr(b"gpu-tui demo: internal error\n")
            chan.exit(1)
            return
        if program.on_stdin is not None:
            self._on_stdin, self._stdin = program.on_stdin, bytearray()
            return  # answered at the client's EOF (eof_received)
        if program.stdout:
            chan.write(_bytes(program.stdout))
        if program.stderr:
            chan.write_stderr(_bytes(program.stderr))
        if program.on_data is not None:
            self._on_data = program.on_data
            return  # answered as the client writes (data_received), until its EOF
        if program.interval is None or program.tick is None:
            chan.exit(program.status)
            return
        self._program = program
        self._node.streams += 1
        self._loop = asyncio.get_running_loop()
        self._next = self._loop.time()
        self._fire()

    def _fire(self) -> None:
        self._handle = None
        chan, program, loop = self._chan, self._program, self._loop
        if chan is None or program is None or loop is None:
            return
        assert program.tick is not None and program.interval is not None
        try:
            if chan.get_write_buffer_size() < _MAX_BUFFER:
                data = program.tick(self._i)
                if data:
                    chan.write(_bytes(data))
            self._i += 1
            status = program.exit_when() if program.exit_when is not None else None
            if status is not None:
                self._stop()
                chan.exit(status)
                return
        except OSError:  # BrokenPipeError: the channel is closing
            return
        except Exception:
            log.exception("demo %s: stream failed", self._sim.profile.name)
            with contextlib.suppress(OSError):
                chan.exit(1)
            return
        now = loop.time()
        gap = program.first_interval if self._i == 1 and program.first_interval is not None else program.interval
        self._next += gap
        if self._next < now:  # fell behind (a stalled loop): skip ticks rather than burst
            self._next = now + gap
        self._handle = loop.call_at(self._next, self._fire)

    def data_received(self, data: bytes, datatype: object) -> None:
        if self._on_data is not None and self._chan is not None:
            try:
                if self._chan.get_write_buffer_size() < _MAX_BUFFER:
                    out = self._on_data(data)
                    if out:
                        self._chan.write(_bytes(out))
            except OSError:
                return
            except Exception:
                log.exception("demo %s: ticked command failed", self._sim.profile.name)
                self._on_data = None
                with contextlib.suppress(OSError):
                    self._chan.exit(1)
            return
        if self._stdin is None:
            return  # stdin is ignored unless the command reads it
        self._stdin += data
        if len(self._stdin) > MAX_STDIN:
            self._stdin = self._on_stdin = None
            if self._chan is not None:
                with contextlib.suppress(OSError):
                    self._chan.write_stderr(b"gpu-tui demo: too much input\n")
                    self._chan.exit(1)

    def eof_received(self) -> bool:
        if self._on_data is not None:
            self._on_data = None
            if self._chan is not None:
                with contextlib.suppress(OSError):
                    self._chan.exit(0)
            return True
        on_stdin, data = self._on_stdin, self._stdin
        if on_stdin is not None and data is not None:
            self._on_stdin = self._stdin = None
            self._run(lambda: on_stdin(bytes(data)))
        return True  # keep streaming after the client closes stdin

    def signal_received(self, signal: str) -> None:
        self._stop()
        if self._chan is not None:
            with contextlib.suppress(OSError):
                self._chan.exit(130)

    def _stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if self._program is not None:
            self._program = None
            self._node.streams -= 1

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop()
        self._on_data = None
        self._chan = None


class _Server(asyncssh.SSHServer):
    def __init__(self, node: DemoServer) -> None:
        self._node = node
        self._conn: asyncssh.SSHServerConnection | None = None

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self._conn = conn
        self._node.connections.add(conn)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._conn is not None:
            self._node.connections.discard(self._conn)

    def begin_auth(self, username: str) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return True

    def validate_password(self, username: str, password: str) -> bool:
        return self._node.check(username, password)

    def kbdint_auth_supported(self) -> bool:
        return True

    def get_kbdint_challenge(self, username: str, lang: str, submethods: str) -> KbdIntChallenge:
        return "", "", "", [("Password: ", False)]

    def validate_kbdint_response(self, username: str, responses: Sequence[str]) -> bool:
        return len(responses) == 1 and self._node.check(username, responses[0])

    def session_requested(self) -> tuple[asyncssh.SSHServerChannel[bytes], asyncssh.SSHServerSession[bytes]]:
        assert self._conn is not None
        # a binary channel: a job's log is streamed by byte offset, whatever its bytes
        return self._conn.create_server_channel(encoding=None), _Session(self._node)


class DemoServer:
    """The SSH endpoint of one simulated instance."""

    def __init__(self, sim: InstanceSim, *, password: str, host_key: asyncssh.SSHKey, user: str = "root") -> None:
        self.sim = sim
        self.name = sim.profile.name
        self.user = user
        self._password = password.encode()
        self._key = host_key
        self.port = 0
        self.up = False
        self.connections: set[asyncssh.SSHServerConnection] = set()
        self.streams = 0
        """Long-lived streams (nvidia-smi loops, stats loops) running now."""
        self._acceptor: asyncssh.SSHAcceptor | None = None
        self._flapper: asyncio.Task[None] | None = None
        self._reserved: socket.socket | None = None

    @property
    def known_hosts_line(self) -> str:
        """`[127.0.0.1]:PORT ssh-ed25519 AAAA...` for known_hosts."""
        key = self._key.export_public_key("openssh").decode().strip()
        return f"[{HOST}]:{self.port} {key}"

    def check(self, username: str, password: str) -> bool:
        ok = hmac.compare_digest(password.encode(), self._password)
        return ok and username == self.user

    def _bind(self, port: int) -> socket.socket:
        """A TCP socket bound to HOST:port, not listening yet: connections to it are refused."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((HOST, port))
        except OSError:
            sock.close()
            raise
        return sock

    async def _listen(self, sock: socket.socket) -> None:
        try:
            self._acceptor = await asyncssh.listen(
                sock=sock,
                server_factory=lambda: _Server(self),
                server_host_keys=[self._key],
                compression_algs=["none"],
                allow_scp=False,
                agent_forwarding=False,
                x11_forwarding=False,
                login_timeout=30,
            )
        except BaseException:
            sock.close()
            raise
        self.port = self._acceptor.get_port()
        self.up = True

    async def start(self) -> None:
        await self._listen(self._bind(0))

    async def go_down(self, *, final: bool = False) -> None:
        """The instance drops: every connection dies without a goodbye, new ones are refused.

        The port stays bound (not listening) while down, so connecting is refused at once and
        nothing else can take the port before the instance comes back. `final`: closing for good.
        """
        self.up = False
        acceptor, self._acceptor = self._acceptor, None
        if acceptor is not None:
            acceptor.close()  # closes the listening socket now
        for conn in list(self.connections):
            conn.abort()
        self.connections.clear()
        if acceptor is not None and not final:
            try:
                self._reserved = self._bind(self.port)
            except OSError as exc:
                log.warning("demo %s: cannot hold port %d while down: %s", self.name, self.port, exc)
        if acceptor is not None:
            with contextlib.suppress(asyncio.TimeoutError, TimeoutError, OSError):
                await asyncio.wait_for(acceptor.wait_closed(), 2.0)
        if not final:
            log.info("demo %s: down", self.name)

    async def come_up(self) -> None:
        """Listen again on the same port."""
        sock, self._reserved = self._reserved, None
        for attempt in range(20):
            try:
                await self._listen(sock if sock is not None else self._bind(self.port))
            except OSError:
                sock = None
                await asyncio.sleep(0.1 * (attempt + 1))
                continue
            log.info("demo %s: up again on port %d", self.name, self.port)
            return
        log.warning("demo %s: could not listen on port %d again", self.name, self.port)

    def start_flapping(self, every: float, down_for: float, rng: random.Random) -> None:
        """Drop every ~`every` seconds (+-15 %) for ~`down_for` seconds, until closed."""

        async def flap() -> None:
            first = True
            while True:
                # the first drop comes at a random point of the cycle, so copies are not in step
                up_for = every * (rng.uniform(0.5, 1.0) if first else rng.uniform(0.85, 1.15))
                first = False
                await asyncio.sleep(up_for)
                await self.go_down()
                await asyncio.sleep(down_for * rng.uniform(0.9, 1.1))
                await self.come_up()

        self._flapper = asyncio.create_task(flap(), name=f"demo-{self.name}-flap")

    async def close(self) -> None:
        flapper, self._flapper = self._flapper, None
        if flapper is not None:
            flapper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await flapper
        await self.go_down(final=True)
        if self._reserved is not None:
            self._reserved.close()
            self._reserved = None
