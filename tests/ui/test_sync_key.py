"""`y` in the dashboard opens the sync screen on the selected instance, with the config's
paths; `gpu-tui local` has no `y`."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from gpu_tui.ui.factory import build_app, local_source
from gpu_tui.ui.screens.sync import SyncScreen

from sshhelp import config_text
from test_dashboard_pilot import make_app, state_of, wait_for

pytestmark = pytest.mark.sshd


async def test_y_opens_sync_for_the_selected_instance(sshd_instance, tmp_path: Path, monkeypatch) -> None:
    local = tmp_path / "proj"
    local.mkdir()
    (local / "train.py").write_text("print(1)\n")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    (tmp_path / "xdg" / "gpu-tui").mkdir(parents=True)
    (tmp_path / "xdg" / "gpu-tui" / "known_hosts").write_text(sshd_instance.host_public_key_line + "\n")
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    extra = f'sync = {{ local = "{local}", remote = "proj" }}\n'
    app = make_app(tmp_path, [sshd_instance], keys=extra)
    (tmp_path / "config.toml").write_text(config_text([sshd_instance], connect_timeout=2.0) + extra)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: state_of(app, sshd_instance.name) == "online")
        await pilot.press("y")
        screen = app.screen
        assert isinstance(screen, SyncScreen)
        await wait_for(pilot, lambda: "REMOTE" in str(screen.query_one("#paths", Static).render()))
        await pilot.press("p")
        await wait_for(pilot, lambda: screen.summary is not None or screen.error is not None, timeout=30)
        assert screen.error is None, screen.error
        assert (sshd_instance.home() / "proj" / "train.py").read_text() == "print(1)\n"


async def test_no_sync_key_on_this_machine(tmp_path: Path) -> None:
    app = build_app(local_source())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.5)
        assert app.check_action("sync", ()) is False
