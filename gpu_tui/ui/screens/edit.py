"""`i`: edit the selected instance's entry in the config file (price, provider, directories,
shutdown, sync). The file is rewritten atomically with its comments kept, and the result is
validated before it replaces the old one; a refusal stays in the form. The login (host, port,
user) is not edited here: add the instance again with `a`, which tests the new login first.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static

from gpu_tui.config.edit import REMOVE
from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.errors import GpuTuiError
from gpu_tui.core.i18n import N_, _
from gpu_tui.core.money.cost import parse_hourly_rate
from gpu_tui.ui.screens.form_css import compact_form_css, fit_labels
from gpu_tui.ui.screens.localise import styled, translate_bindings

__all__ = ["EditInstanceScreen", "form_fields"]

PROVIDERS = ("autodl", "runpod", "vast", "generic")
# (field id, label, placeholder); each one a config key, `sync_*` inside `sync = {...}`
ROWS = (
    ("hourly_rate", N_("Price/hour"), N_("0 if unknown")),
    ("provider_id", N_("Provider id"), N_("where the provider's CLI needs it (vast)")),
    ("workdir", N_("Workdir"), N_("default directory for jobs and sync, e.g. /root/autodl-tmp")),
    ("state_dir", N_("State dir"), N_("~/.gpu-tui (where jobs live on the instance)")),
    ("shutdown_command", N_("Shutdown"), N_("empty: the provider's own")),
    ("identity_file", N_("Key file"), N_("empty: agent, default keys, gpu-tui's key or the password")),
    ("sync_local", N_("Sync local"), N_("a directory on this machine")),
    ("sync_remote", N_("Sync remote"), N_("on the instance; default: workdir")),
    ("sync_exclude", N_("Excludes"), N_(".git __pycache__ *.ckpt  (space-separated)")),
)


def _current(inst: InstanceConfig) -> dict[str, str]:
    return {
        "hourly_rate": f"{inst.hourly_rate:g}",
        "provider_id": inst.provider_id,
        "workdir": inst.workdir or "",
        "state_dir": inst.state_dir,
        "shutdown_command": inst.shutdown_command,
        "identity_file": inst.identity_file or "",
        "sync_local": inst.sync.local or "",
        "sync_remote": inst.sync.remote or "",
        "sync_exclude": " ".join(inst.sync.exclude),
    }


def form_fields(values: dict[str, str], provider: str) -> dict[str, Any]:
    """The config keys to write: an emptied field removes its key (back to the default)."""
    rate = parse_hourly_rate(values["hourly_rate"])
    hourly_rate: Any = REMOVE if rate is None else rate
    out: dict[str, Any] = {"hourly_rate": hourly_rate, "provider": provider}
    for key in ("provider_id", "workdir", "state_dir", "shutdown_command", "identity_file"):
        out[key] = values[key].strip() or REMOVE
    sync: dict[str, Any] = {}
    if values["sync_local"].strip():
        sync["local"] = values["sync_local"].strip()
    if values["sync_remote"].strip():
        sync["remote"] = values["sync_remote"].strip()
    if values["sync_exclude"].strip():
        sync["exclude"] = values["sync_exclude"].split()
    out["sync"] = sync or REMOVE
    return out


class EditInstanceScreen(ModalScreen[InstanceConfig | None]):
    BINDINGS = [Binding("escape", "dismiss(None)", N_("Cancel"))]
    DEFAULT_CSS = compact_form_css("EditInstanceScreen", label_width=13, row_gap=0)

    def __init__(self, inst: InstanceConfig, save: Any) -> None:
        """`save(name, fields) -> InstanceConfig` writes the entry (Onboarder.update)."""
        super().__init__()
        translate_bindings(self)
        self._inst, self._save = inst, save

    def compose(self) -> ComposeResult:
        current = _current(self._inst)
        with VerticalScroll():
            title = styled(_("Edit {name}"), "bold", name=(self._inst.name, "cyan"))
            title.append(f"  {self._inst.address}")
            title.append("  " + _("(login: add it again with a)"), style="dim")
            yield Static(title)
            with Horizontal(classes="row"):
                yield Label(_("Provider"))
                yield Select([(p, p) for p in PROVIDERS], value=self._inst.provider, allow_blank=False, id="provider")
            for key, label, placeholder in ROWS:
                with Horizontal(classes="row"):
                    yield Label(_(label))
                    yield Input(value=current[key], placeholder=_(placeholder), id=key)
            yield Static("", id="error")
            with Horizontal(classes="buttons"):
                yield Button(_("Save"), id="save", variant="primary")
                yield Button(_("Cancel"), id="cancel")

    def on_mount(self) -> None:
        fit_labels(self)
        self.query_one("#hourly_rate", Input).focus()

    def submit(self) -> None:
        values = {key: self.query_one(f"#{key}", Input).value for key, _label, _hint in ROWS}
        provider = self.query_one("#provider", Select).value
        try:
            fields = form_fields(values, str(provider))
            inst = self._save(self._inst.name, fields)
        except (GpuTuiError, ValueError) as exc:
            self.query_one("#error", Static).update(Text(getattr(exc, "message", None) or str(exc)))
            return
        self.dismiss(inst)

    def on_input_submitted(self, _event: Input.Submitted) -> None:
        self.submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "save":
            self.submit()
        else:
            self.dismiss(None)
