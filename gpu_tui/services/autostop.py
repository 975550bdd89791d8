"""Autostop: arm, cancel and read the watchdog that shuts an idle instance down, ON the instance.

`arm` ships autostop.sh to `<state_dir>/bin/autostop-v1.sh` (replaced when its text changes),
stops a watchdog armed before (found by `<state_dir>/autostop.pid`, and only if that pid's command
line is our script), writes the shutdown line and the `--before` command to
`<state_dir>/autostop.shutdown.sh` / `autostop.before.sh` (they travel on stdin, never on a
command line) and starts the watchdog with `setsid -f nohup`, so it outlives the SSH session,
the laptop and gpu-tui. It logs every decision to `<state_dir>/autostop.log`; `read_status`
reads the end of that log for the dashboard. The shutdown line is the provider profile's
(core.power.shutdown_line), the same one `gpu-tui shutdown` runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.autostop import AutostopStatus, parse_status
from gpu_tui.core.durations import MAX_DURATION_SECONDS
from gpu_tui.core.errors import InputError, RemoteError
from gpu_tui.core.i18n import _
from gpu_tui.core.jobs import JOB_ID_RE
from gpu_tui.core.power import shutdown_line
from gpu_tui.remote.host import Host
from gpu_tui.remote.quoting import fill_script, quote, remote_path, sh_c
from gpu_tui.services.jobs.runner import find_job
from gpu_tui.services.statedir import shell_state_dir

__all__ = [
    "SCRIPT_VERSION",
    "SCRIPT_NAME",
    "DEFAULT_CHECK_SECONDS",
    "DEFAULT_CPU_CORES",
    "DEFAULT_BEFORE_TIMEOUT",
    "AutostopPlan",
    "Armed",
    "arm",
    "cancel",
    "read_status",
    "status_command",
]

SCRIPT_VERSION = 1
SCRIPT_NAME = f"autostop-v{SCRIPT_VERSION}.sh"
DEFAULT_CHECK_SECONDS = 15
DEFAULT_CPU_CORES = 0.5
"""Busy at half a core or more: a single-threaded CPU-bound step uses ~1 core, and a threshold
of exactly 1 core would call it idle about half the time (sampling jitter)."""
DEFAULT_BEFORE_TIMEOUT = 600


@dataclass(frozen=True, slots=True)
class AutostopPlan:
    """What the watchdog waits for and does."""

    idle_seconds: int
    gpu_idle_percent: int = 5
    """A GPU under this utilisation is idle (settings.idle_util_percent)."""
    check_seconds: int = DEFAULT_CHECK_SECONDS
    cpu_busy_cores: float = DEFAULT_CPU_CORES
    after_job: str | None = None
    """A job id or name; only that job's end counts (other jobs do not hold the instance up)."""
    before: str | None = None
    """A shell command line run once before the shutdown (e.g. copy results to /root/autodl-fs)."""
    before_timeout_seconds: int = DEFAULT_BEFORE_TIMEOUT


@dataclass(frozen=True, slots=True)
class Armed:
    pid: int
    replaced_pid: int | None
    after_job_id: str | None
    after_job_ended: bool
    shutdown_line: str


def _script_text() -> str:
    return resources.files("gpu_tui.services").joinpath("autostop.sh").read_text(encoding="utf-8")


def _validate(plan: AutostopPlan) -> None:
    if not 1 <= plan.idle_seconds <= MAX_DURATION_SECONDS:
        raise InputError(
            _("idle time {seconds}s: must be 1s..{most}s").format(seconds=plan.idle_seconds, most=MAX_DURATION_SECONDS)
        )
    if not 1 <= plan.check_seconds <= 3600:
        raise InputError(_("check interval {seconds}s: must be 1s..1h").format(seconds=plan.check_seconds))
    if not 0 <= plan.gpu_idle_percent <= 100:
        raise InputError(_("GPU idle threshold {percent}%: must be 0..100").format(percent=plan.gpu_idle_percent))
    if not 0.01 <= plan.cpu_busy_cores <= 100000:
        raise InputError(_("CPU threshold {cores} cores: must be 0.01 or more").format(cores=plan.cpu_busy_cores))
    if not 1 <= plan.before_timeout_seconds <= 24 * 3600:
        raise InputError(_("the --before timeout must be 1s..24h"))
    if plan.before is not None and "\x00" in plan.before:
        raise InputError(_("the --before command contains a NUL byte"))


