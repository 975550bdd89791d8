"""Who runs an instance's jobs: gpu-tui's own detached runner (sched_plain.py) or a cluster's
SLURM (slurm.py). `scheduler_for(inst)` picks one from the instance's `scheduler` setting, once;
everything else (the CLI, the dashboard, the fleet, the watcher) asks the scheduler it got and
never compares the setting's name (tests/unit/test_scheduler_sites.py holds that line).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.jobs import JobFacts, JobRequest, RunAsk
from gpu_tui.core.slurm import SlurmNode
from gpu_tui.remote.host import Host
from gpu_tui.services.jobs.sched_plain import PlainScheduler
from gpu_tui.services.jobs.slurm import SlurmScheduler

__all__ = ["Scheduler", "scheduler_for", "PLAIN", "SLURM"]


class Scheduler(Protocol):
    """What differs between the ways jobs run. The job directory, its files, the log and its
    reading are the same under every scheduler (jobdir.py, runner.py)."""

    @property
    def jobs_run_here(self) -> bool:
        """The jobs run on the instance itself, so its watch loop sees them and nvidia-smi there
        shows their GPUs (False on a login node: they run on compute nodes)."""
        ...

    def run_fields(self, inst: InstanceConfig) -> RunAsk | None:
        """What the run form asks beyond the job, with the instance's defaults (GPUs, partition,
        time limit on a login node); None: nothing more (the form offers tmux instead)."""
        ...

    async def prepare(self, host: Host, inst: InstanceConfig, req: JobRequest, ask: RunAsk) -> JobRequest:
        """Before anything is written to the instance: refuse what this scheduler cannot do with
        `ask` (InputError), and fold into the request what `ask` means here."""
        ...

    async def start(self, host: Host, inst: InstanceConfig, req: JobRequest, ask: RunAsk) -> JobRequest:
        """Start (or submit) the validated request; returns it as stored."""
        ...

    async def annotate(self, host: Host, inst: InstanceConfig, facts: Sequence[JobFacts]) -> list[JobFacts]:
        """The listing's facts with what only the scheduler knows: pending and its reason, the
        node, how a job it ended went."""
        ...

    async def stop(self, host: Host, inst: InstanceConfig, job_id: str, steps: tuple[tuple[str, float], ...]) -> str:
        """SIGINT first (a training loop can checkpoint), harder after `steps`' grace periods;
        returns how it ended (`stopped INT`, `finished`, `cancelled`...)."""
        ...

    def gpu_scope(self, host: Host) -> Callable[[], Awaitable[str | None]] | None:
        """For the monitor: the prefix that runs nvidia-smi where the jobs' GPUs are; None: as is."""
        ...

    async def cluster_nodes(self, host: Host) -> tuple[SlurmNode, ...] | None:
        """The cluster's nodes for the dashboard's cluster view; None: not a cluster (the
        watcher reads the autostop watchdog instead)."""
        ...


PLAIN = PlainScheduler()
SLURM = SlurmScheduler(detached=PLAIN)
_BY_SETTING: dict[str, Scheduler] = {"none": PLAIN, "slurm": SLURM}


def scheduler_for(inst: InstanceConfig) -> Scheduler:
    """The instance's scheduler, by its `scheduler` setting (settings.py allows only these)."""
    return _BY_SETTING[inst.scheduler]
