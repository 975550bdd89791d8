"""Detached jobs on a real sshd: they outlive the session and sshd, run commands exactly once as
typed, record exit codes, stop in steps, and are found by id or name."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest
from sshhelp import ssh_host
from waiting import until

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.errors import InputError
from gpu_tui.core.jobs import JobFacts, JobRequest, new_job_id
from gpu_tui.remote.ssh import SshHost
from gpu_tui.services.jobs import runner as jobsvc

pytestmark = pytest.mark.sshd


def inst_of(sshd_instance, **kw) -> InstanceConfig:
    return InstanceConfig(name=sshd_instance.name, host=sshd_instance.host, port=sshd_instance.port, **kw)


async def connected(sshd_instance, tmp_path: Path) -> SshHost:
    host = ssh_host(sshd_instance, tmp_path)
    await host.connect()
    return host


async def wait_job(host, inst, job_id: str, pred, timeout: float = 30.0) -> JobFacts:
    seen: list[JobFacts | None] = [None]

    async def reached() -> JobFacts | None:
        seen[0] = {f.id: f for f in await jobsvc.list_facts(host, inst)}.get(job_id)
        return seen[0] if seen[0] is not None and pred(seen[0]) else None

    return await until(
        reached, timeout, what=f"job {job_id} to reach the condition", step=0.2, detail=lambda: f"its facts: {seen[0]}"
    )


def finished(f: JobFacts) -> bool:
    return f.exit_code is not None


def request(command: str, **kw) -> JobRequest:
    return JobRequest(id=new_job_id(), command=command, **kw)


async def test_command_runs_once_exactly_as_typed(sshd_instance, tmp_path: Path) -> None:
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    try:
        command = (
            "echo \"double 'single' $((1+2)) $(echo sub) `echo tick`\"; echo semi\n"
            "echo newline >> ran-count; printf '%s\\n' \"$MY_VAR\""
        )
        req = await jobsvc.start_job(host, inst, request(command, setenv=(("MY_VAR", "a b 'c' $HOME"),)))
        f = await wait_job(host, inst, req.id, finished)
        assert f.exit_code == 0 and f.started_at and f.finished_at
        size, text, whole = await jobsvc.read_log_window(host, inst, req.id)
        assert whole and size == len(text.encode())
        assert text.splitlines() == ["double 'single' 3 sub tick", "semi", "a b 'c' $HOME"]
        count = sshd_instance.home() / "ran-count"  # cwd defaults to the home directory
        assert count.read_text() == "newline\n"
        info = (await jobsvc.list_jobs(host, inst, with_logs=False))[-1]
        assert info.state == "succeeded" and info.facts.request["command"] == command
        assert info.facts.request["setenv_keys"] == ["MY_VAR"]  # the value stays out of the listing
    finally:
        await host.close()


async def test_job_outlives_the_session_and_an_sshd_restart(sshd_instance, tmp_path: Path) -> None:
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    req = await jobsvc.start_job(host, inst, request("sleep 3; echo survived"))
    await host.close()
    sshd_instance.stop(sessions=False)  # `systemctl restart ssh`: connections go, daemons stay
    sshd_instance.start()
    host = await connected(sshd_instance, tmp_path)
    try:
        f = await wait_job(host, inst, req.id, lambda f: True)
        assert f.alive and f.exit_code is None
        f = await wait_job(host, inst, req.id, finished)
        assert f.exit_code == 0
        _, text, _ = await jobsvc.read_log_window(host, inst, req.id)
        assert text == "survived\n"
    finally:
        await host.close()


async def test_exit_codes_and_failure_words(sshd_instance, tmp_path: Path) -> None:
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    try:
        bad = await jobsvc.start_job(host, inst, request("echo about to fail; exit 3"))
        killed = await jobsvc.start_job(host, inst, request("kill -9 $$"))
        # a Ctrl+C nobody caught (128 + SIGINT) that gpu-tui was not asked for: the user's own
        ctrl_c = await jobsvc.start_job(host, inst, request("kill -INT $$"))
        for job in (bad, killed, ctrl_c):
            await wait_job(host, inst, job.id, finished)
        infos = {i.id: i for i in await jobsvc.list_jobs(host, inst, with_logs=False)}
        info = infos[bad.id]
        assert (info.state, info.failure, info.facts.exit_code) == ("failed", "exit code 3", 3)
        assert (infos[killed.id].state, infos[killed.id].failure) == ("failed", "killed")
        assert (infos[ctrl_c.id].state, infos[ctrl_c.id].failure, infos[ctrl_c.id].facts.exit_code) == (
            "failed",
            "interrupted",
            130,
        )
    finally:
        await host.close()


async def test_stop_sends_int_first_then_escalates(sshd_instance, tmp_path: Path) -> None:
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    try:
        polite = await jobsvc.start_job(
            host, inst, request("trap 'echo saving checkpoint; exit 5' INT; while :; do sleep 0.1; done")
        )
        stubborn = await jobsvc.start_job(host, inst, request("trap '' INT TERM; while :; do sleep 0.1; done"))
        await wait_job(host, inst, polite.id, lambda f: f.pid is not None)
        await wait_job(host, inst, stubborn.id, lambda f: f.pid is not None)
        await asyncio.sleep(0.5)
        steps = (("INT", 3.0), ("TERM", 1.0), ("KILL", 3.0))  # generous: CI machines are busy
        assert await jobsvc.stop_job(host, inst, polite.id, steps=steps) == "stopped INT"
        assert await jobsvc.stop_job(host, inst, stubborn.id, steps=steps) == "stopped KILL"
        infos = {i.id: i for i in await jobsvc.list_jobs(host, inst, with_logs=False)}
        assert infos[polite.id].state == "stopped" and infos[polite.id].facts.exit_code == 5
        assert infos[stubborn.id].state == "stopped" and infos[stubborn.id].facts.exit_code == 137
        _, text, _ = await jobsvc.read_log_window(host, inst, polite.id)
        assert "saving checkpoint" in text
        assert await jobsvc.stop_job(host, inst, polite.id) == "finished"
    finally:
        await host.close()


async def test_refused_before_anything_runs(sshd_instance, tmp_path: Path) -> None:
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    try:
        with pytest.raises(InputError, match="empty"):
            await jobsvc.start_job(host, inst, request("   "))
        with pytest.raises(InputError, match="does not exist"):
            await jobsvc.start_job(host, inst, request("echo hi", cwd="/no/such/dir"))
        with pytest.raises(InputError, match="not a valid environment variable"):
            await jobsvc.start_job(host, inst, request("echo hi", setenv=(("1BAD", "x"),)))
        with pytest.raises(InputError, match="job name"):
            await jobsvc.start_job(host, inst, request("echo hi", name="has space"))
        assert await jobsvc.list_facts(host, inst) == []
    finally:
        await host.close()


async def test_find_by_name_takes_the_newest_and_prune_removes_finished(sshd_instance, tmp_path: Path) -> None:
    inst = inst_of(sshd_instance, state_dir="~/data disk/state")  # a state dir with a space
    host = await connected(sshd_instance, tmp_path)
    try:
        first = await jobsvc.start_job(host, inst, request("echo one", name="train"))
        await asyncio.sleep(1.1)  # ids sort by second
        second = await jobsvc.start_job(host, inst, request("sleep 30", name="train"))
        assert (await jobsvc.find_job(host, inst, "train")).id == second.id
        assert (await jobsvc.find_job(host, inst, first.id)).id == first.id
        with pytest.raises(InputError, match="no job 'nope'"):
            await jobsvc.find_job(host, inst, "nope")
        await wait_job(host, inst, first.id, finished)
        removed, freed = await jobsvc.prune_jobs(host, inst)
        assert removed == [first.id] and freed == len("one\n")
        assert [f.id for f in await jobsvc.list_facts(host, inst)] == [second.id]
        assert (sshd_instance.home() / "data disk" / "state" / "jobs" / second.id / "log").exists()
        await jobsvc.stop_job(host, inst, second.id, steps=(("KILL", 2.0),))
    finally:
        await host.close()


async def test_tmux_mode_runs_in_a_session_and_keeps_the_exit_code(sshd_instance, tmp_path: Path) -> None:
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    try:
        req = await jobsvc.start_job(host, inst, request("echo in tmux; sleep 1; exit 4", tmux=True))
        res = await host.run(f"tmux has-session -t gpu-tui-{req.id}")
        d = sshd_instance.home() / ".gpu-tui" / "jobs" / req.id
        assert res.ok, (res.stderr, sorted(p.name for p in d.iterdir()), (d / "runner.log").read_text())
        f = await wait_job(host, inst, req.id, finished)
        assert f.exit_code == 4
        _, text, _ = await jobsvc.read_log_window(host, inst, req.id)
        assert "in tmux" in text
    finally:
        await host.close()


async def test_a_job_killed_with_the_instance_shows_as_lost(sshd_instance, tmp_path: Path) -> None:
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    req = await jobsvc.start_job(host, inst, request("sleep 60"))
    await wait_job(host, inst, req.id, lambda f: f.pid is not None)
    await host.close()
    sshd_instance.restart()  # takes every process the sessions started with it, runner included
    host = await connected(sshd_instance, tmp_path)
    try:
        (info,) = await jobsvc.list_jobs(host, inst, with_logs=False)
        assert info.state == "failed" and info.failure is not None and info.failure.startswith("lost")
    finally:
        await host.close()


async def test_log_follow_resumes_after_a_dropped_link_without_loss_or_repeats(sshd_instance, tmp_path: Path) -> None:
    import os
    import signal

    from gpu_tui.services.jobs.follow import LogFollower, LogUpdate

    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    try:
        req = await jobsvc.start_job(
            host, inst, request("i=0; while [ $i -lt 300 ]; do i=$((i+1)); echo line $i; sleep 0.01; done")
        )
        follower = LogFollower(host, inst, req.id, poll_seconds=0.5)
        got: list[str] = []
        updates: list[LogUpdate] = []

        async def follow() -> None:
            dropped = False
            async for update in follower.updates(until_finished=True):
                updates.append(update)
                got.extend(update.lines)
                if len(got) >= 40 and not dropped:
                    dropped = True
                    for pid in sshd_instance.session_pids():  # the link drops; the job lives on
                        with contextlib.suppress(ProcessLookupError):  # a command that just ended
                            os.kill(pid, signal.SIGKILL)

        try:
            await asyncio.wait_for(follow(), 60)
        except TimeoutError:
            raise AssertionError(
                f"follow hung: {len(got)} lines, offset {follower.offset}, "
                f"{follower.reconnects} reconnects, connected={host.connected}"
            ) from None
        assert got == [f"line {i}" for i in range(1, 301)]
        assert updates[-1].ended and not any(u.ended for u in updates[:-1])
        assert updates[-1].lines_seen == 300 and updates[-1].live == ()
        assert follower.reconnects >= 1
        f = await wait_job(host, inst, req.id, finished)
        assert follower.offset == f.log_bytes
    finally:
        await host.close()


async def test_what_the_job_writes_while_the_reader_is_busy_comes_as_one_parsed_update(
    sshd_instance, tmp_path: Path
) -> None:
    """The follower reads on while its consumer is busy, and hands everything that came
    meanwhile over as one update: the lines in order, the bar being redrawn, the numbers."""
    from gpu_tui.services.jobs.follow import LogFollower

    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    gates = [sshd_instance.home() / f"go{n}-{tmp_path.name}" for n in (1, 2)]
    wait = "while [ ! -f ~/{} ]; do sleep 0.05; done; "
    try:
        req = await jobsvc.start_job(
            host,
            inst,
            request(
                wait.format(gates[0].name)
                + 'echo "step 1 loss 0.501"; '
                + wait.format(gates[1].name)
                + 'i=1; while [ $i -lt 200 ]; do i=$((i+1)); echo "step $i loss 0.$((500 + i))"; done; '
                "printf '\\r 50%%|#####     | 200/400 [00:01<00:01, 9.90it/s]'"
            ),
        )
        follower = LogFollower(host, inst, req.id, poll_seconds=0.2)
        updates = follower.updates()
        first = await anext(updates)  # the window: the job waits for the gate, so it is empty
        assert first.lines == () and first.live == () and first.log_bytes == 0 and first.progress is None
        gates[0].touch()
        assert (await anext(updates)).lines == ("step 1 loss 0.501",)
        gates[1].touch()
        f = await wait_job(host, inst, req.id, finished)
        await until(lambda: follower.offset >= (f.log_bytes or 0), 30, what="every byte received")
        rest = await anext(updates)  # all of what came while this test was busy, in one
        await updates.aclose()
        assert list(rest.lines) == [f"step {i} loss 0.{500 + i}" for i in range(2, 201)]
        assert rest.live == (" 50%|#####     | 200/400 [00:01<00:01, 9.90it/s]",)
        assert rest.last_loss == 0.7 and rest.progress is not None and rest.progress.bar_step == 200
        assert len(rest.loss_points) == 200 and rest.loss_axis == "step" and rest.failure is None
        assert rest.log_bytes == f.log_bytes and rest.lines_seen == 200
    finally:
        for gate in gates:
            gate.unlink(missing_ok=True)
        await host.close()
