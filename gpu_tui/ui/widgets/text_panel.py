"""`TextPanel`: a Static that repaints only when its text changed, and re-lays the screen out
only when its height may have.

A relayout of the whole screen cost more than the repaint itself (profiled at 32 instances x 8
GPUs): a panel whose text changes every second but whose height does not should not pay it.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

__all__ = ["TextPanel"]


class TextPanel(Static):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._shown: Text | None = None
        self._shown_rows = -1

    def _rows(self, text: Text) -> int:
        """Rows the text takes at the current width (wrapped lines included)."""
        width = max(1, self.content_region.width or self.size.width or 80)
        return sum(max(1, -(-line.cell_len // width)) for line in text.split("\n", allow_blank=True))

    def set_text(self, text: Text) -> None:
        if self._shown is not None and text == self._shown:
            return
        height = self.styles.height
        if height is not None and not height.is_auto:
            # a panel sized by the screen (`1fr`) never moves the others: a new instance's panel
            # text (more processes, a job) costs a repaint of the panel, not a relayout of all
            self.update(text, layout=False)
            self._shown = text
            return
        rows = self._rows(text)
        self.update(text, layout=rows != self._shown_rows)
        self._shown, self._shown_rows = text, rows
