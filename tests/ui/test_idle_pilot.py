"""Idle warnings: a billing instance whose GPUs all stay under idle_util_percent with no job
running for idle_minutes says so on its row and in a notification; a busy one does not."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from pilothelp import state_of
from sshhelp import config_text
from waiting import wait_for

from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import parse_settings
from gpu_tui.ui.factory import build_app, config_source

pytestmark = pytest.mark.sshd


async def test_idle_instance_is_called_out(sshd_factory, tmp_path: Path) -> None:
    idle = sshd_factory("idle", capture="rtx-4080")  # 7 % in the capture
    busy = sshd_factory("busy", capture="h100-80gb")  # 100 %
    text = config_text([idle, busy], connect_timeout=2.0).replace(
        "refresh_seconds = 0.5\n", "refresh_seconds = 0.5\nidle_util_percent = 10\nidle_minutes = 15\n")
    settings = parse_settings(text)
    paths = Paths(tmp_path / "config.toml", tmp_path / "data", tmp_path / "log", tmp_path / "x", tmp_path / "y")
    paths.data_dir.mkdir(parents=True)
    paths.app_known_hosts.write_text(idle.host_public_key_line + "\n" + busy.host_public_key_line + "\n")
    shift = [0.0]
    app = build_app(config_source(settings, paths, SecretStore(environ={})), settings, clock=lambda: time.time() + shift[0])
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.fleet.views["idle"].frame is not None and app.fleet.views["busy"].frame is not None)
        assert app.fleet.views["idle"].idle_seconds(app.clock()) is not None
        assert app.fleet.views["busy"].idle_seconds(app.clock()) is None
        assert "online idle" not in app.dashboard.table._lines["idle"].plain  # not for 15 minutes yet
        shift[0] = 16 * 60  # a quarter of an hour later
        await wait_for(pilot, lambda: "online idle" in app.dashboard.table._lines["idle"].plain, timeout=5)
        assert "online idle" not in app.dashboard.table._lines["busy"].plain and state_of(app, "busy") == "online"
        notes = [n.message for n in app._notifications]
        assert any(m.startswith("idle has been idle 16 min") and "¥1.5/h" in m for m in notes), notes
        assert not any(m.startswith("busy has been idle") for m in notes)
        assert "idle 16 min" in app.dashboard.host_panel.render_view(app.fleet.views["idle"], app.clock()).plain
        await pilot.pause(1.5)
        assert sum(m.startswith("idle has been idle") for m in (n.message for n in app._notifications)) == 1  # once


async def test_daily_budget_warning_once(sshd_instance, tmp_path: Path) -> None:
    text = config_text([sshd_instance], connect_timeout=2.0).replace(
        "refresh_seconds = 0.5\n", "refresh_seconds = 0.5\nbudget_daily = 0.0001\n")
    settings = parse_settings(text)
    paths = Paths(tmp_path / "config.toml", tmp_path / "data", tmp_path / "log", tmp_path / "x", tmp_path / "y")
    paths.data_dir.mkdir(parents=True)
    paths.app_known_hosts.write_text(sshd_instance.host_public_key_line + "\n")
    shift = [0.0]
    app = build_app(config_source(settings, paths, SecretStore(environ={})), settings, clock=lambda: time.time() + shift[0])
    async with app.run_test(size=(100, 30)) as pilot:
        name = sshd_instance.name
        await wait_for(pilot, lambda: app.fleet.views[name].stats is not None)  # a sighting in the ledger
        budget = lambda: [n for n in app._notifications if n.title == "budget"]  # noqa: E731
        shift[0] = 31  # the next budget check
        await wait_for(pilot, lambda: budget(), timeout=5)
        assert "passed your daily budget of ¥0.0001" in budget()[0].message
        shift[0] = 62
        await pilot.pause(1.5)
        assert len(budget()) == 1  # once a day
