"""`c`: the environment check of the selected instance, each check ok or not with its fix."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.envcheck import Check, build_checks
from gpu_tui.core.errors import GpuTuiError
from gpu_tui.core.text import printable
from gpu_tui.remote.host import Host
from gpu_tui.services.envcheck import check_environment

__all__ = ["EnvCheckScreen", "checks_text"]


def checks_text(name: str, checks: list[Check]) -> Text:
    t = Text()
    t.append(f"Environment of {name}\n\n", style="bold")
    width = max((len(c.name) for c in checks), default=0)
    for c in checks:
        t.append(" ok " if c.ok else " NO ", style="bold green" if c.ok else "bold red")
        t.append(f" {c.name:<{width}}  ", style="bold")
        t.append(printable(c.detail) + "\n")
        if c.fix:
            t.append(f"{'':>5}{'':<{width}}  fix: ", style="yellow")
            t.append(printable(c.fix) + "\n")
    failed = sum(not c.ok for c in checks)
    t.append(f"\n{len(checks) - failed} ok, {failed} to fix.  r: check again", style="dim")
    return t


class EnvCheckScreen(Screen[None]):
    BINDINGS = [Binding("escape,q", "app.pop_screen", "Back"), Binding("r", "recheck", "Check again")]
    DEFAULT_CSS = """
    EnvCheckScreen VerticalScroll { padding: 1 2; }
    """

    def __init__(self, inst: InstanceConfig, host: Host) -> None:
        super().__init__()
        self._inst, self._host = inst, host

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id="checks")
        yield Footer()

    def on_mount(self) -> None:
        self.action_recheck()

    def action_recheck(self) -> None:
        self.query_one("#checks", Static).update(Text(f"checking {self._inst.name}… (importing torch can take a while)", style="dim"))
        self.run_check()

    @work(exclusive=True, group="envcheck", exit_on_error=False)
    async def run_check(self) -> None:
        try:
            facts = await check_environment(self._host, self._inst)
        except GpuTuiError as exc:
            self.query_one("#checks", Static).update(Text(f"{exc.title}: {exc.message}", style="red"))
            return
        self.query_one("#checks", Static).update(checks_text(self._inst.name, build_checks(facts)))
