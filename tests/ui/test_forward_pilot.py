"""`f` in the dashboard against real sshd: forward the TensorBoard preset of the selected
instance (a real HTTP server answers on its port 6006: the instance is this machine), the page
comes through the local URL, the row shows `⇄1`, and closing it takes the mark and the local
listener away; a forward comes back after the dashboard reconnects (sshd restarted) and after
the instance is watched through a new host (edited).
`gpu-tui local` and the demo have no `f`."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import socket
from pathlib import Path
from types import SimpleNamespace

from pilothelp import make_app, on_top, screen_text, state_of
from textual.widgets import OptionList
from waiting import wait_for

from gpu_tui.ui.dashboard import AVAILABLE
from gpu_tui.ui.screens.forward import ForwardScreen

PAGE = b"TensorBoard 2.17"


async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await reader.readuntil(b"\r\n\r\n")
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(PAGE) + PAGE)
    await writer.drain()
    writer.close()


def _get(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return data.split(b"\r\n\r\n", 1)[1]


def _row(app, name: str) -> str:
    return app.dashboard.table._lines[name].plain


async def test_f_forwards_a_preset_marks_the_row_and_closes(sshd_instance, tmp_path: Path) -> None:
    try:  # TensorBoard's port on the "instance"; something else may hold it on a shared machine
        server: asyncio.Server | None = await asyncio.start_server(_answer, "127.0.0.1", 6006)
    except OSError as exc:
        assert exc.errno == errno.EADDRINUSE
        server = None
    app = make_app(tmp_path, [sshd_instance])
    name = sshd_instance.name
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: state_of(app, name) == "online")
            await pilot.press("f")
            screen = await wait_for(pilot, lambda: on_top(app, ForwardScreen))
            assert app.focused is screen.query_one("#presets", OptionList)
            await pilot.press("enter")  # the first preset: TensorBoard, 6006
            forwards = app.dashboard.forwards
            await wait_for(pilot, lambda: forwards.count(name) == 1, what="the preset forwarded")
            fwd = forwards.of(name)[0]
            assert fwd.remote == 6006
            # 6006 is taken on this machine (the instance is this machine): a free port instead
            assert fwd.local != 6006 and fwd.url == f"http://127.0.0.1:{fwd.local}"
            await wait_for(pilot, lambda: fwd.url in screen_text(screen), what="the URL shown")
            if server is not None:
                assert await asyncio.to_thread(_get, fwd.local) == PAGE
            await pilot.press("escape")
            await wait_for(pilot, lambda: "⇄1" in _row(app, name), what="the row's forward mark")

            # the instance's sshd restarts: the dashboard reconnects, and the forward with it
            sshd_instance.restart()
            await wait_for(pilot, lambda: state_of(app, name) != "online", what="the drop seen")
            await wait_for(pilot, lambda: state_of(app, name) == "online", what="reconnected")
            if server is not None:
                assert await asyncio.to_thread(_get, fwd.local) == PAGE
            assert forwards.of(name) == [fwd] and "⇄1" in _row(app, name)

            # the instance is edited (`i`): the fleet watches it through a new host, and the
            # forward moves to it (the old host is closed, its connection gone)
            fleet, view = app.fleet, app.fleet.views[name]
            old = fleet.hosts[name]
            new = app.dashboard.opened.make_host(view.config)
            fleet.add(view.config, new)
            await old.close()
            await wait_for(pilot, lambda: state_of(app, name) == "online", what="watched again")
            assert fwd.listener.opener == new.connection
            if server is not None:
                assert await asyncio.to_thread(_get, fwd.local) == PAGE

            await pilot.press("f")
            screen = await wait_for(pilot, lambda: on_top(app, ForwardScreen))
            await pilot.press("delete")
            await wait_for(pilot, lambda: forwards.count(name) == 0, what="the forward closed")
            assert "forward closed" in screen_text(screen)
            with socket.socket() as s:
                assert s.connect_ex(("127.0.0.1", fwd.local)) != 0, "the local port still listens"
            await pilot.press("escape")
            await wait_for(pilot, lambda: "⇄" not in _row(app, name), what="the mark gone")
    finally:
        if server is not None:
            server.close()
            with contextlib.suppress(Exception):
                await server.wait_closed()


def test_no_forward_key_on_this_machine_nor_in_the_demo() -> None:
    """Only SSH instances of the config file forward ports: `gpu-tui local` has no SSH, and the
    demo's simulated machines serve nothing. (The availability check alone: a `local` dashboard's
    own subprocesses are not what this is about.)"""
    here = SimpleNamespace(source=SimpleNamespace(remote=False), opened=None)
    demo = SimpleNamespace(source=SimpleNamespace(remote=True), opened=SimpleNamespace(onboarder=None))
    assert AVAILABLE["forward"](here, None) is False  # type: ignore[arg-type]
    assert AVAILABLE["forward"](demo, None) is False  # type: ignore[arg-type]
