"""`y`: push or pull the instance's sync directory, with progress and a summary.

Shows where LOCAL and REMOTE resolve to (CONTRACTS.md "Sync paths", `sync = {...}` in the
config), runs the same service as `gpu-tui sync` in a worker, and shows a bar, the current file
and the summary. Escape cancels a running sync (rsync is killed, SFTP stops; unfinished files
are kept and resumed next time), else goes back. Paths and file names are data, never markup.
"""

from __future__ import annotations

import asyncio

from pydantic import SecretStr
from rich.cells import cell_len
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, Footer, ProgressBar, Static

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.errors import GpuTuiError
from gpu_tui.core.i18n import N_, _
from gpu_tui.core.syncplan import Direction, SyncProgress, SyncSummary, summary_line
from gpu_tui.core.text import printable
from gpu_tui.core.units import format_bytes
from gpu_tui.remote.host import Host
from gpu_tui.services.sync.run import Transport, plan_sync, resolve_paths, run_sync
from gpu_tui.ui.screens.localise import pad, translate_bindings

__all__ = ["SyncScreen"]

DIRECTIONS = {"push": N_("push"), "pull": N_("pull")}
"""How a direction is shown (the code's words are `push` and `pull`)."""


class SyncScreen(Screen[None]):
    """Sync one instance. `config_path`: the config file the rsync transport logs in with (None:
    SFTP only, e.g. the demo); `password`: one typed this session (stored ones are found anyway)."""

    BINDINGS = [
        Binding("escape", "cancel_or_back", N_("Cancel / back")),
        Binding("p", "push", N_("Push")),
        Binding("l", "pull", N_("Pull")),
    ]
    DEFAULT_CSS = """
    SyncScreen > Vertical { padding: 1 2; height: auto; }
    SyncScreen #title { text-style: bold; margin-bottom: 1; }
    SyncScreen #paths { height: auto; }
    SyncScreen #buttons { height: 3; margin: 1 0; }
    SyncScreen #buttons Button { margin-right: 2; min-width: 24; }
    SyncScreen #progress { margin-top: 1; }
    SyncScreen #current, SyncScreen #status { height: auto; }
    """

    def __init__(
        self,
        inst: InstanceConfig,
        host: Host,
        *,
        config_path: str | None = None,
        password: SecretStr | None = None,
        bwlimit_kib: int | None = None,
    ) -> None:
        super().__init__()
        translate_bindings(self)
        self._inst, self._host = inst, host
        self._transport = Transport(config_path, inst.name, password) if config_path else None
        self._bwlimit = bwlimit_kib
        self.running: Direction | None = None
        self.summary: SyncSummary | None = None
        self.error: str | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(_("Sync {name}").format(name=self._inst.name)), id="title")
            yield Static(Text(_("finding the paths…"), style="dim"), id="paths")
            with Horizontal(id="buttons"):
                yield Button(_("Push  local → remote"), id="push", variant="primary")
                yield Button(_("Pull  remote → local"), id="pull")
            yield ProgressBar(total=100, show_eta=False, id="progress")
            yield Static("", id="current")
            yield Static(Text(_("p push, l pull; nothing is deleted on the receiving side"), style="dim"), id="status")
        yield Footer()

    def on_mount(self) -> None:
        self._show_paths()

    @work(group="sync-paths", exit_on_error=False)
    async def _show_paths(self) -> None:
        try:
            local, remote, _info = await resolve_paths(self._host, self._inst)
        except GpuTuiError as exc:
            self.query_one("#paths", Static).update(Text(exc.line(), style="red"))
            return
        t = Text()
        rows = ((_("LOCAL"), local), (_("REMOTE"), f"{self._inst.name}:{remote}"))
        width = max(cell_len(label) for label, _value in rows)
        for label, value in rows:
            t.append(pad(label, width) + "  ", style="bold")
            t.append(printable(value) + "\n")
        excludes = " ".join(self._inst.sync.exclude) or _("none")
        t.append(_("exclude") + " ", style="bold")
        t.append(printable(excludes), style="dim")
        self.query_one("#paths", Static).update(t)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "push":
            self._start("push")
        elif event.button.id == "pull":
            self._start("pull")

    def action_push(self) -> None:
        self._start("push")

    def action_pull(self) -> None:
        self._start("pull")

    def action_cancel_or_back(self) -> None:
        if self.running is not None:
            self._status(Text(_("cancelling…"), style="yellow"))
            self.workers.cancel_group(self, "sync")
        else:
            self.app.pop_screen()

    def _start(self, direction: Direction) -> None:
        if self.running is not None:
            return
        self.running, self.summary, self.error = direction, None, None
        self.query_one("#progress", ProgressBar).update(total=100, progress=0)
        self._status(Text(_("{direction}: starting…").format(direction=_(DIRECTIONS[direction]))))
        self._sync(direction)

    def _status(self, text: Text) -> None:
        self.query_one("#status", Static).update(text)

    def _progress(self, p: SyncProgress) -> None:
        frac = p.fraction
        bar = self.query_one("#progress", ProgressBar)
        if frac is not None:
            bar.update(total=100, progress=frac * 100)
        done = format_bytes(p.done)
        size = _("{done} of {total}").format(done=done, total=format_bytes(p.total)) if p.total else done
        line = Text(f"{size}  ", style="dim")
        line.append(printable(p.current))
        line.truncate(max(10, self.size.width - 4), overflow="ellipsis")
        self.query_one("#current", Static).update(line)

    @work(group="sync", exclusive=True, exit_on_error=False)
    async def _sync(self, direction: Direction) -> None:
        try:
            job = await plan_sync(
                self._host, self._inst, direction, transport=self._transport, bwlimit_kib=self._bwlimit
            )
            self._status(
                Text(
                    _("{direction} by {method} ({why})…").format(
                        direction=_(DIRECTIONS[direction]), method=job.method, why=job.why
                    )
                )
            )
            summary = await run_sync(self._host, job, transport=self._transport, on_progress=self._progress)
        except asyncio.CancelledError:
            self._status(Text(_("cancelled; unfinished files are kept and resumed next time"), style="yellow"))
            raise
        except GpuTuiError as exc:
            self.error = exc.line()
            self._status(Text(self.error, style="red"))
        else:
            self.summary = summary
            self.query_one("#progress", ProgressBar).update(total=100, progress=100)
            self._status(Text(printable(summary_line(summary, self._inst.name)), style="green"))
        finally:
            self.running = None
