"""`Fleet`: run one HostMonitor per instance and keep the latest view of each.

The dashboard reads `Fleet.views`; `on_change(name)` tells it which instance changed, so it
repaints only that row (and the panel, when that instance is selected).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gpu_tui.config.settings import InstanceConfig, PrometheusConfig
from gpu_tui.core.i18n import _
from gpu_tui.core.metrics.dcgm import NodeReading
from gpu_tui.core.metrics.dcgm_range import NodeHistory
from gpu_tui.core.metrics.history import HostHistory
from gpu_tui.core.models import GpuErrorKind
from gpu_tui.core.money.cost import currency_of, per_currency
from gpu_tui.remote.host import Host
from gpu_tui.services.events import (
    ConnState,
    GpuErrorChanged,
    GpuFrameReceived,
    HoldersReceived,
    HostStatsReceived,
    MonitorEvent,
    ProcessesReceived,
    StateChanged,
)
from gpu_tui.services.jobs.sched import scheduler_for
from gpu_tui.services.jobs.watch import AutostopReceived, ClusterReceived, JobFinished, JobsReceived, JobWatcher
from gpu_tui.services.monitor.host import HostMonitor
from gpu_tui.services.monitor.prometheus import PromSource
from gpu_tui.services.monitor.promwatch import (
    LabRead,
    LabWatch,
    node_config,
    node_frame,
    node_name,
    node_state,
    node_stats,
)
from gpu_tui.services.monitor.view import InstanceView
from gpu_tui.services.monitor.watchloop import WatchLoop, WatchMode, WatchModeChanged

__all__ = ["Fleet", "FleetEvent", "HostReplaced", "InstanceView", "Lab", "ViewRemoved"]


@dataclass(frozen=True, slots=True)
class HostReplaced:
    """An instance is watched through a new Host (edited, or started at a new endpoint): what
    holds the old one (forwarded ports) moves over."""

    name: str
    host: Host


@dataclass(frozen=True, slots=True)
class ViewRemoved:
    """A row that is gone: a lab's stand-in row once its nodes have come."""

    name: str


FleetEvent = (
    MonitorEvent
    | JobsReceived
    | JobFinished
    | AutostopReceived
    | ClusterReceived
    | WatchModeChanged
    | HostReplaced
    | ViewRemoved
)

Lab = tuple[str, PrometheusConfig, Callable[[], PromSource]]
"""A lab's Prometheus: its name, its config entry, and its source with the secret (blocking)."""

log = logging.getLogger(__name__)


