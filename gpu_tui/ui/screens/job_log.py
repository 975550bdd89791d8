"""`l`: one job's live log, its loss curve and progress with ETA, finish time and projected cost.

The screen paints what services/jobs/follow.LogFollower hands it (the window of the log's end,
then what the job writes, followed by byte offset over the instance's connection, parsed into
lines and numbers there, as for `gpu-tui logs -f`). The follow worker only puts updates in a
LogInbox; however fast the job writes, the screen takes them and repaints at most 4 times a
second, its new lines written in one batch.

The curve starts as the window's (what the follow read of the log's end) and becomes the whole
run's once services/jobs/series/read.read_series answers (every point since step 0, read by the
instance's summariser; where the instance has no python3, its own read of the log's end). A
worker asks it, and again every SERIES_REFRESH_S while the job runs, and posts the series as a
`SeriesRead` message: workers never touch widgets. The keys pick what is drawn (ui/runcurve.py):
the series, the x axis, the zoom, the scale, and another job of the fleet to compare with.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import replace

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.timer import Timer
from textual.widgets import Log, Select

from gpu_tui.core.errors import GpuTuiError
from gpu_tui.core.i18n import N_, _, ngettext
from gpu_tui.core.jobs import JobInfo
from gpu_tui.remote.host import Host
from gpu_tui.services.fleet import Fleet, InstanceView
from gpu_tui.services.jobs.follow import LogFollower, LogInbox, LogUpdate, wait_for_link
from gpu_tui.services.jobs.series.cache import SeriesCache
from gpu_tui.ui.kept import KeptScreen
from gpu_tui.ui.runcurve import Curve, Plot, axes_of, curve_of, draw, zoom_levels, zoom_word
from gpu_tui.ui.runseries import SeriesRead, overview_first, read_curves
from gpu_tui.ui.screens.job_log_text import (
    head_text,
    job_options,
    others_holding,
    progress_text,
    run_job_label,
    run_note,
)
from gpu_tui.ui.screens.localise import translate_bindings
from gpu_tui.ui.screens.pick import PickScreen
from gpu_tui.ui.widgets.log_view import LogView
from gpu_tui.ui.widgets.stable_footer import StableFooter
from gpu_tui.ui.widgets.text_panel import TextPanel

__all__ = ["JobLogScreen", "progress_text"]  # progress_text: job_log_text.py's, shown here

MAX_LOG_LINES = 5000
FLUSH_SECONDS = 0.25  # new lines reach the screen 4 times a second, however fast the job writes
CHART_SECONDS = 2.0  # the window's curve changes with every bar redraw: redraw it at most this often
SERIES_REFRESH_S = 30.0  # a running job's whole run is asked again this often (a catch-up reads what grew)
NO_COMPARE = "\x00none"  # the compare picker's "no comparison" entry (never a job id)


class JobLogScreen(KeptScreen):
    BINDINGS = [
        Binding("escape,q", "app.pop_screen", N_("Back")),
        # the dashboard's stop_job id, so a `[keys]` remap of `x` applies here too
        Binding("x", "stop_job", N_("Stop job"), id="stop_job"),
        Binding("g", "toggle_log_scale", N_("Log scale")),
        Binding("s", "pick_series", N_("Series")),
        Binding("a", "cycle_axis", N_("X axis")),
        Binding("z", "cycle_zoom", N_("Zoom")),
        Binding("c", "compare", N_("Compare")),
    ]
    DEFAULT_CSS = """
    JobLogScreen #head { height: auto; padding: 0 1; }
    JobLogScreen #jobs { width: 100%; }
    JobLogScreen #jobs SelectCurrent { border: none; height: 1; padding: 0 1; background: $boost; }
    JobLogScreen #chart { height: auto; }
    JobLogScreen #runnote { height: 1; color: $text-muted; padding: 0 1; }
    JobLogScreen Log { height: 1fr; border-top: solid $primary-darken-2; overflow: auto auto; }
    JobLogScreen #live { height: auto; max-height: 4; color: $text-muted; padding: 0 1; }
    """
    processes_key = "P"  # the dashboard's GPU processes key, as remapped: an OOM's hint names it

    def __init__(
        self,
        view: InstanceView,
        host: Host,
        job: JobInfo,
        *,
        currency: str,
        clock: Callable[[], float] = time.time,
        on_stop: Callable[[JobInfo], None] | None = None,
        fleet: Fleet | None = None,
        series_cache: SeriesCache | None = None,
    ) -> None:
        """`fleet`: the dashboard's, for the jobs of other instances to compare with;
        `series_cache`: copies of series files, so a second open fetches only what was added."""
        super().__init__()
        translate_bindings(self)
        self._clock = clock
        self._series_cache = series_cache
        self._repeats: list[Timer] = []
        self._hidden = False
        self._start(view, host, job, on_stop, currency, fleet)

    def _start(
        self,
        view: InstanceView,
        host: Host,
        job: JobInfo,
        on_stop: Callable[[JobInfo], None] | None,
        currency: str,
        fleet: Fleet | None,
    ) -> None:
        """What the screen shows and how far it has read, afresh for `job`."""
        self._view, self._host, self._job = view, host, job
        self._on_stop = on_stop
        self._currency = currency
        self._fleet = fleet
        self._was_running: bool | None = None
        self._inbox = LogInbox(MAX_LOG_LINES)  # what the follow worker hands over, taken by _flush
        self._note: tuple[str, ...] | None = None  # why the log cannot be read (set by the worker)
        self._reading: LogUpdate | None = None  # the latest update painted
        self._live: tuple[str, ...] = ()
        self._points_drawn = -1
        self._shown: tuple[Text, tuple[str, ...]] | None = None
        self._stick = True  # the first batch (the log's window) always ends at the bottom
        self._chart_at = 0.0
        self._plot = Plot()
        self._curves: dict[str, Curve] = {}  # the whole run's, once read; else the window's loss
        self._whole: SeriesRead | None = None  # the latest whole-run read of the screen's job
        self._reading_since: float | None = None  # monotonic start of the first whole-run read
        self._series_error: str | None = None
        self._compare: Curve | None = None
        self._compare_job: tuple[str, str] | None = None  # (instance, job id) being compared

    def show(
        self,
        view: InstanceView,
        host: Host,
        job: JobInfo,
        *,
        currency: str,
        on_stop: Callable[[JobInfo], None] | None = None,
        fleet: Fleet | None = None,
    ) -> None:
        """Show `job` next time the screen is pushed (the dashboard keeps one log screen)."""
        self._start(view, host, job, on_stop, currency, fleet)
        if not self.is_mounted:
            return
        select = self.query_one("#jobs", Select)
        with select.prevent(Select.Changed):  # the job is chosen here, not by the list
            select.set_options(job_options(view, job))
            select.value = job.id
        self.query_one(Log).clear()
        self.query_one("#chart", TextPanel).set_text(Text())
        self._begin()

    def _begin(self) -> None:
        self.follow(self._job)
        self._flush()  # the head (job, command, what the dashboard knows) now, not a flush later
        self.call_after_refresh(self._read_whole, self._job)  # the screen first, then the run's read

    def on_screen_suspend(self) -> None:
        if self in self.app.screen_stack:
            return  # under a picker (`s`, `c`): still reading
        # closed (back on the dashboard), kept for the next `l`: nothing read, nothing redrawn
        self._hidden = True
        for timer in self._repeats:
            timer.pause()
        for group in ("follow", "series", "compare"):
            self.workers.cancel_group(self, group)

    def on_screen_resume(self) -> None:
        if self._hidden:
            self._hidden = False
            for timer in self._repeats:
                timer.reset()
                timer.resume()

    @property
    def job(self) -> JobInfo:
        return self._job

    @property
    def plot(self) -> Plot:
        """What the chart shows (the keys' state)."""
        return self._plot

    @property
    def curves(self) -> dict[str, Curve]:
        return self._curves

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop_job":
            if self._on_stop is None:
                return False
            return True if self._current_state() == "running" else None
        main = self._curves.get(self._plot.tag)
        if action == "cycle_axis":  # hidden where the series has one x: most runs, and the footer is full
            return False if main is None or len(axes_of(main)) < 2 else True
        if action == "cycle_zoom":
            return None if main is None or not zoom_levels(main, self._axis(main)) else True
        if action == "pick_series":
            return None if len(self._curves) < 2 else True
        if action == "compare":
            return None if not self._others() else True
        return True

    def _axis(self, curve: Curve) -> str:
        return self._plot.axis if self._plot.axis in axes_of(curve) else curve.axis

    def _replot(self, plot: Plot) -> None:
        self._plot = plot
        self._draw_chart()
        self.refresh_bindings()

    def action_toggle_log_scale(self) -> None:
        """`g`: the loss curve on a log scale (losses that fall by orders of magnitude), and back."""
        self._replot(replace(self._plot, log=not self._plot.log))

    def action_cycle_axis(self) -> None:
        """`a`: x in the series' own count (step or epoch), then in time, where the lines say it."""
        main = self._curves.get(self._plot.tag)
        if main is None or len(axes_of(main)) < 2:
            return
        axes = axes_of(main)
        nxt = axes[(axes.index(self._axis(main)) + 1) % len(axes)]
        self._replot(replace(self._plot, axis=nxt, zoom=None))

    def action_cycle_zoom(self) -> None:
        """`z`: the whole run, then the last 1,000 and 100 steps (on another x: 10 % and 1 %)."""
        main = self._curves.get(self._plot.tag)
        if main is None:
            return
        levels: list[float | None] = [None, *zoom_levels(main, self._axis(main))]
        if len(levels) < 2:
            return
        at = levels.index(self._plot.zoom) if self._plot.zoom in levels else 0
        self._replot(replace(self._plot, zoom=levels[(at + 1) % len(levels)]))

    def action_pick_series(self) -> None:
        """`s`: which series to plot (every tag with two points or more)."""
        if len(self._curves) < 2:
            return
        entries = [
            (ngettext("{tag}  ({n:,} point)", "{tag}  ({n:,} points)", c.count).format(tag=tag, n=c.count), tag)
            for tag, c in self._curves.items()
        ]

        def chosen(tag: str | None) -> None:
            if tag is not None and tag in self._curves:
                self._replot(replace(self._plot, tag=tag, axis=None, zoom=None))

        self.app.push_screen(PickScreen(_("Series to plot"), entries, self._plot.tag), chosen)

    def _others(self) -> list[tuple[str, JobInfo]]:
        """The fleet's other jobs (this instance's and the others'), newest first per instance."""
        if self._fleet is None:
            return [(self._view.name, j) for j in reversed(self._view.jobs) if j.id != self._job.id]
        return [
            (name, j)
            for name, view in self._fleet.views.items()
            for j in reversed(view.jobs)
            if (name, j.id) != (self._view.name, self._job.id)
        ]

    def action_compare(self) -> None:
        """`c`: another job's curve of the same series over this one (a picker of the fleet's jobs)."""
        others = self._others()
        if not others:
            return
        entries = [(run_job_label(name, j), f"{name}\x00{j.id}") for name, j in others]
        if self._compare_job is not None:
            entries.insert(0, (_("no comparison"), NO_COMPARE))
        current = "\x00".join(self._compare_job) if self._compare_job else None

        def chosen(key: str | None) -> None:
            if key is None:
                return
            if key == NO_COMPARE:
                self._compare_job, self._compare = None, None
                self._replot(replace(self._plot, compare=None))
                return
            name, _sep, job_id = key.partition("\x00")
            job = next((j for n, j in others if n == name and j.id == job_id), None)
            host = self._host if name == self._view.name else self._fleet.hosts.get(name) if self._fleet else None
            view = self._view if name == self._view.name else self._fleet.views.get(name) if self._fleet else None
            if job is None or host is None or view is None:
                return
            self._compare_job, self._compare = (name, job.id), None
            label = f"{job.name or job.id} ({name})"
            self._plot = replace(self._plot, compare=label)
            self.read_compared(host, view, job)

        self.app.push_screen(PickScreen(_("Compare with"), entries, current), chosen)

    def action_stop_job(self) -> None:
        if self._on_stop is not None and self._current_state() == "running":
            self._on_stop(self._job)

    def compose(self) -> ComposeResult:
        yield TextPanel(id="head")
        yield Select(job_options(self._view, self._job), value=self._job.id, allow_blank=False, id="jobs")
        yield TextPanel(id="chart")
        yield TextPanel(id="runnote")
        yield LogView(max_lines=MAX_LOG_LINES, id="log", auto_scroll=True)
        yield TextPanel(id="live")
        yield StableFooter(compact=True)  # seven keys: compact, so they fit 80 columns

    def on_mount(self) -> None:
        # anchored, the log stays at its end through every resize (a head or chart that wraps
        # onto another line) until the reader scrolls up, and again once they scroll back down
        self.query_one(Log).anchor()
        self._repeats = [
            self.set_interval(FLUSH_SECONDS, self._flush),
            self.set_interval(1.0, self._show_note),  # "reading the whole run… (Ns)" counts seconds
        ]
        self._begin()

    def on_select_changed(self, event: Select.Changed) -> None:
        job = next((j for j in self._view.jobs if j.id == event.value), None)
        if job is not None and job.id != self._job.id:
            self._job = job
            self._stick = True
            self.query_one(Log).clear()
            self.follow(job)
            self._read_whole(job)

    def _read_whole(self, job: JobInfo) -> None:
        self._whole, self._series_error, self._curves = None, None, {}
        self._plot = replace(self._plot, tag="loss", axis=None, zoom=None)
        self._reading_since = time.monotonic()
        self._show_note()
        self.read_run(job)

    @work(exclusive=True, group="series", exit_on_error=False)
    async def read_run(self, job: JobInfo) -> None:
        """The whole run's series, and again every SERIES_REFRESH_S while the job runs."""
        inst = self._view.config
        if overview_first(self._series_cache, inst, job):
            first = await read_curves(self._host, inst, self._view.name, job, compare=False, thin=True)
            if first.thin:  # else the full read below says what there is (or why not)
                self.post_message(first)
        while True:
            self.post_message(
                await read_curves(self._host, inst, self._view.name, job, compare=False, cache=self._series_cache)
            )
            if self._current_state() != "running":
                return
            await asyncio.sleep(SERIES_REFRESH_S)

    @work(exclusive=True, group="compare", exit_on_error=False)
    async def read_compared(self, host: Host, view: InstanceView, job: JobInfo) -> None:
        if overview_first(self._series_cache, view.config, job):
            first = await read_curves(host, view.config, view.name, job, compare=True, thin=True)
            if first.thin:
                self.post_message(first)
        self.post_message(await read_curves(host, view.config, view.name, job, compare=True, cache=self._series_cache))

    def on_series_read(self, msg: SeriesRead) -> None:
        if msg.compare:
            if self._compare_job != (msg.instance, msg.job):
                return  # a comparison since replaced or dropped
            self._compare = msg.curves.get(self._plot.tag) or msg.curves.get("loss")
            if msg.error is not None:
                self.notify(msg.error, severity="warning", markup=False)
            self._draw_chart()
            return
        if msg.job != self._job.id:
            return  # a read of the job shown before
        if not msg.thin:
            self._reading_since = None  # an overview: every point is still being read
        if msg.error is not None:
            self._series_error = msg.error  # the window's curve stays
        else:
            first = self._whole is None
            self._whole, self._series_error = msg, None
            self._curves = msg.curves
            if first and self._plot.tag not in self._curves:
                self._plot = replace(self._plot, tag=next(iter(self._curves), "loss"))
            self._draw_chart()
            self.refresh_bindings()
        self._show_note()

    def _show_note(self) -> None:
        """The dim line under the chart: what the curve covers, or how long the first read runs."""
        main = self._curves.get(self._plot.tag)
        text = run_note(
            self._whole,
            None if self._reading_since is None else time.monotonic() - self._reading_since,
            self._series_error,
            main,
            None if main is None or self._plot.zoom is None else zoom_word(self._axis(main), self._plot.zoom),
        )
        self.query_one("#runnote", TextPanel).set_text(Text(text, style="dim", overflow="ellipsis", no_wrap=True))

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
            command=str(job.facts.request.get("command") or ""),
        )
        try:
            async for update in follower.updates():
                self._inbox.put(update)
        except GpuTuiError as exc:
            self._note = (_("cannot read this job's log: {error}").format(error=exc.line()),)

    def _end_kept(self) -> float | None:
        """Where the log is scrolled to, if it is at its end (to stay there through a change)."""
        log = self.query_one(Log)
        return log.scroll_y if log.is_vertical_scroll_end or self._stick else None

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
            kept = self._end_kept()  # a head that wraps onto one more line must not lift the log off its end
            self.query_one("#head", TextPanel).set_text(head)
            self.query_one("#live", TextPanel).set_text(Text("\n".join(self._live)))
            if kept is not None:
                self.call_after_refresh(self._to_end, kept)
        reading = self._reading
        points = reading.loss_points if reading is not None else ()
        now = time.monotonic()
        if self._whole is None and len(points) != self._points_drawn and now - self._chart_at >= CHART_SECONDS:
            # until the whole run is read, the curve is the window's loss
            self._points_drawn = len(points)
            axis = reading.loss_axis if reading is not None else None
            window: list[tuple[float, float, float | None]] = [(x, v, None) for x, v in points]
            had = bool(self._curves)
            self._curves = {"loss": curve_of("loss", window, axis or "index")} if len(window) >= 2 else {}
            self._draw_chart()
            if had != bool(self._curves):
                self.refresh_bindings()

    def _draw_chart(self) -> None:
        self._chart_at = time.monotonic()
        width = max(40, self.size.width - 4)
        height = max(4, min(10, (self.size.height - 18) // 2))  # the log keeps most of the screen
        compare = self._compare if self._plot.compare else None
        chart = draw(self._curves, self._plot, width=width, height=height, compare=compare)
        kept = self._end_kept()
        self.query_one("#chart", TextPanel).set_text(chart)
        if kept is not None:  # a taller chart (the whole run's, once read) leaves the log's end in view
            self.call_after_refresh(self._to_end, kept)
        self._show_note()

    def _current(self) -> JobInfo:
        """The screen's job as the dashboard last listed it."""
        return next((j for j in self._view.jobs if j.id == self._job.id), self._job)

    def _current_state(self) -> str:
        return self._current().state

    def _head(self, running: bool) -> Text:
        others = others_holding(self._view.attribution(), self._job.id, self.processes_key)
        now = self._clock()
        return head_text(self._view, self._job, self._current(), self._reading, now, self._currency, running, others)
