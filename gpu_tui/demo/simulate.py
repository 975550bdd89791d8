"""Readings that move with time: GPU utilisation, memory, temperature, power; host CPU, memory,
disk and uptime; a growing training log; the instance's gpu-tui jobs (demo/jobs.py).

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
from gpu_tui.demo.profiles import AppSpec, Profile, TrainingSpec, Workload
from gpu_tui.demo.tqdmbar import mmss, tqdm_redraw

__all__ = ["GpuSim", "InstanceSim", "TrainingLog", "format_timestamp"]

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
        mig_mode = ("Enabled" if profile.mig else "Disabled") if datacentre else "[N/A]"
        bus = profile.bus_ids[index] if index < len(profile.bus_ids) else f"00000000:{index + 1:02X}:00.0"
        self.static: dict[str, str] = {
            "index": str(index),
            "uuid": self.uuid,
            "name": spec.name,
            "memory.total": str(spec.memory_total_mib),
            "power.limit": f"{spec.power_limit_w:.2f}",
            "enforced.power.limit": f"{spec.power_limit_w:.2f}",
            "power.default_limit": f"{spec.power_limit_w:.2f}",
            "power.max_limit": f"{spec.power_limit_w:.2f}",
            "power.min_limit": f"{spec.power_limit_w * (0.29 if datacentre else 0.22):.2f}",
            "mig.mode.current": mig_mode,
            "mig.mode.pending": mig_mode,
            "pci.bus_id": bus,
            "driver_version": profile.driver_version,
            "count": str(profile.gpu_count),
            "serial": str(1_650_922_000_000 + rng.getrandbits(24)) if datacentre else "[N/A]",
            "compute_cap": spec.compute_cap,
            "persistence_mode": "Enabled",
            "display_mode": "Disabled",
            "display_active": "Disabled",
            "compute_mode": "Default",
            "clocks.max.sm": str(spec.max_sm_mhz),
            "clocks.max.graphics": str(spec.max_sm_mhz),
            "clocks.max.memory": str(spec.memory_mhz),
            "vbios_version": "96.00.99.00.01" if datacentre else "95.02.3C.40.E4",
            "ecc.mode.current": "Enabled" if datacentre else "Disabled",
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
        used = self.memory_used(t)
        u = int(round(util))
        if u < 1:
            sm = 210
        else:
            busy = 0.86 + 0.1 * math.sin(t * 0.37 + self._phase)
            sm = int(spec.max_sm_mhz * busy if u > 20 else spec.max_sm_mhz * 0.6)
        pstate = "P8" if u < 1 and used < 256 else ("P2" if u < 50 else "P0")
        fan = "[N/A]"
        if spec.has_fan:
            fan = str(int(max(30.0, min(100.0, 30.0 + (temp - 45) * 1.9))))
        power_s = f"{power:.2f}"
        return {
            "utilization.gpu": "[N/A]" if self.mig else str(u),
            "utilization.memory": "[N/A]" if self.mig else str(int(u * 0.42)),
            "memory.used": str(used),
            "memory.free": str(max(0, spec.memory_total_mib - used - (spec.memory_total_mib // 160))),
            "memory.reserved": str(spec.memory_total_mib // 160),
            "temperature.gpu": str(temp),
            "power.draw": power_s,
            "power.draw.average": power_s,
            "power.draw.instant": f"{power + 3.1 * n2:.2f}",
            "fan.speed": fan,
            "clocks.current.sm": str(sm),
            "clocks.current.graphics": str(sm),
            "clocks.current.memory": str(spec.memory_mhz if u >= 1 or used >= 256 else 405),
            "pstate": pstate,
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

    def app_values(self, app: AppSpec, t: float, timestamp: str = "") -> dict[str, str]:
        """One compute process's fields as nvidia-smi's nounits strings (`timestamp` as given)."""
        gpu = self.gpus[app.gpu]
        memory = "[N/A]" if app.memory_share is None else str(int(gpu.memory_used(t) * app.memory_share))
        return {
            "pid": str(app.pid),
            "process_name": app.name if app.name is not None else "[Not Found]",
            "used_gpu_memory": memory,
            "gpu_uuid": gpu.uuid,
            "gpu_name": gpu.spec.name,
            "gpu_bus_id": gpu.static["pci.bus_id"],
            "gpu_serial": gpu.static["serial"],
            "timestamp": timestamp,
        }


# ---------------------------------------------------------------------------- training log


class TrainingLog:
    """A tqdm-style training log that grows with the clock: `\\r`-separated progress updates with
    the loss, a summary line per epoch. Bounded: past `max_bytes` the file keeps its newest quarter.
    """

    def __init__(
        self,
        path: Path,
        spec: TrainingSpec,
        *,
        started_at: float,
        rng: random.Random,
        max_bytes: int = 512 * 1024,
    ) -> None:
        self.path = path
        self.spec = spec
        self.started_at = started_at
        self.max_bytes = max_bytes
        self._noise = _noise_table(rng)
        self._step = 0  # steps already written
        self._size = 0
        self._done = False

    def _loss(self, step: int) -> float:
        s = self.spec
        total = s.steps_per_epoch * s.epochs
        decay = math.exp(-5.0 * step / max(1, total))
        loss = s.loss_end + (s.loss_start - s.loss_end) * decay
        return max(0.0001, loss * (1.0 + 0.06 * self._noise[step % _NOISE_LEN]))

    def _progress(self, step: int) -> str:
        s = self.spec
        epoch, done = divmod(step, s.steps_per_epoch)
        if epoch >= s.epochs:
            epoch, done = s.epochs - 1, s.steps_per_epoch
        return tqdm_redraw(
            f"Epoch {epoch + 1}/{s.epochs}",
            done,
            s.steps_per_epoch,
            it_per_s=s.it_per_s,
            postfix=f"loss={self._loss(step):.4f}",
        )

    def _epoch_end(self, epoch: int) -> str:
        s = self.spec
        step = (epoch + 1) * s.steps_per_epoch
        val = self._loss(step) * 1.08
        return f"\nEpoch {epoch + 1}: train_loss={self._loss(step - 1):.4f} val_loss={val:.4f}\n"

    def _render(self, upto: int, stride: int) -> str:
        s = self.spec
        parts: list[str] = []
        step = self._step
        while step < upto:
            nxt = min(upto, step + stride)
            boundary = (step // s.steps_per_epoch + 1) * s.steps_per_epoch
            if boundary <= nxt:
                parts.append(self._progress(boundary))
                parts.append(self._epoch_end(boundary // s.steps_per_epoch - 1))
                nxt = boundary
            else:
                parts.append(self._progress(nxt))
            step = nxt
        self._step = upto
        return "".join(parts)

    def start(self, now: float) -> None:
        """Write the run's history up to `now` (thinned to ~300 updates, plus each epoch's end)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        upto = self._target(now)
        header = (
            f"[demo] training started {mmss(max(0.0, now - self.started_at))} ago; "
            f"{self.spec.epochs} epochs x {self.spec.steps_per_epoch} steps\n"
        )
        text = header + self._render(upto, max(1, upto // 300)) + self._finish(upto)
        self.path.write_text(text, encoding="utf-8")
        self._size = len(text.encode())

    def _finish(self, upto: int) -> str:
        if self._done or upto < self.spec.steps_per_epoch * self.spec.epochs:
            return ""
        self._done = True
        return f"Training complete: {self.spec.epochs} epochs, final train_loss={self._loss(upto - 1):.4f}\n"

    def _target(self, now: float) -> int:
        s = self.spec
        return min(s.steps_per_epoch * s.epochs, max(0, int((now - self.started_at) * s.it_per_s)))

    def advance(self, now: float) -> None:
        """Append the updates up to `now` (one per second's worth of steps, at most)."""
        upto = self._target(now)
        if upto <= self._step:
            return
        text = self._render(upto, max(1, int(self.spec.it_per_s))) + self._finish(upto)
        data = text.encode()
        if self._size + len(data) > self.max_bytes:
            old = self.path.read_bytes()[-(self.max_bytes // 4) :]
            cut = old.find(b"\n")
            old = old[cut + 1 :] if cut >= 0 else b""
            self.path.write_bytes(old + data)
            self._size = len(old) + len(data)
            return
        with self.path.open("ab") as f:
            f.write(data)
        self._size += len(data)
