"""`l`: one job's live log, its loss curve and progress with ETA, finish time and projected cost.

The log is read once from its end (a window, however big the file), then followed by byte
offset over the instance's connection; after a dropped link it resumes where it stopped. Bytes
become lines in core/trainlog/stream (progress bars collapse, escapes never reach the terminal) and
numbers in core/trainlog/summary. However fast the job writes, the screen repaints at most 4 times a
second: lines queue up and are written in one batch.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable

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
from gpu_tui.core.trainlog.read import whole_lines, window_stream
from gpu_tui.core.trainlog.stream import LogStream, StreamUpdate
from gpu_tui.core.trainlog.summary import LogSummary
from gpu_tui.core.units import format_bytes, format_eta_s, format_money, format_percent
from gpu_tui.remote.host import Host
from gpu_tui.services.fleet import InstanceView
from gpu_tui.services.jobs import runner as jobsvc
from gpu_tui.services.jobs.tail import LogFollower
from gpu_tui.ui.screens.localise import translate_bindings
from gpu_tui.ui.widgets.text_panel import TextPanel

__all__ = ["JobLogScreen", "progress_text"]

MAX_LOG_LINES = 5000
FLUSH_SECONDS = 0.25  # new lines reach the screen 4 times a second, however fast the job writes
CHART_SECONDS = 2.0
FEED_SLICE = 8192  # plotext takes tens of ms per chart: redraw the loss curve at most this often
WINDOW_BYTES = 256 * 1024


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


def progress_text(summary: LogSummary, view: InstanceView, now: float, currency: str, running: bool) -> Text:
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
        self._pending: list[str] = []
        self._live: tuple[str, ...] = ()
        self._summary = LogSummary()
        self._points_drawn = -1
        self._shown: tuple[Text, tuple[str, ...]] | None = None
        self._stick = True  # the first batch (the log's window) always ends at the bottom
        self._stream: LogStream | None = None
        self._live_parsed = True
        self._chart_at = 0.0
        self._window_start = 0  # byte offset where the shown part of the log starts
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

    async def _wait_connected(self) -> None:
        # the dashboard's monitor owns reconnecting; the tail only waits for it
        while not self._host.connected:
            await asyncio.sleep(0.5)

    @work(exclusive=True, group="follow", exit_on_error=False)
    async def follow(self, job: JobInfo) -> None:
        self._pending, self._live, self._summary, self._points_drawn = [], (), LogSummary(), -1
        try:
            await self._follow(job)
        except GpuTuiError as exc:
            self._live = (_("cannot read this job's log: {error}").format(error=exc.line()),)

    async def _follow(self, job: JobInfo) -> None:
        inst = self._view.config
        await self._wait_connected()
        window = await jobsvc.read_log_bytes(self._host, inst, job.id, WINDOW_BYTES)
        data = whole_lines(window.data, from_start=window.whole)
        self._window_start = window.size - len(data)
        # the window's bytes decide the log's encoding (GBK...); the follow goes on in it
        stream = self._stream = window_stream(data, charset=job.facts.charset, max_lines=MAX_LOG_LINES)
        self._take(stream.feed(data))
        follower = LogFollower(self._host, inst, job.id, offset=window.size, reconnect=self._wait_connected)
        async for chunk in follower.chunks():
            # a 64 KiB read of a firehose is ~10 ms of parsing: in slices, so keys never wait that long
            for i in range(0, len(chunk), FEED_SLICE):
                self._take(stream.feed(chunk[i : i + FEED_SLICE]))
                await asyncio.sleep(0)

    def _take(self, update: StreamUpdate) -> None:
        # Only finished lines are parsed here; a bar redrawn 10,000 times a second is read once
        # per repaint, from the live rows (_flush), not once per state.
        summary = self._summary
        for event in update.events:
            if event.final:
                summary.add_line(event.text)
        self._pending.extend(update.lines)
        self._live = update.live
        self._live_parsed = False
        if len(self._pending) > MAX_LOG_LINES:  # the screen keeps only this many anyway
            del self._pending[: len(self._pending) - MAX_LOG_LINES]

    def _to_end(self, y_then: float) -> None:
        """Follow the log's end, unless the reader scrolled up since the lines came (a `home`
        pressed between a batch and the layout after it must not be undone)."""
        log = self.query_one(Log)
        if log.scroll_y + 0.5 >= y_then:
            log.scroll_end(animate=False, immediate=True, x_axis=False)

    def _flush(self) -> None:
        if self._pending:
            lines, self._pending = self._pending, []
            log = self.query_one(Log)
            # stick to the end unless the reader scrolled up to look at something
            follow = log.is_vertical_scroll_end or log.line_count == 0 or self._stick
            log.write_lines(lines, scroll_end=False)
            if follow:
                # after the next layout: the first batch can arrive before the Log has a size
                self.call_after_refresh(self._to_end, log.scroll_y)
            self._stick = self._stick and log.size.height == 0
        if not self._live_parsed:
            self._live_parsed = True
            self._summary.set_live(self._live)
        running = self._current_state() == "running"
        if running != self._was_running:  # the footer's `x` is for a running job only
            self._was_running = running
            self.refresh_bindings()
        head = self._head(running)
        if self._shown != (head, self._live):
            self._shown = (head, self._live)
            self.query_one("#head", TextPanel).set_text(head)
            self.query_one("#live", TextPanel).set_text(Text("\n".join(self._live)))
        points = self._summary.loss_points
        now = time.monotonic()
        if len(points) != self._points_drawn and len(points) >= 2 and now - self._chart_at >= CHART_SECONDS:
            self._chart_at = now
            self._points_drawn = len(points)
            width = max(40, self.size.width - 4)
            height = max(4, min(10, (self.size.height - 16) // 2))  # the log keeps most of the screen
            self.query_one("#chart", TextPanel).set_text(
                loss_chart(points, self._summary.loss_axis, width=width, height=height, log=self._log_scale)
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
        if self._stream is not None:
            # lines read since the screen opened (the window plus what followed), and the log's size
            size = self._window_start + self._stream.bytes_fed
            n = self._stream.lines_seen
            lines = ngettext("{n:,} line, {size}", "{n:,} lines, {size}", n).format(n=n, size=format_bytes(size))
            t.append(f"  {lines}", style="dim")
        cmd = str(j.facts.request.get("command") or "").replace("\n", " ; ")
        t.append(f"\n$ {cmd[:200]}", style="dim")
        t.append("\n")
        t.append_text(progress_text(self._summary, v, self._clock(), self._currency, running))
        return t
