"""Free a GPU's memory: find who holds it on the instance, and end that process (issue 27).

Only a process of the instance's own that holds a GPU's device file can be chosen: a host pid
the driver reported (another container's, or this container's seen from outside) cannot be
signalled from here, and a pid that holds no GPU is not this tool's business. A gpu-tui job's
process is stopped as its job (the runner records how it ended). Otherwise SIGINT, SIGTERM,
SIGKILL, each after its grace, to that process alone, and only while it is the same process
(its start time), so a pid reused in between is never hit.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.errors import InputError, RemoteError
from gpu_tui.core.i18n import _
from gpu_tui.core.metrics import nvsmi
from gpu_tui.core.metrics.holders import Attribution, GpuHolderRow, HolderScan, attribute
from gpu_tui.core.text import printable
from gpu_tui.remote.host import Host
from gpu_tui.remote.quoting import fill_script, join, sh_c
from gpu_tui.services.jobs.runner import stop_job
from gpu_tui.services.killable import CANCEL_STEPS
from gpu_tui.services.monitor import probes
from gpu_tui.services.statedir import shell_state_dir

__all__ = ["Target", "read_holders", "pick_target", "end_command", "end_process", "free_gpu"]

TICK = 0.2


@dataclass(frozen=True, slots=True)
class Target:
    """A process of the instance chosen to be ended, and what it holds."""

    pid: int
    rows: tuple[GpuHolderRow, ...]
    start: int | None
    """Its start time (/proc/PID/stat): the process that was chosen, not a later one with its pid."""

    @property
    def command(self) -> str:
        return self.rows[0].command or "?"

    @property
    def job(self) -> str | None:
        return self.rows[0].job

    @property
    def gpus(self) -> list[int]:
        return sorted({r.gpu for r in self.rows if r.gpu is not None})

    @property
    def memory_mib(self) -> int | None:
        known = [r.used_memory_mib for r in self.rows if r.used_memory_mib is not None]
        return sum(known) if known else None

    def question(self, name: str) -> str:
        """The confirmation: what will be ended and what it frees (remote text made printable)."""
        gpus = ", ".join(str(g) for g in self.gpus) or "?"
        if self.memory_mib is not None:
            frees = _("it frees {mib:,} MiB on GPU {gpus}").format(mib=self.memory_mib, gpus=gpus)
        else:
            frees = _("it holds GPU {gpus}; how much memory is not known here").format(gpus=gpus)
        command = printable(self.command)
        if self.job is not None:
            return _("{name}: pid {pid} ({command}) is job {job}'s: stop the job? {frees}").format(
                name=name, pid=self.pid, command=command, job=self.job, frees=frees
            )
        return _("{name}: end pid {pid} ({command})? {frees}").format(
            name=name, pid=self.pid, command=command, frees=frees
        )


async def read_holders(host: Host, inst: InstanceConfig, *, timeout: float = 30.0) -> tuple[Attribution, HolderScan]:
    """One reading of the GPUs, the driver's compute apps and the holders scan, joined."""
    gpus, apps, scan = await asyncio.gather(
        host.run(probes.gpu_once_command(), timeout=timeout),
        host.run(join(nvsmi.compute_apps_argv()) + " 2>&1", timeout=timeout),
        host.run(probes.holders_command(shell_state_dir(inst)), timeout=timeout),
    )
    holders = probes.holders_answer(scan.stdout)
    if holders is None:
        why = (scan.stderr or scan.stdout).strip()[:300] or _("no answer")
        raise RemoteError(_("{name}: cannot see who holds the GPUs: {why}").format(name=inst.name, why=why))
    return attribute(nvsmi.parse_compute_apps(apps.stdout), holders, nvsmi.parse_rows(gpus.stdout)), holders


