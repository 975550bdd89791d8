"""The simulated fleet's instance profiles: what each demo machine is, runs and costs.

Pure data. `fleet_profiles(n)` cycles through `DEFAULT_PROFILES` (copies get a numeric suffix);
the simulation (simulate.py) turns a profile into readings that move with time.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

__all__ = [
    "GpuSpec",
    "Workload",
    "AppSpec",
    "TrainingSpec",
    "JobSpec",
    "Profile",
    "RTX_4090",
    "RTX_3090",
    "H100_SXM",
    "A100_SXM4_80GB",
    "DEFAULT_PROFILES",
    "MAX_INSTANCES",
    "fleet_profiles",
]

MAX_INSTANCES = 64

DRIVER_FAILED_TEXT = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
    "Make sure that the latest NVIDIA driver is installed and running."
)


@dataclass(frozen=True, slots=True)
class GpuSpec:
    """One GPU model as nvidia-smi reports it."""

    name: str
    memory_total_mib: int
    power_limit_w: float
    idle_power_w: float
    peak_power_w: float
    idle_temp_c: float
    hot_temp_c: float
    has_fan: bool
    max_sm_mhz: int


RTX_4090 = GpuSpec("NVIDIA GeForce RTX 4090", 24564, 450.0, 19.0, 432.0, 31.0, 67.0, True, 3120)
RTX_3090 = GpuSpec("NVIDIA GeForce RTX 3090", 24576, 350.0, 24.0, 338.0, 33.0, 71.0, True, 2100)
H100_SXM = GpuSpec("NVIDIA H100 80GB HBM3", 81559, 700.0, 71.0, 688.0, 29.0, 66.0, False, 1980)
A100_SXM4_80GB = GpuSpec("NVIDIA A100-SXM4-80GB", 81920, 400.0, 57.0, 318.0, 30.0, 58.0, False, 1410)


@dataclass(frozen=True, slots=True)
class Workload:
    """What one GPU is doing: utilisation = level + swing*sin + noise, with recurring episodes.

    An episode (every `episode_every` s, lasting `episode_length` s) replaces the level with
    `episode_level`: an evaluation / checkpoint dip on a training GPU, a short burst on an idle one.
    """

    level: float
    swing: float = 0.0
    period: float = 60.0
    noise: float = 0.0
    memory_mib: float = 0.0
    memory_swing: float = 0.0
    episode_every: float = 0.0
    episode_length: float = 0.0
    episode_level: float = 0.0


@dataclass(frozen=True, slots=True)
class AppSpec:
    """One compute process: `name` None prints `[Not Found]` (a host pid seen from a container)."""

    gpu: int
    pid: int
    name: str | None
    memory_share: float | None
    """Share of the GPU's used memory; None prints `[N/A]` (MIG mode)."""
    holder: tuple[int, str] | None = None
    """A host pid's process as the container sees it (its pid there, its command line): it holds
    the GPU's device file (demo/holders.py). None: another container's, not seen here."""


@dataclass(frozen=True, slots=True)
class TrainingSpec:
    """A training run (demo/jobs.py): epochs of steps at a steady rate, after `warmup_s` of loading."""

    steps_per_epoch: int
    epochs: int
    it_per_s: float
    loss_start: float
    loss_end: float
    warmup_s: float = 2.0

    @property
    def total(self) -> int:
        return self.steps_per_epoch * self.epochs


@dataclass(frozen=True, slots=True)
class JobSpec:
    """A gpu-tui job the instance already has when the demo starts (demo/jobs.py simulates it)."""

    command: str
    training: TrainingSpec
    started_ago_s: float
    """When the job started, before the fleet did."""
    name: str | None = None
    cwd: str | None = None
    conda_env: str | None = None
    pid: int | None = None


