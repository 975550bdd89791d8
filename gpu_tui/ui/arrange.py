"""Which instance rows the dashboard shows, in what order (a sort, a show-only and a name filter
over the fleet's views), and what the fleet's GPUs sum to for its summary line. Headless (the
dashboard draws the result), so `o`, `w` and `/` are tested on plain views, and they cost one
sort a second at 500 rows."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from gpu_tui.core.i18n import N_
from gpu_tui.services.events import ConnState
from gpu_tui.services.fleet import InstanceView

__all__ = [
    "SHOWS",
    "SORTS",
    "Arrangement",
    "GpuTotals",
    "arrange",
    "error_count",
    "gpu_totals",
    "idle_gpus",
    "mean_util",
]

SORTS: dict[str, str] = {
    "config": N_("config order"),
    "name": N_("name"),
    "util": N_("utilisation"),
    "idle": N_("idle GPUs"),
    "errors": N_("errors first"),
}
"""What `o` cycles through, in order, and the words the summary line says for each."""
SHOWS: dict[str, str] = {
    "all": N_("all"),
    "idle": N_("with idle GPUs"),
    "errors": N_("with errors"),
}
"""What `w` cycles through."""

_FAULT_STATES = frozenset(
    {ConnState.OFFLINE, ConnState.AUTH_FAILED, ConnState.HOST_KEY_CHANGED, ConnState.HOST_KEY_UNKNOWN}
)
"""Connection states that are a fault to look at; `stopped` was asked for, `connecting` is news to wait for."""


@dataclass(frozen=True, slots=True)
class Arrangement:
    sort: str = "config"
    show: str = "all"
    text: str = ""
    """Only names holding this (case-insensitive); empty: every name."""

    @property
    def plain(self) -> bool:
        """Every row, in config order: nothing to compute."""
        return self.sort == "config" and self.show == "all" and not self.text

    def next_sort(self) -> Arrangement:
        return replace(self, sort=_after(tuple(SORTS), self.sort))

    def next_show(self) -> Arrangement:
        return replace(self, show=_after(tuple(SHOWS), self.show))

    def with_text(self, text: str) -> Arrangement:
        return replace(self, text=text.strip())


def _after(cycle: tuple[str, ...], now: str) -> str:
    return cycle[(cycle.index(now) + 1) % len(cycle)] if now in cycle else cycle[0]


def _utils(v: InstanceView) -> list[float]:
    if v.frame is None or v.state is not ConnState.ONLINE:
        return []
    return [g.utilization_gpu for g in v.frame.gpus if g.utilization_gpu is not None]


def mean_util(v: InstanceView) -> float | None:
    """The GPUs' mean utilisation as its row shows it; None while none is readable."""
    utils = _utils(v)
    return sum(utils) / len(utils) if utils else None


def idle_gpus(v: InstanceView, idle_util: float) -> int:
    """How many of its GPUs read under `idle_util` percent (settings.idle_util_percent)."""
    return sum(1 for u in _utils(v) if u < idle_util)


def error_count(v: InstanceView) -> int:
    """Faults to look at: each GPU's Xid, a connection fault, unreadable GPUs, a failed job."""
    count = len(v.xids)
    if v.state in _FAULT_STATES:
        count += 1
    if v.shown_state == "gpu error":
        count += 1
    job = v.current_job
    if job is not None and job.state == "failed":
        count += 1
    return count


def arrange(views: Iterable[InstanceView], how: Arrangement, idle_util: float) -> list[str]:
    """The names to show, in order; ties keep config order (`views` is in it)."""
    rows = list(views)
    needle = how.text.casefold()
    if needle:
        rows = [v for v in rows if needle in v.name.casefold()]
    if how.show == "idle":
        rows = [v for v in rows if idle_gpus(v, idle_util)]
    elif how.show == "errors":
        rows = [v for v in rows if error_count(v)]
    if how.sort == "name":
        rows.sort(key=lambda v: v.name.casefold())
    elif how.sort == "util":
        # rounded as shown: rows that read the same do not swap places every second
        rows.sort(key=lambda v: -round(u) if (u := mean_util(v)) is not None else 1)
    elif how.sort == "idle":
        rows.sort(key=lambda v: -idle_gpus(v, idle_util))
    elif how.sort == "errors":
        rows.sort(key=lambda v: -error_count(v))
    return [v.name for v in rows]


@dataclass(frozen=True, slots=True)
class GpuTotals:
    """The fleet's GPUs as its summary line says them; the counts are of readable GPUs only."""

    busy: int = 0
    idle: int = 0
    mean_util: float | None = None
    """Over every readable GPU of the fleet; None while none is."""
    xids: int = 0
    """GPUs whose last Xid is not 0."""


def gpu_totals(views: Iterable[InstanceView], idle_util: float) -> GpuTotals:
    busy = idle = xids = 0
    total = 0.0
    for v in views:
        xids += len(v.xids)
        for u in _utils(v):
            total += u
            if u < idle_util:
                idle += 1
            else:
                busy += 1
    count = busy + idle
    return GpuTotals(busy, idle, total / count if count else None, xids)
