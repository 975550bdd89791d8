"""Ask before trusting a host key: shows the fingerprint; a changed key gets a loud warning."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from gpu_tui.core.i18n import N_, _
from gpu_tui.ui.screens.localise import translate_bindings

__all__ = ["TrustKeyScreen"]


class TrustKeyScreen(ModalScreen[bool]):
    BINDINGS = [Binding("escape", "dismiss(False)", N_("Cancel"))]
    DEFAULT_CSS = """
    TrustKeyScreen { align: center middle; }
    TrustKeyScreen > Vertical { width: 76; max-width: 95%; height: auto; border: thick $warning;
        background: $surface; padding: 1 2; }
    TrustKeyScreen Horizontal { height: auto; margin-top: 1; }
    TrustKeyScreen Button { margin-right: 2; }
    """

    def __init__(self, name: str, address: str, fingerprint: str, changed: bool) -> None:
        super().__init__()
        translate_bindings(self)
        self._instance_name, self._address, self._fp, self._changed = name, address, fingerprint, changed

    def compose(self) -> ComposeResult:
        t = Text()
        if self._changed:
            t.append(_("HOST KEY CHANGED") + "\n", style="bold red")
            t.append(
                _(
                    "{address} now presents a different key than the one recorded. This can be an "
                    "attack; it is also what happens when a provider re-creates an instance. Trust it only "
                    "if you expected this."
                ).format(address=self._address)
                + "\n\n"
            )
        else:
            t.append(_("Unknown host key") + "\n", style="bold yellow")
            t.append(
                _("{address} has not been seen before. Compare with your provider's console.").format(
                    address=self._address
                )
                + "\n\n"
            )
        t.append(f"{self._instance_name}\n", style="bold")
        t.append(self._fp, style="bold cyan")
        with Vertical():
            yield Static(t)
            with Horizontal():
                yield Button(_("Trust this key"), id="trust", variant="warning" if self._changed else "primary")
                yield Button(_("Cancel"), id="cancel")

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "trust")
