#!/usr/bin/env python3
"""Instance-side notifications (issue 15): how soon the request arrives, and what one send costs.

On a simulated instance (real OpenSSH sshd on loopback, tests/sshd.py) with the sender installed
through `services.notify.instance.install_notify`, to a loopback JSON webhook
(tests/instance_notify_servers.py) that records when each request arrives:

- ``job end -> request``: a job `exit 0` started with `services.jobs.start_job`; from its
  `exit_code` file's mtime (the runner writes it as the job ends) to the request's arrival;
- ``autostop decision -> request``: autostop armed (idle 1 s, checks every 1 s, GPU idle); from
  the moment its `firing` line appears in autostop.log (polled every 5 ms, so up to 5 ms late)
  to the "about to shut down" request's arrival;
- ``CPU per send``: user + system CPU seconds of one `notify-v1.sh STATE test` to one target, as
  children of this process (getrusage), on the python3 path and on the curl path (PATH without
  python3); and of one job_end send on the python3 path (gpu-tui's log rules loaded to name the
  failure).

A measurement script, not a test. Needs what the sshd test tier needs (root, /usr/sbin/sshd)::

    python benchmarks/bench_notify.py            # 5 runs each: ~1 min
    python benchmarks/bench_notify.py --runs 10
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TESTS = REPO / "tests"
for p in (str(REPO), str(TESTS)):
    if p not in sys.path:
        sys.path.insert(0, p)

import sshd as sshd_lib  # noqa: E402
from instance_notify_servers import NotifyServer  # noqa: E402
from sshhelp import ssh_host  # noqa: E402

from gpu_tui.config.settings import InstanceConfig  # noqa: E402
from gpu_tui.core.jobs import JobRequest, new_job_id  # noqa: E402
from gpu_tui.services import autostop as autostopsvc  # noqa: E402
from gpu_tui.services.jobs import runner as jobsvc  # noqa: E402
from gpu_tui.services.notify import instance as nr  # noqa: E402

SH_TOOLS = (
    "sh",
    "cat",
    "sed",
    "awk",
    "tr",
    "od",
    "grep",
    "mktemp",
    "date",
    "rm",
    "mkdir",
    "wc",
    "head",
    "tail",
    "sleep",
    "mv",
    "curl",
)


def wait(pred, timeout: float = 60.0, step: float = 0.005):  # noqa: ANN001, ANN201
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = pred()
        if got:
            return got
        time.sleep(step)
    raise TimeoutError("condition not reached")


async def job_end_latency(inst: sshd_lib.SshdInstance, cfg: InstanceConfig, srv: NotifyServer, tmp: Path) -> float:
    host = ssh_host(inst, tmp)
    await host.connect()
    before = len(srv.seen)
    req = await jobsvc.start_job(host, cfg, JobRequest(id=new_job_id(), command="exit 0"))
    await host.close()
    code = inst.home() / ".gpu-tui" / "jobs" / req.id / "exit_code"
    wait(lambda: len(srv.seen) > before)
    return srv.seen[before].at - code.stat().st_mtime


async def autostop_latency(inst: sshd_lib.SshdInstance, cfg: InstanceConfig, srv: NotifyServer, tmp: Path) -> float:
    inst.set_utilization(0)
    inst.set_shutdown_delay(5)
    host = ssh_host(inst, tmp)
    await host.connect()
    await nr.install_notify(host, cfg, [f"json://127.0.0.1:{srv.port}/bench"], ["autostop"], "en")
    before = len(srv.seen)
    await autostopsvc.arm(host, cfg, autostopsvc.AutostopPlan(idle_seconds=1, check_seconds=1, cpu_busy_cores=1000))
    await host.close()
    log = inst.home() / ".gpu-tui" / "autostop.log"
    wait(lambda: log.exists() and " firing " in log.read_text(errors="replace"))
    fired = time.time()
    wait(lambda: len(srv.seen) > before)
    return srv.seen[before].at - fired


def cpu_per_send(state: Path, path: str | None, runs: int, job: Path | None = None) -> list[float]:
    """CPU of one `test` send, or (`job`) of one job_end send (the log rules loaded to name it)."""
    env = dict(os.environ)
    if path:
        env["PATH"] = path
    out = []
    args = ["job_end", str(job)] if job else ["test"]
    for _ in range(runs):
        if job:
            (job / "notified").unlink(missing_ok=True)
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            ["sh", str(state / "bin" / "notify-v1.sh"), str(state), *args], env=env, check=True, capture_output=True
        )
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        out.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    return out


def show(label: str, values: list[float], unit: str = "ms") -> None:
    k = 1000.0
    print(
        f"{label:<34} median {statistics.median(values) * k:7.1f} {unit}   "
        f"min {min(values) * k:7.1f}   max {max(values) * k:7.1f}   (n={len(values)})"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    session = sshd_lib.SshdSession(password_user=False)
    tmp = session.root / "bench-client"
    tmp.mkdir(exist_ok=True)
    srv = NotifyServer().start()
    try:
        inst = session.instance("bench")
        cfg = InstanceConfig(name=inst.name, host=inst.host, port=inst.port)
        state = inst.home() / ".gpu-tui"

        async def setup() -> None:
            host = ssh_host(inst, tmp)
            await host.connect()
            await nr.install_notify(host, cfg, [f"json://127.0.0.1:{srv.port}/bench"], ["job_end"], "en")
            await host.close()

        asyncio.run(setup())
        job = [asyncio.run(job_end_latency(inst, cfg, srv, tmp)) for _ in range(args.runs)]
        bin_dir = tmp / "no-python"
        bin_dir.mkdir(exist_ok=True)
        for tool in SH_TOOLS:
            found = shutil.which(tool)
            if found and not (bin_dir / tool).exists():
                (bin_dir / tool).symlink_to(found)
        cpu_py = cpu_per_send(state, None, args.runs)
        cpu_curl = cpu_per_send(state, str(bin_dir), args.runs)
        last_job = sorted((state / "jobs").iterdir())[-1]
        cpu_job = cpu_per_send(state, None, args.runs, last_job)
        stops = []
        for _ in range(args.runs):
            one = session.instance("bench-stop")
            one_cfg = InstanceConfig(name=one.name, host=one.host, port=one.port)
            stops.append(asyncio.run(autostop_latency(one, one_cfg, srv, tmp)))
            one.stop()
        show("job end -> request (python3)", job)
        show("autostop decision -> request", stops)
        show("CPU per send, python3 path", cpu_py, "ms CPU")
        show("CPU per send, curl path", cpu_curl, "ms CPU")
        show("CPU per job_end send, python3", cpu_job, "ms CPU")
    finally:
        srv.stop()
        session.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