@dataclass(frozen=True, slots=True)
class Profile:
    """One simulated instance."""

    name: str
    provider: str
    hourly_rate: float
    gpu: GpuSpec
    workloads: tuple[Workload, ...]
    """One per GPU."""
    driver_version: str = "550.54.15"
    cuda_version: str = "12.4"
    mig: bool = False
    failure: tuple[str, int] | None = None
    """nvidia-smi's failure (stdout text, exit status) for every call; None = healthy."""
    apps: tuple[AppSpec, ...] = ()
    jobs: tuple[JobSpec, ...] = ()
    """gpu-tui jobs already on the instance (running or finished, by their training's length)."""
    flaky: bool = False
    """Drops (closes every connection, refuses new ones) now and then, then comes back."""
    cpu_count: int = 16
    cpu_level: float = 5.0
    """Mean busy share of all CPUs, percent."""
    mem_total_kib: int = 65_844_588
    mem_used_share: float = 0.2
    disk_total_kib: int = 31_441_920
    disk_used_kib: int = 12_582_912
    disk_growth_kib_s: float = 0.0
    age_s: float = 3600.0
    """PID 1's age when the fleet starts: how long the instance has been up (billing)."""
    host_extra_s: float = 864_000.0
    """How much longer the host has been up than the container."""
    pid1_comm: str = "sh"
    workdir: str | None = None
    bus_ids: tuple[str, ...] = ("00000000:01:00.0",)

    @property
    def gpu_count(self) -> int:
        return len(self.workloads)


_H100_BUS = tuple(f"00000000:{b}:00.0" for b in ("18", "2A", "3A", "5D", "9A", "AB", "BA", "DB"))

