"""SLURM as a login node shows it: what `squeue --json` / `scontrol -o show job` say about a job, and
what that means in gpu-tui's job words (docs/CONTRACTS.md `state`, `reason`, `node`).

Read, not guessed: SLURM 22.05's JSON (openapi v0.0.38: `job_state` a string, `time_limit` minutes
or null) and 23.02+ (`job_state` a list, numbers as `{"set", "infinite", "number"}`) are both
accepted; `scontrol -o show job` (one `Key=Value ...` line per job) is the fallback where squeue
was built without JSON support.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = [
    "SlurmJob",
    "SlurmNode",
    "TIME_RE",
    "parse_squeue_json",
    "parse_scontrol_jobs",
    "parse_sinfo_nodes",
    "parse_sbatch_id",
    "scheduler_words",
    "ACTIVE_STATES",
    "SINFO_FORMAT",
    "active",
]

TIME_RE = re.compile(r"^(?:\d+|\d+:\d{1,2}|\d+:\d{1,2}:\d{1,2}|\d+-\d+|\d+-\d+:\d{1,2}|\d+-\d+:\d{1,2}:\d{1,2})$")
"""The `--time` forms sbatch(1) accepts: minutes, minutes:seconds, hours:minutes:seconds,
days-hours, days-hours:minutes, days-hours:minutes:seconds."""

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
    start_time: int | None = None
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


def _number(value: object) -> int | None:
    """22.05 gives a plain number; 23.02+ `{"set": bool, "infinite": bool, "number": n}`."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, Mapping):
        if not value.get("set", True) or value.get("infinite"):
            return None
        return _number(value.get("number"))
    return None


def _word(value: object) -> str:
    if isinstance(value, list):  # 23.02+: ["PENDING"] or ["RUNNING", "COMPLETING"]
        return str(value[0]) if value else ""
    return str(value or "")


def _reason(value: object) -> str | None:
    text = str(value or "").strip()
    return None if text in ("", "None", "(null)") else text


def _exit(value: object) -> int | None:
    """The job's exit code, 128+N for signal N: 22.05 gives the raw wait status (768 = exit 3,
    9 = SIGKILL), 23.02+ `{"return_code": n, "signal": {"id": n}}`, scontrol `"code:signal"`."""
    if isinstance(value, Mapping):
        signal = value.get("signal")
        sig = _number(signal.get("id")) if isinstance(signal, Mapping) else None
        return 128 + sig if sig else _number(value.get("return_code"))
    if isinstance(value, str):
        code, _sep, signal_text = value.partition(":")
        if code.isdigit():
            return 128 + int(signal_text) if signal_text.isdigit() and int(signal_text) else int(code)
        return None
    status = _number(value)
    if status is None:
        return None
    return 128 + (status & 0x7F) if status & 0x7F else status >> 8


def parse_squeue_json(text: str) -> dict[str, SlurmJob]:
    """`squeue --json` -> {job id: SlurmJob}. ValueError if it is not squeue's JSON."""
    data = json.loads(text)
    if not isinstance(data, Mapping) or not isinstance(data.get("jobs"), list):
        raise ValueError("not squeue --json output")
    jobs: dict[str, SlurmJob] = {}
    for raw in data["jobs"]:
        if not isinstance(raw, Mapping) or _number(raw.get("job_id")) is None:
            continue
        minutes = _number(raw.get("time_limit"))
        start = _number(raw.get("start_time"))
        job = SlurmJob(
            job_id=str(_number(raw.get("job_id"))),
            state=_word(raw.get("job_state")).upper(),
            reason=_reason(raw.get("state_reason")),
            node=_reason(raw.get("nodes")),
            name=_reason(raw.get("name")),
            partition=_reason(raw.get("partition")),
            start_time=start or None,
            time_limit_seconds=None if minutes is None else minutes * 60,
            exit_code=_exit(raw.get("exit_code")),
        )
        jobs[job.job_id] = job
    return jobs


SINFO_FORMAT = "NodeList:200|,StateLong:40|,Partition:80|,Gres:200|,GresUsed:200|"

_PAIR = re.compile(r"(\w[\w:/]*)=(\S*)")


def _slurm_seconds(text: str) -> int | None:
    """`1-02:03:04`, `02:03:04`, `03:04` -> seconds; UNLIMITED, N/A -> None."""
    m = re.fullmatch(r"(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)", text)
    if not m:
        return None
    days, hours, minutes, seconds = (int(g) if g else 0 for g in m.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def parse_scontrol_jobs(text: str) -> dict[str, SlurmJob]:
    """`scontrol -o show job` (one job per line) -> {job id: SlurmJob}."""
    jobs: dict[str, SlurmJob] = {}
    for line in text.splitlines():
        fields = dict(_PAIR.findall(line))
        job_id = fields.get("JobId", "")
        if not job_id.isdigit():
            continue
        node = fields.get("NodeList")
        jobs[job_id] = SlurmJob(
            job_id=job_id,
            state=fields.get("JobState", "").upper(),
            reason=_reason(fields.get("Reason")),
            node=_reason(node),
            name=_reason(fields.get("JobName")),
            partition=_reason(fields.get("Partition")),
            start_time=None,
            time_limit_seconds=_slurm_seconds(fields.get("TimeLimit", "")),
            exit_code=_exit(fields.get("ExitCode", "")),
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
