"""Jobs on an instance, whoever runs them: start, list, stop, prune, read the log. The CLI and the
dashboard both call these; what differs between gpu-tui's own runner and SLURM is the
instance's scheduler's (sched.py), asked here, never told apart by name.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.errors import InputError, RemoteError
from gpu_tui.core.fit.oomfit import OomFit, oom_fit
from gpu_tui.core.i18n import N_, _
from gpu_tui.core.jobs import (
    JOB_MARK,
    JOB_NAME_RE,
    SETENV_KEY_RE,
    JobFacts,
    JobInfo,
    JobRequest,
    RunAsk,
    job_state,
    new_job_id,
    parse_job_listing,
)
from gpu_tui.core.trainlog.decode import decode_log
from gpu_tui.core.trainlog.failures import OOM, TRACEBACK, with_oom_evidence
from gpu_tui.core.trainlog.frames import last_frame
from gpu_tui.core.trainlog.read import summarize
from gpu_tui.core.trainlog.series import PROGRESS_FIELDS
from gpu_tui.core.trainlog.series_decode import RunLast, split_last
from gpu_tui.core.trainlog.summary import LogSummary
from gpu_tui.remote.host import Host
from gpu_tui.remote.quoting import fill_script, sh_c
from gpu_tui.services.jobs.jobdir import command_script, job_dir
from gpu_tui.services.jobs.sched import scheduler_for
from gpu_tui.services.jobs.sched_plain import RUNNER_VERSION
from gpu_tui.services.statedir import shell_state_dir

__all__ = [
    "RUNNER_VERSION",
    "STOP_STEPS",
    "JobNotFound",
    "job_dir",
    "command_script",
    "start_job",
    "list_jobs",
    "find_job",
    "stop_job",
    "prune_jobs",
    "LogWindow",
    "read_log_bytes",
    "read_log_window",
    "follow_log_command",
    "state_dir_path",
    "list_script",
    "summary_command",
    "prune_command",
    "window_script",
    "follow_command",
    "state_path_script",
    "list_facts",
    "validate_request",
    "info_with_summary",
    "FailureNotes",
    "failure_notes",
    "with_notes",
]

# stop: SIGINT lets training loops save a checkpoint; TERM, then KILL, if they do not exit in time
STOP_STEPS: tuple[tuple[str, float], ...] = (("INT", 10.0), ("TERM", 5.0), ("KILL", 5.0))


class JobNotFound(InputError):
    title = N_("no such job")


def validate_request(req: JobRequest) -> None:
    """Refuse, before anything runs, what cannot work."""
    if not req.command.strip():
        raise InputError(_("the command is empty: give the command to run after `--`"))
    if "\x00" in req.command:
        raise InputError(_("the command contains a NUL byte"))
    if req.name is not None and not JOB_NAME_RE.match(req.name):
        raise InputError(_("job name {name!r}: use 1-64 letters, digits, '.', '_' or '-'").format(name=req.name))
    for key, value in req.setenv:
        if not SETENV_KEY_RE.match(key):
            raise InputError(_("--setenv {key}=...: {key!r} is not a valid environment variable name").format(key=key))
        if "\x00" in value:
            raise InputError(_("--setenv {key}: the value contains a NUL byte").format(key=key))


async def start_job(host: Host, inst: InstanceConfig, req: JobRequest, ask: RunAsk | None = None) -> JobRequest:
    """Start a detached job (on a SLURM login node: submit it) through the instance's scheduler;
    returns the request as stored (with its id). InputError if refused. `ask`: what the run
    asks of the scheduler, after its `prepare`."""
    if not req.id:
        req = replace(req, id=new_job_id())
    validate_request(req)
    return await scheduler_for(inst).start(host, inst, req, ask or RunAsk())


_LIST = r"""
state=__STATE__
boot=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)
for d in "$state"/jobs/*/; do
  d=${d%/}
  [ -f "$d/job.json" ] || continue
  echo "__MARK__ ${d##*/}"
  IFS= read -r j < "$d/job.json"; printf 'json %s\n' "$j"
  for f in pid exit_code started_at finished_at scheduler_job_id node scheduler_end charset oom_kill disk_full; do
    if [ -f "$d/$f" ]; then read -r v < "$d/$f"; echo "$f $v"; fi
  done
  alive=0
  if [ ! -f "$d/exit_code" ] && [ -f "$d/runner_pid" ]; then
    read -r rp < "$d/runner_pid"; b=; [ -f "$d/boot_id" ] && read -r b < "$d/boot_id"
    if [ "$b" = "$boot" ] && kill -0 "$rp" 2>/dev/null; then
      # a killed runner can linger as a zombie where PID 1 does not reap (many containers)
      st=; read -r _ _ st _ < "/proc/$rp/stat" 2>/dev/null
      [ "$st" = Z ] || alive=1
    fi
    # a runner started a moment ago may not have written runner_pid yet: count it as alive
  elif [ ! -f "$d/exit_code" ] && [ ! -f "$d/runner_pid" ]; then alive=1
  fi
  echo "alive $alive"
  [ -f "$d/stop_requested" ] && echo "stop_requested 1"
