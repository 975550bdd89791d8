"""`gpu-tui forward` and the Forwards service against real sshd, to a real HTTP server listening
on the instance side (the instance is this machine: a loopback port reached through sshd's
direct-tcpip): the page comes through, the forward survives an sshd restart and fails fast
while sshd is down, a taken local port, nothing listening, a bad PORT spec, Ctrl+C clean-up."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import http.server
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sshd import free_port
from sshhelp import cli_env, config_text, run_gpu_tui, ssh_host
from waiting import until, until_sync

from gpu_tui.commands import forward_cmd
from gpu_tui.core.errors import InputError
from gpu_tui.core.forwardspec import ForwardSpec
from gpu_tui.remote.forwarding import PortInUse
from gpu_tui.services.forwards import ForwardEvent, Forwards

pytestmark = pytest.mark.sshd

BODY = b"TensorBoard on the instance\n" * 100


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server's name
        pass


@pytest.fixture
def web() -> Iterator[http.server.ThreadingHTTPServer]:
    """An HTTP server on a loopback port: on the instance side, as sshd sees it."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def get(port: int, timeout: float = 5.0) -> bytes:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", "/")
        return conn.getresponse().read()
    finally:
        conn.close()


def get_fails(port: int) -> str | None:
    """How a request through a forward that cannot reach the instance ends (None: it worked)."""
    try:
        get(port)
    except (OSError, http.client.HTTPException) as exc:
        return type(exc).__name__
    return None


def port_free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


class Cli:
    """`gpu-tui forward ...` as a child process; stdout and stderr go to files that are polled."""

    def __init__(self, tmp: Path, inst: object, *args: str) -> None:
        cfg = tmp / "config.toml"
        cfg.write_text(config_text([inst]))
        env = cli_env(tmp, known_hosts=f"{inst.host_public_key_line}\n")  # type: ignore[attr-defined]
        self.out, self.err = tmp / "out.txt", tmp / "err.txt"
        with open(self.out, "wb") as out, open(self.err, "wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "gpu_tui", "--config", str(cfg), "forward", inst.name, *args],  # type: ignore[attr-defined]
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=env,
            )

    def stdout(self) -> str:
        return self.out.read_text()

    def stderr(self) -> str:
        return self.err.read_text()

    def local_port(self) -> int:
        line = until_sync(
            lambda: self.stdout().strip() or self.proc.poll() is not None and "exited",
            what="the forward's URL",
            detail=self.stderr,
        )
        assert line.startswith("http://127.0.0.1:"), (line, self.stderr())
        return int(line.split()[0].rsplit(":", 1)[1])

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[list[Cli]]:
    made: list[Cli] = []
    try:
        yield made
    finally:
        for c in made:
            c.close()


def test_forward_cli_survives_sshd_restart_and_ctrl_c_closes(tmp_path, sshd_instance, web, cli) -> None:
    c = Cli(tmp_path, sshd_instance, f"{web.server_port}:0")
    cli.append(c)
    local = c.local_port()
    assert get(local) == BODY
    assert "(TensorBoard)" not in c.stdout()  # not a preset port

    # sshd restarts (the same port and key): the link drops, the listener stays, forwards return
    sshd_instance.restart()
    until_sync(lambda: "reconnected" in c.stderr(), what="the CLI reconnected", detail=c.stderr)
    assert "link lost (" in c.stderr()
    assert get(local) == BODY

    # sshd down: a connection to the forward is closed at once rather than left hanging
    sshd_instance.stop()
    until_sync(lambda: "link lost" in c.stderr().split("reconnected")[-1], what="the second drop seen", detail=c.stderr)
    started = time.monotonic()
    assert get_fails(local) is not None
    assert time.monotonic() - started < 4.0, "a connection during the outage waited instead of failing fast"
    assert not port_free(local), "the local listener went away with the link"
    until_sync(lambda: "not connected" in c.stderr(), what="the outage reported for the port", detail=c.stderr)
    sshd_instance.start()
    until_sync(lambda: get_fails(local) is None, what="the forward back after sshd came up", detail=c.stderr)

    # Ctrl+C: exit 130, forwards closed, the port released
    c.proc.send_signal(signal.SIGINT)
    assert c.proc.wait(20) == 130, c.stderr()
    assert "forwards closed" in c.stderr()
    assert "Traceback" not in c.stderr()
    assert port_free(local)


async def _a_cancel_lost_in_wait_for(host: object) -> None:
    """What Python 3.11's asyncio.wait_for does when a cancel comes in the tick its awaited
    result does (CPython gh-86296): it returns the result and the cancel is gone. Ctrl+C met it
    in the uptime read `forward` does as it connects; here the cancel is sent on purpose."""
    loop = asyncio.get_running_loop()
    result: asyncio.Future[None] = loop.create_future()
    task = asyncio.current_task()
    assert task is not None

    def at_once() -> None:
        result.set_result(None)
        task.cancel()

    loop.call_soon(at_once)
    with contextlib.suppress(asyncio.CancelledError):  # 3.12 and later keep the cancel
        await asyncio.wait_for(result, 10)
        assert task.cancelling() == 1


