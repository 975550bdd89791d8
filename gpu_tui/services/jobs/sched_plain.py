"""Jobs on a plain instance (`scheduler = "none"`): gpu-tui's own detached runner starts them.

A job survives the SSH link, the laptop and gpu-tui: it is started with `setsid nohup` through a
small versioned runner (job-runner.sh, shipped once to `<state_dir>/bin/`), and everything about
it lives in `<state_dir>/jobs/<id>/` (gpu_tui/core/jobs.py says what each file means). The job's
command line reaches the instance on stdin, inside the generated `command.sh`, so quotes, `;`,
`$()`, backticks and newlines run exactly as typed, once, and values of `--setenv` never appear
in any process's argument list. `--gpus N` gives the job the N least-used GPUs (gpupick.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from importlib import resources

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.errors import InputError, RemoteError
from gpu_tui.core.i18n import _
from gpu_tui.core.jobs import JobFacts, JobRequest, RunAsk
from gpu_tui.core.slurm import SlurmNode
from gpu_tui.remote.host import Host
from gpu_tui.remote.quoting import fill_script, quote, remote_path, sh_c
from gpu_tui.services.jobs import slurm
from gpu_tui.services.jobs.gpupick import gpus_env
from gpu_tui.services.jobs.jobdir import command_script, job_dir
from gpu_tui.services.jobs.series.ship import ensure_series_quietly
from gpu_tui.services.statedir import shell_state_dir

__all__ = [
    "RUNNER_VERSION",
    "RUNNER_NAME",
    "PlainScheduler",
    "start_script",
    "install_runner_script",
    "stop_plan",
    "stop_script",
]

RUNNER_VERSION = 2
RUNNER_NAME = f"job-runner-v{RUNNER_VERSION}.sh"


def _runner_text() -> str:
    return resources.files("gpu_tui.services.jobs").joinpath("job-runner.sh").read_text(encoding="utf-8")


_START = r"""
set -u
umask 077
state=__STATE__
d=__DIR__
setsid -f true >/dev/null 2>&1 ||
  { echo "setsid -f does not work on the instance (util-linux 2.30 or newer is needed)"; exit 90; }
if [ __HASCWD__ = 1 ] && ! [ -d __CWD__ ]; then echo "working directory __CWDTEXT__ does not exist"; exit 91; fi
if [ "__TMUX__" = 1 ] && ! command -v tmux >/dev/null 2>&1; then
  echo "tmux is not installed on the instance"; exit 92
