"""A short list to choose one entry from, as a modal (the log screen's series and the job to
compare with): enter chooses, escape leaves everything as it was."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from gpu_tui.core.i18n import N_
from gpu_tui.ui.screens.localise import translate_bindings

__all__ = ["PickScreen"]


class PickScreen(ModalScreen[str | None]):
    """Dismissed with the chosen entry's id, or None."""

    BINDINGS = [Binding("escape", "dismiss(None)", N_("Cancel"))]
    DEFAULT_CSS = """
    PickScreen { align: center middle; }
    PickScreen > Vertical { width: 72; max-width: 95%; height: auto; max-height: 90%;
        border: thick $primary; background: $surface; padding: 0 1; }
    PickScreen OptionList { height: auto; max-height: 16; border: none; }
    """

    def __init__(self, title: str, entries: list[tuple[str, str]], current: str | None = None) -> None:
        """`entries`: (label, id), labels already translated; `current` is highlighted first."""
        super().__init__()
        translate_bindings(self)
        self._title, self._entries, self._current = title, entries, current

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self._title, markup=False)
            yield OptionList(*(Option(Text(label), id=key) for label, key in self._entries))  # data, not markup

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        ids = [key for _label, key in self._entries]
        if self._current in ids:
            options.highlighted = ids.index(self._current)
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)
