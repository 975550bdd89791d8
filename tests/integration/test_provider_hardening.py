"""What a provider's API (or something pretending to be one) can answer that must not become a
traceback, a hang or a leaked token: a garbled answer, a body dripped a byte at a time, a
redirect to another host, a bad URL in GPU_TUI_*_API, a port that is no number; and `start`
refuses a timeout it cannot wait for before anything is powered on."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from loophttp import LoopbackServer

from gpu_tui.core.errors import InputError, RemoteError, Unreachable
from gpu_tui.core.providers import port_of
from gpu_tui.services.providers.http import JsonApi


@contextmanager
def raw_server(reply: bytes, *, drip: float = 0.0) -> Iterator[int]:
    """A TCP server that answers every connection with `reply` (one byte per `drip` seconds)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    stop = threading.Event()

    def serve() -> None:
        sock.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            with conn:
                conn.recv(65536)
                try:
                    if drip:
                        for b in reply:
                            if stop.is_set():
                                break
                            conn.sendall(bytes([b]))
                            time.sleep(drip)
                    else:
                        conn.sendall(reply)
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield sock.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        sock.close()


async def test_a_garbled_answer_is_unreachable_not_a_traceback() -> None:
    with raw_server(b"garbage\r\n\r\n") as port:
        api = JsonApi("Vast.ai", f"http://127.0.0.1:{port}", {}, timeout=2, retries=0)
        with pytest.raises(Unreachable):
            await api.request("GET", "/instances/")


async def test_a_dripped_body_is_cut_off_at_the_timeout() -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n"
    with raw_server(head + b"[" + b" " * 3998 + b"]", drip=0.05) as port:
        api = JsonApi("Vast.ai", f"http://127.0.0.1:{port}", {}, timeout=1.5, retries=0)
        started = time.monotonic()
        with pytest.raises(Unreachable):
            await api.request("GET", "/instances/")
        assert time.monotonic() - started < 10  # the whole body would take 200 s


async def test_a_redirect_to_another_host_is_refused_and_the_token_stays() -> None:
    seen: list[str | None] = []

    class Elsewhere(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            seen.append(self.headers.get("Authorization"))
            self.send_response(200)
            self.end_headers()

    other = LoopbackServer(("127.0.0.1", 0), Elsewhere)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    target = f"http://localhost:{other.server_address[1]}/steal"

    class Redirect(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(302)
            self.send_header("Location", target)
            self.end_headers()

    first = LoopbackServer(("127.0.0.1", 0), Redirect)
    threading.Thread(target=first.serve_forever, daemon=True).start()
    try:
        api = JsonApi(
            "Vast.ai",
            f"http://127.0.0.1:{first.server_address[1]}",
            {"Authorization": "Bearer VSECRET"},
            timeout=2,
            retries=0,
        )
        with pytest.raises(RemoteError):
            await api.request("GET", "/instances/")
        assert seen == []  # the other host never saw the token
    finally:
        first.shutdown()
        other.shutdown()


async def test_a_base_url_that_is_no_url_is_one_line() -> None:
    api = JsonApi("Vast.ai", "notaurl", {}, timeout=1, retries=0)
    with pytest.raises(InputError) as err:
        await api.request("GET", "/instances/")
    assert "GPU_TUI_" in err.value.message


def test_ports_from_an_api() -> None:
    assert [port_of(v) for v in (22, "2222", " 22 ", "abc", None, 0, 70000, True, 22.5)] == [
        22,
        2222,
        22,
        None,
        None,
        None,
        None,
        None,
        None,
    ]


def test_start_refuses_a_timeout_before_powering_anything_on(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text('[[instances]]\nname = "v"\nhost = "h"\nprovider = "vast"\nprovider_id = "123"\n')
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "d"),
        "XDG_STATE_HOME": str(tmp_path / "s"),
        "XDG_CONFIG_HOME": str(tmp_path / "c"),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        "GPU_TUI_PASSWORD_PROVIDER_VAST": "tok",
        "GPU_TUI_VAST_API": "http://127.0.0.1:9",
    }
    for value in ("-1", "nan", "0"):
        res = subprocess.run(
            [sys.executable, "-m", "gpu_tui", "--config", str(cfg), "start", "v", "--timeout", value],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert res.returncode == 2 and "--timeout" in res.stderr and "Traceback" not in res.stderr, res.stderr


def test_input_that_ends_at_a_prompt_is_one_line(tmp_path: Path) -> None:
    """Ctrl+D (or a closed stdin) where `provider login` asks for the token."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "d"),
        "XDG_STATE_HOME": str(tmp_path / "s"),
        "XDG_CONFIG_HOME": str(tmp_path / "c"),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    }
    (tmp_path / "config.toml").write_text("")
    res = subprocess.run(
        [sys.executable, "-m", "gpu_tui", "--config", str(tmp_path / "config.toml"), "provider", "login", "vast"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert "Traceback" not in res.stderr and res.returncode == 2, res.stderr
