"""The dashboard on a SLURM login node (issue 18) against a real sshd and a real one-node cluster:
a waiting job shows `pending` with SLURM's reason, the GPUs are the running job's (read inside
its allocation), and `x` cancels the pending one."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from pilothelp import make_app, on_top, panel_text, state_of
from sshhelp import run_gpu_tui
from textual.widgets import Input
from waiting import until_sync, wait_for

from gpu_tui.ui.screens.confirm import ConfirmScreen
from gpu_tui.ui.screens.run_job import RunJobScreen
from gpu_tui.ui.widgets.host_panel import HostPanel

pytestmark = [pytest.mark.sshd, pytest.mark.usefixtures("slurm_cluster")]

SLURM = 'scheduler = "slurm"\n'


def queue() -> str:
    """SLURM's queue as squeue prints it: `JOBID NAME STATE REASON`, the name with gpu-tui's
    `gpu-tui-` prefix cut (a failure message shows it)."""
    res = subprocess.run(["squeue", "-h", "-o", "%i %j %T %r"], capture_output=True, text=True, timeout=10)
    return (res.stdout + res.stderr).replace(" gpu-tui-", " ")


def submit(tmp: Path, inst, *args: str) -> str:
    res = run_gpu_tui(tmp, [inst], "run", inst.name, *args, config_extra=SLURM, timeout=90)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip()


async def test_queue_gpus_and_cancel_in_the_dashboard(sshd_factory, tmp_path: Path) -> None:
    inst = sshd_factory("login", gpus=2)
    submit(tmp_path, inst, "--gpus", "2", "--time", "10", "--name", "holder", "--", "sleep 300")
    # the waiter after the holder runs: submitted while the holder still waited, SLURM says
    # `Priority` (a job ahead of it) until its next scheduling pass, a minute later
    until_sync(lambda: "holder RUNNING" in queue(), timeout=60, what="the holder running", detail=queue)
    waiter = submit(tmp_path, inst, "--gpus", "1", "--name", "waiter", "--", "echo never")
    app = make_app(tmp_path, [inst], keys=SLURM)
    async with app.run_test(size=(80, 24)) as pilot:
        name = inst.name
        await wait_for(pilot, lambda: state_of(app, name) == "online", timeout=30)

        def host_text() -> str:
            return app.query_one(HostPanel).render_view(app.dashboard.selected()).plain

        def seen() -> str:
            return f"host panel:\n{host_text()}\nsqueue:\n{queue()}"

        await wait_for(pilot, lambda: "pending (Resources)" in host_text(), timeout=60, explain=seen)
        # the queue: the running job with its node and time of its limit; the partitions' GPUs
        await wait_for(pilot, lambda: "GPUs 2/2 in use" in host_text(), timeout=60, explain=seen)

        def holder() -> str:
            return next((line for line in host_text().splitlines() if "holder" in line), "")

        # its start time may come a listing after its state: `running @vm`, then `... 0m05s/10m00s`
        await wait_for(pilot, lambda: holder().endswith("/10m00s"), timeout=30)
        text = host_text()
        holder_line = next(line for line in text.splitlines() if "holder" in line)
        assert "running @" in holder_line and holder_line.endswith("/10m00s"), holder_line
        assert "partitions" in text and "debug  1 node  GPUs 2/2 in use" in text
        # the holder's two GPUs, read with srun inside its allocation
        await wait_for(pilot, lambda: app.fleet.views[name].frame is not None, timeout=60)
        assert len(app.fleet.views[name].frame.gpus) == 2
        assert "gpu error" not in panel_text(app)

        # `x` offers the newest running job (the holder); the pending one is reached the same way
        # with the job chosen, as the log screen does
        assert app.dashboard.check_action("stop_job", ()) is True
        views = app.fleet.views[name]
        pending = next(j for j in views.jobs if j.id == waiter)
        from gpu_tui.ui.dashboard.job_keys import stop_job

        stop_job(app.dashboard, views, pending)
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_for(
            pilot, lambda: next(j for j in app.fleet.views[name].jobs if j.id == waiter).state == "stopped", timeout=60
        )
        out = subprocess.run(["squeue", "-h", "-n", "gpu-tui-waiter", "-o", "%T"], capture_output=True, text=True)
        assert out.stdout.strip() in ("", "CANCELLED")

        def asked_lines() -> list[list[str]]:  # this test's jobs of that name (earlier runs' too)
            out = subprocess.run(
                [
                    "squeue",
                    "-h",
                    "-t",
                    "all",
                    "-n",
                    "gpu-tui-formjob",
                    "-O",
                    "JobID:12,Partition:20,TimeLimit:20,tres-per-job:40",
                ],
                capture_output=True,
                text=True,
            )
            return [line.split() for line in out.stdout.splitlines() if line.strip()]

        # `r` on a login node: the form asks for GPUs, partition and time in place of tmux
        before = len(asked_lines())
        await pilot.press("r")
        form = await wait_for(pilot, lambda: on_top(app, RunJobScreen))
        form.query_one("#command", Input).value = "echo from-the-form"
        form.query_one("#name", Input).value = "formjob"
        form.query_one("#gpus", Input).value = "1"
        form.query_one("#partition", Input).value = "gpu"
        form.query_one("#time", Input).value = "00:05:00"
        await pilot.click("#start")
        await wait_for(pilot, lambda: not isinstance(app.screen, RunJobScreen), what="the form to close")

        await wait_for(pilot, lambda: len(asked_lines()) > before, what="the form's job in the queue")
        _job, partition, limit, gres = max(asked_lines(), key=lambda cells: int(cells[0]))
        assert (partition, limit, gres) == ("gpu", "5:00", "gres:gpu:1")