async def test_forward_ends_on_a_cancel_that_wait_for_lost(tmp_path, sshd_instance, web) -> None:
    host = ssh_host(sshd_instance, tmp_path, on_connect=_a_cancel_lost_in_wait_for)
    run = asyncio.create_task(forward_cmd._forward(host, [ForwardSpec(web.server_port, 0)], "127.0.0.1"))
    done, _pending = await asyncio.wait({run}, timeout=10)
    if not done:
        run.cancel()
    assert done and run.cancelled(), "the forward went on after its cancel"
    assert not host.connected


def test_forward_cli_local_port_in_use(tmp_path, sshd_instance, web) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = run_gpu_tui(tmp_path, [sshd_instance], "forward", sshd_instance.name, f"{web.server_port}:{port}")
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "port in use" in lines[0] and str(port) in lines[0], r.stderr
    assert r.stdout == ""


def test_forward_cli_nothing_listening(tmp_path, sshd_instance) -> None:
    r = run_gpu_tui(tmp_path, [sshd_instance], "forward", sshd_instance.name, f"{free_port()}:0")
    assert r.returncode == 3, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "nothing listening" in lines[0], r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("spec", ["http", "0", "6006:99999", "6006:", ":6006"])
def test_forward_cli_bad_spec(tmp_path, sshd_instance, spec) -> None:
    r = run_gpu_tui(tmp_path, [sshd_instance], "forward", sshd_instance.name, spec)
    assert r.returncode == 2, r.stderr
    assert "port number" in r.stderr and "Traceback" not in r.stderr


async def test_service_reports_nothing_listening_once_then_recovers(tmp_path, sshd_instance) -> None:
    """The server on the instance stops after the forward opened: each connection is closed,
    one line is reported for the forward (not one per connection), and it clears once the
    server is back."""
    events: list[ForwardEvent] = []
    host = ssh_host(sshd_instance, tmp_path)
    await host.connect()
    forwards = Forwards(on_change=events.append)
    web_port = free_port()
    server = await asyncio.start_server(_answer, "127.0.0.1", web_port)
    try:
        fwd = await forwards.open(host.name, host, ForwardSpec(web_port, 0))
        assert [e.kind for e in events] == ["opened"]
        assert await asyncio.to_thread(get, fwd.local) == BODY
        server.close()
        await server.wait_closed()
        for _ in range(3):
            assert await asyncio.to_thread(get_fails, fwd.local) is not None
        failed = [e for e in events if e.kind == "failed"]
        assert len(failed) == 1 and "nothing listening" in (failed[0].message or ""), events
        assert fwd.problem is not None
        server = await asyncio.start_server(_answer, "127.0.0.1", web_port)
        assert await asyncio.to_thread(get, fwd.local) == BODY
        await until(lambda: events[-1].kind == "recovered", what="the forward recovered")
        assert fwd.problem is None

        # the same local port cannot be taken twice
        with pytest.raises(PortInUse):
            await forwards.open("other", host, ForwardSpec(web_port, fwd.local), check=False)
    finally:
        forwards.close_all()
        server.close()
        await host.close()
    assert events[-1].kind == "closed"
    assert port_free(fwd.local)


async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await reader.readuntil(b"\r\n\r\n")
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(BODY) + BODY)
    await writer.drain()
    writer.close()


def test_forward_cli_bind_elsewhere(tmp_path, sshd_instance, web) -> None:
    """--bind: an address of this machine is listened on (0.0.0.0: every one); one that is not
    (TEST-NET-1) is exit 2, one line."""
    r = run_gpu_tui(
        tmp_path, [sshd_instance], "forward", sshd_instance.name, f"{web.server_port}:0", "--bind", "192.0.2.1"
    )
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "--bind" in r.stderr, r.stderr
    c = Cli(tmp_path, sshd_instance, f"{web.server_port}:0", "--bind", "0.0.0.0")
    try:
        assert get(c.local_port()) == BODY  # the URL says 127.0.0.1, reached through the wildcard
        assert "other machines" in c.stderr()
    finally:
        c.close()


async def test_two_opens_of_one_port_at_once_make_one_forward(tmp_path, sshd_instance) -> None:
    """Enter pressed twice on a preset: the second open, while the first still checks the port,
    is refused; closing all leaves no listener behind."""
    host = ssh_host(sshd_instance, tmp_path)
    await host.connect()
    forwards = Forwards()
    web_port = free_port()
    server = await asyncio.start_server(_answer, "127.0.0.1", web_port)
    try:
        results = await asyncio.gather(
            forwards.open(host.name, host, ForwardSpec(web_port, 0)),
            forwards.open(host.name, host, ForwardSpec(web_port, 0)),
            return_exceptions=True,
        )
        opened = [r for r in results if not isinstance(r, BaseException)]
        refused = [r for r in results if isinstance(r, InputError)]
        assert len(opened) == 1 and len(refused) == 1, results
        assert forwards.count(host.name) == 1
    finally:
        forwards.close_all()
        server.close()
        await host.close()
    assert port_free(opened[0].local)
