"""Jobs as the instance keeps them: what was asked for, what the runner recorded, and what that means.

A job is a directory `<state_dir>/jobs/<id>/` on the instance (ARCHITECTURE.md). gpu-tui writes
`job.json` (the request) and `command.sh` there; the shipped runner writes `pid`, `runner_pid`,
`boot_id`, `started_at`, `exit_code`, `finished_at` and appends the job's output to `log`; a stop
request leaves `stop_requested`. This module turns those facts into the state words of CONTRACTS.md.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from dataclasses import dataclass, field, replace

from gpu_tui.core.fit.oomfit import OomFit
from gpu_tui.core.slurm import scheduler_words
from gpu_tui.core.trainlog.failures import INTERRUPTED, KILLED, with_oom_evidence

__all__ = [
    "JOB_ID_RE",
    "JOB_NAME_RE",
    "ENV_NAME_RE",
    "SETENV_KEY_RE",
    "JobRequest",
    "RunAsk",
    "JobFacts",
    "JobInfo",
    "new_job_id",
    "job_state",
    "parse_job_listing",
    "JOB_MARK",
]

JOB_ID_RE = re.compile(r"^[0-9]{8}-[0-9]{6}-[0-9a-f]{4}$")
JOB_NAME_RE = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
ENV_NAME_RE = re.compile(r"^[A-Za-z0-9._-]{1,64}$")  # FIELD_NOTES: validate before a command line
SETENV_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
JOB_MARK = "@@job"


def new_job_id(now: float | None = None) -> str:
    """`20261129-141501-a1b2`: sorts by start time (UTC), unique enough for one user's instance."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(time.time() if now is None else now))
    return f"{stamp}-{secrets.token_hex(2)}"


@dataclass(frozen=True, slots=True)
class JobRequest:
    """What the user asked to run; stored as the job's `job.json`."""

    id: str
    command: str
    """A shell command line, run once exactly as typed (CONTRACTS.md `-- CMD...`)."""
    cwd: str | None = None
    conda_env: str | None = None
    conda_prefix: str | None = None
    """The env's directory, resolved at start so the job needs no `conda activate`."""
    name: str | None = None
    setenv: tuple[tuple[str, str], ...] = ()
    tmux: bool = False
    metrics: tuple[str, ...] = ()
    """`run --metrics DIR`: where the run writes its own metrics files, besides its working directory."""

    def to_json(self) -> str:
        return json.dumps(
            {
                "id": self.id,
                "name": self.name,
                "command": self.command,
                "cwd": self.cwd,
                "conda_env": self.conda_env,
                "conda_prefix": self.conda_prefix,
                # values may be tokens: only the keys are kept on the instance's listing
                "setenv_keys": [k for k, _ in self.setenv],
                "tmux": self.tmux,
                **({"metrics": list(self.metrics)} if self.metrics else {}),
            },
            ensure_ascii=False,
        )


@dataclass(frozen=True, slots=True)
class RunAsk:
    """What a run asks of the instance's scheduler beyond the command (`run --gpus/--partition/
    --time`, the run form's cluster fields); None: nothing asked (the instance's default)."""

    gpus: int | None = None
    partition: str | None = None
    time: str | None = None


@dataclass(frozen=True, slots=True)
class JobFacts:
    """What the listing script read from one job directory; None where the file is absent."""

    id: str
    request: dict[str, object] = field(default_factory=dict)
    pid: int | None = None
    alive: bool = False
    """The runner is still running (same boot, process exists)."""
    exit_code: int | None = None
    started_at: int | None = None
    finished_at: int | None = None
    stop_requested: bool = False
    log_bytes: int | None = None
    scheduler_job_id: str | None = None
    """SLURM's id for the job (`scheduler_job_id`); None for a job gpu-tui's runner started."""
    node: str | None = None
    """The compute node it ran on, as its batch script recorded it (`node`)."""
    scheduler_state: str | None = None
    """SLURM's state word (PENDING, RUNNING, TIMEOUT ...), from squeue, or as recorded in
    `scheduler_end` once the scheduler forgets the job."""
    scheduler_reason: str | None = None
    """SLURM's reason (Resources, Priority, TimeLimit ...); None where it says `None`."""
    scheduler_exit: int | None = None
    """The exit code SLURM reports (128+N for a signal), where the batch script could not say."""
    scheduler_time_limit: int | None = None
    """The job's time limit in seconds as SLURM holds it; None for none (UNLIMITED) or unknown."""
    charset: str | None = None
    """The locale's charmap where the job started (`GBK`, `UTF-8`...): how its log may be encoded."""
    disk_full: str | None = None
    """`SIZE_KB FREE_KB USE% MOUNT`: the filesystem a job that died of a full disk wrote to, as
    df said it when the job ended (the runner's `disk_full`)."""
    oom_kill: str | None = None
    """`BYTES cgroup|host`: the OOM killer killed something of the job's while it ran (the runner's
    `oom_kill`: its memory cgroup's count, or the kernel log's, rose), under that memory limit."""


