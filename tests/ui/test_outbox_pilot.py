"""A notice the instance could not send (its webhook refused it) is shown when the dashboard
connects: the instance's real sender on a real sshd, a loopback webhook answering 400."""

from __future__ import annotations

from pathlib import Path

import pytest
from notifyserver import notify_server
from pilothelp import make_app, state_of
from sshhelp import ssh_host
from waiting import wait_for

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.services.notify import instance as nr

pytestmark = pytest.mark.sshd


async def test_failed_instance_sends_are_shown_on_connect(sshd_instance, tmp_path: Path) -> None:
    inst = InstanceConfig(name=sshd_instance.name, host=sshd_instance.host, port=sshd_instance.port)
    with notify_server() as srv:
        srv.status = 400  # refused: the sender does not retry a 4xx
        host = ssh_host(sshd_instance, tmp_path)
        await host.connect()
        try:
            await nr.install_notify(host, inst, [f"json://127.0.0.1:{srv.port}/hook"], ["job_end"], "en")
            results = await nr.send_test_from_instance(host, inst)
        finally:
            await host.close()
        assert [r.ok for r in results] == [False]
    app = make_app(tmp_path, [sshd_instance])
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: state_of(app, sshd_instance.name) == "online")

        def shown() -> list[str]:
            return [n.message for n in app._notifications if "could not be sent from the instance" in n.message]

        await wait_for(pilot, lambda: shown(), what="the failed send, shown")
        text = shown()[0]
        assert text.startswith(f"{sshd_instance.name}: 1 notification could not be sent")
        assert "json://" in text and "/hook" in text
