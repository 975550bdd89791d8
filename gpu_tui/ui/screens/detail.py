"""`enter`: the selected instance's GPUs with larger utilisation and VRAM charts drawn by plotext."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

import plotext as plt
from rich.cells import cell_len
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from gpu_tui.core.i18n import N_, _
from gpu_tui.core.units import format_clock_hms, format_mib_as_gib, format_percent
from gpu_tui.services.fleet import InstanceView
from gpu_tui.ui.format import short_gpu_name
from gpu_tui.ui.screens.localise import translate_bindings

__all__ = ["DetailScreen", "PlotLabels", "chart"]


def _pct(value: int | None) -> str:
    return format_percent(value, missing=_("n/a"))


# plotext colour name -> the Rich style of the same terminal colour, for our own legend (plotext
# leaves its legend out when the labels do not fit, which happens with 8 GPUs)
PALETTE: tuple[tuple[str, str], ...] = (
    ("green", "green"),
    ("cyan", "cyan"),
    ("yellow", "yellow"),
    ("magenta", "magenta"),
    ("blue+", "bright_blue"),
    ("red", "red"),
    ("green+", "bright_green"),
    ("white", "white"),
)


class PlotLabels:
    """Titles and axis labels for plotext, which gives every character one cell: a label with
    wide characters (Chinese) is laid out as a stand-in of the same width in cells, made of
    private-use characters, and swapped back into plotext's output."""

    _FIRST = 0xE000

    def __init__(self) -> None:
        self._swaps: list[tuple[str, str]] = []

    def __call__(self, text: str) -> str:
        if cell_len(text) == len(text):
            return text
        mark = chr(self._FIRST + len(self._swaps)) * cell_len(text)
        self._swaps.append((mark, text))
        return mark

    def restore(self, built: str) -> str:
        for mark, text in self._swaps:
            built = built.replace(mark, text)
        # a stand-in plotext shortened for want of room: drop what is left of it
        return "".join(c for c in built if not self._FIRST <= ord(c) < self._FIRST + len(self._swaps))


def chart(
    title: str,
    series: Mapping[str, Sequence[float | None]],
    *,
    ymax: float,
    width: int,
    height: int,
    xlabel: str | None = None,
    legend: bool = True,
) -> Text:
    """One plotext line chart as Rich Text, then a legend line; x counts back from the newest
    value (seconds for 1 Hz histories), y is fixed 0..ymax. `xlabel` None: "seconds ago"; "": none."""
    if xlabel is None:
        xlabel = _("seconds ago")
    labels = PlotLabels()
    plt.clf()
    plt.limit_size(False, False)  # size to the widget, not to the terminal plotext guesses
    plt.plotsize(max(20, width), max(6, height))
    plt.theme("clear")
    if title:
        plt.title(labels(title))
    legend_text = Text()
    for n_series, (label, values) in enumerate(series.items()):
        colour, style = PALETTE[n_series % len(PALETTE)]
        n = len(values)
        xs = [i - n + 1 for i, v in enumerate(values) if v is not None]
        ys = [float(v) for v in values if v is not None]
        if xs:
            plt.plot(xs, ys, marker="braille", color=colour)
        legend_text.append("━━ ", style=style)
        legend_text.append(label + "   ")
    plt.ylim(0, ymax)
    if xlabel:
        plt.xlabel(labels(xlabel))
    out = Text.from_ansi(labels.restore(plt.build()))
    if legend:
        out.append("\n")
        out.append_text(legend_text)
    return out


class DetailScreen(Screen[None]):
    BINDINGS = [Binding("escape,enter,q", "app.pop_screen", N_("Back"))]
    DEFAULT_CSS = """
    DetailScreen Static { height: auto; }
    """

    def __init__(self, view: InstanceView, clock: Callable[[], float] = time.time) -> None:
        super().__init__()
        translate_bindings(self)
        self._view = view
        self._clock = clock

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id="charts")
        yield Footer()

    def on_mount(self) -> None:
        self.redraw()
        self.set_interval(2.0, self.redraw)

    def redraw(self) -> None:
        v = self._view
        width = max(40, self.size.width - 4)
        t = Text()
        t.append(f"{v.name}  ", style="bold")
        t.append(format_clock_hms(self._clock()), style="dim")
        hist = v.history
        if not hist.gpus:
            t.append("\n" + _("no GPU samples yet"), style="dim")
        else:
            latest = {g.index: g for g in (v.frame.gpus if v.frame else ())}
            height = max(8, (self.size.height - 10) // 2)  # two charts and their legends fill the screen

            models = {short_gpu_name(g.name) for g in latest.values()}
            models_same = len(models) == 1
            if len(models) == 1:  # one model (the usual box): name it once, not per line
                t.append(f"   {len(latest)}x {models.pop()}")

            def label(i: int, value: str) -> str:
                g = latest.get(i)
                name = short_gpu_name(g.name) if g and not models_same else ""
                return " ".join(p for p in (_("gpu {i}").format(i=i), name, value) if p)

            util = {
                label(i, _pct(latest[i].utilization_gpu if i in latest else None)): list(h.utilization)
                for i, h in sorted(hist.gpus.items())
            }
            t.append("\n")
            t.append_text(chart(_("GPU utilisation %"), util, ymax=100, width=width, height=height))
            total = max((h.memory_total_mib or 0) for h in hist.gpus.values()) / 1024 or 1
            mem = {
                label(i, (format_mib_as_gib(latest[i].memory_used_mib) + "G") if i in latest else "-"): [
                    None if m is None else m / 1024 for m in h.memory_used_mib
                ]
                for i, h in sorted(hist.gpus.items())
            }
            t.append("\n")
            t.append_text(chart(_("VRAM used GiB"), mem, ymax=total, width=width, height=height))
        self.query_one("#charts", Static).update(t)