DEFAULT_PROFILES: tuple[Profile, ...] = (
    Profile(
        name="autodl-4090-train",
        provider="autodl",
        hourly_rate=1.98,
        gpu=RTX_4090,
        workloads=(
            Workload(
                level=93.0,
                swing=4.0,
                period=47.0,
                noise=3.0,
                memory_mib=20180.0,
                memory_swing=160.0,
                episode_every=900.0,
                episode_length=45.0,
                episode_level=27.0,
            ),
        ),
        apps=(
            AppSpec(0, 1843, "/root/miniconda3/envs/llm/bin/python", 0.92),
            AppSpec(
                0, 2907, None, 0.07, holder=(412, "/root/miniconda3/bin/python -m ipykernel_launcher -f kernel.json")
            ),
        ),
        jobs=(
            JobSpec(
                command="python train.py --config configs/resnet50-cifar10.yaml --epochs 60",
                training=TrainingSpec(steps_per_epoch=1563, epochs=60, it_per_s=3.41, loss_start=2.31, loss_end=0.31),
                started_ago_s=5160.0,
                name="resnet50-cifar10",
                cwd="/root/autodl-tmp",
                conda_env="llm",
                pid=1839,
            ),
        ),
        cpu_level=31.0,
        mem_used_share=0.41,
        disk_used_kib=19_293_184,
        disk_growth_kib_s=2.0,
        age_s=5400.0,
        workdir="/root/autodl-tmp",
    ),
    Profile(
        name="autodl-4090-idle",
        provider="autodl",
        hourly_rate=1.98,
        gpu=RTX_4090,
        workloads=(
            Workload(
                level=0.4,
                swing=0.4,
                period=300.0,
                noise=0.8,
                memory_mib=2.0,
                episode_every=3600.0,
                episode_length=15.0,
                episode_level=24.0,
            ),
        ),
        # it finished ~50 min ago and the box has idled (and billed) since
        jobs=(
            JobSpec(
                command="python finetune.py --model llama-3.2-1b --epochs 3 --lr 2e-5",
                training=TrainingSpec(steps_per_epoch=800, epochs=3, it_per_s=2.5, loss_start=1.92, loss_end=0.84),
                started_ago_s=3960.0,
                name="llama-ft",
                cwd="/root/autodl-tmp",
                conda_env="llm",
                pid=27113,
            ),
        ),
        cpu_level=1.1,
        mem_used_share=0.05,
        disk_used_kib=9_437_184,
        age_s=72_000.0,
        workdir="/root/autodl-tmp",
    ),
    Profile(
        name="runpod-h100x8",
        provider="runpod",
        hourly_rate=52.0,
        gpu=H100_SXM,
        workloads=tuple(
            Workload(
                level=lv,
                swing=sw,
                period=pd,
                noise=nz,
                memory_mib=mem,
                memory_swing=ms,
                episode_every=ev,
                episode_length=40.0 if ev else 0.0,
                episode_level=11.0,
            )
            for lv, sw, pd, nz, mem, ms, ev in (
                (97.0, 2.0, 31.0, 2.0, 71230.0, 420.0, 1200.0),
                (95.0, 3.0, 37.0, 3.0, 70980.0, 380.0, 1200.0),
                (92.0, 4.0, 29.0, 3.0, 71544.0, 450.0, 1200.0),
                (96.0, 2.0, 41.0, 2.0, 70877.0, 400.0, 1200.0),
                (88.0, 6.0, 23.0, 4.0, 68210.0, 900.0, 1200.0),
                (94.0, 3.0, 43.0, 3.0, 71102.0, 350.0, 1200.0),
                (41.0, 16.0, 67.0, 8.0, 23840.0, 1500.0, 0.0),
                (0.0, 0.0, 60.0, 0.3, 4.0, 0.0, 0.0),
            )
        ),
        driver_version="550.127.05",
        apps=tuple(AppSpec(i, 31200 + i, "/usr/bin/python3", 0.985) for i in range(6))
        + (AppSpec(6, 40771, None, 0.97),),
        cpu_count=192,
        cpu_level=34.0,
        mem_total_kib=2_113_917_952,
        mem_used_share=0.27,
        disk_total_kib=209_715_200,
        disk_used_kib=100_663_296,
        disk_growth_kib_s=6.0,
        age_s=22_320.0,
        pid1_comm="dumb-init",
        workdir="/workspace",
        bus_ids=_H100_BUS,
    ),
    Profile(
        name="lab-a100-mig",
        provider="generic",
        hourly_rate=0.0,
        gpu=A100_SXM4_80GB,
        workloads=(Workload(level=55.0, swing=20.0, period=180.0, noise=5.0, memory_mib=31250.0, memory_swing=2000.0),),
        driver_version="535.183.01",
        cuda_version="12.2",
        mig=True,
        apps=(AppSpec(0, 58112, "python3", None), AppSpec(0, 58240, "python3", None)),
        cpu_count=64,
        cpu_level=9.0,
        mem_total_kib=528_275_324,
        mem_used_share=0.18,
        disk_total_kib=1_875_385_008,
        disk_used_kib=1_102_053_376,
        age_s=9 * 86_400.0 + 3 * 3600.0,
        host_extra_s=1.9,
        pid1_comm="systemd",
        bus_ids=("00000000:07:00.0",),
    ),
    Profile(
        name="vast-3090-broken",
        provider="vast",
        hourly_rate=1.45,
        gpu=RTX_3090,
        workloads=(Workload(level=0.0),),
        failure=(DRIVER_FAILED_TEXT, 9),
        cpu_count=32,
        cpu_level=2.5,
        mem_total_kib=131_895_512,
        mem_used_share=0.04,
        disk_total_kib=52_428_800,
        disk_used_kib=21_495_808,
        age_s=11_520.0,
        pid1_comm="bash",
        workdir="/workspace",
    ),
    Profile(
        name="autodl-flaky",
        provider="autodl",
        hourly_rate=1.58,
        gpu=RTX_3090,
        workloads=(Workload(level=64.0, swing=18.0, period=90.0, noise=6.0, memory_mib=15320.0, memory_swing=400.0),),
        driver_version="525.105.17",
        cuda_version="12.0",
        apps=(AppSpec(0, 977, None, 0.97),),
        flaky=True,
        cpu_count=12,
        cpu_level=22.0,
        mem_total_kib=92_246_784,
        mem_used_share=0.33,
        disk_used_kib=14_680_064,
        age_s=2700.0,
        workdir="/root/autodl-tmp",
    ),
)


def fleet_profiles(instances: int | None = None) -> list[Profile]:
    """The default fleet (None), or `instances` profiles cycling through it.

    The first round keeps the plain names; later rounds add `-2`, `-3`, ... (`runpod-h100x8-2`).
    """
    if instances is None:
        return list(DEFAULT_PROFILES)
    if isinstance(instances, bool) or not isinstance(instances, int) or not 1 <= instances <= MAX_INSTANCES:
        raise ValueError(f"instances must be a whole number from 1 to {MAX_INSTANCES}, not {instances!r}")
    out = []
    for i in range(instances):
        base = DEFAULT_PROFILES[i % len(DEFAULT_PROFILES)]
        cycle = i // len(DEFAULT_PROFILES)
        if cycle:
            base = replace(base, name=f"{base.name}-{cycle + 1}", age_s=base.age_s * (1.0 + 0.29 * cycle))
        out.append(base)
    return out
