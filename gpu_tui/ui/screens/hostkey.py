"""Ask before trusting a host key: shows the fingerprint; a changed key gets a loud warning."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

__all__ = ["TrustKeyScreen"]


class TrustKeyScreen(ModalScreen[bool]):
    BINDINGS = [Binding("escape", "dismiss(False)", "Cancel")]
    DEFAULT_CSS = """
    TrustKeyScreen { align: center middle; }
    TrustKeyScreen > Vertical { width: 76; max-width: 95%; height: auto; border: thick $warning;
        background: $surface; padding: 1 2; }
    TrustKeyScreen Horizontal { height: auto; margin-top: 1; }
    TrustKeyScreen Button { margin-right: 2; }
    """

    def __init__(self, name: str, address: str, fingerprint: str, changed: bool) -> None:
        super().__init__()
        self._instance_name, self._address, self._fp, self._changed = name, address, fingerprint, changed

    def compose(self) -> ComposeResult:
        t = Text()
        if self._changed:
            t.append("HOST KEY CHANGED\n", style="bold red")
            t.append(
                f"{self._address} now presents a different key than the one recorded. This can be an "
                "attack; it is also what happens when a provider re-creates an instance. Trust it only "
                "if you expected this.\n\n"
            )
        else:
            t.append("Unknown host key\n", style="bold yellow")
            t.append(f"{self._address} has not been seen before. Compare with your provider's console.\n\n")
        t.append(f"{self._instance_name}\n", style="bold")
        t.append(self._fp, style="bold cyan")
        with Vertical():
            yield Static(t)
            with Horizontal():
                yield Button("Trust this key", id="trust", variant="warning" if self._changed else "primary")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "trust")
