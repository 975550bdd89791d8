"""Who holds each GPU: the driver's compute apps joined with the processes that hold a GPU's
device file open inside the instance (issue 27).

In a container the driver answers `--query-compute-apps` with host pids (names `[Not Found]`),
or with nothing, or (the open kernel module) with the container's pids and no memory. What a
process holds open is seen from inside: services/monitor/holders.sh lists every process with
`/dev/nvidia<N>` open (`parse_scan` reads its lines). `attribute` trusts a driver pid only where
that process is here and holds that GPU, gives a lone holder the memory of a lone driver entry on
its GPU, and says how much of each GPU's memory no process here can be named for.

Pure: text in, values out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from gpu_tui.core.models import GpuProcess, GpuSample

__all__ = ["Holder", "HolderScan", "GpuHolderRow", "Attribution", "parse_scan", "attribute"]

Attributed = Literal["driver", "fd"]


@dataclass(frozen=True, slots=True)
class Holder:
    """A process of the instance that holds one or more GPU device files open."""

    pid: int
    minors: tuple[int, ...]
    """N of each `/dev/nvidia<N>` it holds (the driver's minor number, not nvidia-smi's index)."""
    uid: int | None = None
    user: str | None = None
    ppid: int | None = None
    pgrp: int | None = None
    start: int | None = None
    """Its start time in clock ticks since boot (/proc/PID/stat): with the pid, which process."""
    command: str | None = None
    """Its command line, arguments joined by spaces; remote text (print it, never mark it up)."""


@dataclass(frozen=True, slots=True)
class HolderScan:
    """One scan of the instance (holders.sh)."""

    holders: tuple[Holder, ...] = ()
    devices: tuple[int, ...] = ()
    """Minor numbers of the `/dev/nvidia<N>` this instance has."""
    bus_of_minor: Mapping[int, tuple[str, str | None]] = field(default_factory=dict)
    """Minor -> (bus id, GPU UUID) from /proc/driver/nvidia/gpus/*/information, where readable."""
    jobs: Mapping[int, str] = field(default_factory=dict)
    """A running gpu-tui job's process group -> its id."""
    render: tuple[int, ...] = ()
    """Minors of the `/dev/dri/renderD<N>` an instance without `/dev/nvidia<N>` has (AMD GPUs)."""
    vram_mib: Mapping[tuple[int, int], int] = field(default_factory=dict)
    """(pid, render minor) -> the VRAM its DRM clients hold (amdgpu's fdinfo `drm-memory-vram`)."""

    def memory_of(self, h: Holder, minors: Sequence[int]) -> int | None:
        """What fdinfo says `h` holds on those render nodes; None where it says nothing."""
        known = [self.vram_mib[(h.pid, m)] for m in minors if (h.pid, m) in self.vram_mib]
        return sum(known) if known else None

    def job_of(self, h: Holder) -> str | None:
        return self.jobs.get(h.pgrp if h.pgrp is not None else -1) or self.jobs.get(h.pid)

    def index_of_minor(self, gpus: Sequence[GpuSample]) -> dict[int, int]:
        """Minor -> nvidia-smi's GPU index: by UUID where the driver's information files say it;
        else by order (nvidia-smi numbers GPUs in PCI bus order, and a container's driver files and
        device files are its own GPUs'), only where the counts agree; else nothing is guessed."""
        by_uuid = {g.uuid: g.index for g in gpus if g.uuid}
        out = {m: by_uuid[u] for m, (_bus, u) in self.bus_of_minor.items() if u in by_uuid}
        if out:
            return out
        indexes = sorted(g.index for g in gpus)
        if self.render and len(self.render) == len(indexes):  # render nodes number the GPUs in order
            return dict(zip(sorted(self.render), indexes, strict=True))
        if self.bus_of_minor and len(self.bus_of_minor) == len(indexes):
            ranked = sorted(self.bus_of_minor, key=lambda m: self.bus_of_minor[m][0].lower())
            return dict(zip(ranked, indexes, strict=True))
        if self.devices and len(self.devices) == len(indexes):
            return dict(zip(sorted(self.devices), indexes, strict=True))
        return {}


def _int(word: str) -> int | None:
    return int(word) if word.isascii() and word.isdigit() and len(word) < 19 else None


def parse_scan(text: str) -> HolderScan:
    """holders.sh's lines; anything else is skipped (a scan is advice, never an error)."""
    minors: dict[int, list[int]] = {}
    facts: dict[int, list[int | None]] = {}
    commands: dict[int, str] = {}
    users: dict[int, str] = {}
    devices: list[int] = []
    buses: dict[int, tuple[str, str | None]] = {}
    jobs: dict[int, str] = {}
    render: list[int] = []
    vram: dict[tuple[int, int], dict[str, int]] = {}
    for line in text.splitlines():
        kind, _, rest = line.partition(" ")
        words = rest.split()
        if kind == "c" and words:
            pid = _int(words[0])
            if pid is not None:
                commands[pid] = rest.partition(" ")[2].strip()
            continue
        nums = [_int(w) for w in words]
        if kind == "h" and len(nums) == 2 and None not in nums:
            minors.setdefault(nums[0] or 0, []).append(nums[1] or 0)
        elif kind == "p" and len(nums) == 5 and nums[0] is not None:
            facts[nums[0]] = nums[1:]
        elif kind == "u" and len(words) == 2 and nums[0] is not None:
            users[nums[0]] = words[1]
        elif kind == "d" and len(nums) == 1 and nums[0] is not None:
            devices.append(nums[0])
        elif kind == "g" and len(words) == 3 and nums[0] is not None:
            buses[nums[0]] = (words[1], None if words[2] == "-" else words[2])
        elif kind == "j" and len(words) == 2 and nums[0] is not None:
            jobs[nums[0]] = words[1]
        elif kind == "r" and len(nums) == 1 and nums[0] is not None:
            render.append(nums[0])
        elif kind == "m" and len(words) >= 4 and None not in nums[:2] and nums[3] is not None:
            unit = words[4] if len(words) > 4 else ""
            per = {"": 1 / 1024 / 1024, "KiB": 1 / 1024, "MiB": 1.0, "GiB": 1024.0}.get(unit)
            if per is not None:  # one count per DRM client: a dup'd fd repeats its client id
                vram.setdefault((nums[0] or 0, nums[1] or 0), {})[words[2]] = round((nums[3] or 0) * per)
    holders = []
    for pid, held in minors.items():
        uid, ppid, pgrp, start = facts.get(pid, [None] * 4)
        holders.append(
            Holder(
                pid=pid,
                minors=tuple(sorted(set(held))),
                uid=uid,
                user=users.get(uid) if uid is not None else None,
                ppid=ppid,
                pgrp=pgrp,
                start=start,
                command=commands.get(pid) or None,
            )
        )
    holders.sort(key=lambda h: h.pid)
    vram_mib = {key: sum(clients.values()) for key, clients in vram.items()}
    return HolderScan(tuple(holders), tuple(sorted(set(devices))), buses, jobs, tuple(sorted(set(render))), vram_mib)


@dataclass(frozen=True, slots=True)
class GpuHolderRow:
    """One process on one GPU, as `status --json`'s `processes[]` says it (CONTRACTS.md)."""

    gpu: int | None
    pid: int | None
    """As the instance sees it; None: a driver entry no process here can be named for."""
    host_pid: int | None
    """The pid the driver reported (the host's, in a container); None: the driver did not list it."""
    command: str | None
    user: str | None
    job: str | None
    used_memory_mib: int | None
    attributed: Attributed
    """`driver`: the driver listed this pid and it is here; `fd`: it holds the device file."""

    def as_json(self) -> dict[str, object]:
        return {
            "gpu": self.gpu,
            "pid": self.pid,
            "host_pid": self.host_pid,
            "command": self.command,
            "user": self.user,
            "job": self.job,
            "used_memory_mib": self.used_memory_mib,
            "attributed": self.attributed,
        }


@dataclass(frozen=True, slots=True)
class Attribution:
    rows: tuple[GpuHolderRow, ...] = ()
    unnamed_mib: Mapping[int, int] = field(default_factory=dict)
    """GPU index -> memory in use there that no row here accounts for (host pids, other
    containers, or a driver that reports no memory), where that is at least UNNAMED_MIN_MIB."""

    def local(self, pid: int) -> list[GpuHolderRow]:
        """The rows of a process of the instance (one per GPU it holds)."""
        return [r for r in self.rows if r.pid == pid]

    def job_mib(self, job: str) -> int | None:
        """Memory the job's processes hold: what the driver says for them, plus, on a GPU that only
        the job's processes hold, what no one is named for; None where nothing is known."""
        mine = [r for r in self.rows if r.job == job]
        if not mine:
            return None
        total, known = 0, False
        for r in mine:
            if r.used_memory_mib is not None:
                total, known = total + r.used_memory_mib, True
        for gpu in {r.gpu for r in mine if r.gpu is not None}:
            if gpu in self.unnamed_mib and all(r.job == job for r in self.rows if r.gpu == gpu):
                total, known = total + self.unnamed_mib[gpu], True
        return total if known else None


UNNAMED_MIN_MIB = 256
"""Below this, a GPU's unexplained memory is the driver's own (reserved memory, persistence mode):
a process's CUDA context alone takes more than this."""


def _roots(group: list[Holder]) -> list[Holder]:
    """The holders whose parent is not among them: forked workers inherit their parent's device
    files, so a process and its DataLoader workers are one root."""
    pids = {h.pid for h in group}
    return [h for h in group if h.ppid not in pids]


def attribute(driver: Sequence[GpuProcess], scan: HolderScan | None, gpus: Sequence[GpuSample]) -> Attribution:
    """Rows for every GPU process: driver entries confirmed here, holders found here, and driver
    entries no process here answers to (host pids)."""
    index_of_uuid = {g.uuid: g.index for g in gpus if g.uuid}
    if scan is None:  # nothing seen from inside: the driver's word, its pids not the instance's
        told = [_stray(index_of_uuid.get(p.gpu_uuid or ""), p) for p in driver]
        return Attribution(tuple(told), _unnamed(told, gpus))
    minor_index = scan.index_of_minor(gpus)
    by_pid = {h.pid: h for h in scan.holders}
    held: dict[int | None, list[Holder]] = {}  # GPU index -> holders not yet matched
    render = set(scan.render)
    for h in scan.holders:
        for m in h.minors:
            if m in render and m not in minor_index:
                continue  # a render node that is no GPU gpu-tui reads (an iGPU, a virtual display)
            held.setdefault(minor_index.get(m), []).append(h)
    rows: list[GpuHolderRow] = []

    def row(gpu: int | None, h: Holder, host_pid: int | None, mib: int | None, how: Attributed) -> GpuHolderRow:
        return GpuHolderRow(gpu, h.pid, host_pid, h.command, h.user, scan.job_of(h), mib, how)

    strays: dict[int | None, list[GpuProcess]] = {}
    for p in driver:
        gpu = index_of_uuid.get(p.gpu_uuid or "")
        found = by_pid.get(p.pid) if p.pid is not None else None
        here = held.get(gpu, [])
        if found is not None and (found in here or (gpu is not None and found in held.get(None, []))):
            (here if found in here else held[None]).remove(found)
            rows.append(row(gpu, found, p.pid, p.used_memory_mib, "driver"))
        else:
            strays.setdefault(gpu, []).append(p)
    for gpu in sorted(set(held) | set(strays), key=lambda g: -1 if g is None else g):
        local, others = held.get(gpu, []), strays.get(gpu, [])
        roots = _roots(local)
        if gpu is not None and len(roots) == 1 and len(others) == 1:
            p = others.pop()
            rows.append(row(gpu, roots[0], p.pid, p.used_memory_mib, "fd"))
            local = [h for h in local if h is not roots[0]]
        for h in local:  # on an AMD GPU, what its DRM clients hold (fdinfo), else unknown
            minors = [m for m in h.minors if minor_index.get(m) == gpu]
            rows.append(row(gpu, h, None, scan.memory_of(h, minors), "fd"))
        rows.extend(_stray(gpu, p) for p in others)
    rows.sort(key=lambda r: (99 if r.gpu is None else r.gpu, r.pid is None, -(r.used_memory_mib or 0), r.pid or 0))
    return Attribution(tuple(rows), _unnamed(rows, gpus))


def _stray(gpu: int | None, p: GpuProcess) -> GpuHolderRow:
    """A driver entry no process here answers to: its pid is the host's."""
    return GpuHolderRow(gpu, None, p.pid, p.process_name, None, None, p.used_memory_mib, "driver")


def _unnamed(rows: Sequence[GpuHolderRow], gpus: Sequence[GpuSample]) -> dict[int, int]:
    out = {}
    for g in gpus:
        if g.memory_used_mib is None:
            continue
        named = sum(r.used_memory_mib or 0 for r in rows if r.gpu == g.index and r.pid is not None)
        left = g.memory_used_mib - named
        if left >= UNNAMED_MIN_MIB:
            out[g.index] = left
    return out
