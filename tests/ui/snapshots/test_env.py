"""The environment check (`c`) of the demo's training box: driver, CUDA, python, conda, torch,
disks and memory, each ok or not with its fix. The checks run on the instance: the test waits
for their result and for the env picker's list, then `settle` freezes the app."""

from __future__ import annotations

from textual.app import App
from textual.widgets import OptionList, Select, Static

from gpu_tui.ui.screens.env_check import EnvCheckScreen

from .shots import SIZES, demo_app, online, settled, steps, text_of, wait_for


def _checked(app: App[object]) -> bool:
    screen = app.screen
    if not isinstance(screen, EnvCheckScreen):
        return False
    envs = screen.query_one("#env", Select).query_one(OptionList).option_count
    return envs > 1 and "to fix" in text_of(screen.query_one("#checks", Static))


@SIZES
def test_env_check(snap_compare, size) -> None:
    run = steps(online(), "c", wait_for(_checked, "the environment check"), settled)
    assert snap_compare(demo_app(), terminal_size=size, run_before=run)
