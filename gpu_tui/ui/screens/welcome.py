"""No instances configured yet: offer the demo fleet or this machine."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, Footer, Static

__all__ = ["WelcomeScreen"]


class WelcomeScreen(Screen[str]):
    """Dismisses with "add", "demo", "local" or "quit"."""

    BINDINGS = [
        Binding("a", "choose('add')", "Add an instance"),
        Binding("d", "choose('demo')", "Demo fleet"),
        Binding("l", "choose('local')", "This machine"),
        Binding("q", "choose('quit')", "Quit", id="quit"),
    ]
    DEFAULT_CSS = """
    WelcomeScreen { align: center middle; }
    WelcomeScreen > Vertical { width: 72; max-width: 95%; height: auto; padding: 1 2; border: round $primary; }
    WelcomeScreen Horizontal { height: auto; margin-top: 1; }
    WelcomeScreen Button { margin-right: 2; }
    """

    def __init__(self, config_path: str) -> None:
        super().__init__()
        self._config_path = config_path

    def compose(self) -> ComposeResult:
        t = Text()
        t.append("Welcome to gpu-tui\n\n", style="bold")
        t.append("No instances are configured yet. Paste your provider's login command\n")
        t.append("(ssh -p PORT root@host) to add one; it is saved in\n")
        t.append(self._config_path, style="cyan")
        t.append("\nOr look around first:\n")
        with Vertical():
            yield Static(t)
            with Horizontal():
                yield Button("Add (a)", id="add", variant="primary")
                yield Button("Demo fleet (d)", id="demo")
                yield Button("This machine (l)", id="local")
        yield Footer()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(str(event.button.id))

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)
