"""Braille line charts as Rich Text, fast enough to redraw every second.

plotext drew the detail screen's two 8-GPU charts in 0.4 s each at 156 columns (measured): its
braille pass visits every cell of the canvas once per series. Here each series marks only the
dots its own line segments cross, so a chart of 8 series x 300 points costs milliseconds. The
frame follows plotext's (a boxed plot, y ticks on the left, x ticks below) so a chart reads the
same on every screen.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from operator import add, mul, sub, truediv
from typing import cast

from rich.cells import cell_len
from rich.text import Span, Text

__all__ = ["Line", "Mark", "Steps", "chart_rows", "join_rows", "line_chart", "tick_label"]

# dot (column 0-1, row 0-3) -> its bit in a braille cell, U+2800 + bits
_DOTS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))
_BRAILLE = 0x2800
_CELLS = (" ", *(chr(_BRAILLE + bits) for bits in range(1, 256)))
# [column][first row][last row] -> the bits of that run of dots in one cell
_RUNS = tuple(
    tuple(tuple(sum(_DOTS[r][half] for r in range(lo, hi + 1)) for hi in range(4)) for lo in range(4))
    for half in range(2)
)


@dataclass(frozen=True, slots=True)
class Line:
    """One series: points (x, y) in order; a y of None breaks the line there."""

    points: Sequence[tuple[float, float | None]]
    style: str


@dataclass(frozen=True, slots=True)
class Steps:
    """One series sampled at a fixed step: `values[i]` at x = `start` + i (a 1 Hz history,
    x in seconds); None breaks the line there. Drawn faster than the same points as a Line."""

    values: Sequence[float | None]
    style: str
    start: float = 0.0


@dataclass(frozen=True, slots=True)
class Mark:
    """One character drawn over the curves at (x, y) in chart units (a minimum's `▼`); a mark
    outside the chart's limits is left out."""

    x: float
    y: float
    char: str
    style: str


def tick_label(value: float, step: float) -> str:
    """A tick's number with the decimals its axis' tick spacing needs: `67`, `0.52`, `12k`."""
    if abs(value) >= 10_000 and step >= 1000:
        return f"{value / 1000:.0f}k" if step >= 10_000 or value % 1000 == 0 else f"{value / 1000:.1f}k"
    decimals = max(0, min(4, 1 - math.floor(math.log10(step)))) if step > 0 else 1
    return f"{value:.{decimals}f}"


def _centred(text: str, width: int) -> str:
    return (" " * max(0, (width - cell_len(text)) // 2) + text).rstrip()


def _ticks(lo: float, hi: float, count: int) -> list[float]:
    if count < 2 or hi <= lo:
        return [lo]
    return [lo + (hi - lo) * i / (count - 1) for i in range(count)]


class _Canvas:
    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.bits = [[0] * width for _ in range(height)]
        self.owner: list[list[str | None]] = [[None] * width for _ in range(height)]
        self.chars: dict[tuple[int, int], str] = {}
        """(row, col) -> a character drawn instead of that cell's braille (a Mark)."""

    def mark(self, col: int, row: int, char: str, style: str) -> None:
        if 0 <= col < self.width and 0 <= row < self.height:
            self.chars[row, col] = char
            self.owner[row][col] = style

    def dot(self, x: int, y: int, style: str) -> None:
        if 0 <= x < 2 * self.width and 0 <= y < 4 * self.height:
            row, col = y >> 2, x >> 1
            self.bits[row][col] |= _DOTS[y & 3][x & 1]
            self.owner[row][col] = style  # a cell two lines cross takes the later one's colour

    def run(self, x: int, y_a: int, y_b: int, style: str) -> None:
        """The dots of column `x` from row y_a to y_b (inclusive), a braille cell at a time."""
        if not 0 <= x < 2 * self.width:
            return
        if y_a > y_b:
            y_a, y_b = y_b, y_a
        if y_a < 0:
            y_a = 0
        if y_b >= 4 * self.height:
            y_b = 4 * self.height - 1
        col = x >> 1
        runs, bits, owner = _RUNS[x & 1], self.bits, self.owner
        first, last = y_a >> 2, y_b >> 2
        if first == last:  # most runs of a dense line: one cell
            bits[first][col] |= runs[y_a & 3][y_b & 3]
            owner[first][col] = style
            return
        for row in range(first, last + 1):
            lo = y_a & 3 if row == first else 0
            hi = y_b & 3 if row == last else 3
            bits[row][col] |= runs[lo][hi]
            owner[row][col] = style

    def runs(self, xs: Sequence[int], los: Sequence[int], his: Sequence[int], style: str) -> None:
        """`run` for each column of `xs` (all on the canvas) from `los` to `his` (lo <= hi, all
        on it), inlined: one call per line, not two per column."""
        bits, owner = self.bits, self.owner
        for x, y_a, y_b in zip(xs, los, his, strict=True):
            col, runs = x >> 1, _RUNS[x & 1]
            first, last = y_a >> 2, y_b >> 2
            if first == last:
                bits[first][col] |= runs[y_a & 3][y_b & 3]
                owner[first][col] = style
                continue
            bits[first][col] |= runs[y_a & 3][3]
            owner[first][col] = style
            for row in range(first + 1, last):
                bits[row][col] |= runs[0][3]
                owner[row][col] = style
            bits[last][col] |= runs[0][y_b & 3]
            owner[last][col] = style

    def segment(self, x0: int, y0: int, x1: int, y1: int, style: str) -> None:
        """A straight line, as one vertical run per dot column (a steep line costs a cell, not a
        dot, per 4 rows)."""
        if x1 < x0:
            x0, y0, x1, y1 = x1, y1, x0, y0
        if x0 == x1:
            self.run(x0, y0, y1, style)
            return
        slope = (y1 - y0) / (x1 - x0)
        for x in range(x0, x1 + 1):
            # the rows the line crosses within this column: half a column either side
            a = y0 + slope * (max(x0, x - 0.5) - x0)
            b = y0 + slope * (min(x1, x + 0.5) - x0)
            self.run(x, round(min(a, b)), round(max(a, b)), style)

    def row_text(self, row: int, prefix: str, suffix: str) -> Text:
        """Row `row` of cells between `prefix` and `suffix` (unstyled, one cell a character):
        its spans made directly, one per run of one colour (Text.append per run was half the
        cost of a chart of 8 crossing lines, measured)."""
        chars = [_CELLS[b] for b in self.bits[row]]
        for (r, c), ch in self.chars.items():
            if r == row:
                chars[c] = ch
        spans = []
        pos = len(prefix)
        for style, run in itertools.groupby(self.owner[row]):
            n = len(list(run))
            if style:
                spans.append(Span(pos, pos + n, style))
            pos += n
        return Text(prefix + "".join(chars) + suffix, spans=spans)


def join_rows(rows: Sequence[Text]) -> Text:
    """`rows` as one Text, a newline between each (Text.join, without a Text.append per row)."""
    spans = []
    pos = 0
    for row in rows:
        if row.style:
            spans.append(Span(pos, pos + len(row.plain), row.style))
        spans += [Span(pos + a, pos + b, style) for a, b, style in row.spans]
        pos += len(row.plain) + 1
    return Text("\n".join(row.plain for row in rows), spans=spans)


def _x_range(lines: Sequence[Line | Steps]) -> tuple[float, float]:
    xs = [x for line in lines if isinstance(line, Line) for x, y in line.points if y is not None]
    for line in lines:
        if isinstance(line, Steps) and any(v is not None for v in line.values):
            xs += [line.start, line.start + len(line.values) - 1]
    return (min(xs), max(xs)) if xs else (0.0, 1.0)


def _y_range(lines: Sequence[Line | Steps]) -> tuple[float, float]:
    ys = [y for line in lines if isinstance(line, Line) for _x, y in line.points if y is not None]
    for line in lines:
        if isinstance(line, Steps):
            known = [v for v in line.values if v is not None]
            if known:
                ys += [min(known), max(known)]
    return (min(ys), max(ys)) if ys else (0.0, 1.0)


def _trace(canvas: _Canvas, line: Line, x_lo: float, x_scale: float, y_lo: float, y_hi: float, y_scale: float) -> None:
    """Draw `line`, one run of dots per dot column it covers: points that fall in the same
    column (600 seconds of history on 300 columns of dots) become one run from their lowest to
    their highest, joined to the column before; columns apart are joined by a segment. Drawing
    each pair of points as a segment cost 60 ms per 8-GPU chart (measured), this a fraction."""
    style = line.style
    col = -1  # the column being gathered; -1: none (the start, or after a gap)
    first = lo = hi = last = 0
    prev_col, prev_last = -1, 0  # the column drawn before, and where its line left it
    for x, y in line.points:
        if y is None:
            if col >= 0:
                _column(canvas, col, first, lo, hi, prev_col, prev_last, style)
            col = prev_col = -1
            continue
        # comparisons, not min/max: this loop runs for every point of every line
        if y > y_hi:
            y = y_hi
        elif y < y_lo:
            y = y_lo
        px = round((x - x_lo) * x_scale)
        py = round((y_hi - y) * y_scale)
        if px == col:
            if py < lo:
                lo = py
            elif py > hi:
                hi = py
            last = py
            continue
        if col >= 0:
            _column(canvas, col, first, lo, hi, prev_col, prev_last, style)
            prev_col, prev_last = col, last
        col, first, lo, hi, last = px, py, py, py, py
    if col >= 0:
        _column(canvas, col, first, lo, hi, prev_col, prev_last, style)


def _trace_steps(
    canvas: _Canvas,
    steps: Steps,
    x_lo: float,
    x_scale: float,
    y_lo: float,
    y_hi: float,
    y_scale: float,
) -> None:
    """`_trace` for evenly spaced values: each column's values are a slice, so its lowest and
    highest come from min() and max() over it, not a Python step per value. The slices are
    planned once (`_plan`) for the lines of a chart (8 GPUs' histories), and kept for the next
    redraw of the same length (a full history: every redraw)."""
    values = list(steps.values)
    if None in values:  # a gap: the general path knows where the line breaks
        points = list(zip(itertools.count(steps.start), values))
        _trace(canvas, Line(points, steps.style), x_lo, x_scale, y_lo, y_hi, y_scale)
        return
    known = cast("list[float]", values)
    if known and y_lo <= min(known) and max(known) <= y_hi:  # nothing to clamp: C loops, no Python step a value
        ys = list(map(round, map(y_scale.__mul__, map(y_hi.__sub__, known))))
    else:
        ys = [round((y_hi - (y_hi if v > y_hi else y_lo if v < y_lo else v)) * y_scale) for v in known]
    plan = _plan(len(ys), steps.start, x_lo, x_scale, 2 * canvas.width)
    style = steps.style
    if plan.sparse is not None:  # fewer values than dot columns (a history under 5 minutes old)
        plan.sparse.draw(canvas, ys, style)
        return
    if not plan.dense:
        prev_col, prev_last = -1, 0
        for col, i, j in plan.slices:
            part = ys[i:j]
            _column(canvas, col, part[0], min(part), max(part), prev_col, prev_last, style)
            prev_col, prev_last = col, part[-1]
        return
    # every column next to the one before and on the canvas (a history longer than the chart is
    # wide, the detail screen's): each column's run reaches where the line left the one before
    lasts = list(map(ys.__getitem__, plan.lasts))
    prevs = lasts[:1] + lasts[:-1]  # the first column joins nothing: its own last is in its run
    if plan.single:
        los = list(map(min, lasts, prevs))
        his = list(map(max, lasts, prevs))
    else:
        parts = list(map(ys.__getitem__, plan.parts))
        los = list(map(min, map(min, parts), prevs))
        his = list(map(max, map(max, parts), prevs))
    canvas.runs(plan.cols, los, his, style)


@dataclass(frozen=True, slots=True)
class _Plan:
    """How `n` evenly spaced values fall on a chart's dot columns."""

    slices: list[tuple[int, int, int]]
    """(column, first index, end index) of each run of values drawn in one dot column."""
    dense: bool
    """Each column next to the one before, all on the canvas: the vectorised path applies."""
    cols: list[int]
    lasts: list[int]
    """Each column's last value's index."""
    parts: list[slice]
    single: bool
    """One value per column."""
    sparse: _Sparse | None = None
    """One value per column, some columns apart, all on the canvas: the segments' runs, planned."""

    @classmethod
    def of(cls, n: int, start: float, x_lo: float, x_scale: float, dot_cols: int) -> _Plan:
        # the general path's arithmetic, (x - x_lo) * scale: a column on a rounding tie falls
        # the same way in both
        cols = [round((start + i - x_lo) * x_scale) for i in range(n)]
        slices = []
        i = 0
        while i < n:
            col, j = cols[i], i + 1
            while j < n and cols[j] == col:
                j += 1
            slices.append((col, i, j))
            i = j
        first = [c for c, _i, _j in slices]
        on_canvas = bool(slices) and 0 <= first[0] and first[-1] < dot_cols
        dense = on_canvas and first == list(range(first[0], first[-1] + 1))
        single = all(j - i == 1 for _c, i, j in slices)
        return cls(
            slices=slices,
            dense=dense,
            cols=first,
            lasts=[j - 1 for _c, _i, j in slices],
            parts=[slice(i, j) for _c, i, j in slices],
            single=single,
            sparse=_Sparse.of(first) if single and on_canvas and not dense else None,
        )


@dataclass(frozen=True, slots=True)
class _Sparse:
    """The runs `_trace` draws for one value per dot column with columns apart, as lists the
    lines of a chart share: each entry is a run in column `xs[k]` between `a` and `b`, where
    a = y0 + (y1 - y0) / g * da (b: with db) and y0, y1 are the values at `i0[k]`, `i1[k]`.
    A line is then a few C-level maps over them, not a Python call per dot column (its segments
    drawn one run at a time were 12 ms of a detail screen's 8-GPU open, measured)."""

    xs: list[int]
    i0: list[int]
    i1: list[int]
    g: list[int]
    da: list[float]
    db: list[float]

    @classmethod
    def of(cls, cols: Sequence[int]) -> _Sparse:
        # the first value is a run of one dot; each next one joins the one before: in the next
        # column, one run between the two (`_column`), else `_Canvas.segment`'s runs, column by
        # column (the value's own run, drawn after them there, is the last run's end: dropped)
        entries: list[tuple[int, int, int, int, float, float]] = [(cols[0], 0, 0, 1, 0.0, 0.0)]
        for i in range(1, len(cols)):
            x0, x1 = cols[i - 1], cols[i]
            if x1 - x0 == 1:
                entries.append((x1, i - 1, i, 1, 0.0, 1.0))
                continue
            entries += [(x, i - 1, i, x1 - x0, max(x0, x - 0.5) - x0, min(x1, x + 0.5) - x0) for x in range(x0, x1 + 1)]
        xs, i0, i1, g, da, db = map(list, zip(*entries, strict=True))
        return cls(xs, i0, i1, g, da, db)

    def draw(self, canvas: _Canvas, ys: Sequence[int], style: str) -> None:
        y0s = list(map(ys.__getitem__, self.i0))
        slopes = list(map(truediv, map(sub, map(ys.__getitem__, self.i1), y0s), self.g))
        a = list(map(add, y0s, map(mul, slopes, self.da)))
        b = list(map(add, y0s, map(mul, slopes, self.db)))
        canvas.runs(self.xs, list(map(round, map(min, a, b))), list(map(round, map(max, a, b))), style)


# a few: a chart's lines share one, and a full history's redraws (600 values) draw on the same
_plan = functools.lru_cache(maxsize=8)(_Plan.of)


def _column(canvas: _Canvas, col: int, first: int, lo: int, hi: int, prev_col: int, prev_last: int, style: str) -> None:
    if prev_col < 0:
        canvas.run(col, lo, hi, style)
    elif abs(col - prev_col) == 1:
        canvas.run(col, min(lo, prev_last), max(hi, prev_last), style)
    else:
        canvas.segment(prev_col, prev_last, col, first, style)
        canvas.run(col, lo, hi, style)


def line_chart(
    lines: Sequence[Line | Steps],
    *,
    width: int,
    height: int,
    ylim: tuple[float, float] | None = None,
    xlim: tuple[float, float] | None = None,
    title: str = "",
    xlabel: str = "",
    marks: Sequence[Mark] = (),
) -> Text:
    """`chart_rows` as one Text."""
    rows = chart_rows(lines, width=width, height=height, ylim=ylim, xlim=xlim, title=title, xlabel=xlabel, marks=marks)
    return join_rows(rows)


def chart_rows(
    lines: Sequence[Line | Steps],
    *,
    width: int,
    height: int,
    ylim: tuple[float, float] | None = None,
    xlim: tuple[float, float] | None = None,
    title: str = "",
    xlabel: str = "",
    marks: Sequence[Mark] = (),
) -> list[Text]:
    """`lines` in a box `width` x `height` cells all told (title, ticks and labels included),
    `marks` drawn over them (one cell each, a one-cell character)."""
    x_lo, x_hi = xlim or _x_range(lines)
    y_lo, y_hi = map(float, ylim or _y_range(lines))  # floats: their methods are mapped over values
    if x_hi <= x_lo:
        x_lo, x_hi = x_lo - 1, x_hi + 1
    if y_hi <= y_lo:
        y_lo, y_hi = y_lo - 1, y_hi + 1
    rows = max(2, height - 3 - bool(title) - bool(xlabel))  # the frame's two rules and the x ticks
    y_ticks = _ticks(y_lo, y_hi, max(2, min(6, (rows - 1) // 3 + 1)))  # 3 rows apart at least: labels never touch
    y_labels = [tick_label(v, y_ticks[1] - y_ticks[0] if len(y_ticks) > 1 else y_hi - y_lo) for v in y_ticks]
    margin = max(cell_len(s) for s in y_labels)
    cols = max(4, width - margin - 2)
    canvas = _Canvas(cols, rows)
    dots_w, dots_h = 2 * cols - 1, 4 * rows - 1
    x_scale, y_scale = dots_w / (x_hi - x_lo), dots_h / (y_hi - y_lo)
    for line in lines:
        if isinstance(line, Steps):
            _trace_steps(canvas, line, x_lo, x_scale, y_lo, y_hi, y_scale)
        else:
            _trace(canvas, line, x_lo, x_scale, y_lo, y_hi, y_scale)
    for m in marks:
        if x_lo <= m.x <= x_hi and y_lo <= m.y <= y_hi:
            px = round((m.x - x_lo) / (x_hi - x_lo) * dots_w)
            py = round((y_hi - m.y) / (y_hi - y_lo) * dots_h)
            canvas.mark(px >> 1, py >> 2, m.char, m.style)
    # the row each y tick sits on, top row = y_hi
    tick_rows = {
        round((y_hi - v) / (y_hi - y_lo) * (rows - 1)): label for v, label in zip(y_ticks, y_labels, strict=True)
    }
    out = []
    if title:
        out.append(Text(_centred(title, margin + cols + 2)))
    out.append(Text(" " * margin + "┌" + "─" * cols + "┐"))
    for r in range(rows):
        label = tick_rows.get(r)
        out.append(canvas.row_text(r, (label or "").rjust(margin) + ("┤" if label is not None else "│"), "│"))
    x_ticks = _ticks(x_lo, x_hi, max(2, min(5, cols // 12)))
    x_cols = [round((v - x_lo) / (x_hi - x_lo) * (cols - 1)) for v in x_ticks]
    rule = ["─"] * cols
    for c in x_cols:
        rule[c] = "┬"
    out.append(Text(" " * margin + "└" + "".join(rule) + "┘"))
    under = [" "] * (margin + cols + 2)
    for v, c in zip(x_ticks, x_cols, strict=True):
        label = tick_label(v, x_ticks[1] - x_ticks[0] if len(x_ticks) > 1 else x_hi - x_lo)
        start = max(0, min(len(under) - len(label), margin + 1 + c - len(label) // 2))
        if all(ch == " " for ch in under[max(0, start - 1) : start + len(label) + 1]):
            under[start : start + len(label)] = label
    out.append(Text("".join(under).rstrip()))
    if xlabel:
        out.append(Text(_centred(xlabel, margin + cols + 2)))
    return out
