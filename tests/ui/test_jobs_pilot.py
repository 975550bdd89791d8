"""Jobs from the dashboard (Textual Pilot) against a real sshd: the run form, the log screen,
stop with confirmation, and the alert when a job ends."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from pilothelp import make_app, state_of
from textual.widgets import Input, Log, Select, Static
from waiting import wait_for

from gpu_tui.core.trainlog.hints import hint_for
from gpu_tui.ui.screens.confirm import ConfirmScreen
from gpu_tui.ui.screens.job_log import JobLogScreen
from gpu_tui.ui.screens.run_job import NO_ENV, RunJobScreen

pytestmark = pytest.mark.sshd


def jobs_of(app, name: str):
    return app.fleet.views[name].jobs


async def fill_and_start(pilot, app, command: str, **fields: str) -> None:
    await pilot.press("r")
    assert isinstance(app.screen, RunJobScreen)
    form = app.screen
    form.query_one("#command", Input).value = command
    for field, value in fields.items():
        form.query_one(f"#{field}", Input).value = value
    await pilot.click("#start")


async def test_run_form_log_screen_and_the_end_alert(sshd_instance, tmp_path: Path) -> None:
    app = make_app(tmp_path, [sshd_instance])
    bells: list[float] = []
    async with app.run_test(size=(100, 32)) as pilot:
        app.bell = lambda: bells.append(time.monotonic())  # type: ignore[method-assign]
        name = sshd_instance.name
        await wait_for(pilot, lambda: state_of(app, name) == "online")
        assert app.dashboard.check_action("logs", ()) is None  # no jobs yet: shown disabled
        await pilot.press("r")
        form = app.screen
        assert isinstance(form, RunJobScreen)
        select = form.query_one("#env", Select)
        await wait_for(pilot, lambda: len(select._options) > 1)  # the instance's conda envs arrived
        assert {"base", "llm", "py311"} <= {value for _, value in select._options if value != NO_ENV}
        select.value = "llm"
        form.query_one(
            "#command", Input
        ).value = 'for i in 1 2 3 4 5 6; do echo "step $i loss 0.$i $CONDA_DEFAULT_ENV"; sleep 0.4; done'
        form.query_one("#name", Input).value = "train"
        await pilot.click("#start")
        await wait_for(pilot, lambda: not isinstance(app.screen, RunJobScreen))
        await wait_for(pilot, lambda: any(j.name == "train" for j in jobs_of(app, name)))

        await pilot.press("l")
        screen = app.screen
        assert isinstance(screen, JobLogScreen)
        log = screen.query_one(Log)
        await wait_for(pilot, lambda: "step 6 loss 0.6 llm" in "\n".join(log.lines))
        steps = [line for line in log.lines if line.startswith("step")]
        assert steps == [f"step {i} loss 0.{i} llm" for i in range(1, 7)]
        await wait_for(pilot, lambda: "loss 0.6" in str(screen.query_one("#head", Static).render()))

        await wait_for(pilot, lambda: jobs_of(app, name)[-1].state == "succeeded")
        await wait_for(pilot, lambda: bells)  # finished: bell and notification
        await pilot.press("escape")
        panel = app.dashboard.host_panel.render_view(app.dashboard.selected()).plain
        assert "train  succeeded" in panel


async def test_refusal_stays_in_the_form_and_stop_asks_first(sshd_instance, tmp_path: Path) -> None:
    app = make_app(tmp_path, [sshd_instance])
    async with app.run_test(size=(100, 32)) as pilot:
        name = sshd_instance.name
        await wait_for(pilot, lambda: state_of(app, name) == "online")
        await fill_and_start(pilot, app, "echo hi", cwd="/no/such/dir")
        form = app.screen
        assert isinstance(form, RunJobScreen)
        await wait_for(pilot, lambda: "does not exist" in str(form.query_one("#error", Static).render()))
        assert jobs_of(app, name) == ()
        await pilot.press("escape")

        await fill_and_start(pilot, app, "trap 'echo bye; exit 0' INT; while :; do sleep 0.1; done", name="loop")
        await wait_for(pilot, lambda: any(j.state == "running" for j in jobs_of(app, name)))
        # the watch loop can list the job before the form has closed itself
        await wait_for(pilot, lambda: not isinstance(app.screen, RunJobScreen))
        assert app.dashboard.check_action("stop_job", ()) is True
        await pilot.press("x")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")  # refusing leaves it running
        await pilot.pause(0.3)
        assert jobs_of(app, name)[-1].state == "running"
        await pilot.press("x")
        await pilot.press("y")
        await wait_for(pilot, lambda: jobs_of(app, name)[-1].state == "stopped")
        assert app.dashboard.check_action("stop_job", ()) is None


async def test_environment_check_screen(sshd_instance, tmp_path: Path) -> None:
    from gpu_tui.ui.screens.env_check import EnvCheckScreen

    app = make_app(tmp_path, [sshd_instance])
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_for(pilot, lambda: state_of(app, sshd_instance.name) == "online")
        await pilot.press("c")
        screen = app.screen
        assert isinstance(screen, EnvCheckScreen)
        text = lambda: str(screen.query_one("#checks", Static).render())  # noqa: E731
        await wait_for(pilot, lambda: "to fix" in text(), timeout=60)
        assert "nvidia-smi" in text() and "conda init bash" in text()
        await pilot.press("escape")
        assert not isinstance(app.screen, EnvCheckScreen)


async def test_the_log_screen_is_kept_stops_reading_when_closed_and_shows_the_next_job(
    sshd_instance, tmp_path: Path
) -> None:
    """`l` pushes one kept log screen: closed, its workers stop (no log followed off screen);
    opened on the newer job, it shows that job's log only. The whole run's series is kept in the
    cache dir."""
    app = make_app(tmp_path, [sshd_instance])
    async with app.run_test(size=(100, 32)) as pilot:
        name = sshd_instance.name
        await wait_for(pilot, lambda: state_of(app, name) == "online")
        await fill_and_start(pilot, app, "echo first-job-line; sleep 20", name="first")
        await wait_for(pilot, lambda: any(j.name == "first" and j.state == "running" for j in jobs_of(app, name)))
        await pilot.press("l")
        screen = app.screen
        assert isinstance(screen, JobLogScreen)
        await wait_for(pilot, lambda: "first-job-line" in screen.query_one(Log).lines)
        # the whole run's series is kept here, as `metrics` keeps it: the next open fetches what was added
        cache, first = app.opened.series_cache, next(j for j in jobs_of(app, name) if j.name == "first")
        assert cache is not None and cache.root == tmp_path / "data" / "cache" / "series"
        copy = cache.path(app.fleet.views[name].config, first.id)
        await wait_for(pilot, copy.exists, what="the series copy")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not any(w.is_running for w in screen.workers if w.node is screen))

        await fill_and_start(pilot, app, "echo second-job-line; sleep 20", name="second")
        await wait_for(pilot, lambda: any(j.name == "second" and j.state == "running" for j in jobs_of(app, name)))
        await pilot.press("l")
        assert app.screen is screen
        second = next(j for j in jobs_of(app, name) if j.name == "second")
        assert screen.job.id == second.id
        await wait_for(pilot, lambda: "second-job-line" in screen.query_one(Log).lines)
        assert "first-job-line" not in screen.query_one(Log).lines
        assert screen.query_one("#jobs", Select).value == second.id


async def test_a_failed_jobs_log_screen_says_what_to_do(sshd_instance, tmp_path: Path) -> None:
    """The head names the failure the log shows and, on a line of its own, what to do about it."""
    app = make_app(tmp_path, [sshd_instance])
    async with app.run_test(size=(100, 32)) as pilot:
        name = sshd_instance.name
        await wait_for(pilot, lambda: state_of(app, name) == "online")
        oom = (
            "echo 'loading Qwen/Qwen2.5-7B-Instruct'; echo 'torch.OutOfMemoryError: CUDA out of memory. Tried to"
            " allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.20 GiB is free.'; exit 1"
        )
        await fill_and_start(pilot, app, oom, name="oom")
        await wait_for(pilot, lambda: any(j.name == "oom" and j.state == "failed" for j in jobs_of(app, name)))
        await pilot.press("l")
        screen = app.screen
        assert isinstance(screen, JobLogScreen)
        head = screen.query_one("#head", Static)
        await wait_for(pilot, lambda: "CUDA out of memory" in str(head.render()), what="the failure in the head")
        hint = hint_for("CUDA out of memory")
        assert hint is not None
        await wait_for(pilot, lambda: hint in str(head.render()).replace("\n", " "), what="the hint")
        # and what `gpu-tui fit` says of the model the job named, on the line after it
        await wait_for(pilot, lambda: "`gpu-tui fit`: qwen2.5-7b needs about" in str(head.render()), what="fit's line")
