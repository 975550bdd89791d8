"""The log screen's whole-run reads: services/jobs/series/read.read_series, its points made
curves (ui/runcurve.py) off the event loop, handed to the screen as one message (a worker never
touches a widget). With no copy of the run's series here, the instance's overview comes first
(a few thousand points a series, drawn at once), then every point."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from textual.message import Message

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.errors import GpuTuiError
from gpu_tui.core.jobs import JobInfo
from gpu_tui.remote.host import Host
from gpu_tui.services.jobs.series.cache import SeriesCache
from gpu_tui.services.jobs.series.read import read_series
from gpu_tui.ui.runcurve import Curve, curves_of

__all__ = ["SeriesRead", "overview_first", "read_curves"]


@dataclass
class SeriesRead(Message):
    """What a series worker read: the whole run's curves of job `job` on `instance` (or why not)."""

    instance: str
    job: str
    curves: dict[str, Curve]
    window: bool
    """Only the log's end was read (no python3 on the instance)."""
    seconds: float
    error: str | None = None
    compare: bool = False
    """For the compared job, not the screen's own."""
    thin: bool = False
    """The instance's overview of the run (a first paint): every point is read next."""


def overview_first(cache: SeriesCache | None, inst: InstanceConfig, job: JobInfo) -> bool:
    """Whether a whole-run read should get the instance's overview first: no copy of the run's
    series is kept here, so every point comes over the link and is parsed (4.5 s on a 200 MB log)."""
    return cache is None or not cache.path(inst, job.id).exists()


async def read_curves(
    host: Host,
    inst: InstanceConfig,
    name: str,
    job: JobInfo,
    *,
    compare: bool,
    cache: SeriesCache | None = None,
    thin: bool = False,
) -> SeriesRead:
    """read_series, its points turned into curves off the event loop (a big run's thinning);
    `thin`: the instance's overview of them."""
    started = time.monotonic()
    try:
        found = await read_series(host, inst, job.id, charset=job.facts.charset, cache=cache, thin=thin)
    except GpuTuiError as exc:
        return SeriesRead(name, job.id, {}, False, time.monotonic() - started, exc.line(), compare)
    curves = await asyncio.to_thread(curves_of, [(s.tag, s.points) for s in found.series])
    return SeriesRead(name, job.id, curves, found.window, time.monotonic() - started, None, compare, found.thin)
