"""ui/widgets/text_strips.row_segments: the segments Rich's own render gives, cut faster."""

from __future__ import annotations

import random

from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from gpu_tui.ui.chart import Steps, line_chart
from gpu_tui.ui.screens.detail import chart
from gpu_tui.ui.widgets.text_strips import row_segments


def _plain_none(segments: list[Segment]) -> list[Segment]:
    """No style and the null style draw the same (Rich gives None to a row without spans), and
    an empty segment draws nothing (Rich gives one to an empty row)."""
    return [Segment(text, style or Style.null(), control) for text, style, control in segments if text]


def _rich(row: Text, console: Console) -> list[Segment]:
    return _plain_none(next(iter(Segment.split_lines(row.render(console))), []))


def _rows() -> list[Text]:
    rng = random.Random(3)
    series = {f"gpu {g}": [float(rng.randint(0, 100)) for _ in range(300)] for g in range(8)}
    rows = chart("GPU utilisation %", series, ymax=100, width=120, height=14)
    rows += line_chart([Steps([1.0, None, 3.0, 2.0], "cyan")], width=40, height=6).split("\n", allow_blank=True)
    based = Text("base ", style="dim")
    based.append("red on base", style="red")
    overlapping = Text("overlapping spans")
    overlapping.stylize("bold", 0, 11)
    overlapping.stylize("green", 5, 17)
    styled = Text("a Style object", style=Style(italic=True))
    styled.append(" and a name", style="bold magenta")
    return [*rows, based, overlapping, styled, Text(""), Text("no spans")]


def test_every_row_cuts_into_the_segments_rich_renders() -> None:
    console = Console(width=200, color_system="truecolor")
    styles: dict[str, Style] = {}
    rows = _rows()
    assert sum(len(r.spans) for r in rows) > 100  # the chart's colour runs are there
    for row in rows:
        assert _plain_none(row_segments(row, console, styles)) == _rich(row, console), row.plain


def test_the_widget_colours_go_under_every_segment_in_the_same_pass() -> None:
    """`under` (TextStrips' own colours) gives what Rich's segments with the style applied under
    them give: the strip is not styled a second time."""
    console = Console(width=200, color_system="truecolor")
    styles: dict[str, Style] = {}
    under = Style(color="white", bgcolor="grey11")
    for row in _rows():
        ours = row_segments(row, console, styles, under)
        theirs = list(Segment.apply_style(_rich(row, console), under))
        assert _plain_none(ours) == _plain_none(theirs), row.plain
        assert all(s.style is not None and s.style.bgcolor == under.bgcolor for s in ours if s.text), row.plain