@dataclass(frozen=True, slots=True)
class JobInfo:
    """One job as shown and as `jobs --json` prints it."""

    facts: JobFacts
    state: str
    """pending | running | succeeded | failed | stopped"""
    failure: str | None = None
    progress_percent: float | None = None
    eta_seconds: float | None = None
    last_loss: float | None = None
    progress_counts: tuple[int | None, int | None, int | None, int | None] = (None, None, None, None)
    """(epoch, epochs, step, steps) as the log says them (core/trainlog/model.Progress); None where not."""
    oom_fit: OomFit | None = None
    """What `gpu-tui fit` says of the model the job named, for a job out of GPU memory."""
    frame: str | None = None
    """Where the traceback that ended the job says it failed (`train.py:42 in forward`)."""

    @property
    def id(self) -> str:
        return self.facts.id

    @property
    def name(self) -> str | None:
        value = self.facts.request.get("name")
        return value if isinstance(value, str) else None


def job_state(f: JobFacts) -> tuple[str, str | None]:
    """(state, failure known from the facts alone). The log may still name a better reason."""
    if f.scheduler_state is not None:
        decided = scheduler_words(
            f.scheduler_state, f.scheduler_exit, stop_requested=f.stop_requested, exit_code=f.exit_code
        )
        if decided is not None:
            return decided
    if f.exit_code is None:
        if f.alive:
            return "running", None
        # no exit code and no runner: the instance rebooted or the runner was killed with the job
        if f.stop_requested:
            return "stopped", None
        return "failed", "lost: the instance restarted or the runner was killed"
    if f.stop_requested:
        return "stopped", None
    if f.exit_code == 0:
        return "succeeded", None
    if f.exit_code == 137:
        return "failed", with_oom_evidence(KILLED, f.oom_kill)
    if f.exit_code == 130:  # 128 + SIGINT, and nobody asked gpu-tui to stop it: the user's Ctrl+C
        return "failed", INTERRUPTED
    return "failed", with_oom_evidence(f"exit code {f.exit_code}", f.oom_kill)


def _int(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.lstrip("-").isdigit() and len(text) < 20 else None


def parse_job_listing(text: str) -> list[JobFacts]:
    """The listing script's output: `@@job ID` then `key value` lines per job, then `size ID
    BYTES` lines for the logs (one `wc` for all of them: a queue of 200 jobs is not 400 processes)."""
    jobs: list[JobFacts] = []
    current: dict[str, object] | None = None
    sizes: dict[str, int] = {}

    def close() -> None:
        if current is not None:
            jobs.append(JobFacts(**current))  # type: ignore[arg-type]

    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == "size":
            job_id, _sp, size = value.partition(" ")
            n = _int(size)
            if n is not None and JOB_ID_RE.match(job_id):
                sizes[job_id] = n
            continue
        if key == JOB_MARK:
            close()
            job_id = value.strip()
            current = {"id": job_id} if JOB_ID_RE.match(job_id) else None
            continue
        if current is None:
            continue
        if key == "json":
            try:
                data = json.loads(value)
            except ValueError:
                data = {}
            current["request"] = data if isinstance(data, dict) else {}
        elif key in ("pid", "exit_code", "started_at", "finished_at", "log_bytes"):
            current[key] = _int(value)
        elif key in ("scheduler_job_id", "node") and value.strip():
            current[key] = value.strip()[:200]
        elif key == "scheduler_end":
            state, _sp, rest = value.strip().partition(" ")
            code, _sp, reason = rest.partition(" ")
            current["scheduler_state"] = state or None
            current["scheduler_exit"] = _int(code)
            current["scheduler_reason"] = reason.strip() or None
        elif key in ("alive", "stop_requested"):
            current[key] = value.strip() == "1"
        elif key == "charset":
            current[key] = value.strip()[:40] or None
        elif key in ("oom_kill", "disk_full"):
            current[key] = value.strip()[:300] or None
    close()
    jobs = [replace(j, log_bytes=sizes[j.id]) if j.id in sizes and j.log_bytes is None else j for j in jobs]
    return sorted(jobs, key=lambda j: j.id)
