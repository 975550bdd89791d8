"""`l`: one job's live log, its loss curve and progress with ETA, finish time and projected cost.

The screen paints what services/jobs/follow.LogFollower hands it (the window of the log's end,
then what the job writes, followed by byte offset over the instance's connection, parsed into
lines and numbers there, as for `gpu-tui logs -f`). The follow worker only puts updates in a
LogInbox; however fast the job writes, the screen takes them and repaints at most 4 times a
second, its new lines written in one batch.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from typing import Protocol

import plotext as plt
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Log, Select

from gpu_tui.core.errors import GpuTuiError
from gpu_tui.core.i18n import N_, _, ngettext
from gpu_tui.core.jobs import JobInfo
from gpu_tui.core.trainlog.model import Progress
from gpu_tui.core.units import format_bytes, format_eta_s, format_money, format_percent
from gpu_tui.remote.host import Host
from gpu_tui.services.fleet import InstanceView
from gpu_tui.services.jobs.follow import LogFollower, LogInbox, LogUpdate, wait_for_link
from gpu_tui.ui.screens.localise import translate_bindings
from gpu_tui.ui.widgets.text_panel import TextPanel

__all__ = ["JobLogScreen", "progress_text"]

MAX_LOG_LINES = 5000
FLUSH_SECONDS = 0.25  # new lines reach the screen 4 times a second, however fast the job writes
CHART_SECONDS = 2.0  # plotext takes tens of ms per chart: redraw the loss curve at most this often


def job_label(job: JobInfo) -> str:
    name = f" {job.name}" if job.name else ""
    return f"{job.id}{name}  {_(job.state)}"


AXIS_LABEL = {"step": "step", "epoch": "epoch", "index": "n-th loss printed"}


def loss_chart(points: list[tuple[float, float]], axis: str | None, *, width: int, height: int, log: bool) -> Text:
    """The loss curve against the run's step (or epoch) as the log says it; log-scale y on request."""
    xs = [x for x, v in points if not log or v > 0]
    ys = [v for _, v in points if not log or v > 0]
    plt.clf()
    plt.limit_size(False, False)
    plt.plotsize(max(20, width), max(6, height))
    plt.theme("clear")
    if len(xs) >= 2:
        plt.plot(xs, [math.log10(v) for v in ys] if log else ys, marker="braille", color="cyan")
    label = AXIS_LABEL.get(axis or "index", "")
    plt.xlabel(label + ("   y: log10(loss)" if log else ""))
    return Text.from_ansi(plt.build())


class LogReading(Protocol):
    """What the head reads off a log: a LogUpdate, or a whole log's LogSummary."""

    @property
    def progress(self) -> Progress | None: ...
    @property
    def last_loss(self) -> float | None: ...
    @property
    def metrics(self) -> Mapping[str, float]: ...
    @property
    def failure(self) -> str | None: ...


def progress_text(summary: LogReading, view: InstanceView, now: float, currency: str, running: bool) -> Text:
    """`45% of the run · epoch 3/10 · 450/1000 · ETA 12m05s → done 14:32 · ¥12.34 by then (+¥0.40)` and
    the last loss. Percent, ETA, finish time and cost are the run's where the log says how long
    the run is (core/trainlog/progress), else the bar's."""
    t = Text()
    p = summary.progress
    if p is not None:
        if p.percent is not None:
            t.append(format_percent(p.percent), style="bold")
            if p.scope == "run":
                t.append(" of the run", style="dim")
        if p.epoch is not None:
            t.append(f"  epoch {p.epoch}" + (f"/{p.epochs}" if p.epochs else ""))
        if p.step is not None:
            t.append(f"  step {p.step}" + (f"/{p.steps}" if p.steps else ""))
        if p.bar_step is not None and (p.scope != "run" or p.bar_percent is not None):
            t.append(f"  {p.bar_step}" + (f"/{p.bar_steps}" if p.bar_steps else ""), style="dim")
        if p.rate_text:
            t.append(f"  {p.rate_text}", style="dim")
        if running and p.eta_seconds is not None:
            t.append(f"  {format_eta_s(p.eta_seconds, now)}")
            rate = view.config.hourly_rate
            if rate:
                more = rate * p.eta_seconds / 3600
                so_far = view.cost_so_far(now) or 0.0
                own = view.config.bills_in(currency)  # the instance's, not the settings'
                by_then, extra = format_money(so_far + more, own), format_money(more, own)
                t.append("  " + _("{money} by then (+{extra})").format(money=by_then, extra=extra), style="yellow")
    if summary.last_loss is not None:
        t.append(f"  loss {summary.last_loss:.4g}", style="cyan")
    else:  # a tool that prints only a loss's parts (YOLO's box_loss, cls_loss ...): those, never summed
        parts = [(k, v) for k, v in summary.metrics.items() if k.endswith("_loss") and math.isfinite(v)][:4]
        for k, v in parts:
            t.append(f"  {k} {v:.4g}", style="cyan")
    failure = summary.failure
    if failure:
        t.append(f"  {failure}", style="bold red")
    return t


