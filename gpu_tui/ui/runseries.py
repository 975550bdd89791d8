"""The log screen's whole-run reads: services/jobs/series/read.read_series, its points made
curves (ui/runcurve.py) off the event loop, handed to the screen as one message (a worker never
touches a widget)."""

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

__all__ = ["SeriesRead", "read_curves"]


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


async def read_curves(
    host: Host, inst: InstanceConfig, name: str, job: JobInfo, *, compare: bool, cache: SeriesCache | None = None
) -> SeriesRead:
    """read_series, its points turned into curves off the event loop (a big run's thinning)."""
    started = time.monotonic()
    try:
        found = await read_series(host, inst, job.id, charset=job.facts.charset, cache=cache)
    except GpuTuiError as exc:
        return SeriesRead(name, job.id, {}, False, time.monotonic() - started, exc.line(), compare)
    curves = await asyncio.to_thread(curves_of, [(s.tag, s.points) for s in found.series])
    return SeriesRead(name, job.id, curves, found.window, time.monotonic() - started, None, compare)
