"""`e`: the selected instance's conda envs (python, size, path) and what can be done to them.

Create, install, remove and `conda init` stream conda's output into the screen as it prints;
`x` cancels one by killing conda on the instance (services/killable.py), and leaving the screen
while one runs asks first. The list is re-read after every operation. The line under the list shows the selected env's
interpreter (`<prefix>/bin/python`, what PyCharm's SSH interpreter asks for); `p` copies it
through the terminal (OSC 52), `m` points conda's channels and pip's index at a mirror.
"""

from __future__ import annotations

import asyncio
import posixpath

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Log, Static

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.errors import GpuTuiError
from gpu_tui.core.i18n import N_, _
from gpu_tui.core.text import printable
from gpu_tui.core.units import format_bytes, format_latency_ms
from gpu_tui.remote.host import Host
from gpu_tui.services import conda as condasvc
from gpu_tui.services.conda import CondaInstall
from gpu_tui.services.killable import Killable
from gpu_tui.services.mirrors import set_mirror
from gpu_tui.ui.screens.conda_forms import CondaOp, MirrorPicker, create_form, install_form
from gpu_tui.ui.screens.confirm import ConfirmScreen
from gpu_tui.ui.screens.env_check import EnvCheckScreen
from gpu_tui.ui.screens.localise import styled, translate_bindings

__all__ = ["CondaScreen"]

MAX_LINES = 2000
PYTHON_CELLS = 7
"""`3.11.10`: a python version, as `env_pythons` reads it."""
SIZE_CELLS = 8
"""core/units.format_bytes' widest: `1023 MiB`."""
"""Output lines kept on screen; conda and pip print a few hundred for a big install."""
BUSY_ACTIONS = ("create", "install", "remove", "check", "init", "refresh", "mirror")


def screen_line(line: str) -> str:
    """What a terminal would show of one output line: the text after its last carriage return."""
    return printable(line.rsplit("\r", 1)[-1])


class CondaScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "back", N_("Back")),
        Binding("q", "back_q", N_("Back"), show=False),  # its own action: the footer groups by action
        Binding("n", "create", N_("New")),  # short labels: the footer fits 80 columns
        Binding("i", "install", N_("Install")),
        Binding("d", "remove", N_("Remove")),
        Binding("c", "check", N_("Check")),
        Binding("I", "init", "init"),
        # their hints are on the interpreter line: the footer is full at 80 columns
        Binding("p", "copy_python", N_("Copy python path"), show=False),
        Binding("m", "mirror", N_("Package mirror"), show=False),
        Binding("x", "cancel", N_("Cancel")),
        Binding("r", "refresh", N_("Refresh")),
    ]
    DEFAULT_CSS = """
    CondaScreen #title { height: 1; padding: 0 1; }
    CondaScreen #envs { height: auto; max-height: 45%; }
    CondaScreen #interp { height: 1; padding: 0 1; }
    CondaScreen #output { height: 1fr; border-top: solid $primary; }
    """

    def __init__(self, inst: InstanceConfig, host: Host, *, mirrors: bool = True) -> None:
        super().__init__()
        translate_bindings(self)
        self._inst, self._host = inst, host
        self._mirrors = mirrors
        """Whether `m` can set a mirror there (not on the demo's simulated instances)."""
        self.install: CondaInstall | None = None
        self.proc: Killable | None = None
        self.listing = True
        self.mirroring = False
        self._enabled: tuple[bool | None, ...] = ()

    def compose(self) -> ComposeResult:
        yield Static(
            Text(_("conda on {name}: looking for conda…").format(name=self._inst.name), style="bold"), id="title"
        )
        table: DataTable[str] = DataTable(id="envs", cursor_type="row", zebra_stripes=True)
        # python and size arrive after the rows: fixed widths, because a DataTable widened on its
        # idle keeps lines it rendered before at the old width (`182 MiB` shown as `182`)
        table.add_column(_("env"))
        table.add_column("python", width=PYTHON_CELLS)
        table.add_column(_("size"), width=SIZE_CELLS)
        table.add_column(_("path"))
        yield table
        yield Static("", id="interp")
        yield Log(id="output", max_lines=MAX_LINES)
        yield Footer(compact=True)  # eight keys: compact, so `r` still fits 80 columns

    def on_mount(self) -> None:
        self.query_one("#envs", DataTable).focus()
        self.reload()

    # ----- the list
    @property
    def selected_env(self) -> str | None:
        table = self.query_one("#envs", DataTable)
        if self.install is None or not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return key if key in self.install.envs else None

    @property
    def interpreter(self) -> str | None:
        """The selected env's python, as PyCharm's SSH interpreter wants it."""
        env = self.selected_env
        if self.install is None or env is None:
            return None
        return posixpath.join(self.install.envs[env], "bin", "python")

    def _show_interpreter(self) -> None:
        path = self.interpreter
        line = Text()
        if path is not None:
            line.append("p", style="bold")
            line.append(" " + _("copy") + "  ", style="dim")
            if self._mirrors:
                line.append("m", style="bold")
                line.append(" " + _("mirror") + "  ", style="dim")
            line.append(_("python for PyCharm: "), style="dim")
            line.append(printable(path))
        self.query_one("#interp", Static).update(line)

    @work(exclusive=True, group="conda-list", exit_on_error=False)
    async def reload(self) -> None:
        self.listing = True
        self._bindings_changed()
        title = self.query_one("#title", Static)
        try:
            await self._load(title)
        except GpuTuiError as exc:
            line = _("conda on {name}: {error}").format(name=self._inst.name, error=exc.line())
            title.update(Text(line, style="red"))
        finally:
            self.listing = False
            self._bindings_changed()

    async def _load(self, title: Static) -> None:
        install = await condasvc.conda_envs(self._host)
        self.install = install
        table = self.query_one("#envs", DataTable)
        if install is None:
            table.clear()
            title.update(
                Text(
                    _(
                        "conda on {name}: no conda found (looked in $CONDA_EXE, PATH, ~/miniconda3, "
                        "~/anaconda3, ~/miniforge3, /opt/conda). Install miniconda there first."
                    ).format(name=self._inst.name),
                    style="yellow",
                )
            )
            return
        title.update(
            Text.assemble(
                (_("conda on {name}").format(name=self._inst.name), "bold"), ("  " + printable(install.exe), "dim")
            )
        )
        keep = self.selected_env
        table.clear()
        for name, prefix in install.envs.items():
            table.add_row(printable(name), "…", "…", printable(prefix), key=name)
        if keep in install.envs:
            table.move_cursor(row=table.get_row_index(keep))
        self._show_interpreter()
        # the list may have grown a row: keep the output's last line in sight
        self.call_after_refresh(self.query_one("#output", Log).scroll_end, animate=False)
        pythons = await condasvc.env_pythons(self._host, install)
        for name, version in pythons.items():
            table.update_cell(name, table.ordered_columns[1].key, version or "-")
        sizes = await condasvc.env_sizes(self._host, install)
        for name, size in sizes.items():
            table.update_cell(name, table.ordered_columns[2].key, format_bytes(size))

    # ----- operations
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        busy = self.proc is not None or self.mirroring
        if action == "mirror" and not self._mirrors:
            return False
        if action == "copy_python":
            return True if self.interpreter is not None else None
        if action == "cancel":
            return True if busy else None
        if action in BUSY_ACTIONS:
            if busy or (self.listing and action != "refresh"):
                return None
            if action == "mirror":
                return True
            if action in ("create", "init"):
                return True if self.install is not None else None
            if action in ("install", "remove", "check"):
                env = self.selected_env
                return True if env is not None and not (action == "remove" and env == "base") else None
        return True

    def on_data_table_row_highlighted(self, _event: DataTable.RowHighlighted) -> None:
        self._show_interpreter()
        self._bindings_changed()

    def action_copy_python(self) -> None:
        path = self.interpreter
        if path is not None:
            self.app.copy_to_clipboard(path)  # OSC 52: reaches the laptop's clipboard over SSH too
            self.notify(_("copied {path}").format(path=printable(path)), markup=False)

    def action_mirror(self) -> None:
        self.app.push_screen(MirrorPicker(self._inst.name), self._mirror_chosen)

    def _mirror_chosen(self, mirror: str | None) -> None:
        if mirror is not None and not self.mirroring and self.proc is None:
            self.mirroring = True
            self._bindings_changed()
            self.run_mirror(mirror)

    @work(exclusive=True, group="conda-mirror", exit_on_error=False)
    async def run_mirror(self, mirror: str) -> None:
        out = self.query_one("#output", Log)
        out.write_line(f"$ gpu-tui conda {self._inst.name} mirror {mirror}")
        try:
            result = await set_mirror(self._host, self._inst.state_dir, mirror)
        except GpuTuiError as exc:
            out.write_line(exc.line())
            self.notify(exc.line(), severity="error", markup=False)
            return
        finally:
            self.mirroring = False
            self._bindings_changed()
        for line in result.written:
            out.write_line(printable(line))
        for a in result.answers:
            if a.answers:
                out.write_line(printable(_("{url} answers in {time}").format(url=a.url, time=format_latency_ms(a.ms))))
            else:
                out.write_line(
                    printable(
                        _("{url} does not answer from the instance: {error}").format(
                            url=a.url, error=a.error or (f"HTTP {a.status}" if a.status else _("no answer"))
                        )
                    )
                )
        silent = any(not a.answers for a in result.answers)
        self.notify(
            _("{name}: mirror {mirror} set; it does not answer from the instance yet").format(
                name=self._inst.name, mirror=mirror
            )
            if silent
            else _("{name}: mirror {mirror} set").format(name=self._inst.name, mirror=mirror),
            severity="warning" if silent else "information",
            markup=False,
        )

    def _bindings_changed(self) -> None:
        """Rebuild the footer only when a key's enabled state changed: each rebuild recomposes
        it, and rebuilds in quick succession (a list being filled) can leave it blank."""
        state = tuple(self.check_action(b.action, ()) for b in self.BINDINGS if isinstance(b, Binding))
        if state != self._enabled:
            self._enabled = state
            self.refresh_bindings()

    def action_refresh(self) -> None:
        self.reload()

    def action_create(self) -> None:
        install = self.install
        if install is None:
            return

        def check(name: str, python: str) -> CondaOp:
            return CondaOp(f"conda create -n {name} python={python}", condasvc.create_command(install, name, python))

        self.app.push_screen(create_form(self._inst.name, check), self._start)

    def action_install(self) -> None:
        install, env = self.install, self.selected_env
        if install is None or env is None:
            return

        def check(packages: list[str], pip: bool) -> CondaOp:
            command = condasvc.install_command(install, env, packages, pip=pip)
            how = "pip install" if pip else f"conda install -n {env}"
            return CondaOp(f"{how} {' '.join(packages)}", command)

        self.app.push_screen(install_form(self._inst.name, env, check), self._start)

    def action_remove(self) -> None:
        install, env = self.install, self.selected_env
        if install is None or env is None:
            return
        try:
            op = CondaOp(f"conda env remove -n {env}", condasvc.remove_command(install, env))
        except GpuTuiError as exc:
            self.notify(printable(exc.message), title=_(exc.title), severity="warning", markup=False)
            return
        question = styled(
            _("Remove conda env {env} on {instance}?"), env=(env, "bold"), instance=(self._inst.name, "bold")
        )
        question.append("\n")
        question.append(
            _("It deletes {path} and everything installed in it.").format(path=printable(install.envs[env])),
            style="dim",
        )
        self.app.push_screen(ConfirmScreen(question, yes=_("Remove")), lambda yes: self._start(op) if yes else None)

    def action_init(self) -> None:
        install = self.install
        if install is None:
            return
        op = CondaOp("conda init bash", condasvc.init_command(install))
        question = styled(
            _("Run {command} on {instance}?"), command=("conda init bash", "bold"), instance=(self._inst.name, "bold")
        )
        question.append("\n")
        question.append(
            _("It adds conda's block to ~/.bashrc; `conda activate` then works in NEW shells."), style="dim"
        )
        self.app.push_screen(ConfirmScreen(question, yes=_("Run")), lambda yes: self._start(op) if yes else None)

    def action_check(self) -> None:
        env = self.selected_env
        if env is not None:
            self.app.push_screen(EnvCheckScreen(self._inst, self._host, env=env))

    def _start(self, op: CondaOp | None) -> None:
        if op is not None and self.proc is None:
            self.proc = Killable(self._host, op.command)
            self._bindings_changed()
            self.run_op(op, self.proc)

    @work(exclusive=True, group="conda-op", exit_on_error=False)
    async def run_op(self, op: CondaOp, proc: Killable) -> None:
        out = self.query_one("#output", Log)
        out.write_line(f"$ {op.title}")
        try:
            async for line in proc.lines():
                out.write_line(screen_line(line))
        except GpuTuiError as exc:
            out.write_line(exc.line())
        except asyncio.CancelledError:
            await proc.cancel()  # the screen went away: do not leave conda running there
            raise
        finally:
            self.proc = None
            self._bindings_changed()
        if proc.cancelled:
            out.write_line(_("cancelled"))
        elif proc.exit_status == 0:
            out.write_line(_("done"))
            self.notify(printable(_("{name}: {op}: done").format(name=self._inst.name, op=op.title)), markup=False)
        else:
            out.write_line(_("failed (exit {status})").format(status=proc.exit_status))
            failed = printable(
                _("{name}: {op} failed (exit {status})").format(
                    name=self._inst.name, op=op.title, status=proc.exit_status
                )
            )
            self.notify(failed, severity="error", markup=False)
        self.reload()

    def action_cancel(self) -> None:
        if self.proc is not None:
            self.query_one("#output", Log).write_line(_("cancelling: stopping conda on the instance…"))
            self.cancel_op(self.proc)

    @work(group="conda-cancel", exit_on_error=False)
    async def cancel_op(self, proc: Killable) -> None:
        if not await proc.cancel():
            self.notify(
                _("{name}: conda did not stop; it may still be running there").format(name=self._inst.name),
                severity="error",
                markup=False,
            )

    def action_back_q(self) -> None:
        self.action_back()

    def action_back(self) -> None:
        proc = self.proc
        if proc is None:
            self.app.pop_screen()
            return

        def answer(yes: bool | None) -> None:
            if yes:
                # on the app, not this screen: the screen's own workers end when it is popped
                self.app.run_worker(proc.cancel(), group="conda-cancel", exit_on_error=False)
                self.app.pop_screen()

        question = _("An operation is still running. Cancel it and go back?")
        self.app.push_screen(ConfirmScreen(question, yes=_("Cancel it")), answer)
