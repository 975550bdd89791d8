"""The laptop side of notifications in the dashboard (Pilot, in-process instances): the
low-utilisation advice in the host panel (English and Chinese), and an idle instance's event
really sent, once, to a loopback JSON webhook listed in the config's [notify] urls."""

from __future__ import annotations

import dataclasses
import socket
import time
from pathlib import Path

import pytest
from notifyserver import notify_server
from pilothelp import inproc_app, steady
from waiting import wait_for


@pytest.mark.parametrize(
    ("language", "loader_words", "advice_words"),
    [
        ("en", "the data loader is the bottleneck", "num_workers"),
        ("zh-CN", "数据加载", "num_workers"),
    ],
)
async def test_low_util_advice_in_the_host_panel(
    inproc_fleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, language: str, loader_words: str, advice_words: str
) -> None:
    monkeypatch.delenv("GPU_TUI_LANG", raising=False)  # the config's language decides
    # the simulated CPU swings around its level: this high, every reading is pinned at 99%
    starved = dataclasses.replace(steady("starved", 15), cpu_level=300.0)
    fleet = await inproc_fleet(starved)
    shift = [0.0]
    app = inproc_app(tmp_path, fleet, settings=f'language = "{language}"\n', clock=lambda: time.time() + shift[0])
    async with app.run_test(size=(100, 30)) as pilot:
        view = lambda: app.fleet.views["starved"]  # noqa: E731
        panel = lambda: app.dashboard.host_panel.render_view(view(), app.clock()).plain  # noqa: E731
        await wait_for(pilot, lambda: view().frame is not None and view().history.cpu)
        assert loader_words not in panel()  # not for ten minutes
        shift[0] = 10 * 60
        await wait_for(pilot, lambda: loader_words in panel(), timeout=60, what=f"advice in {panel()!r}")
        assert advice_words in panel() and "pin_memory" in panel()
        # the screen shows it too (the panel repaints the selected instance)
        await wait_for(pilot, lambda: loader_words in str(app.dashboard.host_panel.render()))


async def test_idle_event_is_sent_once_to_the_configured_webhook(inproc_fleet, tmp_path: Path) -> None:
    fleet = await inproc_fleet(steady("idle", 1))
    shift = [0.0]
    with notify_server() as srv:
        app = inproc_app(
            tmp_path,
            fleet,
            settings="idle_minutes = 15\n",
            keys=f'\n[notify]\nurls = ["json://127.0.0.1:{srv.port}/hook"]\nevents = ["idle"]\n',
            clock=lambda: time.time() + shift[0],
        )
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(pilot, lambda: app.fleet.views["idle"].idle_seconds(app.clock()) is not None)
            assert srv.requests == []
            shift[0] = 16 * 60
            await wait_for(pilot, lambda: srv.requests, timeout=30)
            body = srv.requests[0].json()
            assert isinstance(body, dict) and body["title"].startswith("idle idle for 16m")
            assert "still billing ¥1.50/h" in body["message"]
            await pilot.pause(2.5)
            assert len(srv.requests) == 1  # once per idle stretch


async def test_unreachable_event_names_the_instance_and_is_sent_once(inproc_fleet, tmp_path: Path) -> None:
    fleet = await inproc_fleet(steady("up", 50))
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there: every connection is refused
    shift = [0.0]
    with notify_server() as srv:
        gone = f'\n[[instances]]\nname = "gone"\nhost = "127.0.0.1"\nport = {port}\n'
        notify = (
            f'\n[notify]\nurls = ["json://127.0.0.1:{srv.port}/hook"]\nevents = ["unreachable"]\n'
            "unreachable_minutes = 10\n"
        )
        app = inproc_app(tmp_path, fleet, keys=gone + notify, clock=lambda: time.time() + shift[0])
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(
                pilot,
                lambda: (
                    app.fleet.views["gone"].shown_state == "offline" and app.fleet.views["up"].shown_state == "online"
                ),
            )
            rules = app.dashboard.alerts._rules
            assert rules is not None
            await wait_for(pilot, lambda: "gone" in rules._down_since)  # the targets are loaded; a tick saw it down
            assert srv.requests == []
            shift[0] = 11 * 60
            await wait_for(pilot, lambda: srv.requests, timeout=30)
            body = srv.requests[0].json()
            assert isinstance(body, dict) and body["title"].startswith("gone unreachable for 1"), body
            assert "Last error" in body["message"]
            await pilot.pause(2.5)
            assert len(srv.requests) == 1  # once while it stays down; `up` never
