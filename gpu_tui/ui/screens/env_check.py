"""`c`: the environment check of the selected instance, each check ok or not with its fix.

A picker at the top chooses the python that torch and paddle are imported in: the default
(conda's base where conda exists, else the python on PATH) or one of the instance's conda envs.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Label, Select, Static

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.env.check import Check, build_checks
from gpu_tui.core.errors import GpuTuiError
from gpu_tui.core.i18n import N_, _
from gpu_tui.core.text import printable
from gpu_tui.remote.host import Host
from gpu_tui.services.conda import conda_envs
from gpu_tui.services.envcheck import check_environment
from gpu_tui.ui.screens.localise import pad, translate_bindings

__all__ = ["EnvCheckScreen", "checks_text"]

DEFAULT_ENV = N_("(default python)")
"""The picker's value for no env (shown translated)."""


def checks_text(name: str, checks: list[Check], env: str | None = None) -> Text:
    t = Text()
    head = _("Environment of {name}, conda env {env}") if env else _("Environment of {name}")
    t.append(head.format(name=name, env=env) + "\n\n", style="bold")
    width = max((cell_len(c.name) for c in checks), default=0)
    ok, no = _("ok"), _("NO")
    mark = max(cell_len(ok), cell_len(no))
    for c in checks:
        t.append(f" {pad(ok if c.ok else no, mark)} ", style="bold green" if c.ok else "bold red")
        t.append(f" {pad(c.name, width)}  ", style="bold")
        t.append(printable(c.detail) + "\n")
        if c.fix:
            t.append(" " * (mark + 3 + width + 2) + _("fix:") + " ", style="yellow")
            t.append(printable(c.fix) + "\n")
    failed = sum(not c.ok for c in checks)
    summary = _("{ok} ok, {failed} to fix.  r: check again").format(ok=len(checks) - failed, failed=failed)
    t.append("\n" + summary, style="dim")
    return t


class EnvCheckScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "back", N_("Back")),
        Binding("q", "app.pop_screen", N_("Back"), show=False),  # its own action: the footer groups by action
        Binding("r", "recheck", N_("Check again")),
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
        translate_bindings(self)
        self._inst, self._host = inst, host
        self.env = env

    def compose(self) -> ComposeResult:
        with Horizontal(id="picker"):
            yield Label(_("torch checked in"))
            first = self.env or DEFAULT_ENV
            yield Select([(self.env or _(DEFAULT_ENV), first)], value=first, allow_blank=False, id="env")
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
        select.set_options([(_(DEFAULT_ENV), DEFAULT_ENV)] + [(n, n) for n in names])
        select.value = self.env if self.env in names else DEFAULT_ENV

    def on_select_changed(self, event: Select.Changed) -> None:
        env = event.value if isinstance(event.value, str) and event.value != DEFAULT_ENV else None
        if env != self.env:
            self.env = env
            self.action_recheck()

    def action_recheck(self) -> None:
        if self.env:
            line = _("checking {name} in env {env}… (importing torch can take a while)")
        else:
            line = _("checking {name}… (importing torch can take a while)")
        self.query_one("#checks", Static).update(Text(line.format(name=self._inst.name, env=self.env), style="dim"))
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
