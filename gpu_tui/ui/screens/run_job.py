"""`r`: start a detached job on the selected instance: command, working dir, conda env, name.

The env list is read from the instance in the background (conda is slow to start); the form
stays usable meanwhile. A refusal (empty command, missing directory, unknown env) is shown in
the form, which stays open, before anything runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

from gpu_tui.core.errors import GpuTuiError
from gpu_tui.core.i18n import N_, _
from gpu_tui.core.jobs import JobRequest, new_job_id
from gpu_tui.services.conda import CondaInstall
from gpu_tui.ui.screens.form_css import compact_form_css, fit_labels
from gpu_tui.ui.screens.localise import styled, translate_bindings

__all__ = ["RunJobScreen", "ClusterAsk"]

ClusterAsk = tuple[str, str, str]
"""On a SLURM login node, what the form asks beyond the job: (GPUs, partition, time limit) as
typed (empty: the instance's `slurm` default)."""

NO_ENV = N_("(no conda env)")
_LOADING, _UNREADABLE, _NO_CONDA = "\x00loading", "\x00unreadable", "\x00no-conda"
"""The env picker's value for no env (shown translated)."""


class RunJobScreen(ModalScreen[JobRequest | None]):
    BINDINGS = [Binding("escape", "dismiss(None)", N_("Cancel"))]
    # compact: one row per field, so the form fits an 80x24 terminal
    DEFAULT_CSS = compact_form_css("RunJobScreen")

    def __init__(
        self,
        instance: str,
        workdir: str | None,
        load_envs: Callable[[], Awaitable[CondaInstall | None]],
        start: Callable[[JobRequest, ClusterAsk | None], Awaitable[JobRequest]],
        cluster: ClusterAsk | None = None,
    ) -> None:
        """`cluster`: a SLURM login node's defaults (GPUs, partition, time), shown as fields in
        place of tmux (a batch job runs on a compute node); None elsewhere."""
        super().__init__()
        translate_bindings(self)
        self._instance, self._workdir = instance, workdir
        self._load_envs, self._start = load_envs, start
        self._cluster = cluster
        self._envs: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            title = styled(_("Run a job on {instance}"), "bold", instance=(self._instance, "cyan"))
            title.append("  " + _("(it keeps running when you disconnect)"), style="dim")
            yield Static(title)
            with Horizontal(classes="row"):
                yield Label(_("Command"))
                yield Input(placeholder=_("python train.py --epochs 10  (one line; ; and && work)"), id="command")
            with Horizontal(classes="row"):
                yield Label(_("Directory"))
                yield Input(value=self._workdir or "", placeholder=_("~ (the home directory)"), id="cwd")
            with Horizontal(classes="row"):
                yield Label(_("Conda env"))
                yield Select([(_(NO_ENV), NO_ENV)], value=NO_ENV, allow_blank=False, id="env")
            with Horizontal(classes="row"):
                yield Label(_("Name"))
                yield Input(placeholder=_("optional: `l` and `gpu-tui logs` accept it"), id="name")
            if self._cluster is None:
                yield Checkbox(_("run inside tmux (tmux attach -t gpu-tui-ID)"), id="tmux")
            else:
                gpus, partition, limit = self._cluster
                with Horizontal(classes="row"):
                    yield Label(_("GPUs"))
                    yield Input(value=gpus, placeholder="1", id="gpus")
                    yield Label(_("Partition"))
                    yield Input(value=partition, placeholder=_("default"), id="partition")
                    yield Label(_("Time"))
                    yield Input(value=limit, placeholder="04:00:00", id="time")
            yield Static("", id="error")
            with Horizontal(classes="buttons"):
                yield Button(_("Start"), id="start", variant="primary")
                yield Button(_("Cancel"), id="cancel")

    def on_mount(self) -> None:
        fit_labels(self)
        self.query_one("#command", Input).focus()
        self.load_envs()

    @work(exclusive=True, group="envs", exit_on_error=False)
    async def load_envs(self) -> None:
        select = self.query_one("#env", Select)
        # each state its own value: a Select keeps showing its old label when set_options leaves
        # the value as it was (the picker said "loading…" after the envs had come)
        select.set_options([(_("loading conda environments…"), _LOADING)])
        try:
            install = await self._load_envs()
        except GpuTuiError as exc:
            select.set_options([(f"{_(NO_ENV)}: {exc.shown_title}", _UNREADABLE)])
            return
        if install is None:
            select.set_options([(_("(no conda env): no conda on the instance"), _NO_CONDA)])
            return
        self._envs = dict(install.envs)
        select.set_options([(_(NO_ENV), NO_ENV)] + [(name, name) for name in sorted(self._envs)])
        select.value = NO_ENV

    def _request(self) -> JobRequest:
        env = self.query_one("#env", Select).value
        env_name = env if isinstance(env, str) and env in self._envs else None
        return JobRequest(
            id=new_job_id(),
            command=self.query_one("#command", Input).value,
            cwd=self.query_one("#cwd", Input).value.strip() or None,
            conda_env=env_name,
            conda_prefix=self._envs.get(env_name) if env_name else None,
            name=self.query_one("#name", Input).value.strip() or None,
            tmux=self._cluster is None and self.query_one("#tmux", Checkbox).value,
        )

    def _asked(self) -> ClusterAsk | None:
        if self._cluster is None:
            return None

        def typed(field: str) -> str:
            return self.query_one(f"#{field}", Input).value.strip()

        return typed("gpus"), typed("partition"), typed("time")

    @work(exclusive=True, group="start", exit_on_error=False)
    async def submit(self) -> None:
        error = self.query_one("#error", Static)
        req = self._request()
        if not req.command.strip():
            error.update(_("Type the command to run first."))
            return
        error.update(Text(_("starting…"), style="dim"))
        self.query_one("#start", Button).disabled = True
        try:
            started = await self._start(req, self._asked())
        except GpuTuiError as exc:
            error.update(Text(exc.line()))
            return
        finally:
            self.query_one("#start", Button).disabled = False
        self.dismiss(started)

    def on_input_submitted(self, _event: Input.Submitted) -> None:
        self.submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "start":
            self.submit()
        else:
            self.dismiss(None)