_INSTALL = r"""
set -e
umask 077
mkdir -p __STATE__/bin
s=__STATE__/bin/__SCRIPT__
cat > "$s.tmp"
if [ -f "$s" ] && cmp -s "$s.tmp" "$s"; then rm -f "$s.tmp"; else mv -f "$s.tmp" "$s"; fi
"""

# Stops the watchdog named by the pid file, if that pid really runs our script (a pid file left by
# a reboot may name anything now). Prints `stopped PID` or `none`; removes the pid file.
_STOP = r"""
pidf="$state/autostop.pid"
stopped=
if [ -f "$pidf" ]; then
  pid=; read -r pid < "$pidf"
  case $pid in ''|*[!0-9]*) pid= ;; esac
  ours() {
    [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
    st=; read -r _ _ st _ 2>/dev/null < "/proc/$pid/stat"; [ "$st" != Z ] || return 1
    tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q 'autostop-v[0-9][0-9]*\.sh'
  }
  if ours; then
    kill -s TERM -- "-$pid" 2>/dev/null || kill -s TERM "$pid" 2>/dev/null
    i=0; while ours && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
    if ours; then kill -s KILL -- "-$pid" 2>/dev/null || kill -s KILL "$pid" 2>/dev/null; fi
    stopped=$pid
  fi
  rm -f "$pidf"
fi
"""

_ARM = r"""
set -u
umask 077
state=__STATE__
setsid -f true >/dev/null 2>&1 ||
  { echo "setsid -f does not work on the instance (util-linux 2.30 or newer is needed)"; exit 90; }
cd "$state" && state=$(pwd -P) || exit 94
script="$state/bin/__SCRIPT__"
[ -f "$script" ] || { echo "the watchdog script is missing"; exit 93; }
__STOP__
[ -n "$stopped" ] && echo "replaced $stopped"
IFS= read -r line
printf '%s\n' "$line" > "$state/autostop.shutdown.sh"
cat > "$state/autostop.before.sh"
setsid -f nohup sh "$script" "$state" __ARGS__ < /dev/null >> "$state/autostop.log" 2>&1
i=0
while [ ! -s "$state/autostop.pid" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
[ -s "$state/autostop.pid" ] || { echo "the watchdog did not start:"; tail -n 5 "$state/autostop.log"; exit 95; }
read -r pid < "$state/autostop.pid"
echo "armed $pid"
"""

_CANCEL = r"""
state=__STATE__
[ -d "$state" ] || { echo none; exit 0; }
__STOP__
if [ -n "$stopped" ]; then
  printf '%s cancelled\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >> "$state/autostop.log"
  echo "stopped $stopped"
else
  echo none
fi
"""

_STATUS = r"""
state=__STATE__
echo "now $(date +%s)"
pidf="$state/autostop.pid"; log="$state/autostop.log"
if [ -f "$pidf" ]; then
  pid=; read -r pid < "$pidf"
  case $pid in ''|*[!0-9]*) ;; *)
    echo "pid $pid"
    st=; read -r _ _ st _ 2>/dev/null < "/proc/$pid/stat"
    if [ -n "$st" ] && [ "$st" != Z ] &&
      tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q 'autostop-v[0-9][0-9]*\.sh'; then
      echo "alive 1"
    fi ;;
  esac
fi
if [ -f "$log" ]; then
  grep '^[^ ]* armed ' "$log" | tail -n 1 | sed 's/^/@armed /'
  grep '^[^ ]* failed' "$log" | tail -n 1 | sed 's/^/@failed /'
  tail -n 8 "$log" | sed 's/^/@line /'
fi
exit 0
"""


