"""The power screens: the `q` guard while instances still bill, and the shutdown report."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from gpu_tui.services.power import ShutdownResult

__all__ = ["QuitGuardScreen", "ShutdownConfirmScreen", "ShutdownReportScreen", "report_text"]

_CSS = """
{name} {{ align: center middle; }}
{name} > Vertical {{ width: 76; max-width: 100%; height: auto; max-height: 100%; border: thick $warning;
    background: $surface; padding: 1 2; }}
{name} Horizontal {{ layout: vertical; height: auto; margin-top: 1; }}
{name} Button {{ width: 100%; margin: 0; }}
"""
# One borderless button a row: four choices never run off a 76-column box (or an 80x24
# terminal), and the focused default is always in sight.


def _compact_buttons(screen: ModalScreen[Any]) -> None:
    for button in screen.query(Button):
        button.compact = True


class QuitGuardScreen(ModalScreen[str]):
    """Dismisses with "shutdown_all", "pull_all" (sync pull first), "quit" or "stay"."""

    BINDINGS = [
        Binding("escape", "dismiss('stay')", "Stay"),
        Binding("Q", "dismiss('shutdown_all')", "Shut all down"),
        Binding("p", "pull", "Pull, shut all down"),
        Binding("y", "dismiss('quit')", "Quit anyway"),
    ]
    DEFAULT_CSS = _CSS.format(name="QuitGuardScreen")

    def __init__(self, names: list[str], rate: str, *, can_pull: bool = False) -> None:
        super().__init__()
        self._names, self._rate, self._can_pull = names, rate, can_pull

    def action_pull(self) -> None:
        if self._can_pull:
            self.dismiss("pull_all")

    def compose(self) -> ComposeResult:
        t = Text()
        t.append("still billing: ", style="bold red")
        t.append(", ".join(self._names), style="bold")
        t.append(f"  ({self._rate})\n\n")
        t.append("Quitting gpu-tui does not stop them. Shut them all down first (Q), or quit and "
                 "leave them running (y)?")
        with Vertical():
            yield Static(t)
            with Horizontal():
                if self._can_pull:
                    yield Button("Pull results, shut all down, quit (p)", id="pull_all", variant="primary")
                yield Button("Shut all down, then quit (Q)", id="shutdown_all", variant="warning")
                yield Button("Quit anyway (y)", id="quit")
                yield Button("Stay (esc)", id="stay")

    def on_mount(self) -> None:
        _compact_buttons(self)
        self.query_one("#stay", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(str(event.button.id))


class ShutdownConfirmScreen(ModalScreen[str | None]):
    """The S / Q confirmation; dismisses with "pull" (sync pull first), "shutdown" or None."""

    BINDINGS = [
        Binding("escape,n", "dismiss(None)", "Cancel"),
        Binding("y", "dismiss('shutdown')", "Shut down"),
        Binding("p", "pull", "Pull, then shut down"),
    ]
    DEFAULT_CSS = _CSS.format(name="ShutdownConfirmScreen")

    def __init__(self, question: Text, *, can_pull: bool, yes: str = "Shut down",
                 pull: str = "Pull results, then shut down") -> None:
        super().__init__()
        self._question, self._can_pull, self._yes, self._pull = question, can_pull, yes, pull

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self._question)
            with Horizontal():
                if self._can_pull:
                    yield Button(f"{self._pull} (p)", id="pull", variant="primary")
                yield Button(f"{self._yes} (y)", id="shutdown", variant="warning")
                yield Button("Cancel (n)", id="cancel")

    def on_mount(self) -> None:
        _compact_buttons(self)
        self.query_one("#cancel", Button).focus()

    def action_pull(self) -> None:
        if self._can_pull:
            self.dismiss("pull")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(None if event.button.id == "cancel" else str(event.button.id))


def report_text(results: list[ShutdownResult]) -> Text:
    t = Text()
    failed = [r for r in results if not r.stopped]
    if failed:
        t.append(f"{len(failed)} NOT shut down: they may still be billing\n\n", style="bold red")
    else:
        t.append(f"all {len(results)} shut down and verified\n\n", style="bold green")
    width = max((len(r.name) for r in results), default=0)
    for r in results:
        t.append(" ok " if r.stopped else " NO ", style="bold green" if r.stopped else "bold red")
        t.append(f" {r.name:<{width}}  ", style="bold")
        t.append(r.detail + "\n", style="" if r.stopped else "red")
    return t


class ShutdownReportScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,enter", "dismiss", "Close")]
    DEFAULT_CSS = _CSS.format(name="ShutdownReportScreen")

    def __init__(self, results: list[ShutdownResult], close_label: str = "Close") -> None:
        super().__init__()
        self.results = results
        self._close = close_label

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(report_text(self.results))
            with Horizontal():
                yield Button(f"{self._close} (enter)", id="close", variant="primary")

    def on_button_pressed(self, _event: Button.Pressed) -> None:
        self.dismiss()
