#!/usr/bin/env python3
"""Metrics-path cost at fleet scale: gpu-tui's streams vs one nvidia-smi exec per sample.

Against N simulated instances on loopback (real OpenSSH sshd per instance, tests/sshd.py) at
1 Hz, for N = 16 and 64 (``--sizes``), measure over a fixed window:

- client CPU: ``time.process_time()`` delta of this process (the asyncio loop running every
  ``HostMonitor`` and asyncssh), as CPU-seconds per host-hour and as % of one core;
- samples delivered / expected: GPU frames (8 GPUs each) that reached the client inside the
  window vs N x window x 1 Hz;
- instance-side CPU: every process under the N sshd listeners (per-connection sshd, shells,
  the fake nvidia-smi, the stats loop and what it runs): from a cgroup holding the listeners
  when root can make one (``CpuGroup``, exact), and always from /proc as a cross-check
  (``tree_cpu_ticks``);
- client RSS at the end of the window.

At N = 16 (``--naive-n``) the naive way runs too, in the same invocation, on fresh instances:
one ``nvidia-smi --query-gpu=... --format=csv,noheader,nounits`` exec per second per host over
the same kind of SshHost connection; a sample counts as delivered when it arrived within its
second. The ratios naive / stream are printed.

The fake ``nvidia-smi`` here is deliberately cheap (a POSIX sh script with the frame baked in,
``printf`` builtin, one ``sleep`` per tick in loop mode) so the figures are about gpu-tui and
sshd rather than about the Python fake the tests use. It answers exactly the two queries the
monitor makes (the GPU query, one-shot or ``-lms``, and the compute-apps query); anything else
is handed to the tests' full Python fake, installed next to it as ``nvidia-smi-full``.

This is a measurement script, not a test: it asserts nothing about time. Needs what the sshd
test tier needs (root, /usr/sbin/sshd). Run::

    python benchmarks/bench_metrics.py --quick              # ~1.2 min smoke run (15 s windows)
    python benchmarks/bench_metrics.py --json out.json      # 60 s windows, N = 16 and 64, ~3.5 min

Cleanup: every sshd it started and what their sessions started is killed at the end, on
Ctrl-C and on SIGTERM (``SshdSession.cleanup`` + ``kill_all_started``), and its cgroups are
removed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import json
import logging
import math
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TESTS = REPO / "tests"
for p in (str(REPO), str(TESTS)):
    if p not in sys.path:
        sys.path.insert(0, p)

import asyncssh  # noqa: E402
import livefake  # noqa: E402  (tests/livefake.py)
import sshd as sshd_lib  # noqa: E402  (tests/sshd.py)
from procfs import cpu_model  # noqa: E402  (benchmarks/)
from sshhelp import ssh_host  # noqa: E402  (tests/sshhelp.py)

from gpu_tui.core.errors import RemoteError  # noqa: E402
from gpu_tui.core.metrics import nvsmi  # noqa: E402
from gpu_tui.services.events import (  # noqa: E402
    ConnState,
    GpuErrorChanged,
    GpuFrameReceived,
    HostStatsReceived,
    ProcessesReceived,
    StateChanged,
)
from gpu_tui.services.monitor import probes  # noqa: E402
from gpu_tui.services.monitor.host import HostMonitor  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
HZ = 1.0  # samples per second per host (refresh_seconds = 1.0)
CONNECT_TIMEOUT = 30.0  # a 64-host connect storm on 2 cores is slow; the app default is 10 s
STAGGER = 0.02  # seconds between starting one host's connection and the next

CHEAP_FAKE = r"""#!/bin/sh
# Cheap fake nvidia-smi, written by benchmarks/bench_metrics.py (not the tests' fake).
# The two queries gpu-tui's monitor makes are answered from frames baked in below
# (rendered once by the tests' fake: {gpus} x {capture}).
# Anything else goes to the tests' full fake.
FRAME='{frame}'
APPS='{apps}'
kind= ms= want=
for a do
    if [ -n "$want" ]; then ms=$a; want=; continue; fi
    case $a in
        '--query-gpu={gpu_fields}') kind=gpu ;;
        '--query-compute-apps={apps_fields}') kind=apps ;;
        --format=csv,noheader,nounits) ;;
        -lms) want=1 ;;
        *) exec "${{0%/*}}/nvidia-smi-full" "$@" ;;
    esac
