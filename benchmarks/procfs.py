"""What the benchmarks read from /proc: a process's CPU, memory and writes; the machine's CPU."""

from __future__ import annotations

import contextlib

__all__ = ["proc_cpu_ticks", "proc_wchar", "proc_mem_mib", "machine_cpu", "cpu_model"]


def proc_cpu_ticks(pid: int, *, children: bool = True) -> int:
    """utime+stime (+cutime+cstime: reaped children) of one process, all threads, in clock ticks."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        raw = f.read()
    fields = raw[raw.rindex(b")") + 2 :].split()
    own = int(fields[11]) + int(fields[12])
    return own + int(fields[13]) + int(fields[14]) if children else own


def proc_wchar(pid: int) -> int:
    """Bytes the process has passed to write-like syscalls (terminal output, plus its SSH sockets)."""
    with open(f"/proc/{pid}/io") as f:
        for line in f:
            if line.startswith("wchar:"):
                return int(line.split()[1])
    return 0


def proc_mem_mib(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) in MiB."""
    rss = hwm = 0.0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) / 1024
            elif line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) / 1024
    return rss, hwm


def machine_cpu() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine from /proc/stat."""
    with open("/proc/stat") as f:
        vals = [int(x) for x in f.readline().split()[1:]]
    idle = vals[3] + (vals[4] if len(vals) > 4 else 0)
    return sum(vals[:8]) - idle, sum(vals[:8])


def cpu_model() -> str:
    """/proc/cpuinfo's first `model name`, or ""."""
    with contextlib.suppress(OSError), open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return ""
