"""`P` on the dashboard (issue 27), against a real sshd and its watch loop: a container whose
driver names only a host pid; the process of the instance that holds the GPU's device file shows
in the host panel with that entry's memory, `P` lists it with another container's host pid, and
ending it (after the confirmation) ends the real process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from pilothelp import make_app, state_of
from sshd import ENV_MARK
from waiting import wait_for

from gpu_tui.core.jobs import JobRequest
from gpu_tui.services.jobs import runner as jobsvc
from gpu_tui.services.monitor.watchloop import HOLDERS_EVERY, TICK_SECONDS
from gpu_tui.ui.screens.confirm import ConfirmScreen
from gpu_tui.ui.screens.pick import PickScreen
from gpu_tui.ui.widgets.host_panel import HostPanel

pytestmark = pytest.mark.sshd


def _next_scans_within() -> float:
    """How long the watch loop may take to scan the GPUs' holders twice (the one after the job
    started may have just missed it). It scans every HOLDERS_EVERY ticks, and every N/20th tick on
    a machine of N processes; the fixture's instance sees the whole machine's /proc, and a machine
    running other suites beside this one holds hundreds (a run beside a 32-instance benchmark
    waited past 30 s here)."""
    procs = sum(1 for p in os.listdir("/proc") if p.isdigit())
    return 2 * TICK_SECONDS * max(HOLDERS_EVERY, procs // 20) + 10


HOLD = "import sys, time\nf = open(sys.argv[1], 'rb')\nprint('holding', flush=True)\ntime.sleep(600)\n"


async def test_p_lists_who_holds_the_gpu_and_ends_the_chosen_process(sshd_factory, tmp_path: Path) -> None:
    box = sshd_factory("box", gpus=2)
    dev = box.make_gpu_devices(2)
    env = dict(os.environ, **{ENV_MARK: str(box.dir)})
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(dev[0])], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "holding\n"
        box.set_apps(["0, 3301877, [Not Found], 15872", "1, 3301999, [Not Found], 2048"])
        app = make_app(tmp_path, [box])
        async with app.run_test(size=(100, 32)) as pilot:
            await wait_for(pilot, lambda: state_of(app, "box") == "online", timeout=30)
            view = app.fleet.views["box"]
            # the scan and the driver's list arrive apart: wait for both, joined
            joined = lambda: any(r.pid == proc.pid and r.used_memory_mib == 15872 for r in view.attribution().rows)  # noqa: E731
            await wait_for(pilot, joined, timeout=30)
            panel = app.query_one(HostPanel).render_view(view).plain
            assert f"pid {proc.pid}" in panel and "15,872 MiB" in panel, panel
            assert "host pid 3301999" in panel, panel

            await pilot.press("P")
            await wait_for(pilot, lambda: isinstance(app.screen, PickScreen))
            # the host pid first would be refused: it is another container's
            await pilot.press("down", "enter")
            await wait_for(pilot, lambda: not isinstance(app.screen, PickScreen))
            assert proc.poll() is None
            await pilot.press("P")
            await wait_for(pilot, lambda: isinstance(app.screen, PickScreen))
            await pilot.press("enter")  # the first row: the instance's process on GPU 0
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            await pilot.press("y")
            await wait_for(pilot, lambda: proc.poll() is not None, timeout=20)
            assert proc.returncode in (-signal.SIGINT, 1)  # KeyboardInterrupt in Python's sleep
            box.set_apps(["1, 3301999, [Not Found], 2048"])
            await wait_for(pilot, lambda: all(r.pid is None for r in view.attribution().rows), timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


async def test_a_job_that_runs_out_of_gpu_memory_is_told_who_else_holds_it(sshd_factory, tmp_path: Path) -> None:
    """The log screen of a running job shows the VRAM its processes hold; once it dies of a real
    CUDA OOM (the line is a real run's, tests/data/logs/real/oom), the hint names the notebook
    kernel that still holds memory on the GPU."""
    box = sshd_factory("box", gpus=1)
    dev = box.make_gpu_devices(1)
    oom_log = (
        Path(__file__).resolve().parents[1] / "data/logs/real/oom/echomimic-torch-outofmemoryerror-new-phrasing.log"
    )
    env = dict(os.environ, **{ENV_MARK: str(box.dir)})
    kernel = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(dev[0]), "ipykernel_launcher"], stdout=subprocess.PIPE, text=True, env=env
    )
    gate = tmp_path / "go"
    train = tmp_path / "train.py"
    train.write_text(
        "import os, sys, time\n"
        f"f = open({str(dev[0])!r}, 'rb')\n"
        f"while not os.path.exists({str(gate)!r}):\n    time.sleep(0.1)\n"
        f"sys.stdout.write(open({str(oom_log)!r}).read())\n"
        "sys.exit(1)\n"
    )
    try:
        assert kernel.stdout is not None and kernel.stdout.readline() == "holding\n"
        box.set_apps([])  # a container's driver: nothing
        app = make_app(tmp_path, [box])
        async with app.run_test(size=(120, 36)) as pilot:
            await wait_for(pilot, lambda: state_of(app, "box") == "online", timeout=30)
            view = app.fleet.views["box"]
            command = f"{sys.executable} {train}"
            await jobsvc.start_job(
                app.fleet.hosts["box"], view.config, JobRequest(id="", command=command, name="train")
            )
            job_rows = lambda: [r for r in view.attribution().rows if r.job]  # noqa: E731
            await wait_for(pilot, job_rows, timeout=_next_scans_within())
            # the driver (open kernel module) names the container's pids: memory per process
            box.set_apps([f"0, {job_rows()[0].pid}, python, 9000", f"0, {kernel.pid}, python, 1401"])
            job_id = job_rows()[0].job
            await wait_for(pilot, lambda: view.attribution().job_mib(job_id) == 9000, timeout=30)
            await pilot.press("l")
            screen = app.screen
            await wait_for(pilot, lambda: "VRAM" in str(screen.query_one("#head").render()), timeout=15)
            gate.touch()
            hint = lambda: "Other processes hold GPU memory" in str(screen.query_one("#head").render())  # noqa: E731
            await wait_for(pilot, hint, timeout=40)
            head = str(screen.query_one("#head").render())
            assert f"pid {kernel.pid}" in head and "1,401 MiB" in head and "P lists them" in head, head
    finally:
        kernel.kill()
        kernel.wait()
