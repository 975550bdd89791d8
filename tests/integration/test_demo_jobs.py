"""Jobs on `gpu-tui demo`'s simulated fleet, through the app's real SSH path and the real job
services (gpu_tui.services.jobs: runner, tail; conda): the demo answers gpu-tui's own job scripts
from an in-memory simulation (gpu_tui/demo/jobs.py). Nothing the user types is run.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from demohelp import demo_known_hosts as known_hosts
from demohelp import demo_ssh_host as ssh_host
from waiting import until

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.errors import InputError
from gpu_tui.core.jobs import JobInfo, JobRequest
from gpu_tui.core.trainlog.line import OOM
from gpu_tui.core.trainlog.read import lines_of
from gpu_tui.demo import DemoFleet, start_demo_fleet
from gpu_tui.demo.jobs import wants_oom
from gpu_tui.remote.ssh import SshHost
from gpu_tui.services.conda import conda_envs, find_conda, resolve_env
from gpu_tui.services.jobs import runner as jobsvc
from gpu_tui.services.jobs.tail import LogTail

TRAIN = "autodl-4090-train"
IDLE = "autodl-4090-idle"
H100 = "runpod-h100x8"  # no jobs, no runner installed yet
JOB_SECONDS = 3.0


@pytest.fixture
async def fleet(tmp_path: Path) -> AsyncIterator[DemoFleet]:
    f = await start_demo_fleet(workdir=tmp_path / "demo", seed=7, job_seconds=JOB_SECONDS)
    try:
        yield f
    finally:
        await f.close()


Connect = Callable[[str], Awaitable[tuple[SshHost, InstanceConfig]]]


@pytest.fixture
async def connect(fleet: DemoFleet, tmp_path: Path) -> AsyncIterator[Connect]:
    """Log in to an instance of `fleet` (closed before the fleet is)."""
    kh = known_hosts(tmp_path, fleet.known_hosts_text)
    hosts: list[SshHost] = []

    async def open_(name: str) -> tuple[SshHost, InstanceConfig]:
        host = ssh_host(fleet, name, kh)
        await host.connect()
        hosts.append(host)
        return host, fleet.settings.instance(name)

    yield open_
    for h in hosts:
        await h.close()


async def wait_for_state(host: SshHost, inst: InstanceConfig, job_id: str, timeout: float) -> JobInfo:
    """The job once it has left `running`."""

    async def ended() -> JobInfo | None:
        info = {i.id: i for i in await jobsvc.list_jobs(host, inst)}[job_id]
        return info if info.state != "running" else None

    return await until(ended, timeout, what=f"job {job_id} to end", step=0.2)


# ---------------------------------------------------------------------------- what the fleet starts with


async def test_the_training_box_has_a_job_running(fleet: DemoFleet, connect: Connect) -> None:
    host, inst = await connect(TRAIN)
    (job,) = await jobsvc.list_jobs(host, inst)
    assert job.state == "running" and job.failure is None
    assert job.name == "resnet50-cifar10"
    assert job.facts.alive and job.facts.exit_code is None and job.facts.pid
    assert job.facts.request["conda_env"] == "llm" and job.facts.request["cwd"] == "/root/autodl-tmp"
    assert job.progress_percent is not None and 0 <= job.progress_percent <= 100
    assert job.eta_seconds is not None
    assert job.last_loss is not None and 0.2 < job.last_loss < 2.5
    # it started ~86 minutes before the fleet
    assert job.facts.started_at is not None and 5000 < time.time() - job.facts.started_at < 5400
    assert (job.facts.log_bytes or 0) > 10_000
    assert await jobsvc.state_dir_path(host, inst) == "/root/.gpu-tui"

    size, text, whole = await jobsvc.read_log_window(host, inst, job.id, 4096)
    assert size >= job.facts.log_bytes and not whole  # type: ignore[operator]
    lines = lines_of(text, from_start=False)
    assert any(line.startswith("epoch ") and "val_loss" in line for line in lines)
    assert lines[-1].startswith("Epoch ") and "it/s" in lines[-1] and "loss=" in lines[-1]
    assert "\r" in text  # a tqdm bar, redrawn


async def test_the_idle_box_finished_its_job_and_the_others_have_none(fleet: DemoFleet, connect: Connect) -> None:
    host, inst = await connect(IDLE)
    (job,) = await jobsvc.list_jobs(host, inst)
    assert job.state == "succeeded" and job.failure is None and job.facts.exit_code == 0
    assert job.facts.finished_at and job.facts.started_at and job.facts.finished_at > job.facts.started_at
    assert 2400 < time.time() - job.facts.finished_at < 3600  # the box has idled ~50 min
    assert job.progress_percent == 100.0
    _, text, _ = await jobsvc.read_log_window(host, inst, job.id)
    assert "Training complete" in text

    host, inst = await connect(H100)
    assert await jobsvc.list_jobs(host, inst) == []
    assert await jobsvc.state_dir_path(host, inst) is None  # nothing written there yet


# ---------------------------------------------------------------------------- start, follow, finish


async def test_start_then_follow_the_log_to_the_end(fleet: DemoFleet, connect: Connect) -> None:
    host, inst = await connect(H100)
    req = await jobsvc.start_job(host, inst, JobRequest(id="", command="python train.py --epochs 3", name="quick"))
    assert req.id
    assert await jobsvc.state_dir_path(host, inst) == "/root/.gpu-tui"  # the runner was installed
    (job,) = await jobsvc.list_jobs(host, inst)
    assert job.id == req.id and job.name == "quick" and job.state == "running"
    assert job.facts.request["command"] == "python train.py --epochs 3"

    # what the log screen does: the window, then the follow from its end
    size, text, whole = await jobsvc.read_log_window(host, inst, req.id)
    assert whole and len(text.encode()) == size
    assert "not run" in text.splitlines()[0]  # the demo says so
    follower = LogTail(host, inst, req.id, offset=size, poll_seconds=0.2)
    got = bytearray()
    chunks = 0

    async def pump() -> None:
        nonlocal chunks
        async for chunk in follower.chunks():
            got.extend(chunk)
            chunks += 1

    task = asyncio.create_task(pump())
    try:
        done = await wait_for_state(host, inst, req.id, JOB_SECONDS + 10)
        assert done.state == "succeeded" and done.failure is None and done.facts.exit_code == 0
        final = done.facts.log_bytes
        deadline = time.monotonic() + 5
        while follower.offset < final and time.monotonic() < deadline:  # type: ignore[operator]
            await asyncio.sleep(0.05)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    full_size, full, whole = await jobsvc.read_log_window(host, inst, req.id, 1 << 24)
    assert whole and full_size == final == follower.offset == size + len(got)
    # nothing lost, nothing twice: the window plus the followed bytes are the log
    assert text.encode() + bytes(got) == full.encode()
    assert chunks >= 3  # it arrived as it was written, not at once
    lines = lines_of(full, from_start=True)
    assert [line.split(" |")[0] for line in lines if line.startswith("epoch ")] == ["epoch 1", "epoch 2", "epoch 3"]
    assert lines[-1].startswith("Training complete")
    losses = [float(line.split("| loss ")[1].split(" ")[0]) for line in lines if line.startswith("epoch ")]
    assert losses[0] > losses[-1]  # it learns
    assert done.last_loss == pytest.approx(losses[-1])


async def test_a_followed_log_resumes_after_the_instance_drops(fleet: DemoFleet, connect: Connect) -> None:
    host, inst = await connect(IDLE)
    req = await jobsvc.start_job(host, inst, JobRequest(id="", command="python train.py"))
    follower = LogTail(host, inst, req.id, offset=0, poll_seconds=0.2)
    got = bytearray()

    async def pump() -> None:
        async for chunk in follower.chunks():
            got.extend(chunk)

    task = asyncio.create_task(pump())
    server = fleet.servers[IDLE]
    try:
        await asyncio.sleep(0.8)
        await server.go_down()
        await asyncio.sleep(0.5)
        await server.come_up()
        deadline = time.monotonic() + JOB_SECONDS + 10
        while time.monotonic() < deadline:
            if host.connected:
                facts = {f.id: f for f in await jobsvc.list_facts(host, inst)}[req.id]
                if not facts.alive and follower.offset >= (facts.log_bytes or 0):
                    break
            await asyncio.sleep(0.2)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert follower.reconnects >= 1
    _, full, whole = await jobsvc.read_log_window(host, inst, req.id, 1 << 24)
    assert whole and bytes(got) == full.encode()


# ---------------------------------------------------------------------------- stop, failures, prune


async def test_stop_the_running_training_job(fleet: DemoFleet, connect: Connect) -> None:
    host, inst = await connect(TRAIN)
    (job,) = await jobsvc.list_jobs(host, inst)
    assert await jobsvc.stop_job(host, inst, job.id) == "stopped INT"
    (after,) = await jobsvc.list_jobs(host, inst)
    assert after.state == "stopped" and after.failure is None
    assert after.facts.stop_requested and after.facts.exit_code == 130 and not after.facts.alive
    assert after.facts.finished_at is not None
    _, text, _ = await jobsvc.read_log_window(host, inst, job.id, 2048)
    assert "KeyboardInterrupt" in text.splitlines()[-1]
    # a second stop: already over; an unknown job: the real script's answer
    assert await jobsvc.stop_job(host, inst, job.id) == "finished"
    with pytest.raises(Exception, match="no pid"):
        await jobsvc.stop_job(host, inst, "20260101-000000-abcd")
    # a stopped job's log no longer grows
    size = (await jobsvc.list_facts(host, inst))[0].log_bytes
    await asyncio.sleep(1.2)
    assert (await jobsvc.list_facts(host, inst))[0].log_bytes == size


async def test_oom_in_the_command_fails_the_job(fleet: DemoFleet, connect: Connect) -> None:
    host, inst = await connect(H100)
    req = await jobsvc.start_job(host, inst, JobRequest(id="", command="python train.py --oom", cwd="/workspace"))
    info = await wait_for_state(host, inst, req.id, JOB_SECONDS + 10)
    assert info.state == "failed" and info.failure == OOM and info.facts.exit_code == 1
    _, text, _ = await jobsvc.read_log_window(host, inst, req.id)
    assert "Traceback (most recent call last)" in text and "80" in text  # the H100's memory
    assert wants_oom("OOM=1 python x.py") and wants_oom("python oom.py") and wants_oom("train_oom")
    assert not wants_oom("python train.py --model bigscience/bloom-560m") and not wants_oom("zoom room")


async def test_prune_removes_finished_jobs_only(fleet: DemoFleet, connect: Connect) -> None:
    host, inst = await connect(TRAIN)
    (running,) = await jobsvc.list_jobs(host, inst)
    req = await jobsvc.start_job(host, inst, JobRequest(id="", command="python eval.py"))
    assert (await wait_for_state(host, inst, req.id, JOB_SECONDS + 10)).state == "succeeded"
    removed, freed = await jobsvc.prune_jobs(host, inst)
    assert removed == [req.id] and freed > 0
    assert [j.id for j in await jobsvc.list_jobs(host, inst)] == [running.id]


async def test_start_refusals(fleet: DemoFleet, connect: Connect) -> None:
    host, inst = await connect(H100)
    with pytest.raises(InputError, match="working directory /opt/nowhere does not exist"):
        await jobsvc.start_job(host, inst, JobRequest(id="", command="python train.py", cwd="/opt/nowhere"))
    # home-relative and the profile's workdir are there
    for cwd in ("~", "~/proj", "/workspace/run1"):
        req = await jobsvc.start_job(host, inst, JobRequest(id="", command="true", cwd=cwd))
        assert req.id
    assert len(await jobsvc.list_jobs(host, inst)) == 3


# ---------------------------------------------------------------------------- conda


async def test_conda_envs(fleet: DemoFleet, connect: Connect) -> None:
    host, _ = await connect(IDLE)
    assert await find_conda(host) == "/root/miniconda3/bin/conda"
    install = await conda_envs(host)
    assert install is not None and install.root == "/root/miniconda3"
    assert install.envs == {
        "base": "/root/miniconda3",
        "llm": "/root/miniconda3/envs/llm",
        "py311": "/root/miniconda3/envs/py311",
    }
    assert await resolve_env(host, "py311") == "/root/miniconda3/envs/py311"
    with pytest.raises(InputError, match="no conda env 'torch'"):
        await resolve_env(host, "torch")
    res = await host.run("/root/miniconda3/bin/conda env list")
    # the same conda as the sshd tier's fake: over a plain exec nothing is active, so no "*"
    assert res.ok and "llm" in res.stdout and "*" not in res.stdout


# ---------------------------------------------------------------------------- the same clock, the same jobs


async def test_a_fixed_clock_gives_the_same_jobs_and_logs(tmp_path: Path) -> None:
    clock = lambda: 1_800_000_000.0  # noqa: E731
    seen = []
    for run in range(2):
        async with await start_demo_fleet(workdir=tmp_path / str(run), seed=0, clock=clock) as f:
            kh = known_hosts(tmp_path, f.known_hosts_text)
            host = ssh_host(f, TRAIN, kh)
            await host.connect()
            try:
                inst = f.settings.instance(TRAIN)
                jobs = await jobsvc.list_jobs(host, inst)
                seen.append((jobs, await jobsvc.read_log_window(host, inst, jobs[0].id)))
            finally:
                await host.close()
    assert seen[0] == seen[1]
    assert seen[0][0][0].id.startswith("20270115-")  # 5160 s before the clock, in UTC


async def test_environment_check_answers_in_the_demo(fleet: DemoFleet, tmp_path: Path) -> None:
    from gpu_tui.core.env.check import build_checks
    from gpu_tui.services.envcheck import check_environment

    kh = known_hosts(tmp_path, fleet.known_hosts_text)
    results = {}
    for name in (TRAIN, "vast-3090-broken"):
        host = ssh_host(fleet, name, kh)
        await host.connect()
        try:
            facts = await check_environment(host, fleet.settings.instance(name))
        finally:
            await host.close()
        results[name] = {c.name: c for c in build_checks(facts)}
    train = results[TRAIN]
    assert train["nvidia-smi"].ok and "RTX 4090" in train["nvidia-smi"].detail
    assert train["conda"].ok and train["conda init"].ok and train["torch"].ok
    assert train["disk /root/autodl-tmp"].ok
    broken = results["vast-3090-broken"]
    assert not broken["nvidia-smi"].ok and not broken["torch"].ok
