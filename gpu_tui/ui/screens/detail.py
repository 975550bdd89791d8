"""`enter`: the selected instance's GPUs with larger utilisation and VRAM charts drawn by plotext."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

import plotext as plt
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from gpu_tui.core.units import format_clock_hms, format_mib_as_gib, format_percent
from gpu_tui.services.fleet import InstanceView
from gpu_tui.ui.format import short_gpu_name

__all__ = ["DetailScreen", "chart"]


def _pct(value: int | None) -> str:
    return format_percent(value, missing="n/a")


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


def chart(
    title: str,
    series: Mapping[str, Sequence[float | None]],
    *,
    ymax: float,
    width: int,
    height: int,
    xlabel: str = "seconds ago",
    legend: bool = True,
) -> Text:
    """One plotext line chart as Rich Text, then a legend line; x counts back from the newest
    value (seconds for 1 Hz histories), y is fixed 0..ymax."""
    plt.clf()
    plt.limit_size(False, False)  # size to the widget, not to the terminal plotext guesses
    plt.plotsize(max(20, width), max(6, height))
    plt.theme("clear")
    if title:
        plt.title(title)
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
        plt.xlabel(xlabel)
    out = Text.from_ansi(plt.build())
    if legend:
        out.append("\n")
        out.append_text(legend_text)
    return out


class DetailScreen(Screen[None]):
    BINDINGS = [Binding("escape,enter,q", "app.pop_screen", "Back")]
    DEFAULT_CSS = """
    DetailScreen Static { height: auto; }
    """

    def __init__(self, view: InstanceView, clock: Callable[[], float] = time.time) -> None:
        super().__init__()
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
            t.append("\nno GPU samples yet", style="dim")
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
                return " ".join(p for p in (f"gpu {i}", name, value) if p)

            util = {
                label(i, _pct(latest[i].utilization_gpu if i in latest else None)): list(h.utilization)
                for i, h in sorted(hist.gpus.items())
            }
            t.append("\n")
            t.append_text(chart("GPU utilisation %", util, ymax=100, width=width, height=height))
            total = max((h.memory_total_mib or 0) for h in hist.gpus.values()) / 1024 or 1
            mem = {
                label(i, (format_mib_as_gib(latest[i].memory_used_mib) + "G") if i in latest else "-"): [
                    None if m is None else m / 1024 for m in h.memory_used_mib
                ]
                for i, h in sorted(hist.gpus.items())
            }
            t.append("\n")
            t.append_text(chart("VRAM used GiB", mem, ymax=total, width=width, height=height))
        self.query_one("#charts", Static).update(t)
