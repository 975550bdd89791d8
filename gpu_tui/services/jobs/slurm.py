"""Jobs through SLURM on a cluster's login node (`scheduler = "slurm"`): submit with sbatch, read
the queue, cancel with scancel.

A SLURM job is a gpu-tui job like any other: the same `<state_dir>/jobs/<id>/` directory holds
`job.json`, `command.sh` and the `log` (sbatch's --output), so `logs`, the log screen, loss and
failure reading work unchanged. The batch script (the heredoc in _SUBMIT, given to sbatch on
stdin) runs `command.sh` there on the compute node and records `node`, `started_at`, `exit_code`
and `finished_at`, as gpu-tui's own runner does; the state dir must be on a filesystem the
compute nodes share with the login node (a cluster's home directories are). What the batch
script cannot record (still pending, cancelled, killed at the time limit) comes from the
scheduler, and is written to `scheduler_end` once, so the job keeps its state after SLURM
forgets it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.errors import InputError, RemoteError
from gpu_tui.core.i18n import _
from gpu_tui.core.jobs import JobFacts, JobRequest, RunAsk
from gpu_tui.core.slurm import (
    ACTIVE_STATES,
    SINFO_FORMAT,
    SQUEUE_FORMAT,
    TIME_RE,
    SlurmJob,
    SlurmNode,
    parse_sacct,
    parse_sbatch_id,
    parse_sinfo_nodes,
    parse_squeue,
)
from gpu_tui.remote.host import Host
from gpu_tui.remote.quoting import fill_script, quote, remote_path, sh_c
from gpu_tui.services.jobs.jobdir import command_script, job_dir

__all__ = [
    "gpu_scope",
    "options_for",
    "SlurmOptions",
    "validate_options",
    "submit_script",
    "queue",
    "annotate",
    "stop_script",
    "nodes",
    "submitted_id",
    "SlurmScheduler",
]

_WORD = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_PARTITIONS = re.compile(r"^[A-Za-z0-9._-]{1,64}(?:,[A-Za-z0-9._-]{1,64})*$")
"""One partition, or a list sbatch tries in turn (`debug,gpu`)."""


@dataclass(frozen=True, slots=True)
class SlurmOptions:
    """sbatch's options for one job: the instance's `slurm = {...}` with `run`'s flags on top."""

    partition: str | None = None
    account: str | None = None
    time: str | None = None
    gpus: int | None = None
    extra: tuple[str, ...] = ()

    def argv(self) -> list[str]:
        words = []
        if self.partition:
            words.append(f"--partition={self.partition}")
        if self.account:
            words.append(f"--account={self.account}")
        if self.time:
            words.append(f"--time={self.time}")
        if self.gpus:
            words.append(f"--gpus={self.gpus}")
        return words + list(self.extra)


def options_for(
    inst: InstanceConfig, *, gpus: int | None = None, partition: str | None = None, time: str | None = None
) -> SlurmOptions:
    """The instance's `slurm = {...}` defaults with what this job asks for on top."""
    d = inst.slurm
    return SlurmOptions(
        partition=partition or d.partition,
        account=d.account,
        time=time or d.time,
        gpus=gpus if gpus is not None else d.gpus,
        extra=d.extra,
    )


def validate_options(opts: SlurmOptions) -> None:
    """Refuse, before submitting, what sbatch could only misread (exit 2)."""
    if opts.partition is not None and not _PARTITIONS.match(opts.partition):
        raise InputError(
            _("--partition {value!r}: use letters, digits, '.', '_' or '-' (a list: a,b)").format(value=opts.partition)
        )
    if opts.time is not None and not TIME_RE.match(opts.time):
        raise InputError(
            _("--time {value!r}: write minutes, HH:MM:SS or D-HH:MM:SS (e.g. 04:00:00)").format(value=opts.time)
        )
    if opts.gpus is not None and not 0 <= opts.gpus <= 1024:
        raise InputError(_("--gpus {value}: give 0 to 1024").format(value=opts.gpus))


