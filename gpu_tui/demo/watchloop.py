"""The demo's answer to gpu-tui's watch loop (services/monitor/watch.sh, run by services/monitor/watchloop.py).

The command line (services/monitor/watchloop.watch_command, recognised by calling it with holes:
demo/scriptmatch.py) is answered as the script would: `hello`, then one framed record per line the
client sends (core/metrics/watchrec.py): host stats every record, the job listing / a running job's log
end / the compute apps when they changed, and the autostop block once (a demo instance has no
watchdog). Nothing is executed; the values come from the instance's simulation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.jobs import JOB_MARK
from gpu_tui.core.metrics.nvsmi import compute_apps_argv
from gpu_tui.demo.holders import holders_text
from gpu_tui.demo.program import Program
from gpu_tui.demo.scriptmatch import HOLE_W, Template
from gpu_tui.remote.quoting import join
from gpu_tui.services.monitor.watchloop import LOG_EVERY, LOG_WINDOW, WATCH_VERSION, watch_command

if TYPE_CHECKING:
    from gpu_tui.demo.simulate import InstanceSim

__all__ = ["plan_watch"]

_NONCE = "GPUTUINONCE"
_WATCH = Template(
    watch_command(InstanceConfig(name="demo", host="127.0.0.1", state_dir="/" + HOLE_W), _NONCE), "/" + HOLE_W, _NONCE
)
_PID = 4321


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
        self.prev_holders: str | None = None
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
        holders = holders_text(sim)
        if holders != self.prev_holders:
            parts.append(f"{m} holders\n{holders}")
            self.prev_holders = holders
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


def plan_watch(command: str, sim: InstanceSim, plan: Callable[[str], Program]) -> Program | None:
    """The watch loop's answer, if `command` is watch_command's; else None."""
    holes = _WATCH.match(command)
    if holes is None:
        return None
    nonce = holes[_WATCH.holes.index(_NONCE)]
    loop = _Loop(sim, nonce, LOG_EVERY, LOG_WINDOW, plan)
    return Program(stdout=f"@@w{nonce} hello {WATCH_VERSION} {_PID}\n", on_data=loop.on_data)
