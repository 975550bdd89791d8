#!/usr/bin/env python3
"""Jobs through SLURM (issue 18) against a REAL one-node cluster (.ci/slurm-up) and a real sshd
login node (tests/sshd.py): what it takes for a submitted job to be visible, and what watching a
queue of 200 jobs costs the login node and the client.

Figures:
- submit-to-visible: from calling `start_job` (sbatch over SSH) until `list_jobs` shows the job
  with SLURM's state (median and max of `--submits`), and until it is `running`;
- with `--queued` jobs waiting (one job holds both GPUs, the rest want one each): one `jobs`
  listing's wall time, the client's CPU, the machine's CPU besides the client (login node +
  slurmctld + sshd: they share this machine), slurmctld's own CPU, and the processes created
  (the kernel's last-pid counter; the machine is otherwise quiet), each per listing and per
  minute at the dashboard's poll rate (services/jobs/watch.JOB_POLL_SECONDS).

Needs root, sshd and a cluster. From the repository root::

    sudo bash .ci/slurm-up
    .venv/bin/python benchmarks/bench_slurm.py --queued 200
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
for p in (str(REPO / "tests"), str(REPO)):
    if p not in sys.path:
        sys.path.insert(0, p)

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import sshd as sshd_lib  # noqa: E402
from sshhelp import ssh_host  # noqa: E402

from gpu_tui.config.settings import InstanceConfig  # noqa: E402
from gpu_tui.core.jobs import JobRequest, new_job_id  # noqa: E402
from gpu_tui.services.jobs import runner as jobsvc  # noqa: E402
from gpu_tui.services.jobs import slurm  # noqa: E402
from gpu_tui.services.jobs.watch import JOB_POLL_SECONDS  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")


def machine_cpu_s() -> float:
    """Busy CPU-seconds of the whole machine so far (/proc/stat: all but idle and iowait)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / CLK_TCK


def last_pid() -> int:
    return int(Path("/proc/loadavg").read_text().split()[-1])


def pid_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def slurmctld_pid() -> int:
    return int(subprocess.run(["pgrep", "-xo", "slurmctld"], capture_output=True, text=True, check=True).stdout)


def cancel_all() -> None:
    subprocess.run(["scancel", "-u", "root", "-n", ",".join(_names)], capture_output=True)


_names: list[str] = []


async def run(args: argparse.Namespace) -> dict[str, object]:
    session = sshd_lib.SshdSession(tempfile.mkdtemp(prefix="bench-slurm-"), password_user=False)
    inst = session.instance("login", gpus=2)
    tmp = Path(tempfile.mkdtemp(prefix="bench-slurm-client-"))
    host = ssh_host(inst, tmp)
    cfg = InstanceConfig(name="login", host=inst.host, port=inst.port, scheduler="slurm")
    await host.connect()
    out: dict[str, object] = {}
    try:
        # -- submit to visible
        visible, running, submit = [], [], []
        for i in range(args.submits):
            name = f"bench-s{i}"
            _names.append(f"gpu-tui-{name}")
            t0 = time.perf_counter()
            req = await jobsvc.start_job(
                host, cfg, JobRequest(id=new_job_id(), command="sleep 1", name=name), slurm.SlurmOptions(gpus=1)
            )
            submit.append(time.perf_counter() - t0)
            seen_at = run_at = None
            while run_at is None:
                infos = {j.id: j for j in await jobsvc.list_jobs(host, cfg)}
                job = infos.get(req.id)
                now = time.perf_counter() - t0
                if job is not None and job.state in ("pending", "running", "succeeded") and seen_at is None:
                    seen_at = now
                if job is not None and job.state in ("running", "succeeded"):
                    run_at = now
            visible.append(seen_at)
            running.append(run_at)
        out["submit_s"] = {"median": statistics.median(submit), "max": max(submit)}
        out["submit_to_visible_s"] = {"median": statistics.median(visible), "max": max(visible)}
        out["submit_to_running_s"] = {"median": statistics.median(running), "max": max(running)}
        cancel_all()

        # -- a queue of N
        _names.append("gpu-tui-bench-holder")
        await jobsvc.start_job(
            host,
            cfg,
            JobRequest(id=new_job_id(), command="sleep 3600", name="bench-holder"),
            slurm.SlurmOptions(gpus=2),
        )
        t0 = time.perf_counter()
        for i in range(args.queued):
            name = f"bench-q{i}"
            _names.append(f"gpu-tui-{name}")
            await jobsvc.start_job(
                host, cfg, JobRequest(id=new_job_id(), command="true", name=name), slurm.SlurmOptions(gpus=1)
            )
        out["queued"] = args.queued
        out["submit_rate_per_s"] = args.queued / (time.perf_counter() - t0)
        await asyncio.sleep(2)  # let the scheduler give every job its reason
        ctld = slurmctld_pid()
        walls, client, machine, procs, ctld_cpu = [], [], [], [], []
        pending = 0
        for _ in range(args.listings):
            c0, m0, p0, s0, w0 = time.process_time(), machine_cpu_s(), last_pid(), pid_cpu_s(ctld), time.perf_counter()
            infos = await jobsvc.list_jobs(host, cfg)
            w1, c1, m1, p1, s1 = time.perf_counter(), time.process_time(), machine_cpu_s(), last_pid(), pid_cpu_s(ctld)
            walls.append(w1 - w0)
            client.append(c1 - c0)
            machine.append(max(0.0, (m1 - m0) - (c1 - c0)))
            procs.append(p1 - p0)
            ctld_cpu.append(s1 - s0)
            pending = sum(1 for j in infos if j.state == "pending")
        per_min = 60.0 / JOB_POLL_SECONDS
        out["pending_seen"] = pending
        out["listing"] = {
            "wall_s_median": statistics.median(walls),
            "client_cpu_s_median": statistics.median(client),
            "machine_cpu_s_besides_client_median": statistics.median(machine),
            "slurmctld_cpu_s_median": statistics.median(ctld_cpu),
            "processes_median": statistics.median(procs),
        }
        out["per_minute_at_poll_rate"] = {
            "listings": per_min,
            "client_cpu_percent_of_core": 100 * statistics.median(client) * per_min / 60,
            "login_node_cpu_percent_of_core": 100 * statistics.median(machine) * per_min / 60,
            "processes": statistics.median(procs) * per_min,
        }
    finally:
        cancel_all()
        await host.close()
        session.cleanup()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--submits", type=int, default=10)
    ap.add_argument("--queued", type=int, default=200)
    ap.add_argument("--listings", type=int, default=10)
    args = ap.parse_args()
    print(json.dumps(asyncio.run(run(args)), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
