"""`enter`: the selected instance's GPUs with larger utilisation and VRAM charts (ui/chart.py).

A lab's node (its numbers from Prometheus every 15 s or so) is charted over the last hour from
Prometheus's `query_range`, asked for that one node while the screen shows it and again every
HISTORY_SECONDS; until the answer comes (or when it cannot be had, said in one line) the
charts are the readings the dashboard has kept.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.timer import Timer

from gpu_tui.core.errors import GpuTuiError
from gpu_tui.core.i18n import N_, _
from gpu_tui.core.metrics.dcgm_range import NodeHistory
from gpu_tui.core.power import release_line, rule_for
from gpu_tui.core.units import format_clock_hms, format_mib_as_gib, format_percent
from gpu_tui.services.fleet import InstanceView
from gpu_tui.ui.chart import Line, Steps, chart_rows
from gpu_tui.ui.format import short_gpu_name
from gpu_tui.ui.kept import KeptScreen
from gpu_tui.ui.screens.localise import translate_bindings
from gpu_tui.ui.widgets.stable_footer import StableFooter
from gpu_tui.ui.widgets.text_strips import TextStrips

__all__ = ["DetailScreen", "chart"]


def _pct(value: int | None) -> str:
    return format_percent(value, missing=_("n/a"))


PALETTE: tuple[str, ...] = ("green", "cyan", "yellow", "magenta", "bright_blue", "red", "bright_green", "white")
"""One colour per GPU, the chart's and its legend's."""


HISTORY_SECONDS = 15.0
"""How often a lab node's hour is asked for again while its detail screen is shown."""
HISTORY_WINDOW = 3600.0


@dataclass
class HistoryRead(Message):
    """A lab node's last hour came from Prometheus (or `error`: why not)."""

    name: str
    history: NodeHistory | None
    error: str | None = None


def chart(
    title: str,
    series: Mapping[str, Sequence[float | None]],
    *,
    ymax: float,
    width: int,
    height: int,
    xlabel: str | None = None,
    legend: bool = True,
    step_minutes: float | None = None,
) -> list[Text]:
    """One line chart's rows, then a legend row; x counts back from the newest value (seconds
    for 1 Hz histories; minutes, `step_minutes` apart, when given), y is fixed 0..ymax.
    `xlabel` None: "seconds ago" (or "minutes ago"); "": none."""
    if xlabel is None:
        xlabel = _("seconds ago") if step_minutes is None else _("minutes ago")
    lines: list[Line | Steps] = []
    legend_text = Text()
    for n_series, (label, values) in enumerate(series.items()):
        style = PALETTE[n_series % len(PALETTE)]
        n = len(values)
        if step_minutes is None:
            lines.append(Steps(values, style, start=float(1 - n)))
        else:
            lines.append(Line([((i - n + 1) * step_minutes, v) for i, v in enumerate(values)], style))
        legend_text.append("━━ ", style=style)
        legend_text.append(label + "   ")
    # a lab's hour spans the hour, however little of it Prometheus holds
    n_max = max((len(v) for v in series.values()), default=0)
    xlim = None if step_minutes is None or n_max < 2 else ((1 - n_max) * step_minutes, 0.0)
    out = chart_rows(lines, width=width, height=height, ylim=(0.0, ymax), xlim=xlim, title=title, xlabel=xlabel)
    if legend:
        out.append(legend_text)
    return out


