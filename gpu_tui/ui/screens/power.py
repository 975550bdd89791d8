"""The power screens: the `q` guard while instances still bill, and the shutdown report."""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from gpu_tui.core.i18n import N_, _
from gpu_tui.services.power import ShutdownResult
from gpu_tui.ui.screens.localise import pad, translate_bindings

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
        Binding("escape", "dismiss('stay')", N_("Stay")),
        Binding("Q", "dismiss('shutdown_all')", N_("Shut all down")),
        Binding("p", "pull", N_("Pull, shut all down")),
        Binding("y", "dismiss('quit')", N_("Quit anyway")),
    ]
    DEFAULT_CSS = _CSS.format(name="QuitGuardScreen")

    def __init__(self, names: list[str], rate: str, *, can_pull: bool = False) -> None:
        super().__init__()
        translate_bindings(self)
        self._names, self._rate, self._can_pull = names, rate, can_pull

    def action_pull(self) -> None:
        if self._can_pull:
            self.dismiss("pull_all")

    def compose(self) -> ComposeResult:
        t = Text()
        t.append(_("still billing:") + " ", style="bold red")
        t.append(", ".join(self._names), style="bold")
        t.append(f"  ({self._rate})\n\n")
        t.append(
            _("Quitting gpu-tui does not stop them. Shut them all down first (Q), or quit and leave them running (y)?")
        )
        buttons = [
            Button(_("Shut all down, then quit (Q)"), id="shutdown_all", variant="warning"),
            Button(_("Quit anyway (y)"), id="quit"),
            Button(_("Stay (esc)"), id="stay"),
        ]
        if self._can_pull:
            buttons.insert(0, Button(_("Pull results, shut all down, quit (p)"), id="pull_all", variant="primary"))
        # four buttons do not fit one row of an 80-column terminal: two rows of two
        rows = [buttons[:2], buttons[2:]] if len(buttons) > 3 else [buttons]
        with Vertical():
            yield Static(t)
            for row in rows:
                yield Horizontal(*row)

    def on_mount(self) -> None:
        _compact_buttons(self)
        self.query_one("#stay", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(str(event.button.id))


class ShutdownConfirmScreen(ModalScreen[str | None]):
    """The S / Q confirmation; dismisses with "pull" (sync pull first), "shutdown" or None."""

    BINDINGS = [
        Binding("escape,n", "dismiss(None)", N_("Cancel")),
        Binding("y", "dismiss('shutdown')", N_("Shut down")),
        Binding("p", "pull", N_("Pull, then shut down")),
    ]
    DEFAULT_CSS = _CSS.format(name="ShutdownConfirmScreen")

    def __init__(self, question: Text, *, can_pull: bool, yes: str | None = None, pull: str | None = None) -> None:
        """`yes`, `pull`: the buttons' labels, translated by the caller (default: Shut down, and
        Pull results, then shut down)."""
        super().__init__()
        translate_bindings(self)
        self._question, self._can_pull = question, can_pull
        self._yes = yes if yes is not None else _("Shut down")
        self._pull = pull if pull is not None else _("Pull results, then shut down")

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self._question)
            with Horizontal():
                if self._can_pull:
                    yield Button(f"{self._pull} (p)", id="pull", variant="primary")
                yield Button(f"{self._yes} (y)", id="shutdown", variant="warning")
                yield Button(_("Cancel (n)"), id="cancel")

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
        t.append(_("{n} NOT shut down: they may still be billing").format(n=len(failed)) + "\n\n", style="bold red")
    else:
        t.append(_("all {n} shut down and verified").format(n=len(results)) + "\n\n", style="bold green")
    width = max((cell_len(r.name) for r in results), default=0)
    ok, no = _("ok"), _("NO")
    mark = max(cell_len(ok), cell_len(no))
    for r in results:
        t.append(f" {pad(ok if r.stopped else no, mark)} ", style="bold green" if r.stopped else "bold red")
        t.append(f" {pad(r.name, width)}  ", style="bold")
        t.append(r.detail + "\n", style="" if r.stopped else "red")
    return t


class ShutdownReportScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,enter", "dismiss", N_("Close"))]
    DEFAULT_CSS = _CSS.format(name="ShutdownReportScreen")

    def __init__(self, results: list[ShutdownResult], close_label: str | None = None) -> None:
        """`close_label`: the button's label, translated by the caller (default: Close)."""
        super().__init__()
        translate_bindings(self)
        self.results = results
        self._close = close_label if close_label is not None else _("Close")

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(report_text(self.results))
            with Horizontal():
                yield Button(f"{self._close} (enter)", id="close", variant="primary")

    def on_button_pressed(self, _event: Button.Pressed) -> None:
        self.dismiss()
