"""`y` in the dashboard opens the sync screen on the selected instance, with the config's
paths; `gpu-tui local` has no `y`."""

from __future__ import annotations

from pathlib import Path

from pilothelp import make_app, state_of
from sshhelp import env_for_children
from textual.widgets import Static
from waiting import wait_for

from gpu_tui.ui.factory import build_app, local_source
from gpu_tui.ui.screens.sync import SyncScreen


async def test_y_opens_sync_for_the_selected_instance(sshd_instance, tmp_path: Path, monkeypatch) -> None:
    local = tmp_path / "proj"
    local.mkdir()
    (local / "train.py").write_text("print(1)\n")
    env_for_children(monkeypatch, tmp_path, sshd_instance)  # rsync's transport child
    extra = f'sync = {{ local = "{local}", remote = "proj" }}\n'
    app = make_app(tmp_path, [sshd_instance], keys=extra, write_config=True)
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
        await wait_for(pilot, lambda: app.fleet is not None)
        assert app.dashboard.check_action("sync", ()) is False