def pick_target(name: str, att: Attribution, scan: HolderScan, pid: int) -> Target:
    """The process `pid` if the instance may end it; InputError (exit 2) saying why not."""
    rows = tuple(r for r in att.rows if r.pid == pid)
    if rows:
        start = next((h.start for h in scan.holders if h.pid == pid), None)
        return Target(pid, rows, start)
    seen_here = next((r for r in att.rows if r.pid is not None and r.host_pid == pid), None)
    if seen_here is not None:
        raise InputError(
            _("{name}: {pid} is the driver's (host) pid of process {local} here: end it as pid {local}").format(
                name=name, pid=pid, local=seen_here.pid
            )
        )
    host_rows = [r for r in att.rows if r.pid is None and r.host_pid == pid]
    if host_rows:
        raise InputError(
            _(
                "{name}: pid {pid} is a host pid the driver reported; no process of this instance has it "
                "(it runs outside this container), so it cannot be ended from here"
            ).format(name=name, pid=pid)
        )
    local = ", ".join(str(r.pid) for r in att.rows if r.pid is not None) or _("none")
    raise InputError(
        _("{name}: pid {pid} holds no GPU here; the processes that do: {pids}").format(name=name, pid=pid, pids=local)
    )


_END = r"""
pid=__PID__ start=__START__
alive() {
  s=; read -r s < "/proc/$pid/stat" 2>/dev/null || return 1
  s=${s##*) }
  # shellcheck disable=SC2086
  set -- $s
  [ "$1" != Z ] || return 1
  [ "$start" = - ] || [ $# -lt 20 ] || eval "[ \"\${20}\" = \"$start\" ]"
}
alive || { echo gone; exit 0; }
for step in __STEPS__; do
  sig=${step%:*} ticks=${step#*:}
  if ! kill -s "$sig" "$pid" 2>/dev/null; then alive || { echo "gone $sig"; exit 0; }; echo denied; exit 5; fi
  i=0
  while [ $i -lt "$ticks" ]; do
    alive || { echo "gone $sig"; exit 0; }
    sleep __TICK__; i=$((i+1))
  done
done
echo "still running"
exit 4
"""


def end_command(pid: int, start: int | None, steps: tuple[tuple[str, float], ...] = CANCEL_STEPS) -> str:
    """The script that ends `pid` (while its start time is `start`); pure, so the demo can
    recognise it by calling it with placeholders."""
    plan = " ".join(f"{sig}:{max(1, round(seconds / TICK))}" for sig, seconds in steps)
    when = str(start) if start is not None else "-"
    return sh_c(fill_script(_END, PID=str(pid), START=when, STEPS=plan, TICK=f"{TICK:g}"))


async def end_process(
    host: Host, name: str, target: Target, steps: tuple[tuple[str, float], ...] = CANCEL_STEPS
) -> str:
    """SIGINT, SIGTERM, SIGKILL to the process alone; returns `gone SIG` (or `gone`: it had
    already ended). RemoteError where it may not be signalled or outlives SIGKILL."""
    res = await host.run(end_command(target.pid, target.start, steps), timeout=sum(s for _sig, s in steps) + 15)
    out = res.stdout.strip()
    if out.startswith("gone"):
        return out
    if out == "denied":
        raise RemoteError(
            _("{name}: not allowed to signal pid {pid}: it runs as {user}; log in as that user or root").format(
                name=name, pid=target.pid, user=target.rows[0].user or "?"
            )
        )
    raise RemoteError(
        _("{name}: pid {pid} is still running after SIGKILL (stuck in the kernel?)").format(name=name, pid=target.pid)
        if out == "still running"
        else _("{name}: could not end pid {pid}: {why}").format(
            name=name, pid=target.pid, why=(out or res.stderr.strip())[:300]
        )
    )


async def free_gpu(host: Host, inst: InstanceConfig, target: Target) -> str:
    """End the target: through its job's stop when it is a gpu-tui job's, else by signals."""
    if target.job is not None:
        return await stop_job(host, inst, target.job)
    return await end_process(host, inst.name, target)
