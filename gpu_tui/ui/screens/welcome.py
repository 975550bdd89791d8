"""No instances configured yet: offer the demo fleet or this machine, and importing a provider
account's instances when its API token is stored."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, Footer, Static

from gpu_tui.core.i18n import N_, _
from gpu_tui.services.providers import LABELS
from gpu_tui.ui.screens.localise import translate_bindings

__all__ = ["WelcomeScreen"]


class WelcomeScreen(Screen[str]):
    """Dismisses with "add", "import", "demo", "local" or "quit"."""

    BINDINGS = [
        Binding("a", "choose('add')", N_("Add an instance")),
        Binding("i", "choose('import')", N_("Import from account")),
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

    def __init__(self, config_path: str, importable: tuple[str, ...] = ()) -> None:
        super().__init__()
        translate_bindings(self)
        self._config_path = config_path
        self._importable = importable
        """Providers whose API token is stored."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "choose" and parameters == ("import",):
            return bool(self._importable)
        return True

    def compose(self) -> ComposeResult:
        t = Text()
        t.append(_("Welcome to gpu-tui") + "\n\n", style="bold")
        t.append(
            _(
                "No instances are configured yet. Paste your provider's login command\n"
                "(ssh -p PORT root@host) to add one; it is saved in"
            )
            + "\n"
        )
        t.append(self._config_path, style="cyan")
        if self._importable:
            t.append(
                "\n"
                + _("An API token is stored for {providers}: i imports the account's instances.").format(
                    providers=", ".join(LABELS[p] for p in self._importable)
                )
                + "\n"
            )
        t.append("\n" + _("Or look around first:") + "\n")
        with Vertical():
            yield Static(t)
            with Horizontal():
                yield Button(_("Add (a)"), id="add", variant="primary")
                if self._importable:
                    yield Button(_("Import (i)"), id="import")
                yield Button(_("Demo fleet (d)"), id="demo")
                yield Button(_("This machine (l)"), id="local")
        yield Footer()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(str(event.button.id))

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)
