"""`gpu-tui demo` answers the watch loop (demo/watchloop.py): the dashboard's real path, with no
polling fallback, job progress from the log end, and a job's end as JobFinished."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from demohelp import demo_known_hosts as known_hosts
from demohelp import demo_ssh_host as ssh_host

from gpu_tui.core.jobs import JobRequest
from gpu_tui.demo import DemoFleet, start_demo_fleet
from gpu_tui.services.events import HostStatsReceived, ProcessesReceived
from gpu_tui.services.fleet import Fleet
from gpu_tui.services.jobs import runner as jobsvc
from gpu_tui.services.jobs.watch import JobFinished, JobsReceived
from gpu_tui.services.monitor.watchloop import WatchMode

TRAIN = "autodl-4090-train"
H100 = "runpod-h100x8"


@pytest.fixture
async def demo(tmp_path: Path) -> AsyncIterator[DemoFleet]:
    f = await start_demo_fleet(workdir=tmp_path / "demo", seed=7, job_seconds=2.0)
    try:
        yield f
    finally:
        await f.close()


async def until(pred, timeout: float = 15.0) -> None:
    end = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < end, "timed out"
        await asyncio.sleep(0.05)


async def test_demo_instances_run_the_watch_loop(demo: DemoFleet, tmp_path: Path) -> None:
    kh = known_hosts(tmp_path, demo.known_hosts_text)
    names = (TRAIN, H100)
    events: list[object] = []
    hosts = {n: ssh_host(demo, n, kh) for n in names}
    fleet = Fleet([(demo.settings.instance(n), hosts[n]) for n in names], on_change=lambda _n, e: events.append(e))
    task = asyncio.create_task(fleet.run())
    try:
        await until(lambda: all(fleet.loops[n].live for n in names))
        assert all(fleet.views[n].watch_note is None for n in names)
        await until(lambda: all(fleet.views[n].stats and fleet.views[n].stats.cpu_percent is not None for n in names))
        await until(lambda: fleet.views[TRAIN].jobs)
        (job,) = fleet.views[TRAIN].jobs
        assert job.state == "running" and job.progress_percent is not None and job.last_loss is not None
        await until(lambda: any(isinstance(e, ProcessesReceived) and e.processes for e in events))
        # a short job started now ends within a few seconds: JobFinished arrives by the loop
        host, inst = hosts[H100], demo.settings.instance(H100)
        req = await jobsvc.start_job(host, inst, JobRequest(id="", command="python train.py"))
        fleet.poke_jobs(H100)
        await until(lambda: any(isinstance(e, JobFinished) and e.job.id == req.id for e in events), timeout=20)
        assert fleet.watchers[H100]._polls == 0 and fleet.loops[H100].mode is WatchMode.LIVE
        assert sum(isinstance(e, JobsReceived) for e in events) >= 2
        assert sum(isinstance(e, HostStatsReceived) for e in events) >= 4
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
