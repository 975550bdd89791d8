"""`/` on the dashboard: the name filter, typed into one line. Enter keeps what was typed (empty:
every row again), escape leaves the filter as it was."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from gpu_tui.core.i18n import N_, _
from gpu_tui.ui.screens.localise import translate_bindings

__all__ = ["FindScreen"]


class FindScreen(ModalScreen[str | None]):
    """Dismissed with the text typed, or None (escape)."""

    BINDINGS = [Binding("escape", "dismiss(None)", N_("Cancel"))]
    DEFAULT_CSS = """
    FindScreen { align: center top; }
    FindScreen > Vertical { width: 60; max-width: 95%; height: auto; margin-top: 2;
        border: thick $primary; background: $surface; padding: 0 1; }
    FindScreen Input, FindScreen Input:focus { border: none; height: 1; padding: 0 1; background: $boost; }
    """

    def __init__(self, current: str) -> None:
        super().__init__()
        translate_bindings(self)
        self._current = current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(_("Show the instances whose name holds (empty: all):"), markup=False)
            yield Input(value=self._current, placeholder=_("part of a name, e.g. a100"), id="find")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value)