done
case $kind in
    gpu) ;;
    apps) [ -n "$ms" ] && exec "${{0%/*}}/nvidia-smi-full" "$@"; printf '%s' "$APPS"; exit 0 ;;
    *) exec "${{0%/*}}/nvidia-smi-full" "$@" ;;
esac
if [ -z "$ms" ]; then printf '%s' "$FRAME"; exit 0; fi
# Ticks on an absolute schedule (like a timer, no drift): the clock is /proc/uptime (10 ms
# steps) read with a builtin, so a tick costs one fork, the sleep.
read -r u _ < /proc/uptime; u=${{u%.*}}${{u#*.}}; next=$((u * 10))
while :; do
    printf '%s' "$FRAME" || exit 0
    next=$((next + ms))
    read -r u _ < /proc/uptime; u=${{u%.*}}${{u#*.}}; d=$((next - u * 10))
    if [ "$d" -gt 0 ]; then f=$((d % 1000 + 1000)); sleep "$((d / 1000)).${{f#1}}"; fi
done
"""


# ------------------------------------------------------------------------------ measuring


def _all_stats() -> dict[int, list[bytes]]:
    """/proc/PID/stat fields after the command name, for every process (one pass)."""
    out: dict[int, list[bytes]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                raw = f.read()
        except OSError:
            continue
        out[int(name)] = raw[raw.rindex(b")") + 2 :].split()
    return out


def tree_cpu_ticks(roots: list[int]) -> int:
    """CPU ticks (utime+stime+cutime+cstime) of ``roots`` and every live descendant.

    cutime/cstime hold the CPU of children a process has waited for (and, recursively, what
    those had reaped), so short-lived processes (a shell per exec, ``sleep``, ``df``) count
    once their parent (a per-connection sshd, a shell, the listener) reaps them, and a live
    process's own time counts while it runs; nothing is counted twice. Between two snapshots
    the difference is the instance side's CPU in that interval. Missed: processes reparented
    out of the tree (a stream's orphaned ``sleep`` after its connection closed) and zombies'
    children; both are negligible here."""
    stats = _all_stats()
    kids: dict[int, list[int]] = {}
    for pid, f in stats.items():
        kids.setdefault(int(f[1]), []).append(pid)
    total = 0
    stack = [r for r in roots if r in stats]
    while stack:
        pid = stack.pop()
        f = stats[pid]
        total += int(f[11]) + int(f[12]) + int(f[13]) + int(f[14])
        stack.extend(kids.get(pid, ()))
    return total


def machine_cpu() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine from /proc/stat."""
    with open("/proc/stat") as f:
        vals = [int(x) for x in f.readline().split()[1:]]
    idle = vals[3] + (vals[4] if len(vals) > 4 else 0)
    return sum(vals[:8]) - idle, sum(vals[:8])


def rss_mib() -> tuple[float, float]:
    """(VmRSS, VmHWM) of this process in MiB."""
    rss = hwm = 0.0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) / 1024
            elif line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) / 1024
    return rss, hwm


GROUP_PREFIX = "gpu-tui-bench-"


class CpuGroup:
    """A cgroup holding one configuration's sshd listeners; everything they fork inherits it.

    Its CPU counter (cgroup v2 ``cpu.stat`` usage_usec, or v1 ``cpuacct.usage``) is exact (ns
    accounting, not 10 ms ticks per process) and keeps the CPU of every process that ever ran
    in it, reaped or orphaned. Used when the machine lets root make one; the /proc tree sum
    (``tree_cpu_ticks``) is always taken too, as a cross-check."""

    BASES = (
        ("/sys/fs/cgroup", "cpu.stat", "cgroup v2"),
        ("/sys/fs/cgroup/unified", "cpu.stat", "cgroup v2"),
        ("/sys/fs/cgroup/cpuacct", "cpuacct.usage", "cgroup v1 cpuacct"),
    )

    def __init__(self, path: Path, stat: str, kind: str) -> None:
        self.path, self.stat, self.kind = path, stat, kind

    @classmethod
    def create(cls, label: str) -> CpuGroup | None:
        for base, stat, kind in cls.BASES:
            b = Path(base)
            if not (b / "cgroup.procs").exists() or not os.access(b, os.W_OK):
                continue
            cls._remove_stale(b)
            path = b / f"{GROUP_PREFIX}{os.getpid()}-{label}"
            try:
                path.mkdir()
            except OSError:
                continue
            if (path / stat).exists():
                return cls(path, stat, kind)
            with contextlib.suppress(OSError):
                path.rmdir()
        return None

    @staticmethod
    def _remove_stale(base: Path) -> None:
        """Empty groups left by a run that was SIGKILLed (its pid is gone)."""
        for d in base.glob(GROUP_PREFIX + "*"):
            pid = d.name[len(GROUP_PREFIX) :].split("-", 1)[0]
            if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
                with contextlib.suppress(OSError):
                    d.rmdir()

    def add(self, pid: int) -> None:
        (self.path / "cgroup.procs").write_text(f"{pid}\n")

    def usage_s(self) -> float:
        text = (self.path / self.stat).read_text()
        if self.stat == "cpuacct.usage":
            return int(text) / 1e9
        for line in text.splitlines():
            if line.startswith("usage_usec "):
                return int(line.split()[1]) / 1e6
        raise OSError(f"no usage_usec in {self.path / self.stat}")

    def remove(self) -> None:
        """rmdir once empty (the instances were killed before); our own stragglers are killed."""
        deadline = time.monotonic() + 3.0
        while True:
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    print(f"# WARNING: could not remove {self.path}", file=sys.stderr)
                    return
            with contextlib.suppress(OSError):
                pids = [int(x) for x in (self.path / "cgroup.procs").read_text().split()]
                for pid in pids:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
            time.sleep(0.05)


class Window:
    """Snapshots around the measured window."""

    def __init__(self, listeners: list[int], group: CpuGroup | None) -> None:
        self.listeners = listeners
        self.group = group

    def start(self) -> None:
        self.inst0 = tree_cpu_ticks(self.listeners)
        self.grp0 = self.group.usage_s() if self.group else None
        self.mach0 = machine_cpu()
        self.cpu0 = time.process_time()
        self.t0 = time.monotonic()

    def stop(self) -> None:
        self.t1 = time.monotonic()
        self.cpu1 = time.process_time()
        self.mach1 = machine_cpu()
        self.grp1 = self.group.usage_s() if self.group else None
        self.inst1 = tree_cpu_ticks(self.listeners)

    def figures(self, n: int, delivered: int, expected: int) -> dict[str, Any]:
        elapsed = self.t1 - self.t0
        host_hours = n * elapsed / 3600.0
        client = self.cpu1 - self.cpu0
        tree = (self.inst1 - self.inst0) / CLK_TCK
        inst = (self.grp1 - self.grp0) if self.group else tree
        busy = self.mach1[0] - self.mach0[0]
        total = self.mach1[1] - self.mach0[1]
        rss, hwm = rss_mib()
        return {
            "n": n,
            "window_s": round(elapsed, 2),
            "client_cpu_s": round(client, 3),
            "client_cpu_s_per_host_hour": round(client / host_hours, 2),
            "client_cpu_pct_of_core": round(100 * client / elapsed, 2),
            "delivered": delivered,
            "expected": expected,
            "delivered_pct": round(100 * delivered / expected, 2) if expected else None,
            "instance_cpu_s": round(inst, 2),
            "instance_cpu_s_per_host_hour": round(inst / host_hours, 2),
            "instance_cpu_pct_of_core": round(100 * inst / elapsed, 2),
            "instance_cpu_method": self.group.kind if self.group else "/proc tree",
            "instance_cpu_s_proc_tree": round(tree, 2),
            "instance_cpu_s_per_host_hour_proc_tree": round(tree / host_hours, 2),
            "machine_busy_pct": round(100 * busy / total, 1) if total else None,
            "client_rss_mib": round(rss, 1),
            "client_rss_hwm_mib": round(hwm, 1),
        }


# ------------------------------------------------------------------------------ instances


FRAMES = ("static", "live")


class Bench:
    """The instances: real sshd each, with a cheap fake nvidia-smi.

    `frames="static"`: CHEAP_FAKE (whatever a benchmark set it to), one baked-in frame every
    tick. `frames="live"`: tests/livefake.py's fork-free fake whose every frame moves; instance
    i of a `make` call gets the walk seeded `seed * 100003 + i + 1`, so runs compare. Either is
    checked once before the first instance starts (`check_fake`).
    """

    def __init__(self, capture: str | None, gpus: int, frames: str = "static", seed: int = 1) -> None:
        if frames not in FRAMES:
            raise ValueError(f"frames must be one of {FRAMES}, not {frames!r}")
        self.session = sshd_lib.SshdSession(password_user=False)
        self.capture = capture
        self.gpus = gpus
        self.frames = frames
        self.seed = seed
        self.fake_text: str | None = None

    def _render_fake(self, inst: sshd_lib.SshdInstance) -> str:
        full = inst.bin_dir / "nvidia-smi"
        env = {"PATH": sshd_lib.SBIN_PATH, "FAKE_NVSMI_DIR": str(inst.nvsmi_dir)}

        def ask(argv: list[str]) -> str:
            p = subprocess.run([str(full), *argv[1:]], env=env, capture_output=True, text=True, check=True)
            return p.stdout

        frame = ask(nvsmi.query_gpu_argv(None))
        apps = ask(nvsmi.compute_apps_argv())
        rows = nvsmi.parse_rows(frame)
        if len(rows) != self.gpus or "'" in frame + apps:
            raise SystemExit(f"rendered frame unusable: {len(rows)} rows\n{frame}")
        if self.frames == "live":
            return livefake.script(frame, ",".join(nvsmi.COMPUTE_APPS_FIELDS), self.gpus)
        return CHEAP_FAKE.format(
            frame=frame,
            apps=apps,
            gpus=self.gpus,
            capture=inst.capture,
            gpu_fields=",".join(nvsmi.QUERY_FIELDS),
            apps_fields=",".join(nvsmi.COMPUTE_APPS_FIELDS),
        )

    def make(self, prefix: str, n: int, group: CpuGroup | None) -> list[sshd_lib.SshdInstance]:
        made = []
        for i in range(n):
            inst = self.session.instance(f"{prefix}{i:02d}", capture=self.capture, gpus=self.gpus, start=False)
            if self.fake_text is None:
                self.fake_text = self._render_fake(inst)
            full = inst.bin_dir / "nvidia-smi-full"
            os.replace(inst.bin_dir / "nvidia-smi", full)
            cheap = inst.bin_dir / "nvidia-smi"
            cheap.write_text(livefake.with_seed(self.fake_text, self.seed * 100003 + i + 1))
            os.chmod(cheap, 0o755)
            if i == 0:
                self.check_fake(cheap)
            inst.start()
            made.append(inst)
            if group is not None:
                group.add(inst._proc.pid)  # no session yet: all of its sessions will be inside
        return made

    def check_fake(self, fake: Path) -> None:
        """Three ticks of the loop at 50 ms: 8 parsable rows each; with live frames, no two
        ticks alike in what the dashboard shows (a fake that stopped moving would measure the
        cache again)."""
        argv = [str(fake), *nvsmi.query_gpu_argv(50)[1:]]
        env = {"PATH": sshd_lib.SBIN_PATH, "TMPDIR": str(fake.parent)}
        try:
            p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=0.5)
            out = p.stdout
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        lines = [ln for ln in out.splitlines() if ln]
        frames = ["\n".join(lines[k : k + self.gpus]) for k in range(0, len(lines) - self.gpus + 1, self.gpus)]
        if len(frames) < 3 or any(len(nvsmi.parse_rows(f + "\n")) != self.gpus for f in frames[:3]):
            raise SystemExit(f"the fake nvidia-smi ({self.frames}) gave no 3 ticks of {self.gpus} rows:\n{out[:2000]}")
        moving = all(a != b for a, b in zip(frames, frames[1:3], strict=False))
        if self.frames == "live" and not moving:
            raise SystemExit(f"the live fake repeated a frame:\n{out[:2000]}")

    @staticmethod
    def host(inst: sshd_lib.SshdInstance):
        d = inst.dir / "client"
        d.mkdir(exist_ok=True)
        return ssh_host(inst, d, timeout=CONNECT_TIMEOUT, keepalive=(5.0, 2))

    @staticmethod
    def drop(insts: list[sshd_lib.SshdInstance]) -> None:
        for inst in insts:
            inst.kill()

    def cleanup(self) -> None:
        old = signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second TERM must not cut this short
        try:
            self.session.cleanup()
        finally:
            sshd_lib.kill_all_started()
            signal.signal(signal.SIGTERM, old)

    def leftovers(self) -> list[int]:
        """Processes still running from this session root: listeners (by command line) and
        whatever the sessions started (by the instances' environment mark)."""
        needle = (str(self.session.root) + "/").encode()
        found = set(sshd_lib.marked_processes(needle.decode()))
        for name in os.listdir("/proc"):
            if name.isdigit():
                with contextlib.suppress(OSError):
                    with open(f"/proc/{name}/cmdline", "rb") as f:
                        if needle in f.read():
                            found.add(int(name))
        return sorted(found)


# ------------------------------------------------------------------------------ the two ways


async def _wait_for(pred, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > end:
            return False
        await asyncio.sleep(0.05)
    return True


async def run_stream(
    insts: list[sshd_lib.SshdInstance], group: CpuGroup | None, seconds: float, warmup_timeout: float
) -> dict[str, Any]:
    """gpu-tui's way: one HostMonitor per instance (nvidia-smi -lms stream + stats loop)."""
    n = len(insts)
    frames = {inst.name: 0 for inst in insts}
    arrivals: dict[str, list[float]] = {inst.name: [] for inst in insts}
    bad_frames = 0
    offline = 0
    gpu_errors = 0
    side = {"stats": 0, "procs": 0}

    def emit(e) -> None:
        nonlocal bad_frames, offline, gpu_errors
        if isinstance(e, HostStatsReceived):
            side["stats"] += 1
        elif isinstance(e, ProcessesReceived):
            side["procs"] += 1
        elif isinstance(e, GpuFrameReceived):
            frames[e.name] += 1
            arrivals[e.name].append(time.monotonic())
            if len(e.frame.gpus) != inst_gpus:
                bad_frames += 1
        elif isinstance(e, StateChanged) and e.state not in (ConnState.CONNECTING, ConnState.ONLINE):
            offline += 1
        elif isinstance(e, GpuErrorChanged) and e.error is not None:
            gpu_errors += 1

    inst_gpus = insts[0].gpus
    monitors = [HostMonitor(Bench.host(inst), emit, refresh_seconds=1.0 / HZ) for inst in insts]
    cpu_a, t_a = time.process_time(), time.monotonic()
    tasks = []
    for m in monitors:
        tasks.append(asyncio.create_task(m.run()))
        await asyncio.sleep(STAGGER)
    try:
        ready = await _wait_for(lambda: all(frames.values()), warmup_timeout)
        setup = {
            "ready_s": round(time.monotonic() - t_a, 2),
            "ready_client_cpu_s": round(time.process_time() - cpu_a, 2),
            "hosts_ready": sum(1 for v in frames.values() if v),
        }
        await asyncio.sleep(1.0)  # let the first stats-loop round and the connect burst settle
        win = Window([inst._proc.pid for inst in insts], group)
        c0 = dict(frames)
        off0, bad0, err0 = offline, bad_frames, gpu_errors
        side0 = dict(side)
        win.start()
        await asyncio.sleep(seconds)
        win.stop()
        c1 = dict(frames)
        delivered = sum(c1[k] - c0[k] for k in c1)
        expected = round(n * (win.t1 - win.t0) * HZ)
        out = win.figures(n, delivered, expected)
        periods = []
        for times in arrivals.values():
            inside = [t for t in times if win.t0 <= t < win.t1]
            if len(inside) > 1:
                periods.append((inside[-1] - inside[0]) / (len(inside) - 1))
        out["mean_frame_period_s"] = round(sum(periods) / len(periods), 4) if periods else None
        out.update(
            way="stream",
            ready=ready,
            **setup,
            offline_events=offline - off0,
            bad_frames=bad_frames - bad0,
            gpu_errors=gpu_errors - err0,
            min_host_delivered=min(c1[k] - c0[k] for k in c1),
            max_host_delivered=max(c1[k] - c0[k] for k in c1),
            stats_blocks=side["stats"] - side0["stats"],
            process_lists=side["procs"] - side0["procs"],
        )
        return out
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def run_naive(
    insts: list[sshd_lib.SshdInstance], group: CpuGroup | None, seconds: float, warmup_timeout: float
) -> dict[str, Any]:
    """The naive way: every second, per host, exec nvidia-smi once over the host's connection."""
    n = len(insts)
    hosts = [Bench.host(inst) for inst in insts]
    cmd = probes.gpu_once_command()
    gpus = insts[0].gpus
    samples: list[list[tuple[float, float, bool]]] = [[] for _ in hosts]  # (tick, done, ok)
    bases: list[float] = [0.0] * n
    cpu_a, t_a = time.process_time(), time.monotonic()

    async def connect(h) -> bool:
        for _ in range(3):
            try:
                await h.connect()
                return True
            except RemoteError:
                await asyncio.sleep(1.0)
        return False

    async def loop(i: int, h) -> None:
        base = bases[i]
        k = 0
        while True:
            tick = base + k / HZ
            delay = tick - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            ok = False
            try:
                res = await h.run(cmd, timeout=5.0)
                ok = res.exit_status == 0 and len(nvsmi.parse_rows(res.stdout)) == gpus
            except RemoteError:
                pass
            done = time.monotonic()
            samples[i].append((tick, done, ok))
            # next tick: the next one not yet past (a late sample skips the ticks it overran)
            k = max(k + 1, math.ceil((done - base) * HZ))

    conns = []
    for h in hosts:
        conns.append(asyncio.create_task(connect(h)))
        await asyncio.sleep(STAGGER)
    tasks: list[asyncio.Task] = []
    try:
        oks = await asyncio.wait_for(asyncio.gather(*conns), warmup_timeout)
        start = time.monotonic() + 0.5
        for i, h in enumerate(hosts):
            bases[i] = start + i / (n * HZ)  # phases spread over the second (kind to the naive way)
            tasks.append(asyncio.create_task(loop(i, h)))
        ready = await _wait_for(lambda: all(s for s in samples), warmup_timeout)
        setup = {
            "ready_s": round(time.monotonic() - t_a, 2),
            "ready_client_cpu_s": round(time.process_time() - cpu_a, 2),
            "hosts_ready": sum(1 for s in samples if s),
        }
        await asyncio.sleep(1.0)
        win = Window([inst._proc.pid for inst in insts], group)
        win.start()
        await asyncio.sleep(seconds)
        win.stop()
        # samples in flight at the window's end belong to it: give them their second to arrive
        await asyncio.sleep(1.0 / HZ + 0.1)
        delivered = expected = 0
        late = failed = 0
        lat: list[float] = []
        per_host = []
        for i in range(n):
            # ticks scheduled inside the window, whether or not a sample was attempted
            first = math.ceil((win.t0 - bases[i]) * HZ)
            last = math.ceil((win.t1 - bases[i]) * HZ)  # exclusive
            expected += last - first
            got = 0
            for tick, done, ok in samples[i]:
                if not (win.t0 <= tick < win.t1):
                    continue
                lat.append(done - tick)
                if not ok:
                    failed += 1
                elif done - tick > 1.0 / HZ:
                    late += 1
                else:
                    got += 1
            delivered += got
            per_host.append(got)
        out = win.figures(n, delivered, expected)
        lat.sort()
        out.update(
            way="naive",
            ready=ready and all(oks),
            **setup,
            late=late,
            failed=failed,
            min_host_delivered=min(per_host),
            max_host_delivered=max(per_host),
            exec_latency_ms_p50=round(1000 * lat[len(lat) // 2], 1) if lat else None,
            exec_latency_ms_p95=round(1000 * lat[int(len(lat) * 0.95)], 1) if lat else None,
        )
        return out
    finally:
        for t in tasks + conns:
            t.cancel()
        await asyncio.gather(*tasks, *conns, return_exceptions=True)
        for h in hosts:
            await h.close()


# ------------------------------------------------------------------------------ reporting


def _fmt_row(r: dict[str, Any]) -> str:
    return (
        f"{r['way']:<7}{r['n']:>4}{r['window_s']:>8.1f}"
        f"{r['client_cpu_s_per_host_hour']:>11.1f}{r['client_cpu_pct_of_core']:>8.2f}%"
        f"{r['delivered']:>8}/{r['expected']:<6}{r['delivered_pct']:>7.2f}%"
        f"{r['instance_cpu_s_per_host_hour']:>12.1f}{r['instance_cpu_pct_of_core']:>8.2f}%"
        f"{r['machine_busy_pct']:>7.1f}%{r['client_rss_mib']:>8.1f}"
    )


HEADER = (
    "way       N  window  client CPU         delivered / expected         instance CPU   machine  client\n"
    "                 s   s/host-h  %core                                s/host-h   %core     busy RSS MiB"
)


def report(results: list[dict[str, Any]]) -> list[str]:
    lines = [HEADER]
    lines += [_fmt_row(r) for r in results]
    ratios = []
    for naive in (r for r in results if r["way"] == "naive"):
        stream = next((r for r in results if r["way"] == "stream" and r["n"] == naive["n"]), None)
        if stream is None:
            continue

        def ratio(key: str, naive: dict[str, Any] = naive, stream: dict[str, Any] = stream) -> float | None:
            return round(naive[key] / stream[key], 2) if stream[key] else None

        rat = {
            "n": naive["n"],
            "client_cpu": ratio("client_cpu_s_per_host_hour"),
            "instance_cpu": ratio("instance_cpu_s_per_host_hour"),
            "delivered_pct_naive": naive["delivered_pct"],
            "delivered_pct_stream": stream["delivered_pct"],
        }
        ratios.append(rat)
        lines.append(
            f"naive/stream at N={rat['n']}: client CPU x{rat['client_cpu']}, instance CPU x{rat['instance_cpu']}, "
            f"delivered {rat['delivered_pct_naive']}% vs {rat['delivered_pct_stream']}% "
            f"(naive exec latency p50 {naive['exec_latency_ms_p50']} ms, p95 {naive['exec_latency_ms_p95']} ms; "
            f"late {naive['late']}, failed {naive['failed']})"
        )
    for r in results:
        extra = (
            f"; mean frame period {r['mean_frame_period_s']} s, offline events {r['offline_events']}, "
            f"bad frames {r['bad_frames']}, "
            f"host-stats blocks {r['stats_blocks']}, process lists {r['process_lists']}"
            if r["way"] == "stream"
            else ""
        )
        extra += f"; instance CPU by {r['instance_cpu_method']}" + (
            f" (/proc tree: {r['instance_cpu_s_per_host_hour_proc_tree']} s/host-h)"
            if r["instance_cpu_method"] != "/proc tree"
            else ""
        )
        lines.append(
            f"  {r['way']} N={r['n']}: all {r['hosts_ready']}/{r['n']} hosts sampling after {r['ready_s']} s "
            f"(client CPU {r['ready_client_cpu_s']} s to connect), per host {r['min_host_delivered']}.."
            f"{r['max_host_delivered']}{extra}"
        )
    report.ratios = ratios  # type: ignore[attr-defined]
    return lines


def machine_info() -> dict[str, Any]:
    model = cpu_model()
    sshd_v = subprocess.run([sshd_lib.SSHD, "-V"], capture_output=True, text=True).stderr.strip()
    return {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "kernel": platform.release(),
        "python": platform.python_version(),
        "asyncssh": asyncssh.__version__,
        "sshd": sshd_v,
    }


# ------------------------------------------------------------------------------ main


_INTERRUPTED: list[int] = []


def _interrupt(sig: int, task: asyncio.Task) -> None:
    _INTERRUPTED.append(sig)
    task.cancel()


async def amain(args: argparse.Namespace, bench: Bench) -> list[dict[str, Any]]:
    # SIGTERM / SIGINT cancel the run, so every finally (monitors, connections, instances) runs
    loop = asyncio.get_running_loop()
    me = asyncio.current_task()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, _interrupt, sig, me)
    results = []
    plan: list[tuple[str, int]] = []
    for n in args.sizes:
        plan.append(("stream", n))
        if n == args.naive_n:
            plan.append(("naive", n))
    if args.naive_n and args.naive_n not in args.sizes:
        plan.append(("naive", args.naive_n))
    for way, n in plan:
        t = time.monotonic()
        group = None if args.no_cgroup else CpuGroup.create(f"{way}{n}")
        insts: list[sshd_lib.SshdInstance] = []
        try:
            insts = bench.make(f"{way[0]}{n}-", n, group)
            made_s = time.monotonic() - t
            print(f"# {way} N={n}: {n} sshd started in {made_s:.1f} s; {args.seconds:g} s window ...", flush=True)
            fn = run_stream if way == "stream" else run_naive
            r = await fn(insts, group, args.seconds, args.warmup_timeout)
        finally:
            bench.drop(insts)
            if group is not None:
                group.remove()
        print("  " + _fmt_row(r), flush=True)
        results.append(r)
        await asyncio.sleep(1.0)
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=None, help="measured window per configuration (default 60)")
    ap.add_argument("--quick", action="store_true", help="smoke run: 15 s windows")
    ap.add_argument("--sizes", default="16,64", help="comma-separated N values for the stream way (default 16,64)")
    ap.add_argument("--naive-n", type=int, default=16, help="N for the naive way (0: skip; default 16)")
    ap.add_argument("--capture", default=None, help="capture to render the frame from (default: H100)")
    ap.add_argument(
        "--frames",
        choices=FRAMES,
        default="static",
        help="static: the cheap sh fake, one frame (default, as the figures below); "
        "live: tests/livefake.py, every frame moves",
    )
    ap.add_argument("--seed", type=int, default=1, help="the live fake's random walk")
    ap.add_argument("--gpus", type=int, default=8, help="GPUs per simulated instance (default 8)")
    ap.add_argument("--warmup-timeout", type=float, default=90.0, help="max seconds for all hosts to start sampling")
    ap.add_argument(
        "--no-cgroup",
        action="store_true",
        help="measure the instance side from /proc only (default: a cgroup when root can make one)",
    )
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = ap.parse_args(argv)
    if args.seconds is None:
        args.seconds = 15.0 if args.quick else 60.0
    args.sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    logging.basicConfig(level=logging.ERROR)
    logging.getLogger("asyncssh").setLevel(logging.ERROR)

    info = machine_info()
    print(
        f"# bench_metrics {info['date']}  {info['cpus']} CPUs ({info['cpu_model']}), Linux {info['kernel']}, "
        f"Python {info['python']}, asyncssh {info['asyncssh']}, {info['sshd']}",
        flush=True,
    )
    print(f"# 1 Hz, {args.gpus} GPUs/instance, window {args.seconds:g} s, cheap sh fake nvidia-smi", flush=True)
    bench = Bench(args.capture, args.gpus, frames=args.frames, seed=args.seed)
    try:
        results = asyncio.run(amain(args, bench))
    except (asyncio.CancelledError, KeyboardInterrupt):
        print("# interrupted: instances stopped, nothing reported", file=sys.stderr)
        return 128 + (_INTERRUPTED[0] if _INTERRUPTED else signal.SIGINT)
    finally:
        bench.cleanup()
        leftover = bench.leftovers()
        if leftover:
            print(f"# WARNING: {len(leftover)} processes of this run survived cleanup: {leftover}", file=sys.stderr)
    lines = report(results)
    print()
    print("\n".join(lines))
    if args.json:
        doc = {
            "benchmark": "bench_metrics",
            "machine": info,
            "settings": {
                "hz": HZ,
                "gpus": args.gpus,
                "window_s": args.seconds,
                "sizes": args.sizes,
                "naive_n": args.naive_n,
                "stagger_s": STAGGER,
                "fake": "cheap sh, frame baked in",
            },
            "results": results,
            "ratios_naive_over_stream": getattr(report, "ratios", []),
        }
        Path(args.json).write_text(json.dumps(doc, indent=2) + "\n")
        print(f"# figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