# The batch script: `sh`'s trap makes it outlive an INT or TERM sent to the whole step (scancel,
# the time limit), so it records how command.sh ended; only a KILL leaves no exit code, and then
# SLURM's state says what happened. The notice of the job's end (issue 15) is sent in the
# foreground, after the exit code is recorded: SLURM ends every process of a job with its batch
# script, so a detached sender would die with it.
_BATCH = r"""#!/bin/sh
# gpu-tui SLURM batch script v1: runs command.sh in the job directory, records how it ended
hostname > node 2>/dev/null
date +%s > started_at
echo $$ > pid
trap ':' INT TERM
if command -v bash >/dev/null 2>&1; then shell=bash; else shell=sh; fi
state=$(cd ../.. && pwd -P)
notify=
[ -f "$state/notify/targets.json" ] && [ -f "$state/bin/notify-v1.sh" ] && notify="$state/bin/notify-v1.sh"
[ -n "$notify" ] && sh "$notify" "$state" watch "$PWD" < /dev/null > /dev/null 2>&1 &
$shell ./command.sh < /dev/null
code=$?
date +%s > finished_at
echo "$code" > exit_code.tmp && mv exit_code.tmp exit_code
[ -n "$notify" ] && sh "$notify" "$state" job_end "$PWD" < /dev/null > /dev/null 2>&1
exit "$code"
"""

_SUBMIT = r"""
set -u
umask 077
d=__DIR__
command -v sbatch >/dev/null 2>&1 || { echo "sbatch is not on PATH on this login node"; exit 95; }
if [ __HASCWD__ = 1 ] && ! [ -d __CWD__ ]; then echo "working directory __CWDTEXT__ does not exist"; exit 91; fi
mkdir -p "$d" || exit 94
IFS= read -r json
printf '%s\n' "$json" > "$d/job.json"
cat > "$d/command.sh"
: > "$d/log"
if out=$(sbatch --parsable --job-name=__NAME__ --chdir="$d" --output="$d/log" --error="$d/log" \
    --open-mode=append __OPTIONS__ 2>&1 <<'GPU_TUI_BATCH'
__BATCH__GPU_TUI_BATCH
); then
  id=$(printf '%s\n' "$out" | tail -n 1 | cut -d';' -f1)
  printf '%s\n' "$id" > "$d/scheduler_job_id"
  echo "submitted $id"
else
  rm -rf -- "$d"
  printf '%s\n' "$out"
  exit 96
fi
"""


def submit_script(*, job_dir: str, cwd: str, has_cwd: bool, cwd_text: str, job_name: str, opts: SlurmOptions) -> str:
    """The remote shell script that writes the job directory and submits it (stdin: job.json's
    line, then command.sh)."""
    return fill_script(
        _SUBMIT,
        DIR=job_dir,
        CWD=cwd or "/",
        HASCWD="1" if has_cwd else "0",
        CWDTEXT=quote(cwd_text),
        NAME=quote(f"gpu-tui-{job_name}"),
        OPTIONS=" ".join(quote(w) for w in opts.argv()),
        BATCH=_BATCH,
    )


def submitted_id(exit_status: int | None, out: str, instance: str) -> str:
    """SLURM's job id from the submit script's output; SLURM's own reason when it refused."""
    last = out.strip().splitlines()[-1:] or [""]
    if exit_status == 0 and last[0].startswith("submitted "):
        job_id = parse_sbatch_id(last[0].removeprefix("submitted "))
        if job_id:
            return job_id
    if exit_status == 91:
        raise InputError(f"{instance}: {out.strip()}")
    errors = [line.strip() for line in out.splitlines() if "error:" in line] or [out.strip()[-300:]]
    # sbatch says it twice ("error: invalid partition ..." then "Batch job submission failed: ...")
    reason = errors[-1].removeprefix("sbatch: error: ")
    raise RemoteError(_("{name}: SLURM refused the job: {reason}").format(name=instance, reason=reason[:300]))


async def queue(host: Host, missing_from: Sequence[str] = ()) -> dict[str, SlurmJob]:
    """The user's jobs as the scheduler knows them (ended ones too, until the controller forgets
    them); the ids in `missing_from` it no longer knows are asked of sacct, where accounting runs."""
    # -u "$(id -un)", not --me: that needs SLURM 20.11
    res = await host.run(f'squeue -u "$(id -un)" -h -t all -o {quote(SQUEUE_FORMAT)}', timeout=30)
    if not res.ok:
        raise RemoteError(_("cannot read the SLURM queue: {error}").format(error=(res.stderr or res.stdout)[-300:]))
    jobs = parse_squeue(res.stdout)
    gone = [job_id for job_id in missing_from if job_id not in jobs and job_id.isdigit()]
    if gone:
        # no accounting (`Slurm accounting storage is disabled`): nothing more to learn, not an error
        acct = await host.run(
            f"sacct -n -P -X -j {','.join(gone)} -o JobID,State,ExitCode,NodeList,Reason 2>/dev/null", timeout=30
        )
        if acct.ok:
            jobs.update(parse_sacct(acct.stdout))
    return jobs


