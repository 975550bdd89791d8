"""Keep each instance's job list fresh for the dashboard, and say when a job ends.

One short listing exec every few seconds while the instance is online (plus the end of the log
of each running job, for progress and loss); a job seen running that is now anything else is
reported once as `JobFinished`, which the dashboard turns into a notification and a bell.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.autostop import AutostopStatus
from gpu_tui.core.errors import RemoteError
from gpu_tui.core.jobs import JobFacts, JobInfo
from gpu_tui.core.slurm import SlurmNode
from gpu_tui.remote.cancels import raise_lost_cancel
from gpu_tui.remote.host import Host
from gpu_tui.services.autostop import read_status
from gpu_tui.services.jobs import runner as jobsvc
from gpu_tui.services.jobs.sched import scheduler_for

__all__ = [
    "ClusterReceived",
    "AutostopReceived",
    "JobsReceived",
    "JobFinished",
    "JobWatcher",
    "JOB_POLL_SECONDS",
    "AUTOSTOP_POLL_EVERY",
]

log = logging.getLogger(__name__)

JOB_POLL_SECONDS = 5.0
WATCH_SUMMARY_BYTES = 64 * 1024  # the log end read each poll per running job
AUTOSTOP_POLL_EVERY = 3
IDLE_RECHECK_SECONDS = 60.0
"""While not polling, how often the watcher looks again unpoked (its owner pokes it on the
changes that matter, so this is only a safety net)."""
"""The autostop watchdog's status is read every 3rd job poll (15 s): it decides once per 15 s."""


@dataclass(frozen=True, slots=True)
class JobsReceived:
    name: str
    jobs: tuple[JobInfo, ...]


@dataclass(frozen=True, slots=True)
class AutostopReceived:
    """The on-instance autostop watchdog's state, read at `fetched_at` (time.monotonic())."""

    name: str
    status: AutostopStatus
    fetched_at: float


@dataclass(frozen=True, slots=True)
class ClusterReceived:
    """A SLURM login node's partitions: each node with its GPUs in use and in all (sinfo)."""

    name: str
    nodes: tuple[SlurmNode, ...]


@dataclass(frozen=True, slots=True)
class JobFinished:
    """A job this watcher saw running has ended (succeeded, failed or stopped)."""

    name: str
    job: JobInfo


class JobWatcher:
    def __init__(
        self,
        host: Host,
        inst: InstanceConfig,
        emit: Callable[[JobsReceived | JobFinished | AutostopReceived | ClusterReceived], None],
        *,
        is_online: Callable[[], bool],
        interval: float = JOB_POLL_SECONDS,
    ) -> None:
        self.host, self.inst = host, inst
        self._scheduler = scheduler_for(inst)
        self._emit = emit
        self._is_online = is_online
        self._interval = interval
        self._poke = asyncio.Event()
        self._states: dict[str, str] | None = None  # None until the first listing
        self._failures = 0
        self._polls = 0

    def poke(self) -> None:
        """List again now (after the user started or stopped a job)."""
        self._poke.set()

    def _wanted(self, f: JobFacts) -> bool:
        # running jobs (progress, loss), and any job that just left the running state (failure)
        return f.alive or (self._states or {}).get(f.id) == "running"

    async def poll_once(self) -> None:
        infos = await jobsvc.list_jobs(self.host, self.inst, with_logs=self._wanted, summary_bytes=WATCH_SUMMARY_BYTES)
        previous = self._states
        self._states = {i.id: i.state for i in infos}
        self._emit(JobsReceived(self.inst.name, tuple(infos)))
        if previous is not None:
            for info in infos:
                if previous.get(info.id) == "running" and info.state != "running":
                    self._emit(JobFinished(self.inst.name, info))

    async def _slow_facts(self) -> None:
        """What changes slowly: the autostop watchdog's state, or on a login node (where gpu-tui
        shuts nothing down) the cluster's nodes."""
        nodes = await self._scheduler.cluster_nodes(self.host)
        if nodes is not None:
            self._emit(ClusterReceived(self.inst.name, nodes))
            return
        status = await read_status(self.host, self.inst)
        self._emit(AutostopReceived(self.inst.name, status, time.monotonic()))

    async def run(self) -> None:
        while True:
            online = self._is_online() and self.host.connected
            if online:
                try:
                    await self.poll_once()
                    self._failures = 0
                    if self._polls % AUTOSTOP_POLL_EVERY == 0:
                        await self._slow_facts()
                    self._polls += 1
                except RemoteError as exc:
                    self._failures += 1
                    # a locked-down host may refuse the listing: say so once, then quietly
                    (log.info if self._failures == 1 else log.debug)("%s: job list: %s", self.inst.name, exc)
            # a cancel that a poll's command swallowed (3.11's wait_for) would leave this loop
            # waiting for pokes while the app waits for it to end (a CI run hung there)
            raise_lost_cancel()
            self._poke.clear()
            try:
                # Not online (or the watch loop reports the jobs): the owner pokes when that
                # changes (Fleet: on the connect and on a fall back to polling), so an idle
                # watcher costs no wake-ups; IDLE_RECHECK_SECONDS is only the safety net.
                # asyncio.timeout, not wait_for: on 3.11 a cancel racing wait_for's own timeout
                # could leave this task stuck "cancelling" and the app's exit waiting on it
                async with asyncio.timeout(self._interval if online else IDLE_RECHECK_SECONDS):
                    await self._poke.wait()
            except TimeoutError:
                pass
