"""`LabWatch`: a lab's Prometheus read every `refresh_seconds` for the dashboard (issue 26), and
what one read means for the rows: each node an instance, online, offline with the reason, or
gone from Prometheus.

One refresh is services/monitor/prometheus's `read_fleet`: one instant query per metric for all
nodes. The secret (a keyring lookup may block) is looked up in a thread, again after a failure,
so a token stored while the dashboard is open is used on the next refresh.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from gpu_tui.config.settings import InstanceConfig, PrometheusConfig
from gpu_tui.core.errors import GpuTuiError
from gpu_tui.core.i18n import _
from gpu_tui.core.metrics.dcgm import NodeReading
from gpu_tui.core.metrics.dcgm_range import NodeHistory
from gpu_tui.core.models import GpuFrame, HostStats
from gpu_tui.services.monitor.prometheus import PromSource, read_fleet, read_history

__all__ = ["LabRead", "LabWatch", "node_config", "node_frame", "node_name", "node_state", "node_stats"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LabRead:
    """One refresh of a lab: every node's reading, or why none could be had."""

    lab: str
    nodes: Mapping[str, NodeReading] | None
    error: str | None
    """One line: Prometheus unreachable, the credentials refused, a query refused, no secret."""
    taken_at: float


class LabWatch:
    """Reads one lab until cancelled; `on_read` gets every refresh."""

    def __init__(
        self,
        name: str,
        cfg: PrometheusConfig,
        source: Callable[[], PromSource],
        on_read: Callable[[LabRead], None],
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.name, self.cfg = name, cfg
        self._source, self._on_read, self._clock = source, on_read, clock
        self._poke = asyncio.Event()
        self._found: PromSource | None = None
        """The source with its secret, once looked up (None again after a failed read)."""

    def poke(self) -> None:
        """Read now (the user asked to reconnect)."""
        self._poke.set()

    async def _source_now(self) -> PromSource:
        if self._found is None:
            self._found = await asyncio.to_thread(self._source)
        return self._found

    async def history(self, node: str, *, seconds: float, points: int) -> NodeHistory:
        """`node`'s last `seconds` (the detail screen's charts); GpuTuiError with one line."""
        return await read_history(await self._source_now(), node, end=self._clock(), seconds=seconds, points=points)

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            started = loop.time()
            try:
                got = await read_fleet(await self._source_now())
                read = LabRead(self.name, got.nodes, None, self._clock())
            except GpuTuiError as exc:
                self._found = None  # the secret is looked up again: it may have been stored since
                read = LabRead(self.name, None, exc.line(), self._clock())
            self._on_read(read)
            self._poke.clear()
            # every refresh_seconds from one read's start to the next: a read of hundreds of
            # nodes takes seconds, which must not stretch the period
            try:
                refresh = self.cfg.refresh_seconds
                await asyncio.wait_for(self._poke.wait(), max(0.2 * refresh, started + refresh - loop.time()))
            except TimeoutError:
                pass


_NOT_A_NAME = re.compile(r"[^A-Za-z0-9._-]")


def node_name(node: str) -> str:
    """A node's row name: its Hostname, with what an instance name cannot hold turned into `_`."""
    return _NOT_A_NAME.sub("_", node)[:64] or "_"


def node_config(name: str, cfg: PrometheusConfig, gpus: int) -> InstanceConfig:
    """The instance entry a node's row stands on: its rate for `gpus` GPUs (per GPU or per node)."""
    rate = cfg.hourly_rate * gpus if cfg.rate_per == "gpu" else cfg.hourly_rate
    return InstanceConfig.model_construct(name=name, host=name, hourly_rate=rate, currency=cfg.currency)


def node_state(reading: NodeReading | None) -> tuple[bool, str | None]:
    """(online, why not): an exporter down, a node with no GPU series, a node gone from Prometheus."""
    if reading is None:
        return False, _("no longer in Prometheus (no GPU series in the last hour)")
    if reading.up is False:
        return False, _("its exporter is down (Prometheus up == 0)")
    if not reading.gpus:
        return False, _("no GPU series in Prometheus")
    return True, None


def node_frame(reading: NodeReading, taken_at: float) -> GpuFrame:
    return GpuFrame(taken_at=taken_at, gpus=reading.gpus)


def node_stats(reading: NodeReading, taken_at: float) -> HostStats | None:
    h = reading.host
    if h is None:
        return None
    return HostStats(
        taken_at=taken_at,
        cpu_percent=h.cpu_percent,
        cpu_count=h.cpu_count,
        load1=None if h.load1 is None else round(h.load1, 2),
        mem_used_mib=h.mem_used_mib,
        mem_total_mib=h.mem_total_mib,
        uptime_seconds=h.uptime_seconds,
    )