done
wc -c -- "$state"/jobs/*/log 2>/dev/null | while read -r n f; do
  case $f in */jobs/*/log) f=${f%/log}; echo "size ${f##*/} $n";; esac
done
exit 0
"""

# The builders below are pure (shell words in, script text out) so that the demo can recognise
# each script by calling them with placeholders (demo/jobscripts.py, demo/scriptmatch.py).


def list_script(state: str) -> str:
    """The listing of every job under `state` (the state dir as one shell word)."""
    return fill_script(_LIST, STATE=state, MARK=JOB_MARK)


async def list_facts(host: Host, inst: InstanceConfig) -> list[JobFacts]:
    res = await host.run(sh_c(list_script(shell_state_dir(inst))), timeout=30)
    if not res.ok:
        raise RemoteError(_("{name}: cannot list jobs: {error}").format(name=inst.name, error=res.stderr.strip()[:300]))
    return await scheduler_for(inst).annotate(host, inst, parse_job_listing(res.stdout))


async def list_jobs(
    host: Host,
    inst: InstanceConfig,
    *,
    with_logs: bool | Callable[[JobFacts], bool] = True,
    summary_bytes: int | None = None,
) -> list[JobInfo]:
    """Every job on the instance, oldest first. For the jobs `with_logs` picks (all, none, or a
    predicate) the log's end is read for progress, loss and failure, in parallel within the
    channel budget."""
    facts = await list_facts(host, inst)
    pick = with_logs if callable(with_logs) else (lambda _f: bool(with_logs))
    window = summary_bytes or LOG_SUMMARY_BYTES

    async def one(f: JobFacts) -> JobInfo:
        return await _with_log(host, inst, f, window) if pick(f) else JobInfo(f, *job_state(f))

    return list(await asyncio.gather(*(one(f) for f in facts)))


LOG_SUMMARY_BYTES = 256 * 1024
"""How much of a log's end `jobs` reads for progress, loss and failure (logs can be GBs)."""


async def _with_log(host: Host, inst: InstanceConfig, f: JobFacts, window: int = LOG_SUMMARY_BYTES) -> JobInfo:
    if not f.log_bytes:
        return JobInfo(f, *job_state(f))
    res = await host.run_bytes(summary_command(job_dir(inst, f.id), window), timeout=30)
    last, log_end = split_last(res.stdout)
    summary = summarize(log_end, from_start=f.log_bytes <= window, charset=f.charset)
    info = info_with_summary(f, summary, last, window=window)
    return with_notes(info, failure_notes(f, summary, log_end))


FailureNotes = tuple[OomFit | None, str | None]
"""(what `gpu-tui fit` says of an OOM job's model, the traceback's last frame)."""


