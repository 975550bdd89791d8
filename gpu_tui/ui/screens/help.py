"""`?`: every key of the dashboard, built from the live bindings so remaps show up."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

__all__ = ["HelpScreen"]


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 70; max-width: 95%; height: auto; max-height: 90%;
        border: round $primary; background: $surface; padding: 0 1; }
    """

    def __init__(self, rows: list[tuple[str, str, str]]) -> None:
        super().__init__()
        self._rows = rows

    def compose(self) -> ComposeResult:
        t = Text()
        t.append("Keys", style="bold")
        t.append("   (remap in the config's [keys] table: action id = key)\n\n", style="dim")
        for key, action_id, description in self._rows:
            t.append(f"{key:>12}  ", style="bold cyan")
            t.append(f"{description:<34}")
            t.append(f"{action_id}\n", style="dim")
        t.append("\nctrl+p opens the command palette; escape closes this.", style="dim")
        with VerticalScroll():
            yield Static(t)
