"""`RowList`: a keyed list of one-line rows under a fixed header, with a row cursor, that
repaints only the rows whose text changed.

Textual's DataTable invalidates every cached row on any cell update, so a fleet whose rows
change once a second re-rendered the whole table each time: at 32 instances about a quarter
of the dashboard's CPU. Here each row's rendered strip is cached until its own text or the
width changes, and an update refreshes that row's one line of the screen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

__all__ = ["RowList"]


class RowList(ScrollView, can_focus=True):
    COMPONENT_CLASSES: ClassVar[set[str]] = {"row-list--header", "row-list--cursor"}
    DEFAULT_CSS = """
    RowList { height: auto; overflow-x: hidden; padding: 0 1; }
    RowList > .row-list--header { text-style: bold; background: $panel; }
    RowList > .row-list--cursor { background: $block-cursor-background; color: $block-cursor-foreground;
        text-style: $block-cursor-text-style; }
    RowList:blur > .row-list--cursor { background: $block-cursor-blurred-background;
        color: $block-cursor-blurred-foreground; text-style: $block-cursor-blurred-text-style; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor_up", "Up", show=False),
        Binding("down", "cursor_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home", "first", "First", show=False),
        Binding("end", "last", "Last", show=False),
        Binding("enter", "select_cursor", "Select", show=False),
    ]

    cursor_row: reactive[int] = reactive(0)

    @dataclass
    class Highlighted(Message):
        """The cursor moved to the row `key`."""

        key: str

    @dataclass
    class Selected(Message):
        """Enter (or a click) on the row `key`."""

        key: str

    def __init__(self, header: Text, **kw: Any) -> None:
        super().__init__(**kw)
        self._header = header
        self._keys: list[str] = []
        """The rows shown, in the order shown."""
        self._index: dict[str, int] = {}
        """Shown key -> position."""
        self._texts: dict[str, Text] = {}
        """Every row's text, shown or not, in the order the rows were added."""
        self._arranged = False
        """An `order_rows` order is in force: new rows wait for the next one instead of showing last."""
        self._strips: dict[tuple[str, bool], Strip] = {}
        self._strip_width = -1

    # ----- rows
    @property
    def rows(self) -> dict[str, int]:
        """Shown row key -> position."""
        return self._index

    @property
    def row_count(self) -> int:
        """Rows shown."""
        return len(self._keys)

    @property
    def known_count(self) -> int:
        """Rows held, shown or not."""
        return len(self._texts)

    def has_row(self, key: str) -> bool:
        """The row was added (it may be arranged out of sight)."""
        return key in self._texts

    def set_row(self, key: str, text: Text) -> None:
        """Add the row, or replace its text; a row whose text is unchanged costs nothing."""
        if key not in self._texts:
            self._texts[key] = text
            if not self._arranged:
                self._index[key] = len(self._keys)
                self._keys.append(key)
                self._rows_changed(self.key_at(self.cursor_row) if len(self._keys) > 1 else None)
            return
        if self._texts[key] == text:
            return
        self._texts[key] = text
        self._strips.pop((key, False), None)
        self._strips.pop((key, True), None)
        row = self._index.get(key)
        if row is not None:
            self._refresh_row(row)

    def remove_row(self, key: str) -> None:
        """Drop the row (a missing key is no error); the rows below move up, the cursor stays put."""
        if key not in self._texts:
            return
        self._texts.pop(key, None)
        self._strips.pop((key, False), None)
        self._strips.pop((key, True), None)
        if key not in self._index:
            return
        self._keys.remove(key)
        self._index = {k: i for i, k in enumerate(self._keys)}
        self.cursor_row = max(0, min(self.cursor_row, len(self._keys) - 1))
        self._rows_changed(None)

    def order_rows(self, order: list[str] | None) -> None:
        """Show only the rows of `order`, in that order (keys not added are left out); None: every
        row, in the order added. The cursor stays on its row's key where that is still shown,
        else it goes to the first row."""
        if order is None:
            keys, self._arranged = list(self._texts), False
        else:
            keys, self._arranged = [k for k in order if k in self._texts], True
        if keys == self._keys:
            return
        before = self.key_at(self.cursor_row)
        self._keys = keys
        self._index = {k: i for i, k in enumerate(keys)}
        row = self._index.get(before, 0) if before is not None else 0
        self.set_reactive(RowList.cursor_row, row)  # no Highlighted for the old position: sent below
        self._rows_changed(before)
        self._scroll_to_cursor()

    def _rows_changed(self, before: str | None) -> None:
        """Rows came, went or moved: new height, a full repaint, and news if the cursor's key is another."""
        self.virtual_size = Size(self.size.width, len(self._keys) + 1)  # the header, then the rows
        self.refresh(layout=True)
        key_now = self.key_at(self.cursor_row)
        if key_now is not None and key_now != before:
            self.post_message(self.Highlighted(key_now))

    @property
    def header(self) -> Text:
        return self._header

    def text_of(self, key: str) -> Text:
        return self._texts[key]

    def key_at(self, row: int) -> str | None:
        return self._keys[row] if 0 <= row < len(self._keys) else None

    def move_cursor(self, *, row: int) -> None:
        if self._keys:
            self.cursor_row = max(0, min(len(self._keys) - 1, row))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._keys) + 1  # the header

    # ----- drawing
    def _refresh_row(self, row: int) -> None:
        y = row + 1 - round(self.scroll_offset.y)
        if 1 <= y < self.size.height:
            self.refresh(Region(0, y, self.size.width, 1))

    def watch_cursor_row(self, old: int, new: int) -> None:
        self._refresh_row(old)
        self._refresh_row(new)
        self._scroll_to_cursor()
        key = self.key_at(new)
        if key is not None and old != new:
            self.post_message(self.Highlighted(key))

    def _scroll_to_cursor(self) -> None:
        visible = max(1, self.size.height - 1)
        top = round(self.scroll_offset.y)
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False)
        elif self.cursor_row >= top + visible:
            self.scroll_to(y=self.cursor_row - visible + 1, animate=False)

    def _render_text(self, text: Text, width: int, style: Style) -> Strip:
        segments = list(text.render(self.app.console, end=""))
        return Strip(segments).apply_style(style).extend_cell_length(width, style).crop(0, width)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if width != self._strip_width:
            self._strips.clear()
            self._strip_width = width
        base = self.rich_style
        if y == 0:
            return self._render_text(self._header, width, base + self.get_component_rich_style("row-list--header"))
        row = y - 1 + round(self.scroll_offset.y)
        key = self.key_at(row)
        if key is None:
            return Strip([Segment(" " * width, base)], width)
        cursor = row == self.cursor_row
        cached = self._strips.get((key, cursor))
        if cached is None:
            style = base + self.get_component_rich_style("row-list--cursor") if cursor else base
            cached = self._strips[(key, cursor)] = self._render_text(self._texts[key], width, style)
        return cached

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()  # focus and blur change the cursor's colours

    def _on_focus(self, event: events.Focus) -> None:
        self._refresh_row(self.cursor_row)

    def _on_blur(self, event: events.Blur) -> None:
        self._refresh_row(self.cursor_row)

    # ----- keys and the mouse
    def action_cursor_up(self) -> None:
        self.move_cursor(row=self.cursor_row - 1)

    def action_cursor_down(self) -> None:
        self.move_cursor(row=self.cursor_row + 1)

    def action_page_up(self) -> None:
        self.move_cursor(row=self.cursor_row - max(1, self.size.height - 1))

    def action_page_down(self) -> None:
        self.move_cursor(row=self.cursor_row + max(1, self.size.height - 1))

    def action_first(self) -> None:
        self.move_cursor(row=0)

    def action_last(self) -> None:
        self.move_cursor(row=len(self._keys) - 1)

    def action_select_cursor(self) -> None:
        key = self.key_at(self.cursor_row)
        if key is not None:
            self.post_message(self.Selected(key))

    async def _on_click(self, event: events.Click) -> None:
        row = event.y - 1 + round(self.scroll_offset.y)
        if event.y >= 1 and self.key_at(row) is not None:
            if row == self.cursor_row and event.chain > 1:
                self.action_select_cursor()
            self.move_cursor(row=row)
