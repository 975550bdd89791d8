"""`i` edits the selected instance's config entry: comments kept, emptied fields removed,
refusals shown in the form, and the dashboard watches it with the new settings. On an in-process
host (no root)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from pilothelp import inproc_app, inproc_config, state_of
from textual.widgets import Input, Static
from waiting import wait_for

from gpu_tui.ui.screens.edit import EditInstanceScreen


async def test_edit_rate_workdir_and_sync(inproc_fleet, tmp_path: Path) -> None:
    fleet = await inproc_fleet()
    extra = 'workdir = "/old"  # data disk\nstate_dir = "/tmp/gt-state"\n'
    text = "# my box\n" + inproc_config(fleet, keys=extra)
    app = inproc_app(tmp_path, fleet, keys=extra, write_config=False)
    (tmp_path / "config.toml").write_text(text)
    async with app.run_test(size=(80, 24)) as pilot:
        name = "gpu"
        await wait_for(pilot, lambda: state_of(app, name) == "online")
        await pilot.press("i")
        form = app.screen
        assert isinstance(form, EditInstanceScreen)
        assert form.query_one("#workdir", Input).value == "/old"
        form.query_one("#hourly_rate", Input).value = "cheap"
        await pilot.press("enter")
        assert isinstance(app.screen, EditInstanceScreen)
        assert "price 'cheap'" in str(form.query_one("#error", Static).render())
        assert form.query_one("#state_dir", Input).value == "/tmp/gt-state"
        form.query_one("#state_dir", Input).value = ""  # emptied: back to the default
        form.query_one("#hourly_rate", Input).value = "2.25"
        form.query_one("#workdir", Input).value = "/root/autodl-tmp"
        form.query_one("#sync_local", Input).value = str(tmp_path / "proj")
        form.query_one("#sync_exclude", Input).value = ".git *.ckpt"
        await pilot.press("enter")
        await wait_for(pilot, lambda: not isinstance(app.screen, EditInstanceScreen))
        await wait_for(pilot, lambda: app.fleet.views[name].config.hourly_rate == 2.25)
        await wait_for(pilot, lambda: state_of(app, name) == "online")
    written = (tmp_path / "config.toml").read_text()
    assert written.startswith("# my box\n") and 'workdir = "/root/autodl-tmp"  # data disk' in written
    entry = tomllib.loads(written)["instances"][0]
    assert entry["hourly_rate"] == 2.25 and "state_dir" not in entry
    assert entry["sync"] == {"local": str(tmp_path / "proj"), "exclude": [".git", "*.ckpt"]}
