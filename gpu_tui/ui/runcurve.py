"""The log screen's curves: a run's series (services/jobs/series/read.py, or the log window's loss)
drawn on one set of axes, with the x, zoom and scale the user picked, and a legend line.

A series can hold a million points (a 200 MB log); the chart draws at most 2 x width dots
across, so what is drawn is thinned first: consecutive points fall into groups and each group
keeps its lowest and highest value (a spike stays visible). `Curve.overview` is that thinning
done once, off the event loop, when the series arrive; a zoom thins only the points it keeps.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import islice
from operator import itemgetter

from rich.cells import cell_len
from rich.text import Text

from gpu_tui.core.i18n import N_, _
from gpu_tui.ui.chart import Line, Mark, line_chart

__all__ = [
    "AXIS_WORDS",
    "Curve",
    "Plot",
    "axes_of",
    "curve_of",
    "curves_of",
    "draw",
    "thin",
    "zoom_levels",
    "zoom_word",
]

Point = tuple[float, float, "float | None"]
"""(x, value, time): a series point as read_series gives it."""

OVERVIEW_GROUPS = 4096
"""Groups of the thinning done when the series arrive (wider than any terminal's 2 x width)."""
STEP_ZOOMS = (1000, 100)
"""Zoom levels on a step axis: the last N steps."""
SHARE_ZOOMS = (0.1, 0.01)
"""Zoom levels on any other axis: the last share of the x range."""
STYLES = ("cyan", "magenta", "green")
"""The plotted series, the eval loss beside it, the compared job's curve."""
MIN_STYLE = "bold yellow"
_VALUE = itemgetter(1)

AXIS_WORDS = {
    "step": N_("step"),
    "epoch": N_("epoch"),
    "index": N_("n-th value printed"),
    "time": N_("time"),
}


def thin(points: Sequence[Point], groups: int) -> list[Point]:
    """At most 2 x `groups` of `points`, in order: each run of consecutive points keeps its
    lowest and highest value."""
    n = len(points)
    if n <= 2 * groups:
        return list(points)
    out: list[Point] = []
    size = n / groups
    for g in range(groups):
        chunk = points[int(g * size) : int((g + 1) * size)]
        if not chunk:
            continue
        # min/max by a C-level key, then their places (found by identity first): a third of a
        # Python key's cost, on the million points of a long run's series
        lo, hi = chunk.index(min(chunk, key=_VALUE)), chunk.index(max(chunk, key=_VALUE))
        if lo == hi:
            out.append(chunk[lo])
        else:
            out += (chunk[lo], chunk[hi]) if lo < hi else (chunk[hi], chunk[lo])
    return out


def _guess_axis(points: Sequence[Point]) -> str:
    """The x a series counts in, as far as its values tell (read_series does not say): whole
    numbers are steps, fractions epochs."""
    return "step" if all(float(p[0]).is_integer() for p in points[:2000]) else "epoch"


@dataclass(frozen=True, slots=True)
class Curve:
    """One series ready to draw: every point, and the overview `thin` made of them."""

    tag: str
    points: list[Point]
    axis: str
    """What x counts: `step`, `epoch` or `index`."""
    overview: list[Point] = field(default_factory=list)
    timed: bool = False
    """At least two points carry the line's own time: the time axis is offered."""

    @property
    def count(self) -> int:
        return len(self.points)


def curve_of(tag: str, points: list[Point], axis: str | None = None) -> Curve:
    timed = len(list(islice((p for p in points if p[2] is not None), 2))) == 2  # stops at the second
    return Curve(tag, points, axis or _guess_axis(points), thin(points, OVERVIEW_GROUPS), timed)


def curves_of(series: Sequence[tuple[str, list[Point]]], loss_axis: str | None = None) -> dict[str, Curve]:
    """Every series with two points or more (one point draws no curve), by tag. `loss_axis`:
    what the log's loss counts in where the log window says it (LogSummary's)."""
    return {
        tag: curve_of(tag, pts, loss_axis if tag == "loss" and loss_axis in ("step", "epoch", "index") else None)
        for tag, pts in series
        if len(pts) >= 2
    }


def axes_of(curve: Curve) -> list[str]:
    """The x axes `curve` can be drawn against: its own, and time where its lines say one."""
    return [curve.axis, "time"] if curve.timed else [curve.axis]


def zoom_levels(curve: Curve, axis: str) -> list[float]:
    """The zooms that show less than the whole curve: steps on a step axis, else shares."""
    if axis != "step":
        return list(SHARE_ZOOMS)
    xs = [p[0] for p in curve.points]
    span = max(xs) - min(xs) if xs else 0.0
    return [z for z in STEP_ZOOMS if z < span]


def zoom_word(axis: str, zoom: float | None) -> str:
    if zoom is None:
        return _("the whole run")
    if axis == "step":
        return _("last {n:,} steps").format(n=int(zoom))
    return _("last {share:g} %").format(share=zoom * 100)


@dataclass(frozen=True, slots=True)
class Plot:
    """What the user chose to see (the screen's state; tests read it)."""

    tag: str = "loss"
    axis: str | None = None
    """None: the plotted curve's own axis."""
    zoom: float | None = None
    log: bool = False
    compare: str | None = None
    """The compared job's legend name, when a comparison is on."""


def _xy(points: Sequence[Point], axis: str, scale: float) -> list[tuple[float, float]]:
    if axis != "time":
        return [(p[0], p[1]) for p in points]
    out: list[tuple[float, float]] = []
    t0: float | None = None
    for _x, v, t in points:
        if t is not None:
            t0 = t if t0 is None else t0
            out.append(((t - t0) / scale, v))
    return out


def _time_scale(curve: Curve) -> tuple[float, str]:
    times = [p[2] for p in curve.overview if p[2] is not None]
    span = (max(times) - min(times)) if times else 0.0
    if span >= 3 * 3600:
        return 3600.0, _("hours since the first point")
    return 60.0, _("minutes since the first point")


def _tail(curve: Curve, axis: str, zoom: float | None) -> Sequence[Point]:
    """The points the zoom keeps: from the end back to the first one before its start."""
    if zoom is None:
        return curve.overview
    pts = curve.points
    key = 0 if axis != "time" else 2
    vals = [v for p in pts if (v := p[key]) is not None]
    if not vals:
        return pts
    hi, lo = max(vals), min(vals)
    start = hi - zoom if axis == "step" else hi - (hi - lo) * zoom
    i = len(pts)
    while i > 0:
        v = pts[i - 1][key]
        if v is not None and v < start:
            break
        i -= 1
    return pts[i:]


def _num(v: float) -> str:
    return f"{int(v):,}" if float(v).is_integer() else f"{v:.4g}"


def draw(
    curves: dict[str, Curve],
    plot: Plot,
    *,
    width: int,
    height: int,
    compare: Curve | None = None,
) -> Text:
    """The chart of `plot.tag` (with `eval_loss` beside `loss`, and the compared job's curve),
    then its legend: each line's last value, the plotted one's minimum marked."""
    main = curves.get(plot.tag)
    if main is None:
        return Text()
    axis = plot.axis if plot.axis in axes_of(main) else main.axis
    width, height = max(20, width), max(6, height)
    groups = max(8, width)  # 2 x width dots across: a group is two points, at most one a dot
    scale, time_label = _time_scale(main) if axis == "time" else (1.0, "")
    shown: list[tuple[str, str, list[tuple[float, float]]]] = []
    partners: list[tuple[Curve, str]] = []
    if plot.tag == "loss" and "eval_loss" in curves:
        partners.append((curves["eval_loss"], "eval_loss"))
    if compare is not None and plot.compare:
        partners.append((compare, plot.compare))
    main_pts = _xy(thin(_tail(main, axis, plot.zoom), groups), axis, scale)
    if plot.log:
        main_pts = [(x, math.log10(v)) for x, v in main_pts if v > 0]
    shown.append((plot.tag, STYLES[0], main_pts))
    if main_pts:
        x_lo, x_hi = min(x for x, _v in main_pts), max(x for x, _v in main_pts)
        for (curve, name), style in zip(partners, STYLES[1:], strict=False):
            if axis not in axes_of(curve) or curve.axis != main.axis and axis != "time":
                continue  # another x (an eval counted in epochs beside a loss in steps): not on these axes
            if plot.zoom is None:
                pts = _xy(thin(curve.overview, groups), axis, scale)
            else:  # the main curve's x range, whatever this one's own end
                pts = [(x, v) for x, v in _xy(curve.points, axis, scale) if x_lo <= x <= x_hi]
                pts = [(x, v) for x, v, _t in thin([(x, v, None) for x, v in pts], groups)]
            if plot.log:
                pts = [(x, math.log10(v)) for x, v in pts if v > 0]
            shown.append((name, style, pts))
    lines = [Line(pts, style) for _name, style, pts in shown if len(pts) >= 2]
    marks: list[Mark] = []
    legend = Text()
    for name, style, pts in shown:
        if not pts:
            continue
        if legend:
            legend.append("  ")
        last = pts[-1][1]
        legend.append("━ ", style=style)
        legend.append(f"{name} {_num(10**last if plot.log else last)}", style=style)
        if style == STYLES[0]:
            mx, my = min(pts, key=lambda p: p[1])
            marks.append(Mark(mx, my, "▼", MIN_STYLE))
            at = _num(mx) if axis != "time" else (_("{x:.1f} h") if scale > 60 else _("{x:.0f} min")).format(x=mx)
            legend.append(
                "  "
                + (_("▼ min {value} @ {axis} {x}") if axis != "time" else _("▼ min {value} @ {x}")).format(
                    value=_num(10**my if plot.log else my), axis=_(AXIS_WORDS[axis]), x=at
                ),
                style=MIN_STYLE,
            )
    label = time_label if axis == "time" else _(AXIS_WORDS.get(axis, ""))
    if plot.log:
        label += "   " + _("y: log10({tag})").format(tag=plot.tag)
    chart = line_chart(lines, width=width, height=height, xlabel=label, marks=marks)
    chart.append("\n")
    chart.append_text(_fit(legend, width))
    return chart


def _fit(text: Text, width: int) -> Text:
    """The legend cut to the panel's width in cells (it never wraps into the log's rows)."""
    if cell_len(text.plain) <= width:
        return text
    text = text.copy()
    text.truncate(width - 1, overflow="ellipsis")
    return text
