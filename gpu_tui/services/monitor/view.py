"""`InstanceView`: everything known about one row of the dashboard right now (an instance, or
a lab's node), as Fleet keeps it up to date from its monitors' events."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.jobs import JobInfo
from gpu_tui.core.metrics.history import HostHistory
from gpu_tui.core.metrics.holders import Attribution, HolderScan, attribute
from gpu_tui.core.models import GpuError, GpuErrorKind, GpuFrame, GpuProcess, HostStats
from gpu_tui.core.money.cost import cost_so_far
from gpu_tui.core.slurm import SlurmNode
from gpu_tui.services.events import ConnState
from gpu_tui.services.jobs.watch import AutostopReceived

__all__ = ["InstanceView"]


@dataclass(slots=True)
class InstanceView:
    """Everything known about one instance right now."""

    config: InstanceConfig
    state: ConnState = ConnState.CONNECTING
    message: str | None = None
    retry_at: float | None = None
    fingerprint: str | None = None
    key_line: str | None = None
    frame: GpuFrame | None = None
    gpu_error: GpuError | None = None
    processes: tuple[GpuProcess, ...] = ()
    """The driver's compute apps (host pids in a container)."""
    release_at: float | None = None
    """While it cannot be reached: the earliest time its provider may release it and its data
    (core/power.py, from the ledger's last sighting; the dashboard sets it every minute)."""
    holders: HolderScan | None = None
    """Who holds each GPU's device file, seen from inside (None: no scan yet, or none can run)."""
    stats: HostStats | None = None
    # uptime is read every few seconds; between readings it advances with the clock
    uptime_base: tuple[float, int] | None = None
    history: HostHistory = field(default_factory=HostHistory)
    jobs: tuple[JobInfo, ...] = ()
    """The instance's jobs, oldest first (refreshed every few seconds while online)."""
    jobs_listed: bool = False
    """A job listing has arrived at least once (until then `jobs` is empty for lack of news)."""
    autostop: AutostopReceived | None = None
    """The autostop watchdog's last known state (read every 15 s while online)."""
    cluster: tuple[SlurmNode, ...] = ()
    """A SLURM login node's nodes (partition, GPUs in use / in all); empty elsewhere."""
    gpus_idle_since: float | None = None
    """When every GPU last went below the idle threshold (None: some GPU is busy, or unknown)."""
    watch_note: str | None = None
    """Set when the on-instance watch loop cannot run and gpu-tui polls instead
    (`polling fallback: <why>`): the host panel shows it. None while the loop runs."""
    source: str = "ssh"
    """`ssh` (an instance gpu-tui logs in to) or `prometheus:NAME` (a lab's node: its numbers only)."""
    xids: Mapping[int, int] = field(default_factory=dict)
    """{GPU index: its last Xid} where that is not 0 (dcgm-exporter's, through Prometheus)."""
    pods: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    """{GPU index: the Kubernetes pods it is allotted to} (dcgm-exporter's, through Prometheus)."""
    node: str | None = None
    """A lab node's name in Prometheus (its Hostname label; the row's name may be cleaned of it)."""
    gpus_from: str | None = None
    """`prometheus:NAME` while a lab's Prometheus gives this row's GPU numbers (a lab's node, or
    an SSH entry that is one: its own nvidia-smi stream rests meanwhile); None: its own."""

    def attribution(self) -> Attribution:
        """Each GPU's processes: the driver's list joined with what the instance sees (issue 27)."""
        return attribute(self.processes, self.holders, self.frame.gpus if self.frame else ())

    @property
    def ours(self) -> bool:
        """gpu-tui logs in to it: jobs, shell, sync, power. A lab's node is watched, not driven."""
        return self.source == "ssh"

    @property
    def current_job(self) -> JobInfo | None:
        """The job `l` opens: the newest running one, else the newest."""
        running = [j for j in self.jobs if j.state == "running"]
        candidates = running or self.jobs
        return candidates[-1] if candidates else None

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def shown_state(self) -> str:
        """The state word of CONTRACTS.md: `gpu error` wins over `online` when GPUs are unreadable."""
        if self.state is ConnState.ONLINE and self.gpu_error is not None:
            return "online" if self.gpu_error.kind is GpuErrorKind.NO_JOB else "gpu error"
        return str(self.state)

    def uptime_seconds(self, now: float) -> int | None:
        if self.uptime_base is None:
            return None
        seen_at, up = self.uptime_base
        return up + int(max(0.0, now - seen_at)) if self.state is ConnState.ONLINE else up

    @property
    def billing(self) -> bool:
        """Reachable instances bill; one we have never reached is not counted."""
        return self.state is ConnState.ONLINE

    def cost_so_far(self, now: float) -> float | None:
        if not self.ours:  # a lab node's uptime is since its boot, not since anyone paid for it
            return None
        return cost_so_far(self.config.hourly_rate, self.uptime_seconds(now))

    def idle_seconds(self, now: float) -> float | None:
        """How long it has been billing with every GPU idle and no job running; None if not idle."""
        if not self.billing or self.gpus_idle_since is None or any(j.state == "running" for j in self.jobs):
            return None
        return max(0.0, now - self.gpus_idle_since)