def failure_notes(f: JobFacts, summary: LogSummary, log: bytes) -> FailureNotes:
    """What the log `summary` read (`log`, its window) says beyond the failure's kind: for an OOM,
    what fit says of the model the job names (its command, else the log); for a traceback, its
    last frame in the job's own code."""
    failure = summary.failure
    if failure is None:
        return None, None
    if failure.startswith(OOM):
        return oom_fit(str(f.request.get("command") or ""), decode_log(log, f.charset)), None
    if failure.startswith(TRACEBACK):
        return None, last_frame(decode_log(log, f.charset))
    return None, None


def with_notes(info: JobInfo, notes: FailureNotes) -> JobInfo:
    fit, frame = notes
    return replace(info, oom_fit=fit, frame=frame) if fit is not None or frame is not None else info


def summary_command(job_dir: str, window: int) -> str:
    """series.last in `job_dir` (one shell word), where the instance's summariser wrote one, then
    the last `window` bytes of the log."""
    return f"cat -- {job_dir}/series.last 2>/dev/null; tail -c {int(window)} -- {job_dir}/log 2>/dev/null"


def info_with_summary(
    f: JobFacts, summary: LogSummary, last: RunLast | None = None, *, window: int = LOG_SUMMARY_BYTES
) -> JobInfo:
    """A job's state from its facts and what the end of its log says (progress, loss, failure).
    `last`, the whole log as the instance's summariser read it, fills in what the end does not
    say when the end is not the whole log: a loss printed before it, and the run's progress where
    only the whole log says how long the run is (`Num Epochs` at its start), when the summariser
    is at most `window` behind."""
    state, failure = job_state(f)
    if state == "stopped":
        failure = None  # the user asked for it
    elif state == "running":
        failure = summary.failure  # a NaN loss or an OOM already printed
    elif f.exit_code is not None:
        # a reason in the log wins over `exit code N`; exit 0 keeps a NaN loss (CONTRACTS.md);
        # the OOM killer's evidence wins over a bare `killed` or exit code
        failure = summary.finish(f.exit_code)
        failure = with_oom_evidence(failure, f.oom_kill) if failure is not None else None
    else:
        failure = summary.failure or failure  # lost: what the log said, else "lost: ..."
    progress = summary.progress
    fields: dict[str, object] = {k: getattr(progress, k) for k in PROGRESS_FIELDS} if progress else {}
    loss = summary.last_loss
    size = f.log_bytes or 0
    if last is not None and size > window:  # the end read is not the whole log
        loss = last.last_loss if loss is None else loss
        whole = last.progress
        fresh = last.read + window >= size
        run_wide = whole is not None and whole.get("scope") == "run" and whole.get("percent") is not None
        knows_less = fields.get("scope") != "run" or fields.get("percent") is None
        if whole is not None and (not fields or (fresh and run_wide and knows_less)):
            fields = whole
    return JobInfo(
        f,
        state,
        failure,
        progress_percent=_number(fields.get("percent")),
        eta_seconds=_count(fields.get("eta_seconds")) if state == "running" else None,
        last_loss=loss,
        progress_counts=(
            _count(fields.get("epoch")),
            _count(fields.get("epochs")),
            _count(fields.get("step")),
            _count(fields.get("steps")),
        ),
    )


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _count(value: object) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


async def find_job(host: Host, inst: InstanceConfig, ref: str) -> JobFacts:
    """A job by id, or by name (its newest job); JobNotFound (exit 2) otherwise."""
    facts = await list_facts(host, inst)
    by_id = [f for f in facts if f.id == ref]
    if by_id:
        return by_id[0]
    named = [f for f in facts if f.request.get("name") == ref]
    if named:
        return named[-1]
    known = ", ".join(f.id + (f" ({f.request.get('name')})" if f.request.get("name") else "") for f in facts[-5:])
    if known:
        raise JobNotFound(_("{name}: no job {job!r}; recent: {known}").format(name=inst.name, job=ref, known=known))
    raise JobNotFound(_("{name}: no job {job!r}; it has no jobs").format(name=inst.name, job=ref))


async def stop_job(
    host: Host, inst: InstanceConfig, job_id: str, *, steps: tuple[tuple[str, float], ...] = STOP_STEPS
) -> str:
    """SIGINT first, then harder (the instance's scheduler says how); returns how it ended
    (`stopped INT`, ...)."""
    return await scheduler_for(inst).stop(host, inst, job_id, steps)


