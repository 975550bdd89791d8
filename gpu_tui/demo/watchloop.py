"""The demo's answer to gpu-tui's watch loop (services/monitor/watch.sh, run by services/monitor/watchloop.py).

The command line `[ -f DIR/bin/watch-v2.sh ] || ...; exec sh DIR/bin/watch-v2.sh STATE NONCE
APPS DF LOG WINDOW` is answered as the script would: `hello`, then one framed record per line the
client sends (core/metrics/watchrec.py): host stats every record, the job listing / a running job's log
end / the compute apps when they changed, and the autostop block once (a demo instance has no
watchdog). Nothing is executed; the values come from the instance's simulation.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from gpu_tui.core.jobs import JOB_MARK
from gpu_tui.core.metrics.nvsmi import compute_apps_argv
from gpu_tui.demo.program import Program
from gpu_tui.remote.quoting import join

if TYPE_CHECKING:
    from gpu_tui.demo.simulate import InstanceSim

__all__ = ["is_watch", "plan_watch"]

_EXEC = re.compile(
    r"exec sh \S+/bin/watch-v(\d+)\.sh \S+ ([0-9A-Za-z]+) ([0-9]+) ([0-9]+) ([0-9]+) ([0-9]+)\s*$", re.MULTILINE
)
_PID = 4321


def is_watch(script: str) -> bool:
    return _EXEC.search(script) is not None


class _Loop:
    def __init__(self, sim: InstanceSim, nonce: str, log_every: int, window: int, plan: Callable[[str], Program]):
        self.sim = sim
        self.mark = f"@@w{nonce}"
        self.log_every = max(1, log_every)
        self.window = window
        self.plan = plan
        self.tick = 0
        self.prev_jobs: str | None = None
        self.prev_apps: str | None = None
        self.running: set[str] = set()
        self.sizes: dict[str, int] = {}
        self.buf = b""

    def on_data(self, data: bytes) -> bytes:
        self.buf += data
        out = []
        while b"\n" in self.buf:
            _, self.buf = self.buf.split(b"\n", 1)
            out.append(self.record())
        return b"".join(out)

    def record(self) -> bytes:
        self.tick += 1
        m, sim = self.mark, self.sim
        t = sim.clock()
        parts = [f"{m} rec {self.tick}\n", sim.stats_text(t)]
        table = sim.jobs
        jobs = table.listing(JOB_MARK)
        if jobs != self.prev_jobs:
            parts.append(f"{m} jobs\n{jobs}")
            self.prev_jobs = jobs
        if self.tick == 1:
            parts.append(f"{m} autostop\nnow {int(t)}\n")
        apps = self.plan(join(compute_apps_argv()) + " 2>&1").stdout
        apps_text = apps if isinstance(apps, str) else apps.decode("utf-8", "replace")
        if apps_text != self.prev_apps:
            parts.append(f"{m} apps\n{apps_text}")
            self.prev_apps = apps_text
        out = "".join(parts).encode()
        logs = []
        running = set()
        for job_id in sorted(table.jobs):
            job = table.jobs[job_id]
            ended = job_id in self.running and not job.alive
            if job.alive:
                running.add(job_id)
            due = job.alive and (self.tick == 1 or self.tick % self.log_every == 0)
            if (due and self.sizes.get(job_id) != len(job.log)) or ended:
                self.sizes[job_id] = len(job.log)
                end = bytes(job.log[-self.window :])
                logs.append(f"{m} log {job_id}\n".encode() + end + f"\n{m} endlog\n".encode())
        self.running = running
        return out + b"".join(logs) + f"{m} end\n".encode()


def plan_watch(script: str, sim: InstanceSim, plan: Callable[[str], Program]) -> Program:
    m = _EXEC.search(script)
    assert m is not None
    version, nonce, _apps, _df, log_every, window = m.groups()
    loop = _Loop(sim, nonce, int(log_every), int(window), plan)
    return Program(stdout=f"@@w{nonce} hello {version} {_PID}\n", on_data=loop.on_data)
