"""Readings that move with time: GPU utilisation, memory, temperature, power; host CPU, memory,
disk and uptime; the instance's gpu-tui jobs (demo/jobs.py).

Everything is a function of the clock plus a seeded RNG drawn once at start (phases, noise
tables), so a fleet with the same seed shows the same curves, and a tick costs a few float ops
per GPU. The CPU counters are the only running state (they must only grow).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from pathlib import Path

from gpu_tui.demo.condarun import CONDA_SECONDS
from gpu_tui.demo.jobs import JOB_SECONDS, JobTable
from gpu_tui.demo.profiles import AppSpec, Profile, Workload

__all__ = ["GpuSim", "InstanceSim", "format_timestamp"]

_NOISE_LEN = 127  # prime, so the tables of different metrics do not repeat in step
_TAU = 2.0 * math.pi
_TEMP_LAG_S = 20.0  # temperatures follow load with a lag


def _noise_table(rng: random.Random) -> tuple[float, ...]:
    r = rng.random
    return tuple([2.0 * r() - 1.0 for _ in range(_NOISE_LEN)])


def format_timestamp(t: float) -> str:
    """nvidia-smi's `timestamp` field: `2026/07/14 09:00:27.792` (local time)."""
    return time.strftime("%Y/%m/%d %H:%M:%S", time.localtime(t)) + f".{int(t * 1000) % 1000:03d}"


class GpuSim:
    """One GPU: static strings drawn at start, `reading(t)` the moving values as nvidia-smi strings."""

    __slots__ = (
        "index",
        "spec",
        "work",
        "mig",
        "static",
        "uuid",
        "_omega",
        "_phase",
        "_mem_omega",
        "_mem_phase",
        "_episode_offset",
        "_noise",
        "_noise2",
    )

    def __init__(self, profile: Profile, index: int, rng: random.Random, episode_offset: float) -> None:
        spec = profile.gpu
        self.index = index
        self.spec = spec
        self.work: Workload = profile.workloads[index]
        self.mig = profile.mig
        self.uuid = (
            f"GPU-{rng.getrandbits(32):08x}-{rng.getrandbits(16):04x}-{rng.getrandbits(16):04x}"
            f"-{rng.getrandbits(16):04x}-{rng.getrandbits(48):012x}"
        )
        self._omega = _TAU / max(1.0, self.work.period)
        self._phase = rng.uniform(0.0, _TAU)
        self._mem_omega = _TAU / max(60.0, self.work.period * 7.3)
        self._mem_phase = rng.uniform(0.0, _TAU)
        self._episode_offset = episode_offset
        self._noise = _noise_table(rng)
        self._noise2 = _noise_table(rng)
        datacentre = not spec.has_fan
        bus = profile.bus_ids[index] if index < len(profile.bus_ids) else f"00000000:{index + 1:02X}:00.0"
        self.static: dict[str, str] = {
            "index": str(index),
            "uuid": self.uuid,
            "name": spec.name,
            "memory.total": str(spec.memory_total_mib),
            "power.limit": f"{spec.power_limit_w:.2f}",
            "mig.mode.current": ("Enabled" if profile.mig else "Disabled") if datacentre else "[N/A]",
            "pci.bus_id": bus,
            "driver_version": profile.driver_version,
            "serial": str(1_650_922_000_000 + rng.getrandbits(24)) if datacentre else "[N/A]",
        }

    def _base(self, t: float) -> float:
        w = self.work
        if w.episode_every and (t + self._episode_offset) % w.episode_every < w.episode_length:
            return w.episode_level
        return w.level + w.swing * math.sin(self._omega * t + self._phase)

    def load(self, t: float) -> float:
        """Utilisation 0-100 at `t` (also defined in MIG mode, where nvidia-smi does not report it)."""
        noise = self._noise[int(t * 2.0) % _NOISE_LEN] * self.work.noise
        x = self._base(t) + noise
        return 0.0 if x < 0.0 else 100.0 if x > 100.0 else x

    def memory_used(self, t: float) -> int:
        w = self.work
        m = w.memory_mib + w.memory_swing * math.sin(self._mem_omega * t + self._mem_phase)
        return max(0, min(self.spec.memory_total_mib, int(m)))

    def reading(self, t: float) -> dict[str, str]:
        """The moving fields as nvidia-smi's nounits strings."""
        spec = self.spec
        util = self.load(t)
        lagged = self._base(t - _TEMP_LAG_S)
        lagged = 0.0 if lagged < 0.0 else 100.0 if lagged > 100.0 else lagged
        n2 = self._noise2[int(t * 2.0) % _NOISE_LEN]
        temp = int(round(spec.idle_temp_c + (spec.hot_temp_c - spec.idle_temp_c) * lagged / 100.0 + 0.7 * n2))
        power = spec.idle_power_w + (spec.peak_power_w - spec.idle_power_w) * util / 100.0 + 2.5 * n2
        power = min(spec.power_limit_w, max(spec.idle_power_w * 0.85, power))
        u = int(round(util))
        sm = int(spec.max_sm_mhz * (0.86 + 0.1 * math.sin(t * 0.37 + self._phase)) if u > 20 else spec.max_sm_mhz * 0.6)
        fan = str(int(max(30.0, min(100.0, 30.0 + (temp - 45) * 1.9)))) if spec.has_fan else "[N/A]"
        return {
            "utilization.gpu": "[N/A]" if self.mig else str(u),
            "memory.used": str(self.memory_used(t)),
            "temperature.gpu": str(temp),
            "power.draw": f"{power:.2f}",
            "fan.speed": fan,
            "clocks.current.sm": str(sm if u >= 1 else 210),
        }


