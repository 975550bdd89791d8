"""The dashboard's job keys: `r` run a job, `l` its log, `x` stop it; and the alert when one ends.

A mixin for GpuTuiApp so app.py stays about layout and updates.
"""

from __future__ import annotations

import shutil
import subprocess

from rich.text import Text

from gpu_tui.core.errors import GpuTuiError
from gpu_tui.core.jobs import JobInfo, JobRequest
from gpu_tui.core.text import printable
from gpu_tui.services import jobs as jobsvc
from gpu_tui.services.conda import CondaInstall, conda_envs
from gpu_tui.services.fleet import Fleet, InstanceView
from gpu_tui.ui.screens.confirm import ConfirmScreen
from gpu_tui.ui.screens.job_log import JobLogScreen
from gpu_tui.ui.screens.run_job import RunJobScreen

__all__ = ["JobActions", "job_ended_text"]


def job_ended_text(name: str, job: JobInfo) -> tuple[str, str]:
    """(message, severity) for a job that ended."""
    label = job.name or job.id
    if job.state == "succeeded" and not job.failure:
        return f"{name}: job {label} finished", "information"
    if job.state == "stopped":
        return f"{name}: job {label} stopped", "warning"
    return f"{name}: job {label} {job.state}: {job.failure or 'failed'}", "error"


class JobActions:
    """Mixed into GpuTuiApp (which provides fleet, selected, notify, push_screen, run_worker...)."""

    fleet: Fleet | None

    def _job_check(self, action: str, view: InstanceView | None) -> bool | None:
        if view is None:
            return None
        if action == "run_job":
            return True if view.state == "online" else None
        if action == "logs":
            return True if view.jobs else None
        if action == "stop_job":
            return True if any(j.state == "running" for j in view.jobs) else None
        return None

    def action_run_job(self) -> None:
        view = self.selected()  # type: ignore[attr-defined]
        if view is None or self.fleet is None:
            return
        host = self.fleet.hosts[view.name]
        inst = view.config

        async def load() -> CondaInstall | None:
            return await conda_envs(host)

        async def start(req: JobRequest) -> JobRequest:
            return await jobsvc.start_job(host, inst, req)

        def done(started: JobRequest | None) -> None:
            if started is not None and self.fleet is not None:
                self.fleet.poke_jobs(view.name)
                self.notify(f"{view.name}: started job {started.name or started.id}")  # type: ignore[attr-defined]

        self.push_screen(RunJobScreen(view.name, inst.workdir, load, start), done)  # type: ignore[attr-defined]

    def action_logs(self) -> None:
        view = self.selected()  # type: ignore[attr-defined]
        if view is None or self.fleet is None or view.current_job is None:
            return
        currency = self.opened.settings.settings.currency if self.opened else "¥"  # type: ignore[attr-defined]
        screen = JobLogScreen(view, self.fleet.hosts[view.name], view.current_job, currency=currency, clock=self.clock)  # type: ignore[attr-defined]
        self.push_screen(screen)  # type: ignore[attr-defined]

    def action_stop_job(self) -> None:
        view = self.selected()  # type: ignore[attr-defined]
        if view is None or self.fleet is None:
            return
        screen = self.screen  # type: ignore[attr-defined]
        job = screen.job if isinstance(screen, JobLogScreen) else None
        if job is None or job.state != "running":
            running = [j for j in view.jobs if j.state == "running"]
            job = running[-1] if running else None
        if job is None:
            return
        host, inst, fleet = self.fleet.hosts[view.name], view.config, self.fleet
        question = Text.assemble(
            "Stop job ", (printable(job.name or job.id), "bold"), f" on {view.name}?\n",
            ("It gets SIGINT (a training loop can save a checkpoint), then SIGTERM, then SIGKILL.", "dim"),
        )

        async def stop() -> None:
            try:
                how = await jobsvc.stop_job(host, inst, job.id)
            except GpuTuiError as exc:
                self.notify(exc.message, title=exc.title, severity="error")  # type: ignore[attr-defined]
                return
            fleet.poke_jobs(view.name)
            self.notify(f"{view.name}: job {job.name or job.id} {how}")  # type: ignore[attr-defined]

        def answered(yes: bool | None) -> None:
            if yes:
                self.notify(f"{view.name}: stopping job {job.name or job.id}…")  # type: ignore[attr-defined]
                self.run_worker(stop(), group="stop-job", exit_on_error=False)  # type: ignore[attr-defined]

        self.push_screen(ConfirmScreen(question, yes="Stop"), answered)  # type: ignore[attr-defined]

    def alert_job_ended(self, name: str, job: JobInfo) -> None:
        message, severity = job_ended_text(name, job)
        self.notify(printable(message), severity=severity, timeout=15)  # type: ignore[attr-defined]
        self.bell()  # type: ignore[attr-defined]
        notify_send = shutil.which("notify-send")
        if notify_send:  # a desktop notification where one can be shown; never blocks the UI
            subprocess.Popen([notify_send, "gpu-tui", printable(message)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
