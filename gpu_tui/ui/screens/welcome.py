"""No instances configured yet: offer the demo fleet or this machine."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, Footer, Static

from gpu_tui.core.i18n import N_, _
from gpu_tui.ui.screens.localise import translate_bindings

__all__ = ["WelcomeScreen"]


class WelcomeScreen(Screen[str]):
    """Dismisses with "add", "demo", "local" or "quit"."""

    BINDINGS = [
        Binding("a", "choose('add')", N_("Add an instance")),
        Binding("d", "choose('demo')", N_("Demo fleet")),
        Binding("l", "choose('local')", N_("This machine")),
        Binding("q", "choose('quit')", N_("Quit"), id="quit"),
    ]
    DEFAULT_CSS = """
    WelcomeScreen { align: center middle; }
    WelcomeScreen > Vertical { width: 72; max-width: 95%; height: auto; padding: 1 2; border: round $primary; }
    WelcomeScreen Horizontal { height: auto; margin-top: 1; }
    WelcomeScreen Button { margin-right: 2; }
    """

    def __init__(self, config_path: str) -> None:
        super().__init__()
        translate_bindings(self)
        self._config_path = config_path

    def compose(self) -> ComposeResult:
        t = Text()
        t.append(_("Welcome to gpu-tui") + "\n\n", style="bold")
        t.append(_("No instances are configured yet. Paste your provider's login command\n"
                   "(ssh -p PORT root@host) to add one; it is saved in") + "\n")
        t.append(self._config_path, style="cyan")
        t.append("\n" + _("Or look around first:") + "\n")
        with Vertical():
            yield Static(t)
            with Horizontal():
                yield Button(_("Add (a)"), id="add", variant="primary")
                yield Button(_("Demo fleet (d)"), id="demo")
                yield Button(_("This machine (l)"), id="local")
        yield Footer()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(str(event.button.id))

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)
