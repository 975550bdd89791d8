"""The conda manager's two small forms: a new env (name, python) and packages to install.

Each form hands what was typed to a `check` callback that builds the remote command with the
service's validation; a refusal is shown in the form, which stays open, and nothing runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from gpu_tui.core.env.mirrors import MIRRORS
from gpu_tui.core.errors import GpuTuiError
from gpu_tui.core.i18n import N_, _
from gpu_tui.ui.screens.form_css import compact_form_css, fit_labels
from gpu_tui.ui.screens.localise import styled, translate_bindings

__all__ = ["CondaForm", "CondaOp", "create_form", "install_form", "MirrorPicker"]


@dataclass(frozen=True, slots=True)
class CondaOp:
    """An operation the user asked for: what to call it on screen, and the command to run."""

    title: str
    command: str


FORM_CSS = compact_form_css("CondaForm", container="Vertical", width=72)


@dataclass(frozen=True, slots=True)
class Field:
    """One input row; label and placeholder already translated."""

    id: str
    label: str
    value: str = ""
    placeholder: str = ""


class CondaForm(ModalScreen[CondaOp | None]):
    """A title, input rows, an optional checkbox, and a button that runs `check` on the values."""

    BINDINGS = [Binding("escape", "dismiss(None)", N_("Cancel"))]
    DEFAULT_CSS = FORM_CSS

    def __init__(
        self,
        title: Text,
        fields: list[Field],
        button: str,
        check: Callable[[dict[str, str], bool], CondaOp],
        checkbox: str | None = None,
    ) -> None:
        super().__init__()
        translate_bindings(self)
        self._title, self._fields, self._button = title, fields, button
        self._check, self._checkbox = check, checkbox

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self._title)
            for f in self._fields:
                with Horizontal(classes="row"):
                    yield Label(f.label)
                    yield Input(value=f.value, placeholder=f.placeholder, id=f.id)
            if self._checkbox:
                yield Checkbox(self._checkbox, id="flag")
            yield Static("", id="error")
            with Horizontal(classes="buttons"):
                yield Button(self._button, id="ok", variant="primary")
                yield Button(_("Cancel"), id="cancel")

    def on_mount(self) -> None:
        fit_labels(self)
        self.query_one(Input).focus()

    def submit(self) -> None:
        values = {f.id: self.query_one(f"#{f.id}", Input).value.strip() for f in self._fields}
        flag = self.query_one("#flag", Checkbox).value if self._checkbox else False
        try:
            op = self._check(values, flag)
        except GpuTuiError as exc:
            self.query_one("#error", Static).update(Text(exc.message))
            return
        self.dismiss(op)

    def on_input_submitted(self, _event: Input.Submitted) -> None:
        self.submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "ok":
            self.submit()
        else:
            self.dismiss(None)


def create_form(instance: str, check: Callable[[str, str], CondaOp]) -> CondaForm:
    title = styled(_("New conda env on {instance}"), "bold", instance=(instance, "cyan"))
    fields = [
        Field("name", _("Name"), placeholder=_("letters, digits, . _ -")),
        Field("python", "Python", value="3.11", placeholder="3.11"),
    ]
    return CondaForm(title, fields, _("Create"), lambda v, _flag: check(v["name"], v["python"]))


def install_form(instance: str, env: str, check: Callable[[list[str], bool], CondaOp]) -> CondaForm:
    title = styled(_("Install into {env} on {instance}"), "bold", env=(env, "cyan"), instance=(instance, "cyan"))
    fields = [Field("packages", _("Packages"), placeholder=_("numpy einops torch==2.4.1  (space-separated)"))]
    return CondaForm(
        title,
        fields,
        _("Install"),
        lambda v, pip: check(v["packages"].split(), pip),
        checkbox=_("with pip (the env's own python -m pip), not conda"),
    )


class MirrorPicker(ModalScreen[str | None]):
    """Which package mirror conda and pip on the instance should use (or `default`: put back
    what was there); the mirror's hosts are shown so the choice is not a guess."""

    BINDINGS = [Binding("escape", "dismiss(None)", N_("Cancel"))]
    DEFAULT_CSS = (
        compact_form_css("MirrorPicker", container="Vertical", width=72)
        + """
    MirrorPicker OptionList { height: auto; max-height: 9; }
    """
    )

    def __init__(self, instance: str) -> None:
        super().__init__()
        translate_bindings(self)
        self._instance = instance

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                styled(_("Package mirror for conda and pip on {instance}"), "bold", instance=(self._instance, "cyan"))
            )
            options = [Option(f"{m.name:<7} {m.anaconda.split('/')[2]}", id=m.name) for m in MIRRORS.values()]
            options.append(Option(_("default  put back what was there before"), id="default"))
            yield OptionList(*options, id="mirrors")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)
