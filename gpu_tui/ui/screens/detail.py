"""`enter`: the selected instance's GPUs with larger utilisation and VRAM charts drawn by plotext."""

from __future__ import annotations

import time

import plotext as plt
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from gpu_tui.services.fleet import InstanceView
from gpu_tui.ui.format import short_gpu_name

__all__ = ["DetailScreen", "chart"]


def chart(title: str, series: dict[str, list[float | None]], *, ymax: float, width: int, height: int) -> Text:
    """One plotext line chart as Rich Text; x is seconds ago, y is fixed 0..ymax."""
    plt.clf()
    plt.plotsize(max(20, width), max(6, height))
    plt.theme("clear")
    plt.title(title)
    for label, values in series.items():
        n = len(values)
        xs = [i - n + 1 for i, v in enumerate(values) if v is not None]
        ys = [float(v) for v in values if v is not None]
        if xs:
            plt.plot(xs, ys, label=label, marker="braille")
    plt.ylim(0, ymax)
    plt.xlabel("seconds ago")
    return Text.from_ansi(plt.build())


class DetailScreen(Screen[None]):
    BINDINGS = [Binding("escape,enter,q", "app.pop_screen", "Back")]
    DEFAULT_CSS = """
    DetailScreen Static { height: auto; }
    """

    def __init__(self, view: InstanceView) -> None:
        super().__init__()
        self._view = view

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
        t.append(time.strftime("%H:%M:%S", time.localtime(self.app.clock())), style="dim")  # type: ignore[attr-defined]
        hist = v.history
        if not hist.gpus:
            t.append("\nno GPU samples yet", style="dim")
        else:
            names = {g.index: short_gpu_name(g.name) for g in (v.frame.gpus if v.frame else ())}
            util = {f"{i} {names.get(i, '')}": list(h.utilization) for i, h in sorted(hist.gpus.items())}
            t.append("\n")
            t.append_text(chart("GPU utilisation %", util, ymax=100, width=width, height=12))
            total = max((h.memory_total_mib or 0) for h in hist.gpus.values()) / 1024 or 1
            mem = {
                f"{i} {names.get(i, '')}": [None if m is None else m / 1024 for m in h.memory_used_mib]
                for i, h in sorted(hist.gpus.items())
            }
            t.append("\n")
            t.append_text(chart("VRAM used GiB", mem, ymax=total, width=width, height=12))
        self.query_one("#charts", Static).update(t)
