"""The dashboard shows an armed autostop watchdog: a mark on the row and the countdown in the
host panel, read from the instance (the watchdog runs there, not in gpu-tui)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pilothelp import make_app, state_of
from sshhelp import ssh_host
from waiting import until, wait_for

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.services import autostop as svc

pytestmark = pytest.mark.sshd


async def test_armed_watchdog_is_shown_with_its_countdown(sshd_instance, tmp_path: Path) -> None:
    sshd_instance.set_utilization(0)
    inst = InstanceConfig(name=sshd_instance.name, host=sshd_instance.host, port=sshd_instance.port)
    (tmp_path / "arm").mkdir()
    host = ssh_host(sshd_instance, tmp_path / "arm")
    await host.connect()
    try:
        await svc.arm(host, inst, svc.AutostopPlan(idle_seconds=3600, check_seconds=1, cpu_busy_cores=1000))

        async def idle() -> bool:
            return (await svc.read_status(host, inst)).state == "idle"

        await until(idle, what="the watchdog's first idle decision", step=0.1)
    finally:
        await host.close()
    app = make_app(tmp_path, [sshd_instance])
    async with app.run_test(size=(100, 30)) as pilot:
        name = sshd_instance.name
        await wait_for(pilot, lambda: state_of(app, name) == "online")
        await wait_for(pilot, lambda: app.fleet.views[name].autostop is not None)  # read every 15 s
        await wait_for(pilot, lambda: "⏻" in app.dashboard.table._lines[name].plain)
        panel = app.dashboard.host_panel.render_view(app.fleet.views[name], app.clock()).plain
        assert "autostop in 59m" in panel or "autostop in 1h" in panel, panel
    # disarm (the watchdog is a detached process on the instance)
    host = ssh_host(sshd_instance, tmp_path / "arm")
    await host.connect()
    try:
        await svc.cancel(host, inst)
    finally:
        await host.close()
