"""ui/chart.py: braille line charts drawn where the values say, at the size asked for."""

from __future__ import annotations

import random

from rich.cells import cell_len

from gpu_tui.ui.chart import Line, Mark, Steps, line_chart, tick_label

BRAILLE = range(0x2801, 0x2900)


def plot_rows(text: str, title: bool = False) -> list[str]:
    """The plot area's rows, between the frame's two rules, without the y ticks and the frame."""
    lines = text.split("\n")
    top = lines.index(next(line for line in lines if "┌" in line))
    bottom = lines.index(next(line for line in lines if "└" in line))
    left = lines[top].index("┌") + 1
    return [line[left:-1] for line in lines[top + 1 : bottom]]


def dotted(row: str) -> list[int]:
    return [i for i, ch in enumerate(row) if ord(ch) in BRAILLE]


def test_the_chart_is_the_size_asked_for_in_cells_whatever_the_labels() -> None:
    for width, height in ((40, 10), (156, 17), (76, 8)):
        for title, xlabel in (("", ""), ("GPU 利用率 %", "秒前"), ("GPU utilisation %", "seconds ago")):
            out = line_chart(
                [Line([(float(i), float(i % 7)) for i in range(50)], "cyan")],
                width=width,
                height=height,
                title=title,
                xlabel=xlabel,
            )
            lines = out.plain.split("\n")
            assert len(lines) == height
            assert max(cell_len(line) for line in lines) == width
            if title:
                # centred by cells: a wide title is not pushed right by its character count
                pad = len(lines[0]) - len(lines[0].lstrip())
                assert abs(2 * pad + cell_len(title) - width) <= 1


def test_a_flat_line_at_the_top_and_bottom_of_the_y_range_lands_on_the_first_and_last_rows() -> None:
    top = line_chart([Line([(0.0, 100.0), (10.0, 100.0)], "green")], width=40, height=10, ylim=(0, 100))
    bottom = line_chart([Line([(0.0, 0.0), (10.0, 0.0)], "green")], width=40, height=10, ylim=(0, 100))
    top_rows, bottom_rows = plot_rows(top.plain), plot_rows(bottom.plain)
    assert dotted(top_rows[0]) == list(range(len(top_rows[0])))  # across the whole width
    assert not any(dotted(r) for r in top_rows[1:])
    assert dotted(bottom_rows[-1]) == list(range(len(bottom_rows[-1])))
    assert not any(dotted(r) for r in bottom_rows[:-1])
    # the top dots of a cell (⠉ = dots 1 and 4) for the top, the bottom ones (⣀) for the bottom
    assert set(top_rows[0]) == {"⠉"} and set(bottom_rows[-1]) == {"⣀"}


def test_values_outside_the_y_range_are_drawn_at_its_edge_and_a_rising_line_rises() -> None:
    out = line_chart([Line([(0.0, -50.0), (1.0, 50.0), (2.0, 500.0)], "red")], width=30, height=9, ylim=(0, 100))
    rows = plot_rows(out.plain)
    assert dotted(rows[-1])[0] == 0  # -50: the bottom-left cell
    assert dotted(rows[0])[-1] == len(rows[0]) - 1  # 500: the top-right cell
    firsts = [dotted(r)[0] for r in rows if dotted(r)]
    assert firsts == sorted(firsts, reverse=True)  # higher rows start further right


def test_a_missing_value_breaks_the_line() -> None:
    gap = [(float(i), None if 10 <= i < 30 else 50.0) for i in range(40)]
    rows = plot_rows(line_chart([Line(gap, "cyan")], width=44, height=8, ylim=(0, 100)).plain)
    cols = sorted({c for r in rows for c in dotted(r)})
    # 40 samples over 42 cells: the 20 missing ones leave about half the width blank in the middle
    assert cols[0] == 0 and cols[-1] == len(rows[0]) - 1
    holes = [c for c in range(cols[0], cols[-1]) if c not in cols]
    assert len(holes) >= 15 and holes == list(range(holes[0], holes[-1] + 1))


def test_each_cell_takes_its_series_colour() -> None:
    out = line_chart(
        [Line([(0.0, 90.0), (10.0, 90.0)], "green"), Line([(0.0, 10.0), (10.0, 10.0)], "magenta")],
        width=30,
        height=10,
        ylim=(0, 100),
    )
    styles = {str(span.style) for span in out.spans if "⠀" < out.plain[span.start : span.end].strip()[:1]}
    assert {"green", "magenta"} <= styles


def test_no_points_draws_an_empty_frame_and_one_point_a_dot() -> None:
    empty = line_chart([], width=30, height=8)
    assert not any(dotted(r) for r in plot_rows(empty.plain))
    one = line_chart([Line([(5.0, 1.0)], "cyan")], width=30, height=8)
    assert sum(len(dotted(r)) for r in plot_rows(one.plain)) == 1


