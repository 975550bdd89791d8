"""Textual's Log, with its style worked out once a paint instead of once a line.

Log asks for `rich_style` for every line it renders, and Textual computes that afresh each
time by walking the widget's ancestors: half of the log's paint (1.2 of 2.5 ms for the log
screen's 26 empty lines at 160x45, more for a full one). Within one paint the answer cannot
change, so a paint keeps the first.
"""

from __future__ import annotations

from rich.style import Style
from textual.geometry import Region
from textual.strip import Strip
from textual.widgets import Log

__all__ = ["LogView"]


class LogView(Log):
    _paint_style: Style | None = None

    @property
    def rich_style(self) -> Style:
        if self._paint_style is not None:
            return self._paint_style
        return super().rich_style

    def render_lines(self, crop: Region) -> list[Strip]:
        self._paint_style = super().rich_style
        try:
            return super().render_lines(crop)
        finally:
            self._paint_style = None
