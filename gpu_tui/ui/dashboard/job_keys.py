"""The dashboard's job keys: `r` run a job, `l` its log, `x` stop it; and the alert when one ends."""

from __future__ import annotations

import logging
import shutil
import subprocess

from rich.text import Text
from textual.notifications import SeverityLevel

from gpu_tui.core.actions import key_label
from gpu_tui.core.errors import GpuTuiError, InputError
from gpu_tui.core.i18n import _
from gpu_tui.core.jobs import JobInfo, JobRequest, RunAsk
from gpu_tui.core.text import printable
from gpu_tui.core.trainlog.failures import OOM
from gpu_tui.services.conda import CondaInstall, conda_envs
from gpu_tui.services.fleet import InstanceView
from gpu_tui.services.jobs import runner as jobsvc
from gpu_tui.services.jobs.sched import scheduler_for
from gpu_tui.ui.dashboard.context import DashboardContext
from gpu_tui.ui.format import job_word, text_parts
from gpu_tui.ui.screens.confirm import ConfirmScreen
from gpu_tui.ui.screens.job_log import JobLogScreen
from gpu_tui.ui.screens.job_log_text import others_holding
from gpu_tui.ui.screens.run_job import ClusterAsk, RunJobScreen

STOPPABLE = ("running", "pending")
"""Job states `x` acts on (a pending SLURM job is cancelled before it starts)."""

log = logging.getLogger(__name__)

__all__ = ["alert_job_ended", "job_check", "job_ended_text", "open_logs", "run_job", "stop_job"]


def job_ended_text(name: str, job: JobInfo) -> tuple[str, SeverityLevel]:
    """(message, severity) for a job that ended."""
    label = job.name or job.id
    if job.state == "succeeded" and not job.failure:
        return _("{name}: job {job} finished").format(name=name, job=label), "information"
    if job.state == "stopped":
        return _("{name}: job {job} stopped").format(name=name, job=label), "warning"
    return _("{name}: job {job} {state}: {failure}").format(
        name=name, job=label, state=job_word(job.state), failure=job.failure or job_word("failed")
    ), "error"


def stopped_text(name: str, label: str, how: str) -> str:
    """What the stop script answered (`finished`, `stopped INT`...), as a sentence."""
    if how == "finished":
        return _("{name}: job {job} had already finished").format(name=name, job=label)
    if how == "cancelled":
        return _("{name}: job {job} cancelled before it started").format(name=name, job=label)
    word, _sep, signal = how.partition(" ")
    if word == "stopped" and signal:
        return _("{name}: job {job} stopped by SIG{signal}").format(name=name, job=label, signal=signal)
    return _("{name}: job {job}: {answer}").format(name=name, job=label, answer=how)


def job_check(action: str, view: InstanceView | None) -> bool | None:
    """run_job / logs / stop_job: True when possible, None (dimmed) when not for this instance now."""
    if view is None:
        return None
    if action == "run_job":
        return True if view.state == "online" else None
    if action == "logs":
        return True if view.jobs else None
    return True if any(j.state in STOPPABLE for j in view.jobs) else None  # stop_job


def run_job(ctx: DashboardContext, view: InstanceView) -> None:
    fleet = ctx.fleet
    if fleet is None:
        return
    host, inst = fleet.hosts[view.name], view.config

    async def load() -> CondaInstall | None:
        return await conda_envs(host)

    async def start(req: JobRequest, asked: ClusterAsk | None) -> JobRequest:
        ask = None
        if asked is not None:
            gpus, partition, limit = asked
            if gpus and not gpus.isdigit():
                raise InputError(_("GPUs: a whole number, e.g. 1"))
            ask = RunAsk(gpus=int(gpus) if gpus else None, partition=partition or None, time=limit or None)
        opened = ctx.opened
        if opened is not None and opened.ship_notify is not None:
            try:  # the instance reports the job's end itself (issue 15); never in the job's way
                await opened.ship_notify(host, inst)
            except GpuTuiError as exc:
                log.info("%s: notification targets not updated: %s", inst.name, exc.english)
        return await jobsvc.start_job(host, inst, req, ask)

    def done(started: JobRequest | None) -> None:
        if started is not None:
            fleet.poke_jobs(view.name)
            ctx.notify(
                _("{name}: started job {job}").format(name=view.name, job=started.name or started.id), markup=False
            )

    fields = scheduler_for(inst).run_fields(inst)
    cluster = None if fields is None else (str(fields.gpus or ""), fields.partition or "", fields.time or "")
    ctx.push(RunJobScreen(view.name, inst.workdir, load, start, cluster), done)


def open_logs(ctx: DashboardContext, view: InstanceView) -> None:
    fleet, job = ctx.fleet, view.current_job
    if fleet is None or job is None:
        return
    host = fleet.hosts[view.name]

    def stop(j: JobInfo) -> None:
        stop_job(ctx, view, j)

    opened = ctx.opened
    cache = opened.series_cache if opened is not None else None
    screen = ctx.kept(
        "log",
        lambda: JobLogScreen(
            view, host, job, currency=ctx.currency, clock=ctx.clock, on_stop=stop, fleet=fleet, series_cache=cache
        ),
    )
    screen.processes_key = key_label(ctx.key_for("gpu_processes"))
    screen.show(view, host, job, currency=ctx.currency, on_stop=stop, fleet=fleet)
    ctx.push(screen)


def stop_job(ctx: DashboardContext, view: InstanceView, job: JobInfo | None = None) -> None:
    """Ask, then stop `job` (else the instance's newest running one)."""
    fleet = ctx.fleet
    if fleet is None:
        return
    if job is None or job.state not in STOPPABLE:
        running = [j for j in view.jobs if j.state == "running"] or [j for j in view.jobs if j.state in STOPPABLE]
        job = running[-1] if running else None
    if job is None:
        return
    target = job
    host, inst = fleet.hosts[view.name], view.config
    label = target.name or target.id
    question = Text.assemble(
        *text_parts(_("Stop job {job} on {name}?"), job=(printable(label), "bold"), name=view.name),
        "\n",
        (_("It gets SIGINT (a training loop can save a checkpoint), then SIGTERM, then SIGKILL."), "dim"),
    )

    async def stop() -> None:
        try:
            how = await jobsvc.stop_job(host, inst, target.id)
        except GpuTuiError as exc:
            ctx.notify(printable(exc.message), title=_(exc.title), severity="error", markup=False)
            return
        fleet.poke_jobs(view.name)
        ctx.notify(printable(stopped_text(view.name, label, how)), markup=False)

    def answered(yes: bool | None) -> None:
        if yes:
            ctx.notify(printable(_("{name}: stopping job {job}…").format(name=view.name, job=label)), markup=False)
            ctx.start(stop(), group="stop-job")

    ctx.push(ConfirmScreen(question, yes=_("Stop")), answered)


def alert_job_ended(ctx: DashboardContext, name: str, job: JobInfo) -> None:
    message, severity = job_ended_text(name, job)
    view = ctx.fleet.views.get(name) if ctx.fleet is not None else None
    if view is not None and job.failure and job.failure.startswith(OOM):  # who else holds the memory
        others = others_holding(view.attribution(), job.id, key_label(ctx.key_for("gpu_processes")))
        message += "\n" + others if others else ""
    ctx.notify(printable(message), severity=severity, timeout=15, markup=False)
    ctx.app.bell()
    notify_send = shutil.which("notify-send")
    if notify_send:  # a desktop notification where one can be shown; never blocks the UI
        subprocess.Popen(
            [notify_send, "gpu-tui", printable(message)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