fi
runner="$state/bin/__RUNNER__"
[ -f "$runner" ] || { echo "runner missing"; exit 93; }
mkdir -p "$d" || exit 94
IFS= read -r json
printf '%s\n' "$json" > "$d/job.json"
cat > "$d/command.sh"
[ "__TMUX__" = 1 ] && : > "$d/want_tmux"
# the job inherits this shell's locale: its charmap says how the log may be encoded (GBK...)
cs=$(locale charmap 2>/dev/null) && [ -n "$cs" ] && printf '%s\n' "$cs" > "$d/charset"
setsid -f nohup sh "$runner" "$d" < /dev/null > "$d/runner.log" 2>&1
i=0
while [ ! -s "$d/pid" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
echo started
"""

# replaced when its text changed (a runner already running keeps reading the old file)
_INSTALL_RUNNER = r"""
set -e
umask 077
mkdir -p __STATE__/bin __STATE__/jobs
cat > __STATE__/bin/__RUNNER__.tmp
if cmp -s __STATE__/bin/__RUNNER__.tmp __STATE__/bin/__RUNNER__; then rm -f __STATE__/bin/__RUNNER__.tmp
else mv -f __STATE__/bin/__RUNNER__.tmp __STATE__/bin/__RUNNER__; fi
"""

_STOP = r"""
d=__DIR__
[ -f "$d/exit_code" ] && { echo finished; exit 0; }
[ -f "$d/pid" ] || { echo "no pid"; exit 3; }
read -r pid < "$d/pid"
: > "$d/stop_requested"
for step in __STEPS__; do
  sig=${step%:*}; ticks=${step#*:}
  kill -s "$sig" -- "-$pid" 2>/dev/null || kill -s "$sig" "$pid" 2>/dev/null
  i=0
  while [ $i -lt "$ticks" ]; do
    [ -f "$d/exit_code" ] && { echo "stopped $sig"; exit 0; }
    sleep 0.2; i=$((i+1))
  done
done
echo "still running"
exit 4
"""

# The builders below are pure (shell words in, script text out) so that the demo can recognise
# each script by calling them with placeholders (demo/jobscripts.py, demo/scriptmatch.py).


def start_script(state: str, job_dir: str, cwd: str | None, *, tmux: bool, runner: str = RUNNER_NAME) -> str:
    """Start the job in `job_dir` (a shell word) under `runner`; `job.json` and `command.sh`
    come on stdin. `cwd`: the working directory as the user gave it (checked before anything is
    written), or None."""
    where = remote_path(cwd) if cwd else ""
    return fill_script(
        _START,
        STATE=state,
        DIR=job_dir,
        CWD=where or "/",
        HASCWD="1" if where else "0",
        CWDTEXT=quote(cwd or ""),
        TMUX="1" if tmux else "0",
        RUNNER=runner,
    )


def install_runner_script(state: str, runner: str = RUNNER_NAME) -> str:
    """Write stdin to `<state>/bin/<runner>`, unless it already holds exactly that."""
    return fill_script(_INSTALL_RUNNER, STATE=state, RUNNER=runner)


def stop_plan(steps: Sequence[tuple[str, float]]) -> str:
    """`SIG:TICKS ...`: each signal and how many 0.2 s ticks the job gets after it."""
    return " ".join(f"{sig}:{max(1, int(seconds / 0.2))}" for sig, seconds in steps)


def stop_script(job_dir: str, plan: str) -> str:
    """Stop the job in `job_dir` (a shell word) by the steps of `plan` (stop_plan)."""
    return fill_script(_STOP, DIR=job_dir, STEPS=plan)


async def _ensure_runner(host: Host, inst: InstanceConfig) -> None:
    res = await host.run(sh_c(install_runner_script(shell_state_dir(inst))), stdin=_runner_text(), timeout=30)
    if not res.ok:
        raise RemoteError(
            _("{name}: cannot write to state_dir {path}: {error}").format(
                name=inst.name, path=inst.state_dir, error=(res.stderr or res.stdout).strip()[:300]
            )
        )


class PlainScheduler:
    """The built-in scheduler: jobs run on the instance itself, each in its own session."""

    jobs_run_here = True

    def run_fields(self, inst: InstanceConfig) -> RunAsk | None:
        return None  # the run form offers tmux instead

    async def prepare(self, host: Host, inst: InstanceConfig, req: JobRequest, ask: RunAsk) -> JobRequest:
        for flag, value in (("--partition", ask.partition), ("--time", ask.time)):
            if value is not None:
                raise InputError(
                    _('{flag} is for SLURM: set scheduler = "slurm" on {name} in the config').format(
                        flag=flag, name=inst.name
                    )
                )
        if ask.gpus is None:
            return req
        return replace(req, setenv=await gpus_env(host, inst.name, ask.gpus, req.setenv))

    async def start(self, host: Host, inst: InstanceConfig, req: JobRequest, ask: RunAsk) -> JobRequest:
        # `ask` was folded into the request by `prepare` (CUDA_VISIBLE_DEVICES)
        await _ensure_runner(host, inst)
        await ensure_series_quietly(host, inst)
        script = start_script(shell_state_dir(inst), job_dir(inst, req.id), req.cwd, tmux=req.tmux)
        res = await host.run(sh_c(script), stdin=req.to_json() + "\n" + command_script(req), timeout=30)
        out = res.stdout.strip()
        if res.exit_status in (90, 91, 92):
            raise InputError(f"{inst.name}: {out}")
        if not res.ok or not out.endswith("started"):
            raise RemoteError(
                _("{name}: the job did not start ({error})").format(
                    name=inst.name, error=(res.stderr or out).strip()[:300]
                )
            )
        return req

    async def annotate(self, host: Host, inst: InstanceConfig, facts: Sequence[JobFacts]) -> list[JobFacts]:
        # a job SLURM ran (the entry was a login node when it was submitted) is still SLURM's
        if any(f.scheduler_job_id for f in facts):
            return await slurm.annotate(host, facts, lambda job_id: job_dir(inst, job_id))
        return list(facts)

    async def stop(self, host: Host, inst: InstanceConfig, job_id: str, steps: tuple[tuple[str, float], ...]) -> str:
        """SIGINT to the job's process group, then SIGTERM, then SIGKILL, each after its grace
        period; returns how it ended (`stopped INT`, ...)."""
        total = sum(s for _sig, s in steps) + 15
        res = await host.run(sh_c(stop_script(job_dir(inst, job_id), stop_plan(steps))), timeout=total)
        out = res.stdout.strip()
        if not res.ok:
            raise RemoteError(
                _("{name}: job {job} did not stop: {error}").format(
                    name=inst.name, job=job_id, error=out or res.stderr.strip()[:300]
                )
            )
        return out

    def gpu_scope(self, host: Host) -> Callable[[], Awaitable[str | None]] | None:
        return None  # nvidia-smi runs on the instance as it is

    async def cluster_nodes(self, host: Host) -> tuple[SlurmNode, ...] | None:
        return None