class DetailScreen(KeptScreen):
    """Kept installed by the dashboard and shown again for each `enter` (`show`): composing it
    afresh each time cost most of the key's latency; its redraw timer runs only while shown."""

    BINDINGS = [Binding("escape,enter,q", "app.pop_screen", N_("Back"))]

    def __init__(
        self,
        view: InstanceView,
        clock: Callable[[], float] = time.time,
        history: Callable[[str, float, int], Awaitable[NodeHistory | None]] | None = None,
    ) -> None:
        """`history(name, seconds, points)`: a lab node's past from its Prometheus (Fleet.lab_history)."""
        super().__init__()
        translate_bindings(self)
        self._view = view
        self._clock = clock
        self._history = history
        self._lab: HistoryRead | None = None
        """The last answer for the node shown (None: asked, not yet answered, or not a lab node)."""
        self._timer: Timer
        self._history_timer: Timer
        self._paused = False

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield TextStrips(id="charts")
        yield StableFooter()

    def on_mount(self) -> None:
        self.redraw()
        self._timer = self.set_interval(2.0, self.redraw)
        self._history_timer = self.set_interval(HISTORY_SECONDS, self._ask_history)
        self._ask_history()

    def show(self, view: InstanceView) -> None:
        """Show `view` next time the screen is pushed (the charts are drawn before it is)."""
        if view.name != self._view.name:
            self._lab = None
        self._view = view
        if self.is_mounted:
            self.redraw()
            self._ask_history()

    def on_screen_suspend(self) -> None:
        self._timer.pause()
        self._history_timer.pause()
        self._paused = True

    def on_screen_resume(self) -> None:
        if self._paused:
            # reset: the timer's overdue tick is dropped, the next redraw comes two seconds on
            # (`show` drew the charts just now)
            for timer in (self._timer, self._history_timer):
                timer.reset()
                timer.resume()
            self._paused = False

    def _ask_history(self) -> None:
        v, ask = self._view, self._history
        if ask is None or v.gpus_from is None or v.node is None:
            return
        width = max(40, self.size.width - 4)

        async def read() -> None:
            try:
                got = await ask(v.name, HISTORY_WINDOW, min(240, 2 * width))
                self.post_message(HistoryRead(v.name, got))
            except GpuTuiError as exc:
                self.post_message(HistoryRead(v.name, None, exc.line()))

        self.run_worker(read(), group="history", exclusive=True, exit_on_error=False)

    def on_history_read(self, message: HistoryRead) -> None:
        if message.name == self._view.name:
            self._lab = message
            self.redraw()

    def _series(self) -> tuple[dict[int, Sequence[float | None]], dict[int, Sequence[float | None]], float | None]:
        """(utilisation % per GPU, VRAM MiB per GPU, minutes between points or None for 1 Hz)."""
        lab = self._lab.history if self._lab is not None else None
        if lab is not None and lab.utilization:
            return dict(lab.utilization), dict(lab.memory_used_mib), lab.step / 60
        hist = self._view.history.gpus
        return (
            {i: list(h.utilization) for i, h in hist.items()},
            {i: list(h.memory_used_mib) for i, h in hist.items()},
            None,
        )

    def _note(self) -> Text | None:
        """Where a lab node's charts come from, or why not from its Prometheus."""
        v = self._view
        if self._history is None or v.gpus_from is None or v.node is None:
            return None
        lab = v.gpus_from.removeprefix("prometheus:")
        if self._lab is None:
            return Text(_("asking Prometheus {lab} for the last hour…").format(lab=lab), style="dim")
        if self._lab.error is not None:
            return Text(_("the last hour could not be read: {error}").format(error=self._lab.error), style="yellow")
        got = self._lab.history
        if got is None or not got.utilization:
            return Text(_("Prometheus {lab} holds no GPU series of this node for the last hour").format(lab=lab))
        return Text(_("the last hour from Prometheus {lab}, a point every {step:g} s").format(lab=lab, step=got.step))

    def redraw(self) -> None:
        v = self._view
        width = max(40, self.size.width - 4)
        t = Text()
        t.append(f"{v.name}  ", style="bold")
        t.append(format_clock_hms(self._clock()), style="dim")
        rows = [t]
        rule = rule_for(v.config.provider, v.config.release_days) if v.release_at is not None else None
        if rule is not None and v.release_at is not None:  # a stopped box that may be released (issue 28)
            rows.append(Text(release_line(v.name, v.release_at, self._clock(), rule), style="bold red"))
        note = self._note()
        if note is not None:
            rows.append(note)
        utils, mems, step_minutes = self._series()
        if not utils:
            rows.append(Text(_("no GPU samples yet"), style="dim"))
        else:
            latest = {g.index: g for g in (v.frame.gpus if v.frame else ())}
            height = max(8, (self.size.height - 10 - (note is not None)) // 2)  # two charts and their legends

            models = {short_gpu_name(g.name) for g in latest.values()}
            models_same = len(models) == 1
            if len(models) == 1:  # one model (the usual box): name it once, not per line
                t.append(f"   {len(latest)}x {models.pop()}")

            def label(i: int, value: str) -> str:
                g = latest.get(i)
                name = short_gpu_name(g.name) if g and not models_same else ""
                return " ".join(p for p in (_("gpu {i}").format(i=i), name, value) if p)

            util = {
                label(i, _pct(latest[i].utilization_gpu if i in latest else None)): values
                for i, values in sorted(utils.items())
            }
            rows += chart(_("GPU utilisation %"), util, ymax=100, width=width, height=height, step_minutes=step_minutes)
            totals = [h.memory_total_mib or 0 for h in v.history.gpus.values()]
            totals += [g.memory_total_mib or 0 for g in latest.values()]
            total = max(totals, default=0) / 1024 or 1
            mem = {
                label(i, (format_mib_as_gib(latest[i].memory_used_mib) + "G") if i in latest else "-"): [
                    None if m is None else m / 1024 for m in values
                ]
                for i, values in sorted(mems.items())
            }
            rows += chart(_("VRAM used GiB"), mem, ymax=total, width=width, height=height, step_minutes=step_minutes)
        self.query_one("#charts", TextStrips).update(rows)
