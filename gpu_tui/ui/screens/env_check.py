"""`c`: the environment check of the selected instance, each check ok or not with its fix.

A picker at the top chooses the python that torch and paddle are imported in: the default
(conda's base where conda exists, else the python on PATH) or one of the instance's conda envs.
"""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Label, Select, Static

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.envcheck import Check, build_checks
from gpu_tui.core.errors import GpuTuiError
from gpu_tui.core.text import printable
from gpu_tui.remote.host import Host
from gpu_tui.services.conda import conda_envs
from gpu_tui.services.envcheck import check_environment

__all__ = ["EnvCheckScreen", "checks_text"]

DEFAULT_ENV = "(default python)"


def checks_text(name: str, checks: list[Check], env: str | None = None) -> Text:
    t = Text()
    t.append(f"Environment of {name}" + (f", conda env {env}" if env else "") + "\n\n", style="bold")
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
    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("q", "app.pop_screen", "Back", show=False),  # its own action: the footer groups by action
        Binding("r", "recheck", "Check again"),
    ]
    DEFAULT_CSS = """
    EnvCheckScreen #picker { height: 1; padding: 0 2; margin-top: 1; }
    EnvCheckScreen #picker > Label { width: 16; }
    EnvCheckScreen #picker Select { width: 40; }
    EnvCheckScreen #picker SelectCurrent { border: none; height: 1; padding: 0 1; }
    EnvCheckScreen VerticalScroll { padding: 1 2; }
    """

    def __init__(self, inst: InstanceConfig, host: Host, env: str | None = None) -> None:
        super().__init__()
        self._inst, self._host = inst, host
        self.env = env

    def compose(self) -> ComposeResult:
        with Horizontal(id="picker"):
            yield Label("torch checked in")
            first = self.env or DEFAULT_ENV
            yield Select([(first, first)], value=first, allow_blank=False, id="env")
        with VerticalScroll():
            yield Static(id="checks")
        yield Footer()

    def action_back(self) -> None:
        self.app.pop_screen()

    def on_mount(self) -> None:
        self.load_envs()
        self.action_recheck()

    @work(exclusive=True, group="envs", exit_on_error=False)
    async def load_envs(self) -> None:
        select = self.query_one("#env", Select)
        try:
            install = await conda_envs(self._host)
        except GpuTuiError:
            return  # the check itself reports what is wrong with conda
        names = sorted(install.envs) if install is not None else []
        select.set_options([(DEFAULT_ENV, DEFAULT_ENV)] + [(n, n) for n in names])
        select.value = self.env if self.env in names else DEFAULT_ENV

    def on_select_changed(self, event: Select.Changed) -> None:
        env = event.value if isinstance(event.value, str) and event.value != DEFAULT_ENV else None
        if env != self.env:
            self.env = env
            self.action_recheck()

    def action_recheck(self) -> None:
        where = f" in env {self.env}" if self.env else ""
        self.query_one("#checks", Static).update(
            Text(f"checking {self._inst.name}{where}… (importing torch can take a while)", style="dim"))
        self.run_check()

    @work(exclusive=True, group="envcheck", exit_on_error=False)
    async def run_check(self) -> None:
        env = self.env
        try:
            facts = await check_environment(self._host, self._inst, env)
        except GpuTuiError as exc:
            self.query_one("#checks", Static).update(Text(exc.line(), style="red"))
            return
        self.query_one("#checks", Static).update(checks_text(self._inst.name, build_checks(facts), env))
