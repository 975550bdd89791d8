"""An error whose message quotes an instance (`[bold]x[/]`, escape sequences) reaches the screen as
plain, printable text: never as Rich/Textual markup, never as terminal control."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

from stubhost import StubHost
from textual.app import App
from textual.screen import Screen
from textual.widgets import Static

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.errors import ConnectionLost
from gpu_tui.remote.host import ByteStream, CommandResult, LineStream
from gpu_tui.services.conda import CondaInstall
from gpu_tui.ui.screens.conda import CondaScreen
from gpu_tui.ui.screens.sync import SyncScreen

HOSTILE = "gpu: the shell said [bold]x[/] \x1b[31mred\x1b[0m\x07 [link=https://evil]here[/link]"
SHOWN = "offline: gpu: the shell said [bold]x[/] red? [link=https://evil]here[/link]"


class BrokenHost(StubHost):
    """Every command fails with HOSTILE."""

    name = "gpu"

    async def run(self, command: str, *, timeout: float | None = 30.0, stdin: str | None = None) -> CommandResult:
        raise ConnectionLost(HOSTILE)

    def stream(self, command: str) -> AbstractAsyncContextManager[LineStream]:
        raise ConnectionLost(HOSTILE)

    def stream_bytes(self, command: str) -> AbstractAsyncContextManager[ByteStream]:
        raise ConnectionLost(HOSTILE)


class OneScreen(App[None]):
    def __init__(self, screen: Screen[None]) -> None:
        super().__init__()
        self._first = screen

    def on_mount(self) -> None:
        self.push_screen(self._first)


INST = InstanceConfig(name="gpu", host="gpu.example", port=22)


def shown(static: Static) -> str:
    return str(static.render())


async def test_sync_screen_shows_the_error_literally() -> None:
    screen = SyncScreen(INST, BrokenHost())
    async with OneScreen(screen).run_test() as pilot:
        await pilot.pause(0.2)
        paths = screen.query_one("#paths", Static)
        assert shown(paths) == SHOWN
        assert "\x1b" not in shown(paths)


async def test_conda_screen_title_and_notification_are_not_markup() -> None:
    screen = CondaScreen(INST, BrokenHost())
    app = OneScreen(screen)
    async with app.run_test() as pilot:
        await pilot.pause(0.2)
        assert shown(screen.query_one("#title", Static)) == f"conda on gpu: {SHOWN}"
        # an env name as the instance listed it: refused, and the refusal quotes it
        hostile_env = "[bold]x[/]\x1b[2J"
        screen.install = CondaInstall(exe="/opt/conda/bin/conda", envs={hostile_env: "/opt/conda/envs/x"})
        table = screen.query_one("#envs")
        table.add_row("x", "-", "-", "-", key=hostile_env)  # type: ignore[attr-defined]
        await pilot.pause()
        screen.action_remove()
        await pilot.pause()
        note = list(app._notifications)[-1]
        assert note.markup is False and "[bold]x[/]" in note.message and "\x1b" not in note.message