_RECORD = r"""
for pair in __PAIRS__; do
  d=${pair%%=*}; v=${pair#*=}
  [ -f "$d/exit_code" ] || printf '%s\n' "$v" > "$d/scheduler_end"
done
"""


async def annotate(host: Host, facts: Sequence[JobFacts], dir_of: Callable[[str], str]) -> list[JobFacts]:
    """Each SLURM job's facts with the scheduler's word on it: pending or running (the listing
    cannot tell on a login node), or how it ended when its batch script could not record it."""
    open_jobs = [f for f in facts if f.scheduler_job_id and f.exit_code is None and f.scheduler_state is None]
    if not open_jobs:
        return [replace(f, alive=False) if f.scheduler_job_id else f for f in facts]
    known = await queue(host, [f.scheduler_job_id for f in open_jobs if f.scheduler_job_id])
    out: list[JobFacts] = []
    ended: list[str] = []
    for f in facts:
        if not f.scheduler_job_id:
            out.append(f)
            continue
        if f not in open_jobs:
            out.append(replace(f, alive=False))
            continue
        job = known.get(f.scheduler_job_id)
        state = job.state if job else "UNKNOWN"
        reason = job.reason if job else None
        alive = state in ACTIVE_STATES
        out.append(
            replace(
                f,
                alive=alive,
                scheduler_state=state,
                scheduler_reason=reason,
                node=f.node or (job.node if job and state != "PENDING" else None),
                scheduler_exit=job.exit_code if job else None,
                scheduler_time_limit=job.time_limit_seconds if job else None,
            )
        )
        if not alive:
            code = "-" if job is None or job.exit_code is None else str(job.exit_code)
            ended.append(f"{dir_of(f.id)}={state} {code} {reason or ''}".rstrip())
    if ended:
        pairs = " ".join(_pair(p) for p in ended)
        await host.run(sh_c(_RECORD.replace("__PAIRS__", pairs)), timeout=30)
    return out


def _pair(text: str) -> str:
    """`DIR=WORDS` as one shell word: DIR may start with "$HOME"/ (remote_path), so it is left to
    expand, and the rest is quoted."""
    d, _sep, words = text.partition("=")
    return f"{d}={quote(words)}"


_STOP = r"""
d=__DIR__
id=__ID__
[ -f "$d/exit_code" ] && { echo finished; exit 0; }
: > "$d/stop_requested"
st() { squeue -h -j "$id" -o %T 2>/dev/null | head -n 1; }
s=$(st)
case "$s" in
  ''|COMPLETED|FAILED|CANCELLED|TIMEOUT|OUT_OF_MEMORY|NODE_FAIL|PREEMPTED|BOOT_FAIL|DEADLINE)
    echo finished; exit 0;;
  PENDING) scancel "$id" && echo cancelled; exit $?;;
esac
scancel --full --signal=INT "$id" 2>/dev/null
i=0
while [ $i -lt __TICKS__ ]; do
  [ -f "$d/exit_code" ] && { echo "stopped INT"; exit 0; }
  case "$(st)" in RUNNING|COMPLETING|CONFIGURING|SUSPENDED) ;; *) echo "stopped INT"; exit 0;; esac
  sleep 0.2; i=$((i+1))
done
scancel "$id" || exit 4
i=0
while [ $i -lt 100 ]; do
  case "$(st)" in RUNNING|COMPLETING|CONFIGURING) ;; *) echo "stopped TERM"; exit 0;; esac
  sleep 0.2; i=$((i+1))
done
echo "still running"
exit 4
"""


def stop_script(*, job_dir: str, scheduler_job_id: str, grace_seconds: float) -> str:
    """scancel: SIGINT to every process of the job (it may checkpoint), then, after the grace
    period, SLURM's own cancel (TERM, and KILL after the cluster's KillWait)."""
    if not scheduler_job_id.isdigit():
        raise InputError(_("{job!r} is not a SLURM job id").format(job=scheduler_job_id))
    return fill_script(_STOP, DIR=job_dir, ID=scheduler_job_id, TICKS=str(max(1, int(grace_seconds / 0.2))))


_RUNNING = "squeue -u \"$(id -un)\" -h -t RUNNING -o '%i %j'"


