"""The log screen's words: a job's label in its lists, and the progress line under the head
(what the run has done, its ETA, finish time and cost by then, the last loss)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Protocol

from rich.text import Text

from gpu_tui.core.fit.oomfit import oom_fit_text
from gpu_tui.core.i18n import _, ngettext
from gpu_tui.core.jobs import JobInfo
from gpu_tui.core.metrics.holders import Attribution
from gpu_tui.core.text import printable
from gpu_tui.core.trainlog.failures import NO_SPACE, OOM, TRACEBACK
from gpu_tui.core.trainlog.hints import disk_full, disk_full_text, frame_text, hint_for
from gpu_tui.core.trainlog.model import Progress
from gpu_tui.core.units import format_bytes, format_eta_s, format_mib, format_money, format_percent
from gpu_tui.services.fleet import InstanceView
from gpu_tui.services.jobs.follow import LogUpdate
from gpu_tui.services.jobs.series.read import WINDOW_BYTES
from gpu_tui.ui.runcurve import Curve
from gpu_tui.ui.runseries import SeriesRead

__all__ = ["LogReading", "hint_text", "job_label", "job_options", "progress_text", "run_job_label", "run_note"]


def job_label(job: JobInfo) -> str:
    name = f" {job.name}" if job.name else ""
    return f"{job.id}{name}  {_(job.state)}"


def run_job_label(instance: str, job: JobInfo) -> str:
    return f"{instance}  {job_label(job)}"


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


def progress_text(
    summary: LogReading, view: InstanceView, now: float, currency: str, running: bool, job_id: str | None = None
) -> Text:
    """`45% of the run · epoch 3/10 · 450/1000 · ETA 12m05s → done 14:32 · ¥12.34 by then (+¥0.40)` and
    the last loss. Percent, ETA, finish time and cost are the run's where the log says how long
    the run is (core/trainlog/progress), else the bar's."""
    t = Text()
    p = summary.progress
    if p is not None:
        if p.percent is not None:
            t.append(format_percent(p.percent), style="bold")
            if p.scope == "run":
                t.append(" " + _("of the run"), style="dim")
        if p.epoch is not None:
            t.append("  " + _("epoch {n}").format(n=f"{p.epoch}" + (f"/{p.epochs}" if p.epochs else "")))
        if p.step is not None:
            t.append("  " + _("step {n}").format(n=f"{p.step}" + (f"/{p.steps}" if p.steps else "")))
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
    vram = view.attribution().job_mib(job_id) if running and job_id is not None else None
    if vram is not None:  # what its processes hold on the GPUs now (issue 27)
        t.append("  " + _("VRAM {memory}").format(memory=format_mib(vram)), style="magenta")
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


def others_holding(att: Attribution, job_id: str, key: str, most: int = 3) -> str | None:
    """For a job that ran out of GPU memory: the other processes that hold memory on the GPUs
    now (the likely thieves: a notebook kernel, a run that never ended, another container), and
    how to end one; None where there are none."""
    rows = [r for r in att.rows if r.job != job_id and (r.used_memory_mib or r.pid is not None)]
    if not rows:
        return None
    named = []
    for r in rows[:most]:
        who = f"pid {r.pid}" if r.pid is not None else _("host pid {pid}").format(pid=r.host_pid)
        what = printable(r.command)[:60] if r.command else _("[not visible in container]")
        mib = f", {format_mib(r.used_memory_mib)}" if r.used_memory_mib is not None else ""
        named.append(f"{who} ({what}{mib}, GPU {'?' if r.gpu is None else r.gpu})")
    more = len(rows) - most
    listed = "; ".join(named) + (" " + _("and {n} more").format(n=more) if more > 0 else "")
    return _("Other processes hold GPU memory: {listed}. {key} lists them and ends one.").format(listed=listed, key=key)


