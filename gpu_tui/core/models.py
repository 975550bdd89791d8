"""Typed, unit-named snapshots of what an instance reports.

Every field that the source may not report is `Optional`: `None` means "not available" and is
never turned into 0. Field docstrings name the nvidia-smi query field they mirror.

These are frozen slotted dataclasses rather than pydantic models because a fleet produces
hundreds of them a second and they are built from already-typed parser output.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

__all__ = [
    "GpuSample",
    "GpuFrame",
    "GpuErrorKind",
    "GpuError",
    "GpuProcess",
    "HostStats",
]


@dataclass(frozen=True, slots=True)
class GpuSample:
    """One GPU at one instant, as one row of `nvidia-smi --query-gpu` reports it."""

    index: int
    """`index`: the GPU's index as nvidia-smi numbers it."""
    uuid: str | None
    """`uuid`: e.g. `GPU-5d0b...`; stable across reboots."""
    name: str | None
    """`name`: e.g. `NVIDIA GeForce RTX 4090`; old drivers omit the `NVIDIA ` prefix."""
    utilization_gpu: int | None = None
    """`utilization.gpu` in percent; None in MIG mode."""
    memory_used_mib: int | None = None
    """`memory.used` in MiB."""
    memory_total_mib: int | None = None
    """`memory.total` in MiB."""
    temperature_c: int | None = None
    """`temperature.gpu` in degrees Celsius."""
    power_draw_w: float | None = None
    """`power.draw` in watts; some cards report none."""
    power_limit_w: float | None = None
    """`power.limit` in watts."""
    fan_speed_percent: int | None = None
    """`fan.speed` in percent; data-centre cards have no fan."""
    mig_mode: str | None = None
    """`mig.mode.current`: `Enabled` / `Disabled`; None where MIG is not supported."""

    @property
    def memory_percent(self) -> float | None:
        """memory.used / memory.total in percent, None when either is unknown."""
        if self.memory_used_mib is None or not self.memory_total_mib:
            return None
        return 100.0 * self.memory_used_mib / self.memory_total_mib

    def as_json(self) -> dict[str, object]:
        """The `gpus[]` object of `status --json` (CONTRACTS.md)."""
        return {
            "index": self.index,
            "uuid": self.uuid,
            "name": self.name,
            "utilization_gpu": self.utilization_gpu,
            "memory_used_mib": self.memory_used_mib,
            "memory_total_mib": self.memory_total_mib,
            "temperature_c": self.temperature_c,
            "power_draw_w": self.power_draw_w,
            "power_limit_w": self.power_limit_w,
        }


@dataclass(frozen=True, slots=True)
class GpuFrame:
    """All GPUs of one host from one tick of the metrics stream."""

    taken_at: float
    """Wall-clock time (epoch seconds) when the frame was complete on our side."""
    gpus: tuple[GpuSample, ...]


class GpuErrorKind(enum.StrEnum):
    """Why the GPUs of an online instance could not be read."""

    DRIVER_FAILED = "driver failed"
    VERSION_MISMATCH = "driver/library version mismatch"
    NO_GPU = "no GPU"
    GPU_LOST = "GPU lost"
    NOT_FOUND = "nvidia-smi not found"
    PERMISSION = "nvidia-smi not permitted"
    UNKNOWN = "nvidia-smi failed"
    NO_JOB = "no running job"
    """A cluster login node (scheduler = "slurm"): its GPUs are a running job's, and none runs."""


@dataclass(frozen=True, slots=True)
class GpuError:
    """The `gpu error` state: a kind, a short human sentence and the raw line it came from."""

    kind: GpuErrorKind
    reason: str
    """In the language in force."""
    raw: str = ""
    english: str = field(default="", compare=False, repr=False)
    """`reason` in English, for `status --json` (empty: `reason` is English already)."""

    @property
    def reason_en(self) -> str:
        return self.english or self.reason


@dataclass(frozen=True, slots=True)
class GpuProcess:
    """One row of `nvidia-smi --query-compute-apps=pid,process_name,used_gpu_memory,gpu_uuid`."""

    pid: int | None
    """`pid`: inside containers this is the HOST pid."""
    process_name: str | None
    """`process_name`: a full path that may hold spaces and commas; None for `[Not Found]`."""
    used_memory_mib: int | None
    """`used_gpu_memory` in MiB; None where the driver does not report it."""
    gpu_uuid: str | None
    """`gpu_uuid`: matches GpuSample.uuid."""


@dataclass(frozen=True, slots=True)
class HostStats:
    """Host-level figures nvidia-smi lacks, from /proc and df on the instance."""

    taken_at: float
    cpu_percent: float | None = None
    """Busy share of all CPUs since the previous reading, 0-100 (None on the first reading)."""
    cpu_count: int | None = None
    """Number of CPUs in /proc/stat."""
    load1: float | None = None
    """One-minute load average from /proc/loadavg."""
    mem_used_mib: int | None = None
    """MemTotal - MemAvailable from /proc/meminfo, in MiB."""
    mem_total_mib: int | None = None
    """MemTotal from /proc/meminfo, in MiB."""
    disk_used_gib: float | None = None
    """Used space of the filesystem holding `/`, in GiB."""
    disk_total_gib: float | None = None
    """Size of the filesystem holding `/`, in GiB."""
    uptime_seconds: int | None = None
    """Age of PID 1: how long the instance (container) has been up and billing."""
    extra: dict[str, str] = field(default_factory=dict)
