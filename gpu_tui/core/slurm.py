"""SLURM as a login node shows it: what `squeue` (and `sacct`, where accounting runs) say about a
job, and what that means in gpu-tui's job words (docs/CONTRACTS.md `state`, `reason`, `node`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "SlurmJob",
    "SlurmNode",
    "TIME_RE",
    "parse_squeue",
    "parse_sacct",
    "SQUEUE_FORMAT",
    "parse_sinfo_nodes",
    "parse_sbatch_id",
    "scheduler_words",
    "ACTIVE_STATES",
    "SINFO_FORMAT",
    "active",
]

TIME_RE = re.compile(
    r"^(?:\d+|\d+:\d{1,2}|\d+:\d{1,2}:\d{1,2}|\d+-\d+|\d+-\d+:\d{1,2}|\d+-\d+:\d{1,2}:\d{1,2}"
    r"|UNLIMITED|unlimited|infinite|INFINITE)$"
)
"""The `--time` forms sbatch(1) accepts: minutes, minutes:seconds, hours:minutes:seconds,
days-hours, days-hours:minutes, days-hours:minutes:seconds, and UNLIMITED / infinite."""

ACTIVE_STATES = frozenset({"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING"})
"""SLURM states in which the job may still run (squeue's base state words)."""


@dataclass(frozen=True, slots=True)
class SlurmJob:
    """One job as the scheduler reports it; None where SLURM does not say."""

    job_id: str
    state: str
    """SLURM's base state word: PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, ..."""
    reason: str | None = None
    """Why it waits or ended (Resources, Priority, QOSMaxJobsPerUserLimit, ...); None for `None`."""
    node: str | None = None
    name: str | None = None
    partition: str | None = None
    time_limit_seconds: int | None = None
    """None: no limit (UNLIMITED / infinite) or not said."""
    exit_code: int | None = None


@dataclass(frozen=True, slots=True)
class SlurmNode:
    """A node of a partition with its GPUs (gres `gpu`) in use and in all."""

    name: str
    state: str
    partition: str
    gpus_total: int
    gpus_used: int


SQUEUE_FORMAT = "%i|%T|%r|%N|%l|%j|%P"
"""`squeue -h -t all -o SQUEUE_FORMAT`: id, state, reason, nodes, time limit, name, partition —
fields every SLURM in use prints the same way, 40-odd bytes a job (`--json` is ~3 KB a job:
1.4 MB for a queue of 435, every poll)."""


def _reason(value: str) -> str | None:
    text = value.strip()
    return None if text in ("", "None", "(null)", "N/A") else text


def _slurm_seconds(text: str) -> int | None:
    """`1-02:03:04`, `02:03:04`, `03:04`, `5` (minutes) -> seconds; UNLIMITED, N/A -> None."""
    if text.isdigit():
        return int(text) * 60
    m = re.fullmatch(r"(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)", text)
    if not m:
        return None
    days, hours, minutes, seconds = (int(g) if g else 0 for g in m.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def parse_squeue(text: str) -> dict[str, SlurmJob]:
    """`squeue -h -t all -o SQUEUE_FORMAT` -> {job id: SlurmJob}; lines of another shape are skipped."""
    jobs: dict[str, SlurmJob] = {}
    for line in text.splitlines():
        cells = line.split("|")
        if len(cells) < 7 or not cells[0].strip().isdigit():
            continue
        job_id, state, reason, nodes, limit, name, partition = (c.strip() for c in cells[:7])
        jobs[job_id] = SlurmJob(
            job_id=job_id,
            state=state.split()[0].upper() if state else "",
            reason=_reason(reason),
            node=_reason(nodes),
            name=_reason(name),
            partition=_reason(partition),
            time_limit_seconds=_slurm_seconds(limit),
        )
    return jobs


def parse_sacct(text: str) -> dict[str, SlurmJob]:
    """`sacct -n -P -X -j IDS -o JobID,State,ExitCode,NodeList,Reason` (where accounting runs):
    jobs the controller has forgotten. State may read `CANCELLED by 0`; ExitCode is `code:signal`."""
    jobs: dict[str, SlurmJob] = {}
    for line in text.splitlines():
        cells = line.split("|")
        if len(cells) < 5 or not cells[0].isdigit():
            continue
        code, _sep, sig = cells[2].partition(":")
        exit_code = 128 + int(sig) if sig.isdigit() and int(sig) else (int(code) if code.isdigit() else None)
        jobs[cells[0]] = SlurmJob(
            job_id=cells[0],
            state=cells[1].split()[0].upper() if cells[1] else "",
            reason=_reason(cells[4]),
            node=_reason(cells[3]),
            exit_code=exit_code,
        )
    return jobs


def parse_sbatch_id(text: str) -> str | None:
    """`sbatch --parsable` prints `ID` or `ID;cluster`."""
    first = text.strip().splitlines()[-1:] or [""]
    job_id = first[0].split(";", 1)[0].strip()
    return job_id if job_id.isdigit() else None


def _gpu_count(gres: str) -> int:
    """`gpu:2`, `gpu:a100:4(S:0-1)`, `gpu:2(IDX:0-1)` -> how many GPUs that gres string holds."""
    total = 0
    for part in re.split(r",(?![^()]*\))", gres):
        words = part.split("(", 1)[0].split(":")
        if words and words[0] == "gpu" and words[-1].isdigit() and len(words) >= 2:
            total += int(words[-1])
    return total


SINFO_FORMAT = "NodeList:200|,StateLong:40|,Partition:80|,Gres:200|,GresUsed:200|"


def parse_sinfo_nodes(text: str) -> list[SlurmNode]:
    """`sinfo -h -N -O 'NodeList:200|,StateLong:40|,Partition:80|,Gres:200|,GresUsed:200|'`: one
    line per node and partition, cells padded and each ended by `|` (SINFO_FORMAT)."""
    nodes: list[SlurmNode] = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) < 5 or not cells[0]:
            continue
        name, state, partition, gres, used = cells[:5]
        nodes.append(SlurmNode(name, state, partition.rstrip("*"), _gpu_count(gres), _gpu_count(used)))
    return nodes


_ENDED = {
    "COMPLETED": ("succeeded", None),
    "CANCELLED": ("failed", "killed (cancelled)"),
    "TIMEOUT": ("failed", "killed (time limit)"),
    "DEADLINE": ("failed", "killed (deadline)"),
    "PREEMPTED": ("failed", "killed (preempted)"),
    "OUT_OF_MEMORY": ("failed", "killed (out of host memory)"),
    "NODE_FAIL": ("failed", "lost: the node failed"),
    "BOOT_FAIL": ("failed", "lost: the node did not boot"),
    "FAILED": ("failed", None),
    "UNKNOWN": ("failed", "lost: SLURM no longer knows the job"),
}


def scheduler_words(
    state: str, slurm_exit: int | None, *, stop_requested: bool, exit_code: int | None
) -> tuple[str, str | None] | None:
    """(state, failure) from SLURM's state word, for a job whose own files are not conclusive;
    None when SLURM adds nothing to what the job directory says (its batch script recorded an
    exit code)."""
    if state == "PENDING":
        return ("stopped", None) if stop_requested else ("pending", None)
    if state in ACTIVE_STATES:
        return "running", None
    if exit_code is not None:
        return None
    if stop_requested:
        return "stopped", None
    words, failure = _ENDED.get(state, ("failed", None))
    if failure is None and words == "failed":
        failure = f"exit code {slurm_exit}" if slurm_exit else f"SLURM: {state.lower()}"
    return words, failure


def active(jobs: Iterable[SlurmJob]) -> list[SlurmJob]:
    return [j for j in jobs if j.state in ACTIVE_STATES]
