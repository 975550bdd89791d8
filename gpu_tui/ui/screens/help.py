"""`?`: every key of the dashboard, built from the live bindings so remaps show up."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from gpu_tui.core.i18n import N_, _
from gpu_tui.ui.screens.localise import translate_bindings

__all__ = ["HelpScreen"]


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", N_("Close"))]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 78; max-width: 98%; height: auto; max-height: 90%;
        border: round $primary; background: $surface; padding: 0 1; }
    """

    def __init__(self, rows: list[tuple[str, str, str]]) -> None:
        super().__init__()
        translate_bindings(self)
        self._rows = rows

    def compose(self) -> ComposeResult:
        head = Text()
        head.append(_("Keys"), style="bold")
        head.append("   " + _("(remap in the config's [keys] table: action id = key)"), style="dim")
        # a grid measures in terminal cells and wraps a long line inside its own column
        grid = Table.grid(padding=(0, 1))
        grid.add_column(justify="right", style="bold cyan", no_wrap=True)
        grid.add_column(ratio=1)
        grid.add_column(style="dim", no_wrap=True)
        for key, action_id, description in self._rows:
            grid.add_row(key, description, action_id)
        foot = Text(_("ctrl+p opens the command palette; escape closes this."), style="dim")
        with VerticalScroll():
            yield Static(head)
            yield Static(grid)
            yield Static(foot)
