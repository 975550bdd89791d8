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

from gpu_tui.ui.screens.confirm import ConfirmScreen
from gpu_tui.ui.screens.pick import PickScreen
from gpu_tui.ui.widgets.host_panel import HostPanel

pytestmark = pytest.mark.sshd

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