async def prune_jobs(host: Host, inst: InstanceConfig) -> tuple[list[str], int]:
    """Delete finished jobs' directories; returns (ids removed, log bytes freed)."""
    facts = await list_facts(host, inst)
    done = [f for f in facts if not f.alive]
    if not done:
        return [], 0
    res = await host.run(prune_command([job_dir(inst, f.id) for f in done]), timeout=120)
    if not res.ok:
        raise RemoteError(_("{name}: prune failed: {error}").format(name=inst.name, error=res.stderr.strip()[:300]))
    return [f.id for f in done], sum(f.log_bytes or 0 for f in done)


def prune_command(dirs: Sequence[str]) -> str:
    """Delete these job directories (shell words)."""
    return "rm -rf -- " + " ".join(dirs)


_WINDOW = r"""
f=__DIR__/log
[ -f "$f" ] || { echo 0; exit 0; }
s=$(wc -c < "$f")
w=__WINDOW__
if [ "$s" -gt "$w" ]; then start=$((s - w + 1)); else start=1; fi
echo "$s"
tail -c +"$start" -- "$f" | head -c $((s - start + 1))
"""


def window_script(job_dir: str, window: int) -> str:
    """The log's size in bytes on one line, then its last `window` bytes."""
    return fill_script(_WINDOW, DIR=job_dir, WINDOW=str(int(window)))


@dataclass(frozen=True, slots=True)
class LogWindow:
    """The end of a job's log, as bytes: what a follow from byte `size` goes on from."""

    size: int
    """The log's size in bytes when it was read."""
    data: bytes
    """Its last `window` bytes, raw (any encoding; the first line may be cut)."""
    whole: bool
    """`data` is the whole log (it starts at the log's first byte)."""


async def read_log_bytes(host: Host, inst: InstanceConfig, job_id: str, window: int = 256 * 1024) -> LogWindow:
    """The log's size and its last `window` bytes, undecoded."""
    res = await host.run_bytes(sh_c(window_script(job_dir(inst, job_id), window)), timeout=60)
    head, _nl, body = res.stdout.partition(b"\n")
    size = int(head) if head.strip().isdigit() else 0
    return LogWindow(size, body, size <= window)


async def read_log_window(
    host: Host, inst: InstanceConfig, job_id: str, window: int = 256 * 1024, *, charset: str | None = None
) -> tuple[int, str, bool]:
    """(log size in bytes, its last `window` bytes decoded as core/trainlog/decode reads a log,
    whether that is the whole log)."""
    got = await read_log_bytes(host, inst, job_id, window)
    data = got.data
    # a window that starts mid-line may start mid-character: that partial line must not decide
    # the encoding of the rest
    cut = 0 if got.whole else data.find(b"\n") + 1 or len(data)
    text = data[:cut].decode("utf-8", "replace") + decode_log(data[cut:], charset)
    return got.size, text, got.whole


def follow_log_command(inst: InstanceConfig, job_id: str, offset: int) -> str:
    """`tail -f` from byte `offset` (0-based) on; waits for a log not yet created."""
    return follow_command(job_dir(inst, job_id), offset)


def follow_command(job_dir: str, offset: int) -> str:
    """Follow the log in `job_dir` (one shell word) from byte `offset` (0-based) on."""
    return f"tail -c +{int(offset) + 1} -F -- {job_dir}/log 2>/dev/null"


async def state_dir_path(host: Host, inst: InstanceConfig) -> str | None:
    """The state dir as an absolute path on the instance (for `log_path`), or None if absent."""
    res = await host.run(sh_c(state_path_script(shell_state_dir(inst))), timeout=15)
    path = res.stdout.strip()
    return path if res.ok and path.startswith("/") else None


def state_path_script(state: str) -> str:
    """`state` (one shell word) as an absolute path with symlinks resolved; fails if absent."""
    return f"cd {state} 2>/dev/null && pwd -P"
