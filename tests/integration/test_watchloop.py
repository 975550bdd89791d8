"""The on-instance watch loop against real sshd: one loop per connection carries host stats, jobs,
autostop and compute apps; it is restarted when killed, ends with its channel, does not disturb
a second client, and where it cannot run gpu-tui polls instead and says so."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import sshd as sshd_lib
from sshhelp import ssh_host

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.jobs import JobRequest, new_job_id
from gpu_tui.services.events import ConnState, GpuFrameReceived, HostStatsReceived, ProcessesReceived, StateChanged
from gpu_tui.services.fleet import Fleet
from gpu_tui.services.jobs import runner as jobsvc
from gpu_tui.services.jobs.watch import JobFinished, JobsReceived
from gpu_tui.services.monitor import watchloop
from gpu_tui.services.monitor.watchloop import WatchMode, WatchModeChanged

pytestmark = pytest.mark.sshd


class Rec:
    def __init__(self) -> None:
        self.events: list[tuple[float, object]] = []

    def __call__(self, name: str, e: object) -> None:
        self.events.append((time.monotonic(), e))

    def of(self, kind: type) -> list:
        return [e for _, e in self.events if isinstance(e, kind)]

    async def wait(self, pred: Callable[[], object], timeout: float = 20.0, what: str = "") -> None:
        end = time.monotonic() + timeout
        while not pred():
            if time.monotonic() > end:
                kinds = sorted({type(e).__name__ for _, e in self.events})
                raise AssertionError(f"timed out waiting for {what}; events: {kinds}")
            await asyncio.sleep(0.05)


def inst_cfg(sshd_inst, **kw) -> InstanceConfig:
    return InstanceConfig(name=sshd_inst.name, host=sshd_inst.host, port=sshd_inst.port, **kw)


def _ppid(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    return int(stat[stat.rindex(b")") + 2 :].split()[1])


def script_pids(sshd_inst) -> list[int]:
    """Processes of the instance running the watch script (found in /proc by their command line
    and the instance's mark in their environment, wherever they were reparented): the loop and
    its stdin copier (a subshell of it)."""
    out = []
    for pid in sshd_lib.marked_processes(str(sshd_inst.dir)):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(watchloop.WATCH_NAME.encode() in part for part in cmdline):
            out.append(pid)
    return out


def loop_pids(sshd_inst) -> list[int]:
    """The loops themselves (not their subshells)."""
    pids = script_pids(sshd_inst)
    return [p for p in pids if _ppid(p) not in pids]


def instance_procs(sshd_inst, needle: bytes) -> list[int]:
    out = []
    for pid in sshd_lib.marked_processes(str(sshd_inst.dir)):
        try:
            if needle in Path(f"/proc/{pid}/cmdline").read_bytes():
                out.append(pid)
        except OSError:
            continue
    return out


async def start_fleet(cfg: InstanceConfig, host, rec: Rec) -> tuple[Fleet, asyncio.Task]:
    fleet = Fleet([(cfg, host)], refresh_seconds=0.5, on_change=rec)
    return fleet, asyncio.create_task(fleet.run())


async def stop(task: asyncio.Task) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def wait_gone(pred: Callable[[], list[int]], timeout: float = 5.0) -> list[int]:
    end = time.monotonic() + timeout
    while (left := pred()) and time.monotonic() < end:
        await asyncio.sleep(0.1)
    return left


async def test_loop_carries_stats_jobs_and_apps_and_ends_with_the_client(sshd_factory, tmp_path: Path) -> None:
    inst = sshd_factory("watch", gpus=2)
    cfg = inst_cfg(inst)
    rec = Rec()
    fleet, task = await start_fleet(cfg, ssh_host(inst, tmp_path), rec)
    try:
        await rec.wait(lambda: fleet.loops[cfg.name].live, what="the loop")
        await rec.wait(lambda: any(s.stats.cpu_percent is not None for s in rec.of(HostStatsReceived)), what="CPU %")
        stats = rec.of(HostStatsReceived)[-1].stats
        assert stats.mem_total_mib and stats.uptime_seconds is not None and stats.disk_total_gib
        assert rec.of(JobsReceived) and rec.of(JobsReceived)[-1].jobs == ()
        await rec.wait(lambda: rec.of(ProcessesReceived), what="compute apps")
        await rec.wait(lambda: len(rec.of(GpuFrameReceived)) >= 2, what="frames")
        assert fleet.views[cfg.name].watch_note is None
        pids = loop_pids(inst)
        assert pids == [fleet.loops[cfg.name].pid], pids
        # one nvidia-smi -l for the apps, under the loop, besides the -lms GPU stream
        assert len(instance_procs(inst, b"--query-compute-apps")) == 1
    finally:
        await stop(task)
    assert await wait_gone(lambda: script_pids(inst)) == [], "the loop outlived the client"
    assert await wait_gone(lambda: instance_procs(inst, b"--query-compute-apps")) == []
    assert not any((inst.home() / ".gpu-tui" / "run").glob("watch.*")), "the loop's run dir is left"


async def test_job_end_reaches_the_dashboard_within_5s_and_carries_its_log(sshd_factory, tmp_path: Path) -> None:
    inst = sshd_factory("watch-jobs")
    cfg = inst_cfg(inst)
    rec = Rec()
    host = ssh_host(inst, tmp_path)
    fleet, task = await start_fleet(cfg, host, rec)
    try:
        await rec.wait(lambda: fleet.loops[cfg.name].live, what="the loop")
        cmd = (
            'for i in 1 2 3; do echo "step $i/3 loss 0.$i"; sleep 0.3; done; sleep 1.5; '
            "echo 'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB'; exit 3"
        )
        req = await jobsvc.start_job(host, cfg, JobRequest(id=new_job_id(), command=cmd))
        fleet.poke_jobs(cfg.name)
        await rec.wait(lambda: any(j.state == "running" for e in rec.of(JobsReceived) for j in e.jobs), what="running")
        exit_file = inst.home() / ".gpu-tui" / "jobs" / req.id / "exit_code"
        await rec.wait(lambda: exit_file.exists(), what="the job's end")
        ended_at = time.monotonic()
        await rec.wait(lambda: rec.of(JobFinished), timeout=10, what="JobFinished")
        seen = next(t for t, e in rec.events if isinstance(e, JobFinished))
        assert seen - ended_at < 5.0
        job = rec.of(JobFinished)[0].job
        assert job.id == req.id and job.state == "failed"
        assert job.failure and "out of memory" in job.failure.lower(), job.failure
        assert fleet.loops[cfg.name].mode is WatchMode.LIVE
        assert fleet.watchers[cfg.name]._polls == 0, "the poller must stay idle while the loop runs"
    finally:
        await stop(task)


async def test_killed_loop_is_restarted(sshd_factory, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(watchloop, "RESTART_SECONDS", 0.2)
    inst = sshd_factory("watch-kill")
    cfg = inst_cfg(inst)
    rec = Rec()
    fleet, task = await start_fleet(cfg, ssh_host(inst, tmp_path), rec)
    try:
        await rec.wait(lambda: fleet.loops[cfg.name].live, what="the loop")
        [pid] = loop_pids(inst)
        os.kill(pid, signal.SIGKILL)
        await rec.wait(lambda: loop_pids(inst) and loop_pids(inst) != [pid], what="a new loop")
        n = len(rec.of(HostStatsReceived))
        await rec.wait(lambda: len(rec.of(HostStatsReceived)) > n + 1, what="records again")
        assert fleet.loops[cfg.name].live
        # the dead loop's nvidia-smi went with it: one apps stream
        assert len(await wait_gone(lambda: instance_procs(inst, b"--query-compute-apps")[1:])) == 0
    finally:
        await stop(task)


async def test_second_client_does_not_break_the_first(sshd_factory, tmp_path: Path) -> None:
    inst = sshd_factory("watch-two")
    cfg = inst_cfg(inst)
    rec1, rec2 = Rec(), Rec()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    f1, t1 = await start_fleet(cfg, ssh_host(inst, tmp_path / "a"), rec1)
    try:
        await rec1.wait(lambda: f1.loops[cfg.name].live, what="loop 1")
        f2, t2 = await start_fleet(cfg, ssh_host(inst, tmp_path / "b"), rec2)
        await rec2.wait(lambda: f2.loops[cfg.name].live, what="loop 2")
        assert len(loop_pids(inst)) == 2
        await stop(t2)
        assert len(await wait_gone(lambda: loop_pids(inst)[1:])) == 0
        n = len(rec1.of(HostStatsReceived))
        await rec1.wait(lambda: len(rec1.of(HostStatsReceived)) > n + 1, what="loop 1 still running")
        assert f1.loops[cfg.name].live and not rec1.of(WatchModeChanged)[1:]
    finally:
        await stop(t1)


async def test_frozen_instance_goes_offline_within_the_keepalive_window(sshd_factory, tmp_path: Path) -> None:
    inst = sshd_factory("watch-frozen")
    cfg = inst_cfg(inst)
    rec = Rec()
    fleet, task = await start_fleet(cfg, ssh_host(inst, tmp_path, keepalive=(1.0, 2), timeout=2), rec)
    try:
        await rec.wait(lambda: fleet.loops[cfg.name].live, what="the loop")
        inst.freeze()
        t0 = time.monotonic()
        await rec.wait(lambda: any(e.state is ConnState.OFFLINE for e in rec.of(StateChanged)), what="offline")
        assert time.monotonic() - t0 < 8
        inst.thaw()
    finally:
        await stop(task)


async def test_unwritable_state_dir_falls_back_to_polling_and_says_so(sshd_factory, tmp_path: Path) -> None:
    inst = sshd_factory("watch-fallback")
    cfg = inst_cfg(inst, state_dir="/proc/gpu-tui-cannot-exist")
    rec = Rec()
    fleet, task = await start_fleet(cfg, ssh_host(inst, tmp_path), rec)
    try:
        await rec.wait(lambda: fleet.loops[cfg.name].mode is WatchMode.POLLING, what="the fallback")
        note = fleet.views[cfg.name].watch_note
        assert note and note.startswith("polling fallback:") and "state_dir" in note, note
        # the old probes carry on: the stats loop and the job poller
        await rec.wait(lambda: len(rec.of(HostStatsReceived)) >= 2, what="stats by polling")
        await rec.wait(lambda: fleet.watchers[cfg.name]._polls >= 1, what="a job poll")
        assert loop_pids(inst) == []
    finally:
        await stop(task)


async def test_loop_without_mkfifo_falls_back(sshd_factory, tmp_path: Path) -> None:
    inst = sshd_factory("watch-nofifo")
    # a PATH whose `mkfifo` fails, first on PATH as the instance's fakes are
    fake = inst.dir / "bin" / "mkfifo"
    fake.write_text("#!/bin/sh\necho 'mkfifo: not permitted' >&2\nexit 1\n")
    fake.chmod(0o755)
    cfg = inst_cfg(inst)
    rec = Rec()
    fleet, task = await start_fleet(cfg, ssh_host(inst, tmp_path), rec)
    try:
        await rec.wait(lambda: fleet.loops[cfg.name].mode is WatchMode.POLLING, what="the fallback")
        assert "mkfifo" in (fleet.views[cfg.name].watch_note or "")
        await rec.wait(lambda: len(rec.of(HostStatsReceived)) >= 2, what="stats by polling")
    finally:
        await stop(task)