def hint_text(reading: LogUpdate | None, job: JobInfo, others: str | None = None) -> Text:
    """What to do about the failure the log shows (else the job's, once it failed), on a line of
    its own, and for an OOM what `gpu-tui fit` says of the job's model and `others` (who else
    holds GPU memory); empty where there is none."""
    log_failure = reading.failure if reading is not None else None
    failure = log_failure or (job.failure if job.state == "failed" else None)
    hint = hint_for(failure)
    if not hint:
        return Text()
    fit = (reading.oom_fit if reading is not None else None) or job.oom_fit
    if fit is not None and failure is not None and failure.startswith(OOM):
        hint += "\n" + oom_fit_text(fit)
    if others and failure is not None and failure.startswith(OOM):
        hint += "\n" + others
    frame = (reading.frame if reading is not None else None) or job.frame
    if frame is not None and failure is not None and failure.startswith(TRACEBACK):
        hint += "\n" + frame_text(frame)
    disk = disk_full(job.facts.disk_full) if failure == NO_SPACE else None
    if disk is not None:
        hint += "\n" + disk_full_text(disk)
    return Text("\n" + hint, style="yellow")


def job_options(view: InstanceView, job: JobInfo) -> list[tuple[str, str]]:
    """The job list's entries, newest first (the shown job alone when the view has none)."""
    return [(job_label(j), j.id) for j in reversed(list(view.jobs) or [job])]


def head_text(
    view: InstanceView,
    job: JobInfo,
    current: JobInfo,
    reading: LogUpdate | None,
    now: float,
    currency: str,
    running: bool,
    others: str | None,
) -> Text:
    """The log screen's head: the job, its state, the lines read, its command, where the run is
    (progress_text) and what to do about its failure (hint_text). `current`: the job as the
    dashboard last listed it; `others`: who else holds GPU memory (others_holding)."""
    t = Text()
    t.append(view.name, style="bold")
    t.append(f"  {job.id}", style="dim")
    if job.name:
        t.append(f"  {job.name}", style="bold cyan")
    state = current.state
    t.append(f"  {_(state)}", style={"running": "green", "failed": "bold red", "stopped": "yellow"}.get(state, ""))
    if reading is not None:
        # lines read since the screen opened (the window plus what followed), and the log's size
        size, n = reading.log_bytes, reading.lines_seen
        lines = ngettext("{n:,} line, {size}", "{n:,} lines, {size}", n).format(n=n, size=format_bytes(size))
        t.append(f"  {lines}", style="dim")
    cmd = str(job.facts.request.get("command") or "").replace("\n", " ; ")
    t.append(f"\n$ {cmd[:200]}", style="dim")
    t.append("\n")
    if reading is not None:
        t.append_text(progress_text(reading, view, now, currency, running, job.id))
    t.append_text(hint_text(reading, current, others))
    return t


def run_note(
    whole: SeriesRead | None, reading_s: float | None, error: str | None, main: Curve | None, zoom: str | None
) -> str:
    """The line under the log screen's chart: what the plotted curve (`main`) covers, or how long
    the whole-run read has run (`reading_s`); `zoom`: the zoom's words, if one is on."""
    if reading_s is not None:
        if whole is not None and whole.thin:
            text = _("whole run, thinned on the instance; reading every point… ({n} s)").format(n=int(reading_s))
        else:
            text = _("reading the whole run… ({n} s)").format(n=int(reading_s))
    elif error is not None:
        text = _("the whole run could not be read: {error}").format(error=error)
    elif whole is not None and whole.window:
        text = _("last {size} KB of the log: python3 not on the instance").format(size=WINDOW_BYTES // 1024)
    elif whole is not None:
        n = main.count if main is not None else 0
        text = ngettext("whole run: {n:,} point", "whole run: {n:,} points", n).format(n=n)
    else:
        text = ""
    if text and zoom is not None:
        text += "  · " + _("zoom: {what}").format(what=zoom)
    return text
