"""Ask for an instance's password after `auth failed`: masked input, optionally saved to the keyring.

A modal screen, never getpass() on the terminal under the app. The answer is a SecretStr from the
moment it leaves the Input, so it cannot end up in a repr, a log line or a screenshot.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import SecretStr
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Static

from gpu_tui.core.i18n import N_, _
from gpu_tui.core.text import printable
from gpu_tui.ui.screens.localise import styled, translate_bindings

__all__ = ["PasswordAnswer", "PasswordScreen"]


@dataclass(frozen=True)
class PasswordAnswer:
    password: SecretStr
    save: bool
    """Store it in the keyring too (else it is held in memory for this session only)."""


class PasswordScreen(ModalScreen[PasswordAnswer | None]):
    BINDINGS = [Binding("escape", "dismiss(None)", N_("Cancel"))]
    DEFAULT_CSS = """
    PasswordScreen { align: center middle; }
    PasswordScreen > Vertical { width: 64; max-width: 95%; height: auto; border: thick $primary;
        background: $surface; padding: 1 2; }
    PasswordScreen Input { margin-top: 1; }
    PasswordScreen Horizontal { height: auto; margin-top: 1; }
    PasswordScreen Button { margin-right: 2; }
    """

    def __init__(self, name: str, login: str, reason: str | None, *, can_save: bool) -> None:
        super().__init__()
        translate_bindings(self)
        self._instance_name, self._login, self._reason, self._can_save = name, login, reason, can_save

    def compose(self) -> ComposeResult:
        t = styled(_("Password for {name}"), "bold", name=(self._instance_name, "cyan"))
        t.append(f"\n{self._login}", style="dim")
        if self._reason:
            t.append(f"\n{printable(self._reason)}", style="red")
        with Vertical():
            yield Static(t)
            yield Input(password=True, placeholder=_("the password from your provider's console"), id="password")
            if self._can_save:
                yield Checkbox(_("save in the keyring (else kept in memory until you quit)"), id="save")
            with Horizontal():
                yield Button(_("Connect"), id="connect", variant="primary")
                yield Button(_("Cancel"), id="cancel")

    def on_mount(self) -> None:
        self.query_one("#password", Input).focus()

    def _answer(self) -> None:
        value = self.query_one("#password", Input).value
        if not value:
            self.notify(_("type the password first, or press escape"), severity="warning")
            return
        save = self._can_save and self.query_one("#save", Checkbox).value
        self.dismiss(PasswordAnswer(SecretStr(value), save))

    def on_input_submitted(self, _event: Input.Submitted) -> None:
        self._answer()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "connect":
            self._answer()
        else:
            self.dismiss(None)
