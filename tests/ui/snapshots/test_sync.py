"""The sync screen (`y`): where LOCAL and REMOTE resolve to, the excludes, push and pull.

The demo offers no sync (and its servers answer no `$HOME` / rsync probe), so the screen shows
the fixed example instance (shots.EXAMPLE) against a host that answers only that probe.
"""

from __future__ import annotations

from stubhost import StubHost
from textual.app import App
from textual.widgets import Static

from gpu_tui.remote.host import CommandResult
from gpu_tui.ui.screens.sync import SyncScreen

from .shots import EXAMPLE, SIZES, HostApp, steps, text_of, wait_for

RSYNC_VERSION = "rsync  version 3.2.7  protocol version 31"


class ProbeHost(StubHost):
    """Answers the sync screen's one question (services/sync/run.py PROBE): the home and rsync's version."""

    name = EXAMPLE.name

    async def run(self, command: str, *, timeout: float | None = 30.0, stdin: str | None = None) -> CommandResult:
        assert "rsync --version" in command, command
        return CommandResult(0, f"/root\n{RSYNC_VERSION}\n", "")


def _paths_shown(app: App[object]) -> bool:
    screen = app.screen
    return isinstance(screen, SyncScreen) and "REMOTE" in text_of(screen.query_one("#paths", Static))


@SIZES
def test_sync(snap_compare, size) -> None:
    app = HostApp(lambda: SyncScreen(EXAMPLE, ProbeHost()))
    assert snap_compare(app, terminal_size=size, run_before=steps(wait_for(_paths_shown, "the sync paths")))
