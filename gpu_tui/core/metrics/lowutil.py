"""Low GPU utilisation, and what it most likely means: the data loader or a small batch.

The rule reads the samples the dashboard already keeps (`HostHistory`: GPU utilisation and
memory per tick, CPU busy % per host-stats reading) over the last WINDOW_S seconds:

- GPUs in use (above the idle threshold: an idle card is the idle warning's business) but
  under LOW_PERCENT on average, and
- the CPU saturated (CPU_BUSY_PERCENT or more): the input pipeline cannot keep the GPU fed;
- the CPU mostly idle (under CPU_IDLE_PERCENT) and VRAM mostly free (under VRAM_LOW_SHARE):
  each step gives the GPU too little work (the batch is small).

Anything else (CPU half busy, VRAM full) gets no advice: a guess there would mislead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gpu_tui.core.i18n import _
from gpu_tui.core.metrics.history import HostHistory

__all__ = ["LowUtil", "assess", "WINDOW_S", "LOW_PERCENT"]

WINDOW_S = 600.0
"""How long utilisation must stay low before advice is given (10 minutes)."""
LOW_PERCENT = 30.0
CPU_BUSY_PERCENT = 85.0
CPU_IDLE_PERCENT = 40.0
VRAM_LOW_SHARE = 0.5
MIN_COVERAGE = 0.8
"""Share of the window's GPU ticks that must carry a utilisation (MIG reports none)."""
SPAN_SHARE = 0.95
FRESH_S = 30.0
"""The newest sample must be this recent: a dropped link is not low utilisation."""


@dataclass(frozen=True, slots=True)
class LowUtil:
    """Low utilisation over the window, and its likely cause."""

    kind: Literal["loader", "batch"]
    gpu_percent: float
    """Mean utilisation of the GPUs in use over the window."""
    cpu_percent: float
    vram_share: float
    """Used / total VRAM, 0-1, at the latest tick (the GPUs in use)."""
    minutes: int

    def headline(self) -> str:
        """One short line: what is low and why (the host panel, the notification's title)."""
        pct = f"{self.gpu_percent:.0f}%"
        if self.kind == "loader":
            return _(
                "GPU only {percent} busy for {minutes} min while the CPU is saturated: "
                "the data loader is the bottleneck"
            ).format(percent=pct, minutes=self.minutes)
        return _(
            "GPU only {percent} busy for {minutes} min with the CPU idle and VRAM mostly free: the batch is small"
        ).format(percent=pct, minutes=self.minutes)

    def advice(self) -> str:
        """What to try, in one line."""
        if self.kind == "loader":
            return _(
                "Try more DataLoader workers (num_workers), pin_memory=True, and moving "
                "preprocessing/augmentation onto the GPU."
            )
        return _(
            "Try a larger batch size (scale the learning rate with it), or fewer "
            "synchronisations per step (.item(), printing every step)."
        )


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def assess(history: HostHistory, now: float, *, idle_below: float = 5.0) -> LowUtil | None:
    """The advice for one host now, or None (not low, not long enough, or no clear cause)."""
    times = list(history.times)
    # the history holds about WINDOW_S of ticks (600 at 1 s): "nearly all of it" must do
    if not times or now - times[-1] > FRESH_S or now - times[0] < WINDOW_S * SPAN_SHARE:
        return None
    start = now - WINDOW_S
    first = next(i for i, t in enumerate(times) if t >= start)
    n = len(times) - first
    in_use: list[float] = []
    vram: list[float] = []
    for gpu in history.gpus.values():
        util = list(gpu.utilization)[-n:] if len(gpu.utilization) >= n else []
        known = [u for u in util if u is not None]
        if len(known) < MIN_COVERAGE * n:
            continue
        mean = _mean([float(u) for u in known])
        if mean < idle_below:
            continue  # an idle card: the idle warning speaks for it
        in_use.append(mean)
        used = gpu.memory_used_mib[-1] if gpu.memory_used_mib else None
        if used is not None and gpu.memory_total_mib:
            vram.append(used / gpu.memory_total_mib)
    if not in_use or _mean(in_use) >= LOW_PERCENT:
        return None
    cpu = [p for t, p in history.cpu if t >= start]
    if len(cpu) < 2:
        return None
    cpu_mean, gpu_mean = _mean(cpu), _mean(in_use)
    share = max(vram) if vram else 1.0
    minutes = int(WINDOW_S // 60)
    if cpu_mean >= CPU_BUSY_PERCENT:
        return LowUtil("loader", gpu_mean, cpu_mean, share, minutes)
    if cpu_mean < CPU_IDLE_PERCENT and share < VRAM_LOW_SHARE:
        return LowUtil("batch", gpu_mean, cpu_mean, share, minutes)
    return None
