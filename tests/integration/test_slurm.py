"""Jobs through SLURM (issue 18), end to end: the CLI over real sshd to a login node of a real
one-node cluster (tests/slurmhelp.py), sbatch/squeue/scancel doing the work.

The cluster has two `gpu` gres and as many CPUs as this machine; a job asks for one CPU."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from slurmhelp import queue_states
from sshhelp import run_gpu_tui
from waiting import until_sync

pytestmark = pytest.mark.sshd
CLUSTER = pytest.mark.usefixtures("slurm_cluster")

SLURM = 'scheduler = "slurm"\n'


def cli(tmp: Path, inst, *args: str, extra: str = SLURM):
    return run_gpu_tui(tmp, [inst], *args, config_extra=extra, timeout=90)


def jobs(tmp: Path, inst) -> dict[str, dict]:
    res = cli(tmp, inst, "jobs", inst.name, "--json")
    assert res.returncode == 0, res.stderr
    return {j["id"]: j for j in json.loads(res.stdout)["jobs"]}


def wait_job(tmp: Path, inst, job_id: str, states: set[str], timeout: float = 60, where=lambda _job: True) -> dict:
    seen: list[dict | None] = [None]

    def reached() -> dict | None:
        seen[0] = jobs(tmp, inst).get(job_id)
        return seen[0] if seen[0] is not None and seen[0]["state"] in states and where(seen[0]) else None

    return until_sync(
        reached,
        timeout,
        what=f"job {job_id} in {sorted(states)}",
        step=0.3,
        detail=lambda: f"the job: {seen[0]}; queue: {queue_states()}",
    )


def submit(tmp: Path, inst, *args: str, extra: str = SLURM) -> str:
    res = cli(tmp, inst, "run", inst.name, *args, extra=extra)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip()


@CLUSTER
def test_submit_runs_on_the_node_with_its_gpus_and_reads_the_log(sshd_instance, tmp_path: Path) -> None:
    job_id = submit(
        tmp_path,
        sshd_instance,
        "--gpus",
        "2",
        "--name",
        "train",
        "--",
        'echo "gpus=$CUDA_VISIBLE_DEVICES slurm=$SLURM_JOB_ID"; for i in 1 2 3; do '
        'echo "step $i/3 | loss 0.$((4 - i))"; done',
    )
    job = wait_job(tmp_path, sshd_instance, job_id, {"succeeded", "failed"})
    assert job["state"] == "succeeded", job
    assert job["scheduler_job_id"] and job["scheduler_job_id"].isdigit()
    assert job["node"] and job["reason"] is None
    assert job["last_loss"] == pytest.approx(0.1)
    assert job["progress"]["step"] == 3 and job["progress"]["steps"] == 3
    logs = cli(tmp_path, sshd_instance, "logs", sshd_instance.name, "train", "-n", "10")
    # SLURM's own allocation: both stand-in GPUs, and the batch job's id
    assert f"gpus=0,1 slurm={job['scheduler_job_id']}" in logs.stdout


@CLUSTER
def test_pending_with_reason_then_stop_both(sshd_instance, tmp_path: Path) -> None:
    holder = submit(
        tmp_path,
        sshd_instance,
        "--gpus",
        "2",
        "--name",
        "holder",
        "--",
        'python3 -c "import signal, sys, time\n'
        "def bye(*_):\n    print('checkpoint saved', flush=True); sys.exit(3)\n"
        "signal.signal(signal.SIGINT, bye)\nprint('training', flush=True)\ntime.sleep(600)\"",
    )
    wait_job(tmp_path, sshd_instance, holder, {"running"})
    waiter = submit(tmp_path, sshd_instance, "--gpus", "1", "--name", "waiter", "--", "echo never")
    # SLURM says `None` until its scheduler has looked at the job (a moment after sbatch)
    job = wait_job(tmp_path, sshd_instance, waiter, {"pending"}, where=lambda j: j["reason"] is not None)
    assert job["reason"] == "Resources" and job["node"] is None

    table = cli(tmp_path, sshd_instance, "jobs", sshd_instance.name)
    assert "pending (Resources)" in table.stdout

    stop = cli(tmp_path, sshd_instance, "stop", sshd_instance.name, "waiter")
    assert stop.returncode == 0, stop.stderr
    assert wait_job(tmp_path, sshd_instance, waiter, {"stopped", "failed"})["state"] == "stopped"

    stop = cli(tmp_path, sshd_instance, "stop", sshd_instance.name, "holder")
    assert stop.returncode == 0, stop.stderr
    job = wait_job(tmp_path, sshd_instance, holder, {"stopped", "failed", "succeeded"})
    assert job["state"] == "stopped"
    logs = cli(tmp_path, sshd_instance, "logs", sshd_instance.name, "holder")
    assert "checkpoint saved" in logs.stdout  # SIGINT reached the job first


@CLUSTER
def test_failure_reason_from_the_log(sshd_instance, tmp_path: Path) -> None:
    job_id = submit(tmp_path, sshd_instance, "--", "python3", "-c", "import torch_missing_module_xyz")
    job = wait_job(tmp_path, sshd_instance, job_id, {"failed", "succeeded"})
    assert (job["state"], job["exit_code"]) == ("failed", 1)
    assert job["failure"] == "ModuleNotFoundError: torch_missing_module_xyz"


@CLUSTER
def test_slurm_refusals_are_one_line_with_its_reason(sshd_instance, tmp_path: Path) -> None:
    res = cli(tmp_path, sshd_instance, "run", sshd_instance.name, "--partition", "nosuchpart", "--", "true")
    assert res.returncode == 3
    assert "SLURM refused the job" in res.stderr and "invalid partition" in res.stderr.lower()
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1

    res = cli(tmp_path, sshd_instance, "run", sshd_instance.name, "--gpus", "8", "--", "true")
    assert res.returncode == 3 and "SLURM refused the job" in res.stderr
    assert "node configuration is not available" in res.stderr

    res = cli(tmp_path, sshd_instance, "run", sshd_instance.name, "--time", "four hours", "--", "true")
    assert res.returncode == 2 and "--time" in res.stderr
    assert jobs(tmp_path, sshd_instance) == {}  # nothing was left behind


@CLUSTER
def test_config_defaults_apply(sshd_instance, tmp_path: Path) -> None:
    extra = SLURM + 'slurm = { partition = "gpu", time = "00:30:00", extra = ["--comment=from-config"] }\n'
    job_id = submit(tmp_path, sshd_instance, "--", "echo part=$SLURM_JOB_PARTITION", extra=extra)
    job = wait_job(tmp_path, sshd_instance, job_id, {"succeeded", "failed"}, timeout=60)
    assert job["state"] == "succeeded"
    logs = cli(tmp_path, sshd_instance, "logs", sshd_instance.name, job_id, extra=extra)
    assert "part=gpu" in logs.stdout


def test_plain_instance_gpus_and_refusals(sshd_factory, tmp_path: Path) -> None:
    inst = sshd_factory("plain", gpus=4)
    job_id = submit(tmp_path, inst, "--gpus", "2", "--", 'echo "cvd=$CUDA_VISIBLE_DEVICES"', extra="")
    until_sync(
        lambda: "cvd=" in cli(tmp_path, inst, "logs", inst.name, job_id, extra="").stdout, 30, what="the job's output"
    )
    out = cli(tmp_path, inst, "logs", inst.name, job_id, extra="").stdout
    picked = out.split("cvd=", 1)[1].split()[0].split(",")
    assert len(picked) == 2 and all(p.isdigit() and int(p) < 4 for p in picked)

    res = cli(tmp_path, inst, "run", inst.name, "--gpus", "9", "--", "true", extra="")
    assert res.returncode == 2 and "has 4 GPUs" in res.stderr
    res = cli(tmp_path, inst, "run", inst.name, "--partition", "gpu", "--", "true", extra="")
    assert res.returncode == 2 and 'scheduler = "slurm"' in res.stderr


@CLUSTER
async def test_dashboard_gpus_come_from_inside_the_running_jobs_allocation(
    sshd_factory, tmp_path: Path, monkeypatch
) -> None:
    import asyncio

    from sshhelp import ssh_host
    from waiting import until

    from gpu_tui.config.settings import InstanceConfig
    from gpu_tui.core.jobs import JobRequest, RunAsk, new_job_id
    from gpu_tui.core.models import GpuErrorKind
    from gpu_tui.services.events import GpuErrorChanged, GpuFrameReceived
    from gpu_tui.services.jobs import runner as jobsvc
    from gpu_tui.services.jobs import slurm
    from gpu_tui.services.monitor import host as monitor_mod

    monkeypatch.setattr(monitor_mod, "GPU_RETRY_SECONDS", 0.3)
    inst = sshd_factory("login", gpus=2)
    host = ssh_host(inst, tmp_path)
    cfg = InstanceConfig(name="login", host=inst.host, port=inst.port, scheduler="slurm")
    events: list = []
    mon = monitor_mod.HostMonitor(
        host, events.append, refresh_seconds=0.3, stats_seconds=5, gpu_scope=slurm.gpu_scope(host)
    )
    task = asyncio.create_task(mon.run())
    try:

        def no_job() -> bool:
            return any(
                isinstance(e, GpuErrorChanged) and e.error and e.error.kind is GpuErrorKind.NO_JOB for e in events
            )

        await until(no_job, 30, what="the no-running-job note")
        assert not any(isinstance(e, GpuFrameReceived) for e in events)

        await host.connect()
        req = await jobsvc.start_job(
            host, cfg, JobRequest(id=new_job_id(), command="sleep 120", name="gpuwatch"), RunAsk(gpus=1)
        )
        await until(lambda: any(isinstance(e, GpuFrameReceived) for e in events), 60, what="a frame via srun")
        # nvidia-smi runs as a step of that job (srun --overlap), not on the login node
        steps = subprocess.run(["squeue", "-s", "-h", "-o", "%i %j"], capture_output=True, text=True).stdout
        facts = {f.id: f for f in await jobsvc.list_facts(host, cfg)}
        job = facts[req.id].scheduler_job_id
        assert any(line.startswith(f"{job}.") and line.endswith(" nvidia-smi") for line in steps.splitlines()), steps
        await jobsvc.stop_job(host, cfg, req.id)
        await until(
            lambda: (
                isinstance(events[-1], GpuErrorChanged)
                and events[-1].error is not None
                and events[-1].error.kind is GpuErrorKind.NO_JOB
            ),
            60,
            what="the note again once it ended",
        )
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await host.close()
