"""A GBK job log in the dashboard (Textual Pilot, real sshd): the watch loop's log ends give the
job's failure, the log screen's window and its follow show the Chinese lines as written. The log
is a real one re-encoded to GBK (tests/data/logs/bytes/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pilothelp import make_app, state_of
from sshhelp import run_gpu_tui
from textual.widgets import Log
from waiting import wait_for

from gpu_tui.services.monitor.watchloop import WatchMode
from gpu_tui.ui.screens.job_log import JobLogScreen

pytestmark = pytest.mark.sshd

GBK_LOG = Path(__file__).parent.parent / "data" / "logs" / "bytes" / "yolov7-nccl-abort-zh.gbk.log"


async def test_a_gbk_job_in_the_watch_loop_and_the_log_screen(sshd_instance, tmp_path: Path) -> None:
    data = GBK_LOG.read_bytes()
    split = data.index("已放弃".encode("gbk")) + 3  # the follow starts inside 放
    home = sshd_instance.home()
    (home / "part1").write_bytes(data[:split])
    (home / "part2").write_bytes(data[split:] + b"\n")
    cli_dir = tmp_path / "cli"
    cli_dir.mkdir()
    started = run_gpu_tui(
        cli_dir,
        [sshd_instance],
        "run",
        sshd_instance.name,
        "--",
        "cat ~/part1; while [ ! -f ~/go ]; do sleep 0.1; done; cat ~/part2; exit 134",
    )
    assert started.returncode == 0, started.stderr
    job_id = started.stdout.strip()

    app = make_app(tmp_path, [sshd_instance])
    async with app.run_test(size=(100, 32)) as pilot:
        name = sshd_instance.name
        await wait_for(pilot, lambda: state_of(app, name) == "online")
        await wait_for(pilot, lambda: app.fleet.loops[name].mode is WatchMode.LIVE, what="the watch loop")
        await wait_for(pilot, lambda: any(j.id == job_id for j in app.fleet.views[name].jobs))
        await pilot.press("l")
        screen = app.screen
        assert isinstance(screen, JobLogScreen)
        log = screen.query_one(Log)
        await wait_for(pilot, lambda: any("NCCL Error 1" in line for line in log.lines), what="the window")
        (home / "go").touch()
        await wait_for(pilot, lambda: "已放弃 (核心已转储)" in log.lines, what="the followed GBK line")
        job = None

        def ended():
            nonlocal job
            job = next(j for j in app.fleet.views[name].jobs if j.id == job_id)
            return job.state == "failed"

        await wait_for(pilot, ended, what="the job's end from the watch loop")
        assert job is not None and job.failure == "NCCL error: unhandled cuda error"