class Fleet:
    """Owns the monitors; `run()` until cancelled."""

    def __init__(
        self,
        instances: Sequence[tuple[InstanceConfig, Host]],
        *,
        refresh_seconds: float = 1.0,
        stats_seconds: float = 5.0,
        history_len: int = 600,
        on_change: Callable[[str, FleetEvent], None] | None = None,
        clock: Callable[[], float] = time.time,
        idle_util_percent: int = 5,
        labs: Sequence[Lab] = (),
    ) -> None:
        self.views: dict[str, InstanceView] = {
            cfg.name: InstanceView(cfg, history=HostHistory(history_len)) for cfg, _ in instances
        }
        self._on_change = on_change
        self._clock = clock
        self._settings = (refresh_seconds, stats_seconds, history_len)
        self.loops: dict[str, WatchLoop] = {}
        self.monitors: dict[str, HostMonitor] = {}
        self.watchers: dict[str, JobWatcher] = {}
        self.hosts: dict[str, Host] = {}
        for cfg, host in instances:
            self._make(cfg, host)
        self._idle_util = idle_util_percent
        self.labs = {name: LabWatch(name, cfg, source, self._lab_read, clock=clock) for name, cfg, source in labs}
        self._tasks: asyncio.TaskGroup | None = None
        self._running: dict[str, list[asyncio.Task[None]]] = {}

    def _make(self, cfg: InstanceConfig, host: Host) -> None:
        refresh, stats, _ = self._settings
        self.loops.pop(cfg.name, None)  # an edited entry may have become a login node
        scheduler = scheduler_for(cfg)
        # a login node's jobs are the scheduler's: the JobWatcher asks SLURM, the watch loop cannot
        loop = WatchLoop(host, cfg, self._handle, clock=self._clock) if scheduler.jobs_run_here else None
        if loop is not None:
            self.loops[cfg.name] = loop
        self.monitors[cfg.name] = HostMonitor(
            host,
            self._handle,
            refresh_seconds=refresh,
            stats_seconds=stats,
            clock=self._clock,
            watch=loop,
            gpu_scope=scheduler.gpu_scope(host),
        )
        self.watchers[cfg.name] = JobWatcher(host, cfg, self._handle, is_online=self._online_check(cfg.name))
        self.hosts[cfg.name] = host

    def _online_check(self, name: str) -> Callable[[], bool]:
        # the JobWatcher polls only where the watch loop cannot run (it reports jobs otherwise)
        def polls() -> bool:
            loop = self.loops.get(name)
            return self.views[name].state is ConnState.ONLINE and (loop is None or loop.mode is WatchMode.POLLING)

        return polls

    @property
    def names(self) -> list[str]:
        return list(self.views)

    def _handle(self, event: FleetEvent) -> None:
        view = self.views[event.name]
        if isinstance(event, GpuFrameReceived):  # first: every instance's, every tick
            frame = event.frame
            view.frame = frame
            view.history.append(frame)
            # MIG reports no utilisation (None): unknown is not idle
            below = self._idle_util
            idle = bool(frame.gpus)
            for g in frame.gpus:
                u = g.utilization_gpu
                if u is None or u >= below:
                    idle = False
                    break
            if not idle:
                view.gpus_idle_since = None
            elif view.gpus_idle_since is None:
                view.gpus_idle_since = frame.taken_at
        elif isinstance(event, JobsReceived):
            view.jobs, view.jobs_listed = event.jobs, True
        elif isinstance(event, ClusterReceived):
            view.cluster = event.nodes
        elif isinstance(event, AutostopReceived):
            view.autostop = event
        elif isinstance(event, WatchModeChanged):
            view.watch_note = event.note if event.mode is WatchMode.POLLING else None
            if event.mode is WatchMode.POLLING:
                self.watchers[event.name].poke()  # it lists the jobs now (it waits for this)
        elif isinstance(event, StateChanged):
            if event.state is not ConnState.ONLINE:
                view.gpus_idle_since = None
            view.state, view.message, view.retry_at = event.state, event.message, event.retry_at
            view.fingerprint, view.key_line = event.fingerprint, event.key_line
            if event.state is ConnState.ONLINE and event.name in self.watchers:
                self.watchers[event.name].poke()
        elif isinstance(event, GpuErrorChanged):
            view.gpu_error = event.error
            if event.error is not None and event.error.kind is GpuErrorKind.NO_JOB:
                view.frame = None  # the GPUs of a job that ended are no one's now
        elif isinstance(event, ProcessesReceived):
            view.processes = event.processes
        elif isinstance(event, HoldersReceived):
            view.holders = event.scan
        elif isinstance(event, HostStatsReceived):
            view.stats = event.stats
            view.history.append_cpu(event.stats.taken_at, event.stats.cpu_percent)
            if event.stats.uptime_seconds is not None:
                view.uptime_base = (event.stats.taken_at, event.stats.uptime_seconds)
        if self._on_change is not None:
            self._on_change(event.name, event)

    def burn_rate(self) -> float:
        return round(sum(v.config.hourly_rate for v in self.views.values() if v.billing), 2)

    def cost_so_far(self, now: float) -> float:
        return round(sum(c for v in self.views.values() if (c := v.cost_so_far(now)) is not None), 2)

    def burn_by_currency(self, default: str) -> list[tuple[str, float]]:
        """The burn rate per currency (`default`: settings.currency, first), never summed across."""
        billing = [v for v in self.views.values() if v.billing]
        return per_currency(
            ((currency_of(v.config.currency, default), v.config.hourly_rate) for v in billing), default
        ) or [(default, 0.0)]

    def cost_by_currency(self, now: float, default: str) -> list[tuple[str, float]]:
        """Cost so far per currency (`default` first), never summed across."""
        costs = [
            (currency_of(v.config.currency, default), c)
            for v in self.views.values()
            if (c := v.cost_so_far(now)) is not None
        ]
        return per_currency(costs, default) or [(default, 0.0)]

    def retry(self, name: str) -> None:
        view = self.views[name]
        if not view.ours:
            self.labs[view.source.removeprefix("prometheus:")].poke()
            return
        self.monitors[name].retry_now()

    async def lab_history(self, name: str, *, seconds: float, points: int) -> NodeHistory | None:
        """A lab node's GPUs over the last `seconds`, from its Prometheus (None for a row that
        is not a lab's node); GpuTuiError with one line when it cannot be read."""
        view = self.views.get(name)
        if view is None or view.gpus_from is None or view.node is None:
            return None
        lab = self.labs[view.gpus_from.removeprefix("prometheus:")]
        return await lab.history(view.node, seconds=seconds, points=points)

    # ----- a lab's nodes (issue 26): rows that come and go with what its Prometheus holds
    def _lab_read(self, read: LabRead) -> None:
        where = f"prometheus:{read.lab}"
        cfg = self.labs[read.lab].cfg
        mine = [n for n, v in self.views.items() if v.source == where and n != where]
        shared = {n for n, v in self.views.items() if v.ours and v.gpus_from == where}
        if read.nodes is None:
            if not mine:  # nothing known yet: the lab's own row says why
                self._node(where, where, cfg, None, read.taken_at, read.error)
            for name in mine:
                self._node(name, where, cfg, None, read.taken_at, read.error)
            for name in shared:
                self._own_gpus(name)
            return
        if where in self.views:
            del self.views[where]
            if self._on_change is not None:
                self._on_change(where, ViewRemoved(where))
        ssh_hosts = {v.config.host: v for v in self.views.values() if v.ours}
        seen: set[str] = set()
        for node, reading in read.nodes.items():
            name = node_name(node)
            other = self.views.get(name) or ssh_hosts.get(node)
            if other is not None and other.source != where:
                self._shared_node(other, where, node, reading, read.taken_at)
                seen.add(other.name)
                continue
            seen.add(name)
            self._node(name, where, cfg, reading, read.taken_at, None)
            self.views[name].node, self.views[name].gpus_from = node, where
        for name in mine:
            if name not in seen:
                self._node(name, where, cfg, None, read.taken_at, None)
        for name in shared - seen:
            self._own_gpus(name)

    def _shared_node(self, view: InstanceView, where: str, node: str, reading: NodeReading, taken_at: float) -> None:
        """An SSH entry that is a lab's node is one row: its GPU numbers from Prometheus while
        Prometheus has them (its own nvidia-smi stream rests), jobs, logs and the rest over SSH."""
        view.xids, view.pods = dict(reading.xids), dict(reading.pods)
        if not node_state(reading)[0]:
            self._own_gpus(view.name)
            return
        first = view.gpus_from != where
        view.node, view.gpus_from = node, where
        monitor = self.monitors.get(view.name)
        if monitor is not None:
            monitor.gpus_from_elsewhere(True)
        if first and view.gpu_error is not None:
            self._handle(GpuErrorChanged(view.name, None))  # its own stream's fault is not the numbers' now
        self._handle(GpuFrameReceived(view.name, node_frame(reading, taken_at)))

    def _own_gpus(self, name: str) -> None:
        """Back to the entry's own nvidia-smi stream (its node left Prometheus, or went dark there)."""
        view = self.views[name]
        view.gpus_from = None
        monitor = self.monitors.get(name)
        if monitor is not None:
            monitor.gpus_from_elsewhere(False)

    def _node(
        self,
        name: str,
        where: str,
        cfg: PrometheusConfig,
        reading: NodeReading | None,
        taken_at: float,
        error: str | None,
    ) -> None:
        """One node's row brought up to date (created at first sight); `error`: its lab unreadable."""
        online, why = node_state(reading) if error is None else (False, error)
        view = self.views.get(name)
        gpus = len(reading.gpus) if reading is not None else 0
        if view is None:
            view = self.views[name] = InstanceView(
                node_config(name, cfg, gpus), source=where, history=HostHistory(self._settings[2])
            )
        elif gpus:
            fresh = node_config(name, cfg, gpus)
            if fresh.hourly_rate != view.config.hourly_rate:  # a GPU came or went: the rate per GPU follows
                view.config = fresh
        if reading is not None:
            view.xids, view.pods = dict(reading.xids), dict(reading.pods)
        state = ConnState.ONLINE if online else ConnState.OFFLINE
        if (view.state, view.message) != (state, why):
            self._handle(StateChanged(name, state, message=why))
        if online and reading is not None:
            self._handle(GpuFrameReceived(name, node_frame(reading, taken_at)))
            stats = node_stats(reading, taken_at)
            if stats is not None:
                self._handle(HostStatsReceived(name, stats))

    async def run(self) -> None:
        async with asyncio.TaskGroup() as tg:
            self._tasks = tg
            for name in list(self.monitors):
                self._start(name)
            for lab in self.labs.values():
                tg.create_task(self._guarded_lab(lab), name=f"prometheus-{lab.name}")
            try:
                await asyncio.Event().wait()  # until cancelled; add() starts more meanwhile
            finally:
                self._tasks = None

    def _start(self, name: str) -> None:
        assert self._tasks is not None
        self._running[name] = [
            self._tasks.create_task(self._guarded(self.monitors[name]), name=f"monitor-{name}"),
            self._tasks.create_task(self._guarded_watch(self.watchers[name]), name=f"jobs-{name}"),
        ]

    def mark_stopped(self, name: str) -> None:
        """A verified shutdown: stop watching it (no reconnect attempts) and show `stopped`."""
        for task in self._running.pop(name, []):
            task.cancel()
        self._handle(StateChanged(name, ConnState.STOPPED, message=_("shut down by gpu-tui (verified)")))

    def watch_again(self, name: str) -> None:
        """Start watching a stopped instance again (the user restarted it in the console)."""
        self.add(self.views[name].config, self.hosts[name])

    def add(self, cfg: InstanceConfig, host: Host) -> None:
        """Watch one more instance (added in the dashboard), or replace one of the same name."""
        history_len = self._settings[2]
        replaced = self.hosts.get(cfg.name) not in (None, host)
        for task in self._running.pop(cfg.name, []):
            task.cancel()  # the old monitor's clean-up runs as it unwinds
        self.views[cfg.name] = InstanceView(cfg, history=HostHistory(history_len))
        self._make(cfg, host)
        if self._tasks is not None:
            self._start(cfg.name)
        if replaced:
            self._handle(HostReplaced(cfg.name, host))

    def poke_jobs(self, name: str) -> None:
        loop = self.loops.get(name)
        if loop is not None and loop.live:
            loop.poke()
        else:
            self.watchers[name].poke()

    async def _guarded_watch(self, watcher: JobWatcher) -> None:
        while True:
            try:
                await watcher.run()
            except Exception:
                log.exception("%s: job watcher crashed; restarting", watcher.inst.name)
                await asyncio.sleep(5)

    async def _guarded_lab(self, lab: LabWatch) -> None:
        while True:
            try:
                await lab.run()
            except Exception as exc:
                log.exception("prometheus %s: watch crashed; restarting", lab.name)
                self._lab_read(LabRead(lab.name, None, _("internal error: {error}").format(error=exc), self._clock()))
                await asyncio.sleep(5)

    async def _guarded(self, mon: HostMonitor) -> None:
        # one instance's bug must not take the other monitors down with it
        while True:
            try:
                await mon.run()
            except Exception as exc:
                log.exception("%s: monitor crashed; restarting", mon.name)
                crashed = _("internal error: {error}").format(error=exc)
                self._handle(StateChanged(mon.name, ConnState.OFFLINE, message=crashed))
                await asyncio.sleep(5)