class InstanceSim:
    """One instance: its GPUs, host figures and compute processes as functions of the clock."""

    def __init__(
        self,
        profile: Profile,
        *,
        seed: int,
        index: int,
        clock: Callable[[], float],
        fs: Path,
        job_seconds: float = JOB_SECONDS,
        conda_seconds: float = CONDA_SECONDS,
    ) -> None:
        """`fs`: a folder for the instance's `/` (its conda install lies there)."""
        rng = random.Random(f"gpu-tui-demo:{seed}:{index}:{profile.name}")
        self.profile = profile
        self.ended: set[int] = set()
        """Pids ended through gpu-tui (`P`, `kill`): their compute apps are gone."""
        self.clock = clock
        self.t0 = clock()
        episode_offset = rng.uniform(0.0, 3600.0)
        self.gpus = [GpuSim(profile, i, rng, episode_offset) for i in range(profile.gpu_count)]
        self.hostname = f"{profile.provider}-container-{rng.getrandbits(40):010x}"
        self._cpu_phase = rng.uniform(0.0, _TAU)
        self._cpu_noise = _noise_table(rng)
        self._mem_phase = rng.uniform(0.0, _TAU)
        # the container started `age_s` ago on a host up `host_extra_s` longer (ticks of 1/100 s)
        self._start_ticks = int(profile.host_extra_s * 100)
        self._pid1_tail = (
            f"S 0 1 1 0 -1 4194560 {rng.randint(900, 4000)} {rng.randint(10_000, 90_000)} 12 31 "
            f"{rng.randint(1, 80)} {rng.randint(1, 60)} {rng.randint(100, 900)} {rng.randint(50, 400)} "
            f"20 0 1 0 {self._start_ticks} 4505600 236 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 "
            f"{rng.randrange(max(1, profile.cpu_count))} 0 0 0 0 0 0 0 0 0 0 0 0 0"
        )
        self._pid1 = f"1 ({profile.pid1_comm}) {self._pid1_tail}"
        # /proc/stat counters (jiffies, all CPUs), grown by the CPU curve since the host booted
        host_up = self.host_uptime(self.t0)
        total = host_up * 100.0 * profile.cpu_count
        share = profile.cpu_level / 100.0
        self._cpu_last = self.t0
        self._stats_calls = 0
        self._user = total * share * 0.8
        self._system = total * share * 0.17
        self._softirq = total * share * 0.03
        self._iowait = total * 0.004
        self._idle = total - self._user - self._system - self._softirq - self._iowait
        self._load = profile.cpu_count * share
        self.jobs = JobTable(
            profile,
            clock=clock,
            t0=self.t0,
            seed_key=f"{seed}:{index}",
            fs=fs,
            job_seconds=job_seconds,
            conda_seconds=conda_seconds,
        )
        """gpu-tui jobs on this instance (demo/jobs.py), with their own RNG: the readings above
        do not depend on them."""

    # ---------------------------------------------------------------- host

    def age(self, t: float) -> float:
        """PID 1's age at `t`: how long the instance has been up."""
        return self.profile.age_s + (t - self.t0)

    def host_uptime(self, t: float) -> float:
        return self.age(t) + self._start_ticks / 100.0

    def _cpu_share(self, t: float) -> float:
        p = self.profile
        x = p.cpu_level * (1.0 + 0.35 * math.sin(t / 53.0 + self._cpu_phase))
        x += p.cpu_level * 0.25 * self._cpu_noise[int(t) % _NOISE_LEN]
        return max(0.2, min(99.0, x)) / 100.0

    def stats_text(self, t: float) -> str:
        """One iteration of the stats probe's tagged lines (without apps and end marks)."""
        p = self.profile
        dt = t - self._cpu_last
        if dt <= 0 and self._stats_calls:
            dt = 1.0  # a frozen clock (screenshots): the counters still move, so CPU % exists
        self._stats_calls += 1
        if dt > 0:
            self._cpu_last = max(t, self._cpu_last)
            share = self._cpu_share(t)
            jiffies = dt * 100.0 * p.cpu_count
            self._user += jiffies * share * 0.8
            self._system += jiffies * share * 0.17
            self._softirq += jiffies * share * 0.03
            self._iowait += jiffies * 0.004
            self._idle += jiffies * max(0.0, 1.0 - share - 0.004)
            # the 1-minute load average, smoothed like the kernel's
            decay = math.exp(-dt / 60.0)
            self._load = self._load * decay + p.cpu_count * share * 1.05 * (1.0 - decay)
        mem_used = p.mem_total_kib * min(0.97, p.mem_used_share * (1.0 + 0.06 * math.sin(t / 97.0 + self._mem_phase)))
        disk_used = min(p.disk_total_kib * 0.97, p.disk_used_kib + p.disk_growth_kib_s * (t - self.t0))
        return (
            f"cpu {int(self._user)} 0 {int(self._system)} {int(self._idle)} {int(self._iowait)} 0 "
            f"{int(self._softirq)} 0 0 0\n"
            f"ncpu {p.cpu_count}\n"
            f"load {self._load:.2f}\n"
            f"mem MemTotal: {p.mem_total_kib} kB\n"
            f"mem MemAvailable: {p.mem_total_kib - int(mem_used)} kB\n"
            f"up {self.host_uptime(t):.2f} 100 {self._pid1}\n"
            f"disk {p.disk_total_kib} {int(disk_used)}\n"
        )

    # ---------------------------------------------------------------- processes

    def live_apps(self) -> list[AppSpec]:
        """The profile's compute processes less those ended (by their pid here or the host's)."""
        return [
            a
            for a in self.profile.apps
            if a.pid not in self.ended and (a.holder is None or a.holder[0] not in self.ended)
        ]

    def app_values(self, app: AppSpec, t: float, timestamp: str = "") -> dict[str, str]:
        """One compute process's fields as nvidia-smi's nounits strings (`timestamp` as given)."""
        gpu = self.gpus[app.gpu]
        memory = "[N/A]" if app.memory_share is None else str(int(gpu.memory_used(t) * app.memory_share))
        return {
            "pid": str(app.pid),
            "process_name": app.name if app.name is not None else "[Not Found]",
            "used_gpu_memory": memory,
            "gpu_uuid": gpu.uuid,
            "timestamp": timestamp,
        }
