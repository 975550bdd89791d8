"""A yes/no question as a modal (stop a job, and later shut an instance down)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from gpu_tui.core.i18n import N_, _
from gpu_tui.ui.screens.localise import translate_bindings

__all__ = ["ConfirmScreen"]


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [Binding("escape,n", "dismiss(False)", N_("No")), Binding("y", "dismiss(True)", N_("Yes"))]
    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical { width: 64; max-width: 95%; height: auto; border: thick $warning;
        background: $surface; padding: 1 2; }
    ConfirmScreen Horizontal { height: auto; margin-top: 1; }
    ConfirmScreen Button { margin-right: 2; }
    """

    def __init__(self, question: Text | str, yes: str | None = None) -> None:
        """`yes`: the yes button's label, translated by the caller (default: Yes)."""
        super().__init__()
        translate_bindings(self)
        self._question = question if isinstance(question, Text) else Text(question)
        self._yes = yes if yes is not None else _("Yes")

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self._question)
            with Horizontal():
                yield Button(f"{self._yes} (y)", id="yes", variant="warning")
                yield Button(_("No (n)"), id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")
