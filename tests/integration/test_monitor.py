"""HostMonitor against real sshd: a long-lived stream delivers frames, errors, reconnects."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from sshhelp import ssh_host
from waiting import until

from gpu_tui.core.models import GpuErrorKind
from gpu_tui.services.events import (
    ConnState,
    GpuErrorChanged,
    GpuFrameReceived,
    HostStatsReceived,
    MonitorEvent,
    ProcessesReceived,
    StateChanged,
)
from gpu_tui.services.monitor.host import HostMonitor

pytestmark = pytest.mark.sshd


class Recorder:
    def __init__(self) -> None:
        self.events: list[MonitorEvent] = []

    def __call__(self, e: MonitorEvent) -> None:
        self.events.append(e)

    def of(self, kind: type) -> list:
        return [e for e in self.events if isinstance(e, kind)]

    def states(self) -> list[ConnState]:
        return [e.state for e in self.of(StateChanged)]

    async def wait(self, pred: Callable[[], bool], timeout: float = 30.0) -> None:
        await until(pred, timeout, detail=lambda: f"states={self.states()} events={len(self.events)}")


async def _run(monitor: HostMonitor) -> asyncio.Task[None]:
    return asyncio.create_task(monitor.run())


async def test_stream_delivers_frames_stats_and_processes(sshd_factory, tmp_path: Path) -> None:
    inst = sshd_factory("box", gpus=4)
    rec = Recorder()
    mon = HostMonitor(ssh_host(inst, tmp_path), rec, refresh_seconds=0.2, stats_seconds=0.5)
    task = await _run(mon)
    try:
        await rec.wait(
            lambda: len(rec.of(GpuFrameReceived)) >= 5 and rec.of(HostStatsReceived) and rec.of(ProcessesReceived)
        )
        frames = rec.of(GpuFrameReceived)
        assert all(len(f.frame.gpus) == 4 for f in frames)
        assert [g.index for g in frames[-1].frame.gpus] == [0, 1, 2, 3]
        stats = [s.stats for s in rec.of(HostStatsReceived)]
        assert stats[-1].uptime_seconds is not None and stats[-1].mem_total_mib
        await rec.wait(lambda: any(s.stats.cpu_percent is not None for s in rec.of(HostStatsReceived)))
        assert rec.states()[:2] == [ConnState.CONNECTING, ConnState.ONLINE]
        # exactly two long-lived sessions on the instance: the nvidia-smi stream and the stats loop
        assert len([p for p in inst.session_pids() if p]) >= 2
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_driver_failure_mid_stream_becomes_gpu_error_and_recovers(
    sshd_factory, tmp_path: Path, monkeypatch
) -> None:
    import gpu_tui.services.monitor.host as monitor_mod

    monkeypatch.setattr(monitor_mod, "GPU_RETRY_SECONDS", 0.5)
    inst = sshd_factory("flaky-driver")
    rec = Recorder()
    task = await _run(HostMonitor(ssh_host(inst, tmp_path), rec, refresh_seconds=0.2, stats_seconds=1))
    try:
        await rec.wait(lambda: len(rec.of(GpuFrameReceived)) >= 2)
        inst.set_mode("driver_failed")
        await rec.wait(
            lambda: any(e.error and e.error.kind == GpuErrorKind.DRIVER_FAILED for e in rec.of(GpuErrorChanged))
        )
        assert mon_state(rec) == ConnState.ONLINE  # the host is still online; only its GPUs are unreadable
        inst.set_mode("ok")
        n = len(rec.of(GpuFrameReceived))
        await rec.wait(lambda: len(rec.of(GpuFrameReceived)) > n + 1)
        assert rec.of(GpuErrorChanged)[-1].error is None
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def mon_state(rec: Recorder) -> ConnState:
    return rec.states()[-1]


async def test_frozen_then_thawed_host_goes_offline_and_comes_back(sshd_factory, tmp_path: Path) -> None:
    inst = sshd_factory("frozen")
    rec = Recorder()
    mon = HostMonitor(ssh_host(inst, tmp_path, keepalive=(1.0, 2), timeout=2), rec, refresh_seconds=0.2)
    task = await _run(mon)
    try:
        await rec.wait(lambda: len(rec.of(GpuFrameReceived)) >= 2)
        inst.freeze()
        t0 = time.monotonic()
        await rec.wait(lambda: mon_state(rec) == ConnState.OFFLINE or ConnState.OFFLINE in rec.states()[2:])
        assert time.monotonic() - t0 < 8, "keepalive should notice a frozen link within its window"
        offline = [e for e in rec.of(StateChanged) if e.state == ConnState.OFFLINE][0]
        assert offline.retry_at is not None and offline.message
        inst.thaw()
        n = len(rec.of(GpuFrameReceived))
        mon.retry_now()
        await rec.wait(lambda: len(rec.of(GpuFrameReceived)) > n and mon_state(rec) == ConnState.ONLINE, timeout=20)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_restarted_sshd_reconnects(sshd_factory, tmp_path: Path) -> None:
    inst = sshd_factory("restarted")
    rec = Recorder()
    task = await _run(HostMonitor(ssh_host(inst, tmp_path), rec, refresh_seconds=0.2))
    try:
        await rec.wait(lambda: len(rec.of(GpuFrameReceived)) >= 2)
        inst.restart()
        await rec.wait(lambda: ConnState.OFFLINE in rec.states())
        n = len(rec.of(GpuFrameReceived))
        await rec.wait(lambda: len(rec.of(GpuFrameReceived)) > n and mon_state(rec) == ConnState.ONLINE, timeout=20)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def test_auth_failure_waits_for_the_user(sshd_instance, password_user, tmp_path: Path) -> None:
    rec = Recorder()
    host = ssh_host(sshd_instance, tmp_path, user=password_user.name, password="nope", use_key=False)
    task = await _run(HostMonitor(host, rec))
    try:
        await rec.wait(lambda: ConnState.AUTH_FAILED in rec.states())
        await asyncio.sleep(1.5)
        assert rec.states().count(ConnState.CONNECTING) == 1, "must not hammer a server that refused us"
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