def gpu_scope(host: Host) -> Callable[[], Awaitable[str | None]]:
    """For the monitor of a login node: the prefix that runs a command inside the newest running
    gpu-tui job's allocation, so nvidia-smi shows that job's GPUs on its compute node; None while
    no gpu-tui job runs."""

    async def scope() -> str | None:
        res = await host.run(_RUNNING, timeout=30)
        if not res.ok:
            raise RemoteError(_("cannot read the SLURM queue: {error}").format(error=(res.stderr or res.stdout)[-300:]))
        ids = [
            int(words[0])
            for words in (line.split() for line in res.stdout.splitlines())
            if len(words) == 2 and words[0].isdigit() and words[1].startswith("gpu-tui-")
        ]
        return f"srun --overlap --jobid={max(ids)} --ntasks=1 --quiet " if ids else None

    return scope


async def nodes(host: Host) -> list[SlurmNode]:
    """The partitions' nodes with GPUs in use and in all (for the dashboard)."""
    res = await host.run(f"sinfo -h -N -O {shlex.quote(SINFO_FORMAT)}", timeout=30)
    if not res.ok:
        raise RemoteError(_("cannot read the SLURM nodes: {error}").format(error=(res.stderr or res.stdout)[-300:]))
    return parse_sinfo_nodes(res.stdout)


class _Stopper(Protocol):
    async def stop(
        self, host: Host, inst: InstanceConfig, job_id: str, steps: tuple[tuple[str, float], ...]
    ) -> str: ...


class SlurmScheduler:
    """A cluster's login node (`scheduler = "slurm"`): jobs are submitted with sbatch and run on
    compute nodes; `detached` stops a job gpu-tui's own runner started there before the entry
    became a login node."""

    jobs_run_here = False

    def __init__(self, detached: _Stopper) -> None:
        self._detached = detached

    def run_fields(self, inst: InstanceConfig) -> RunAsk | None:
        d = inst.slurm
        return RunAsk(gpus=d.gpus, partition=d.partition, time=d.time)

    async def prepare(self, host: Host, inst: InstanceConfig, req: JobRequest, ask: RunAsk) -> JobRequest:
        return req  # sbatch takes `ask` as its options (checked at submit)

    async def start(self, host: Host, inst: InstanceConfig, req: JobRequest, ask: RunAsk) -> JobRequest:
        opts = options_for(inst, gpus=ask.gpus, partition=ask.partition, time=ask.time)
        validate_options(opts)
        if req.tmux:
            raise InputError(
                _("{name}: --tmux is for jobs gpu-tui runs itself; a SLURM job runs on a compute node").format(
                    name=inst.name
                )
            )
        cwd = remote_path(req.cwd) if req.cwd else ""
        script = submit_script(
            job_dir=job_dir(inst, req.id),
            cwd=cwd,
            has_cwd=bool(cwd),
            cwd_text=req.cwd or "",
            job_name=req.name or req.id,
            opts=opts,
        )
        res = await host.run(sh_c(script), stdin=req.to_json() + "\n" + command_script(req), timeout=60)
        submitted_id(res.exit_status, res.stdout + res.stderr, inst.name)
        return req

    async def annotate(self, host: Host, inst: InstanceConfig, facts: Sequence[JobFacts]) -> list[JobFacts]:
        return await annotate(host, facts, lambda job_id: job_dir(inst, job_id))

    async def stop(self, host: Host, inst: InstanceConfig, job_id: str, steps: tuple[tuple[str, float], ...]) -> str:
        """scancel (stop_script); a job without a SLURM id is the detached runner's."""
        d = job_dir(inst, job_id)
        found = await host.run(f"cat -- {d}/scheduler_job_id 2>/dev/null", timeout=30)
        scheduler_job_id = (found.stdout.splitlines() or [""])[0].strip() if found.ok else ""
        if not scheduler_job_id:
            return await self._detached.stop(host, inst, job_id, steps)
        script = stop_script(job_dir=d, scheduler_job_id=scheduler_job_id, grace_seconds=steps[0][1])
        res = await host.run(sh_c(script), timeout=steps[0][1] + 45)
        if not res.ok:
            raise RemoteError(
                _("{name}: job {job} did not stop: {error}").format(
                    name=inst.name, job=job_id, error=(res.stdout or res.stderr).strip()[:300]
                )
            )
        return res.stdout.strip()

    def gpu_scope(self, host: Host) -> Callable[[], Awaitable[str | None]] | None:
        return gpu_scope(host)

    async def cluster_nodes(self, host: Host) -> tuple[SlurmNode, ...] | None:
        return tuple(await nodes(host))