class JobLogScreen(Screen[None]):
    BINDINGS = [
        Binding("escape,q", "app.pop_screen", N_("Back")),
        # the dashboard's stop_job id, so a `[keys]` remap of `x` applies here too
        Binding("x", "stop_job", N_("Stop job"), id="stop_job"),
        Binding("g", "toggle_log_scale", N_("Log scale")),
    ]
    DEFAULT_CSS = """
    JobLogScreen #head { height: auto; padding: 0 1; }
    JobLogScreen #jobs { width: 100%; }
    JobLogScreen #jobs SelectCurrent { border: none; height: 1; padding: 0 1; background: $boost; }
    JobLogScreen #chart { height: auto; }
    JobLogScreen Log { height: 1fr; border-top: solid $primary-darken-2; }
    JobLogScreen #live { height: auto; max-height: 4; color: $text-muted; padding: 0 1; }
    """

    def __init__(
        self,
        view: InstanceView,
        host: Host,
        job: JobInfo,
        *,
        currency: str,
        clock: Callable[[], float] = time.time,
        on_stop: Callable[[JobInfo], None] | None = None,
    ) -> None:
        super().__init__()
        translate_bindings(self)
        self._view, self._host, self._job = view, host, job
        self._on_stop = on_stop
        self._was_running: bool | None = None
        self._currency, self._clock = currency, clock
        self._inbox = LogInbox(MAX_LOG_LINES)  # what the follow worker hands over, taken by _flush
        self._note: tuple[str, ...] | None = None  # why the log cannot be read (set by the worker)
        self._reading: LogUpdate | None = None  # the latest update painted
        self._live: tuple[str, ...] = ()
        self._points_drawn = -1
        self._shown: tuple[Text, tuple[str, ...]] | None = None
        self._stick = True  # the first batch (the log's window) always ends at the bottom
        self._chart_at = 0.0
        self._log_scale = False

    @property
    def job(self) -> JobInfo:
        return self._job

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop_job":
            if self._on_stop is None:
                return False
            return True if self._current_state() == "running" else None
        return True

    def action_toggle_log_scale(self) -> None:
        """`g`: the loss curve on a log scale (losses that fall by orders of magnitude), and back."""
        self._log_scale = not self._log_scale
        self._points_drawn = -1
        self._chart_at = 0.0

    def action_stop_job(self) -> None:
        if self._on_stop is not None and self._current_state() == "running":
            self._on_stop(self._job)

    def compose(self) -> ComposeResult:
        yield TextPanel(id="head")
        jobs = list(self._view.jobs) or [self._job]
        yield Select([(job_label(j), j.id) for j in reversed(jobs)], value=self._job.id, allow_blank=False, id="jobs")
        yield TextPanel(id="chart")
        yield Log(max_lines=MAX_LOG_LINES, id="log", auto_scroll=True)
        yield TextPanel(id="live")
        yield Footer()

    def on_mount(self) -> None:
        self.set_interval(FLUSH_SECONDS, self._flush)
        self.follow(self._job)

    def on_select_changed(self, event: Select.Changed) -> None:
        job = next((j for j in self._view.jobs if j.id == event.value), None)
        if job is not None and job.id != self._job.id:
            self._job = job
            self._stick = True
            self.query_one(Log).clear()
            self.follow(job)

    @work(exclusive=True, group="follow", exit_on_error=False)
    async def follow(self, job: JobInfo) -> None:
        # the worker only hands updates over; _flush paints them
        self._inbox, self._note, self._reading, self._live = LogInbox(MAX_LOG_LINES), None, None, ()
        self._points_drawn = -1
        # the dashboard's monitor owns reconnecting; the follow only waits for it
        follower = LogFollower(
            self._host,
            self._view.config,
            job.id,
            charset=job.facts.charset,
            max_lines=MAX_LOG_LINES,
            reconnect=wait_for_link(self._host),
        )
        try:
            async for update in follower.updates():
                self._inbox.put(update)
        except GpuTuiError as exc:
            self._note = (_("cannot read this job's log: {error}").format(error=exc.line()),)

    def _to_end(self, y_then: float) -> None:
        """Follow the log's end, unless the reader scrolled up since the lines came (a `home`
        pressed between a batch and the layout after it must not be undone)."""
        log = self.query_one(Log)
        if log.scroll_y + 0.5 >= y_then:
            log.scroll_end(animate=False, immediate=True, x_axis=False)

    def _flush(self) -> None:
        update = self._inbox.take()
        if update is not None:
            self._reading, self._live = update, update.live
        if self._note is not None:
            self._live = self._note
        if update is not None and update.lines:
            lines = list(update.lines)
            log = self.query_one(Log)
            # stick to the end unless the reader scrolled up to look at something
            follow = log.is_vertical_scroll_end or log.line_count == 0 or self._stick
            log.write_lines(lines, scroll_end=False)
            if follow:
                # after the next layout: the first batch can arrive before the Log has a size
                self.call_after_refresh(self._to_end, log.scroll_y)
            self._stick = self._stick and log.size.height == 0
        running = self._current_state() == "running"
        if running != self._was_running:  # the footer's `x` is for a running job only
            self._was_running = running
            self.refresh_bindings()
        head = self._head(running)
        if self._shown != (head, self._live):
            self._shown = (head, self._live)
            self.query_one("#head", TextPanel).set_text(head)
            self.query_one("#live", TextPanel).set_text(Text("\n".join(self._live)))
        reading = self._reading
        points = reading.loss_points if reading is not None else ()
        now = time.monotonic()
        if len(points) != self._points_drawn and len(points) >= 2 and now - self._chart_at >= CHART_SECONDS:
            self._chart_at = now
            self._points_drawn = len(points)
            width = max(40, self.size.width - 4)
            height = max(4, min(10, (self.size.height - 16) // 2))  # the log keeps most of the screen
            self.query_one("#chart", TextPanel).set_text(
                loss_chart(
                    list(points),
                    reading.loss_axis if reading is not None else None,
                    width=width,
                    height=height,
                    log=self._log_scale,
                )
            )

    def _current_state(self) -> str:
        for j in self._view.jobs:
            if j.id == self._job.id:
                return j.state
        return self._job.state

    def _head(self, running: bool) -> Text:
        j, v = self._job, self._view
        t = Text()
        t.append(v.name, style="bold")
        t.append(f"  {j.id}", style="dim")
        if j.name:
            t.append(f"  {j.name}", style="bold cyan")
        state = self._current_state()
        t.append(f"  {_(state)}", style={"running": "green", "failed": "bold red", "stopped": "yellow"}.get(state, ""))
        reading = self._reading
        if reading is not None:
            # lines read since the screen opened (the window plus what followed), and the log's size
            size, n = reading.log_bytes, reading.lines_seen
            lines = ngettext("{n:,} line, {size}", "{n:,} lines, {size}", n).format(n=n, size=format_bytes(size))
            t.append(f"  {lines}", style="dim")
        cmd = str(j.facts.request.get("command") or "").replace("\n", " ; ")
        t.append(f"\n$ {cmd[:200]}", style="dim")
        t.append("\n")
        if reading is not None:
            t.append_text(progress_text(reading, v, self._clock(), self._currency, running))
        return t