def status_command(inst: InstanceConfig) -> str:
    """The one cheap command `read_status` runs (for callers that batch their own probes)."""
    return sh_c(fill_script(_STATUS, STATE=shell_state_dir(inst)))


async def _install(host: Host, inst: InstanceConfig) -> None:
    res = await host.run(
        sh_c(fill_script(_INSTALL, STATE=shell_state_dir(inst), SCRIPT=SCRIPT_NAME)), stdin=_script_text(), timeout=30
    )
    if not res.ok:
        raise RemoteError(
            _("{name}: cannot write to state_dir {path}: {error}").format(
                name=inst.name, path=inst.state_dir, error=(res.stderr or res.stdout).strip()[:300]
            )
        )


def _before_script(inst: InstanceConfig, command: str) -> str:
    """The --before command as typed, run from the instance's workdir (else home)."""
    where = remote_path(inst.workdir or "~")
    return f'cd -- {where} 2>/dev/null || cd "$HOME" 2>/dev/null || cd /\n{command}\n'


async def arm(host: Host, inst: InstanceConfig, plan: AutostopPlan) -> Armed:
    """Start (or replace) the instance's watchdog. InputError (exit 2) before anything runs if the
    plan, the job or the provider's shutdown cannot work; RemoteError if the instance refused."""
    _validate(plan)
    line = shutdown_line(inst.provider, provider_id=inst.provider_id, override=inst.shutdown_command)
    if "\n" in line or "\x00" in line:
        raise InputError(_("{name}: the shutdown command must be one line").format(name=inst.name))
    job_id, ended = None, False
    if plan.after_job:
        job = await find_job(host, inst, plan.after_job)
        job_id, ended = job.id, job.exit_code is not None or not job.alive
        if not JOB_ID_RE.match(job_id):
            raise InputError(_("{job!r} is not a job id").format(job=job_id))
    await _install(host, inst)
    cpu_centicores = max(1, round(plan.cpu_busy_cores * 100))
    args = " ".join(
        quote(str(a))
        for a in (
            plan.idle_seconds,
            plan.check_seconds,
            plan.gpu_idle_percent,
            cpu_centicores,
            plan.before_timeout_seconds,
            job_id or "-",
        )
    )
    script = fill_script(_ARM, STATE=shell_state_dir(inst), SCRIPT=SCRIPT_NAME, STOP=_STOP, ARGS=args)
    before = plan.before.strip() if plan.before else ""
    stdin = line + "\n" + (_before_script(inst, before) if before else "")
    res = await host.run(sh_c(script), stdin=stdin, timeout=60)
    out = res.stdout.strip()
    if res.exit_status == 90:
        raise InputError(f"{inst.name}: {out}")
    last = out.splitlines()[-1] if out else ""
    if not res.ok or not last.startswith("armed "):
        raise RemoteError(
            _("{name}: autostop did not start ({error})").format(
                name=inst.name, error=(res.stderr.strip() or out)[:300]
            )
        )
    replaced = next((int(w.split()[1]) for w in out.splitlines() if w.startswith("replaced ")), None)
    return Armed(int(last.split()[1]), replaced, job_id, ended, line)


async def cancel(host: Host, inst: InstanceConfig) -> int | None:
    """Stop the watchdog; returns its pid, or None when none was armed."""
    res = await host.run(sh_c(fill_script(_CANCEL, STATE=shell_state_dir(inst), STOP=_STOP)), timeout=30)
    out = res.stdout.strip()
    if not res.ok:
        raise RemoteError(
            _("{name}: cannot cancel autostop: {error}").format(name=inst.name, error=(res.stderr.strip() or out)[:300])
        )
    return int(out.split()[1]) if out.startswith("stopped ") else None


async def read_status(host: Host, inst: InstanceConfig) -> AutostopStatus:
    """Armed? idle since / seconds left, the last decision. One short command; cheap enough to
    run with every jobs poll."""
    res = await host.run(status_command(inst), timeout=15)
    return parse_status(res.stdout)
