"""`enter`: the selected instance's GPUs with larger utilisation and VRAM charts (ui/chart.py)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.timer import Timer

from gpu_tui.core.i18n import N_, _
from gpu_tui.core.units import format_clock_hms, format_mib_as_gib, format_percent
from gpu_tui.services.fleet import InstanceView
from gpu_tui.ui.chart import Steps, chart_rows
from gpu_tui.ui.format import short_gpu_name
from gpu_tui.ui.screens.localise import translate_bindings
from gpu_tui.ui.widgets.stable_footer import StableFooter
from gpu_tui.ui.widgets.text_strips import TextStrips

__all__ = ["DetailScreen", "chart"]


def _pct(value: int | None) -> str:
    return format_percent(value, missing=_("n/a"))


PALETTE: tuple[str, ...] = ("green", "cyan", "yellow", "magenta", "bright_blue", "red", "bright_green", "white")
"""One colour per GPU, the chart's and its legend's."""


def chart(
    title: str,
    series: Mapping[str, Sequence[float | None]],
    *,
    ymax: float,
    width: int,
    height: int,
    xlabel: str | None = None,
    legend: bool = True,
) -> list[Text]:
    """One line chart's rows, then a legend row; x counts back from the newest value (seconds
    for 1 Hz histories), y is fixed 0..ymax. `xlabel` None: "seconds ago"; "": none."""
    if xlabel is None:
        xlabel = _("seconds ago")
    lines = []
    legend_text = Text()
    for n_series, (label, values) in enumerate(series.items()):
        style = PALETTE[n_series % len(PALETTE)]
        n = len(values)
        lines.append(Steps(values, style, start=float(1 - n)))
        legend_text.append("━━ ", style=style)
        legend_text.append(label + "   ")
    out = chart_rows(lines, width=width, height=height, ylim=(0.0, ymax), title=title, xlabel=xlabel)
    if legend:
        out.append(legend_text)
    return out


class DetailScreen(Screen[None]):
    """Kept installed by the dashboard and shown again for each `enter` (`show`): composing it
    afresh each time cost most of the key's latency; its redraw timer runs only while shown."""

    BINDINGS = [Binding("escape,enter,q", "app.pop_screen", N_("Back"))]

    def __init__(self, view: InstanceView, clock: Callable[[], float] = time.time) -> None:
        super().__init__()
        translate_bindings(self)
        self._view = view
        self._clock = clock
        self._timer: Timer
        self._paused = False

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield TextStrips(id="charts")
        yield StableFooter()

    def on_mount(self) -> None:
        self.redraw()
        self._timer = self.set_interval(2.0, self.redraw)

    def show(self, view: InstanceView) -> None:
        """Show `view` next time the screen is pushed (the charts are drawn before it is)."""
        self._view = view
        if self.is_mounted:
            self.redraw()

    def on_screen_suspend(self) -> None:
        self._timer.pause()
        self._paused = True

    def on_screen_resume(self) -> None:
        if self._paused:
            # reset: the timer's overdue tick is dropped, the next redraw comes two seconds on
            # (`show` drew the charts just now)
            self._timer.reset()
            self._timer.resume()
            self._paused = False

    def redraw(self) -> None:
        v = self._view
        width = max(40, self.size.width - 4)
        t = Text()
        t.append(f"{v.name}  ", style="bold")
        t.append(format_clock_hms(self._clock()), style="dim")
        rows = [t]
        hist = v.history
        if not hist.gpus:
            rows.append(Text(_("no GPU samples yet"), style="dim"))
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
            rows += chart(_("GPU utilisation %"), util, ymax=100, width=width, height=height)
            total = max((h.memory_total_mib or 0) for h in hist.gpus.values()) / 1024 or 1
            mem = {
                label(i, (format_mib_as_gib(latest[i].memory_used_mib) + "G") if i in latest else "-"): [
                    None if m is None else m / 1024 for m in h.memory_used_mib
                ]
                for i, h in sorted(hist.gpus.items())
            }
            rows += chart(_("VRAM used GiB"), mem, ymax=total, width=width, height=height)
        self.query_one("#charts", TextStrips).update(rows)