def test_tick_labels_have_the_decimals_their_span_needs() -> None:
    assert tick_label(66.66, 33.3) == "67"  # 0-100 in four ticks
    assert tick_label(-29.75, 29.75) == "-30"  # 120 s back in five
    assert tick_label(0.5234, 0.24) == "0.52"
    assert tick_label(0.05234, 0.02) == "0.052"
    assert tick_label(2.5, 1.0) == "2.5"
    assert tick_label(20000, 10000) == "20k"
    assert tick_label(12500, 2500) == "12.5k"
    assert tick_label(7, 0) == "7.0"


def test_a_mark_replaces_its_cell_in_its_style_and_one_outside_the_limits_is_left_out() -> None:
    line = Line([(float(i), float(10 - i)) for i in range(11)], "cyan")
    out = line_chart(
        [line],
        width=40,
        height=10,
        marks=[Mark(10.0, 0.0, "▼", "bold yellow"), Mark(99.0, 0.0, "X", "red")],
    )
    rows = plot_rows(out.plain)
    assert "X" not in out.plain
    marked = [(r, row.index("▼")) for r, row in enumerate(rows) if "▼" in row]
    assert marked == [(len(rows) - 1, len(rows[-1]) - 1)]  # the last x, the lowest y: bottom right
    spans = [s for s in out.spans if out.plain[s.start : s.end] == "▼"]
    assert [str(s.style) for s in spans] == ["bold yellow"]
    # the rest of the curve is still braille
    assert sum(len(dotted(row)) for row in rows) > 10


def test_y_tick_labels_never_sit_on_neighbouring_rows() -> None:
    for height in range(8, 40):
        out = line_chart([Line([(0.0, 0.0), (1.0, 100.0)], "cyan")], width=60, height=height, ylim=(0, 100))
        rows = [i for i, line in enumerate(out.plain.split("\n")) if "┤" in line]
        assert len(rows) >= 2 and rows[0] < rows[-1]
        assert all(b - a >= 3 for a, b in zip(rows, rows[1:], strict=False)), (height, rows)


def _walk(seed: int, n: int, gaps: bool, edge: float = 10.0) -> list[float | None]:
    rng = random.Random(seed)
    out: list[float | None] = []
    u = 50.0
    for i in range(n):
        u = max(-edge, min(100.0 + edge, u + rng.uniform(-20, 20)))  # past both edges now and then
        out.append(None if gaps and i % 97 in (40, 41) else round(u))
    return out


def test_evenly_spaced_steps_draw_what_the_same_points_as_a_line_draw() -> None:
    """The detail screen's fast path (Steps: values at a fixed step) and the general one (Line:
    (x, y) points) give the same chart: dense (600 values on 73 columns), sparse (12 on 73, 150 on
    153), with gaps and values past the y range."""
    # 600 on 156 columns: about two values a dot column, the detail screen at 160 wide; 300 on
    # 156: one each; an x range narrower than the values: columns off the canvas
    cases = [(600, False, 76, None), (600, True, 76, None), (12, False, 76, None), (150, True, 76, None)]
    cases += [(600, False, 156, None), (300, False, 156, None), (600, False, 76, (-300.0, 0.0))]
    # fewer values than dot columns, some columns apart (the first minutes of a detail screen):
    # the sparse plan; 200 on 156: columns one and two apart in turn
    cases += [(150, False, 156, None), (200, False, 156, None), (41, False, 156, None), (2, False, 76, None)]
    for n, gaps, width, xlim in cases:
        # every other series within the y range: nothing to clamp
        series = [_walk(seed, n, gaps, edge=10.0 * (seed % 2)) for seed in range(8)]
        styles = ["green", "cyan", "yellow", "magenta", "red", "white", "bright_blue", "bright_green"]
        steps = [Steps(v, s, start=float(1 - n)) for v, s in zip(series, styles, strict=True)]
        lines = [Line([(float(i + 1 - n), y) for i, y in enumerate(v)], s) for v, s in zip(series, styles, strict=True)]
        fast = line_chart(steps, width=width, height=12, ylim=(0.0, 100.0), xlim=xlim)
        general = line_chart(lines, width=width, height=12, ylim=(0.0, 100.0), xlim=xlim)
        assert fast.plain == general.plain, (n, gaps, width)
        assert fast.spans == general.spans, (n, gaps, width)
        assert sum(len(dotted(row)) for row in plot_rows(fast.plain)) > 0


def test_a_dense_line_leaves_no_column_empty_and_a_jump_is_drawn_whole() -> None:
    """600 values squeezed onto 2 x 72 dot columns: every cell column of the plot holds a dot,
    and a jump from the bottom to the top between two neighbouring columns is one unbroken run."""
    values: list[float | None] = [0.0] * 300 + [100.0] * 300
    rows = plot_rows(line_chart([Steps(values, "green")], width=76, height=10, ylim=(0.0, 100.0)).plain)
    width = len(rows[0])
    assert all(any(ord(row[c]) in BRAILLE for row in rows) for c in range(width))
    jump = next(c for c in range(width) if ord(rows[0][c]) in BRAILLE)
    assert all(ord(row[jump]) in BRAILLE or ord(row[jump - 1]) in BRAILLE for row in rows)
