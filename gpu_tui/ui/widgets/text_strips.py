"""`TextStrips`: a Rich Text shown through Textual's line API, rendered to strips once per
update and width.

A Static turns its Text into Textual's Content and renders that to strips; for the detail
screen's two 8-GPU braille charts (thousands of one-colour runs) that took 15 ms a chart,
measured, where Rich's own render of the same Text takes 6, and a row whose spans follow one
another (every row of a chart) is cut into segments here, without Rich's span stack. A line wider
than the widget wraps, as in a Static (a long legend).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

from gpu_tui.ui.chart import join_rows

__all__ = ["TextStrips", "row_segments"]


def row_segments(row: Text, console: Console, styles: dict[str, Style], under: Style | None = None) -> list[Segment]:
    """The segments Rich's render gives for one line of text (no newline in it), each style
    laid over `under` (the widget's colours: one pass, not a second over the strip); `styles`
    caches the parsed style of each name. Spans in order and apart are cut directly; any other
    row goes through Rich."""
    if isinstance(row.style, Style):
        base = row.style
    else:
        base = _style(row.style, console, styles) if row.style else Style.null()
    if under is not None:
        base = under + base
    plain = row.plain
    out: list[Segment] = []
    pos = 0
    for span in row.spans:
        if span.start < pos:  # overlapping or out of order: Rich's stack decides
            return _rich_segments(row, console, under)
        if span.end <= span.start:
            continue
        if span.start > pos:
            out.append(Segment(plain[pos : span.start], base))
        style = span.style if isinstance(span.style, Style) else _style(span.style, console, styles)
        out.append(Segment(plain[span.start : span.end], base + style))
        pos = span.end
    if pos < len(plain):
        out.append(Segment(plain[pos:], base))
    return out


def _style(name: str, console: Console, styles: dict[str, Style]) -> Style:
    style = styles.get(name)
    if style is None:
        style = styles[name] = console.get_style(name)
    return style


def _rich_segments(row: Text, console: Console, under: Style | None) -> list[Segment]:
    segments = next(iter(Segment.split_lines(row.render(console))), [])
    return segments if under is None else list(Segment.apply_style(segments, under))


class TextStrips(Widget):
    DEFAULT_CSS = """
    TextStrips { height: auto; }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self._text: Text | None = Text()
        self._rows: list[Text] = []
        self._strips: list[Strip] = []
        self._width = -1
        """The width `_strips` were made for (-1: none yet)."""
        self._styles: dict[str, Style] = {}

    @property
    def text(self) -> Text:
        """What is shown, as one Text (made on demand when `update` was given rows)."""
        if self._text is None:
            self._text = join_rows(self._rows)
        return self._text

    def update(self, text: Text | Sequence[Text]) -> None:
        """Show `text`, or `rows` of text (no newline in any): given as rows, nothing is split."""
        if isinstance(text, Text):
            rows, whole = list(text.split("\n", allow_blank=True)), text
        else:
            rows, whole = list(text), None
        layout = len(rows) != len(self._rows) or self._width < 0
        self._text, self._rows, self._width = whole, rows, -1
        self.refresh(layout=layout)

    def _strips_for(self, width: int) -> list[Strip]:
        if width != self._width:
            console, base = self.app.console, self.rich_style  # base: the widget's colours, under the text's
            strips: list[Strip] = []
            for row in self._rows:
                parts = [row] if row.cell_len <= width or width <= 0 else list(row.wrap(console, width))
                for part in parts[:-1]:
                    part.rstrip()  # a line broken by the wrap ends at its last word, as in a Static
                for part in parts:
                    strips.append(Strip(row_segments(part, console, self._styles, base), part.cell_len))
            self._strips, self._width = strips, width
        return self._strips

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._strips_for(width))

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return max((row.cell_len for row in self._rows), default=0)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        strips = self._strips_for(width)
        strip = strips[y] if y < len(strips) else Strip.blank(width)
        return strip.crop(0, width)  # Textual pads the rest with the widget's background
