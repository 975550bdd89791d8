"""Bounded per-GPU history of utilisation and memory, for sparklines and charts."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from gpu_tui.core.models import GpuFrame

__all__ = ["GpuHistory", "HostHistory"]


@dataclass(slots=True)
class GpuHistory:
    """The last `maxlen` samples of one GPU; None marks a tick where the value was unavailable."""

    maxlen: int
    utilization: deque[int | None] = field(init=False)
    memory_used_mib: deque[int | None] = field(init=False)
    memory_total_mib: int | None = None

    def __post_init__(self) -> None:
        self.utilization = deque(maxlen=self.maxlen)
        self.memory_used_mib = deque(maxlen=self.maxlen)


class HostHistory:
    """History for every GPU of one host, keyed by GPU index; memory stays bounded forever."""

    def __init__(self, maxlen: int = 600) -> None:
        self.maxlen = maxlen
        self.gpus: dict[int, GpuHistory] = {}
        self.times: deque[float] = deque(maxlen=maxlen)
        self.cpu: deque[tuple[float, float]] = deque(maxlen=maxlen)
        """(taken_at, busy % of all CPUs) of each host-stats reading (the low-utilisation rule)."""

    def append_cpu(self, taken_at: float, percent: float | None) -> None:
        if percent is not None:
            self.cpu.append((taken_at, percent))

    def append(self, frame: GpuFrame) -> None:
        self.times.append(frame.taken_at)
        for g in frame.gpus:
            h = self.gpus.get(g.index)
            if h is None:
                h = self.gpus[g.index] = GpuHistory(self.maxlen)
            h.utilization.append(g.utilization_gpu)
            h.memory_used_mib.append(g.memory_used_mib)
            if g.memory_total_mib:
                h.memory_total_mib = g.memory_total_mib
