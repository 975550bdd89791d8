"""Parse the host-stats probe's output (CPU, memory, disk, instance uptime) into `HostStats`.

The probe prints tagged lines (`cpu ...`, `mem ...`, `disk ...`, `up ...`) read from /proc with
shell builtins, so one iteration costs the instance almost nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpu_tui.core.models import HostStats

__all__ = ["CpuTimes", "parse_probe", "cpu_percent"]


@dataclass(frozen=True, slots=True)
class CpuTimes:
    """The aggregate `cpu` line of /proc/stat, reduced to busy and total jiffies."""

    busy: int
    total: int


def cpu_percent(prev: CpuTimes | None, cur: CpuTimes | None) -> float | None:
    """Busy share of all CPUs between two readings, 0-100; None without a usable pair."""
    if prev is None or cur is None or cur.total <= prev.total:
        return None
    return max(0.0, min(100.0, 100.0 * (cur.busy - prev.busy) / (cur.total - prev.total)))


def _cpu_times(fields: list[str]) -> CpuTimes | None:
    try:
        nums = [int(x) for x in fields]
    except ValueError:
        return None
    if len(nums) < 4:
        return None
    idle = nums[3] + (nums[4] if len(nums) > 4 else 0)  # idle + iowait
    total = sum(nums[:8])  # guest time is already counted in user
    return CpuTimes(busy=total - idle, total=total)


def _pid1_age(fields: list[str]) -> int | None:
    # up <host-uptime-seconds> <CLK_TCK> <contents of /proc/1/stat>
    try:
        host_up = float(fields[0])
        tck = int(fields[1])
        stat = " ".join(fields[2:])
        after_comm = stat.rsplit(")", 1)[1].split()
        start_ticks = int(after_comm[19])  # field 22 of /proc/PID/stat
    except (IndexError, ValueError, ZeroDivisionError):
        return None
    if tck <= 0:
        return None
    age = host_up - start_ticks / tck
    return int(age) if age >= 0 else None


def parse_probe(
    lines: list[str], taken_at: float, prev_cpu: CpuTimes | None = None
) -> tuple[HostStats, CpuTimes | None]:
    """One iteration's lines -> (HostStats, the CPU reading to pass as `prev_cpu` next time)."""
    cpu: CpuTimes | None = None
    values: dict[str, object] = {}
    mem: dict[str, int] = {}
    for line in lines:
        tag, _, rest = line.partition(" ")
        fields = rest.split()
        if tag == "cpu":
            cpu = _cpu_times(fields)
        elif tag == "ncpu" and fields and fields[0].isdigit():
            values["cpu_count"] = int(fields[0])
        elif tag == "load" and fields:
            try:
                values["load1"] = float(fields[0])
            except ValueError:
                pass
        elif tag == "mem" and len(fields) >= 2 and fields[1].isdigit():
            mem[fields[0].rstrip(":")] = int(fields[1])  # kB
        elif tag == "disk" and len(fields) >= 2 and fields[0].isdigit() and fields[1].isdigit():
            values["disk_total_gib"] = round(int(fields[0]) / 1024**2, 2)
            values["disk_used_gib"] = round(int(fields[1]) / 1024**2, 2)
        elif tag == "up":
            values["uptime_seconds"] = _pid1_age(fields)
    if "MemTotal" in mem:
        values["mem_total_mib"] = mem["MemTotal"] // 1024
        if "MemAvailable" in mem:
            values["mem_used_mib"] = (mem["MemTotal"] - mem["MemAvailable"]) // 1024
    stats = HostStats(taken_at=taken_at, cpu_percent=cpu_percent(prev_cpu, cpu), **values)  # type: ignore[arg-type]
    return stats, cpu
