"""What a simulated instance's shell answers to an exec request: a small `nvidia-smi` and the
stats probe answered here, gpu-tui's job, conda and environment scripts routed to their simulations.

`plan(command, sim)` reads the command line the way the remote shell would (words, the
`2>&1` redirections dropped) and returns a `Program`: text to write now, an exit status, and
optionally a `tick` to repeat every `interval` seconds for as long as the channel is open
(`nvidia-smi -lms`, the stats loop). Recognised:

- `nvidia-smi --query-gpu=F,... --format=csv[,noheader][,nounits] [-l S | -lms MS] [-i IDS]`,
  `--query-compute-apps=...`, `--version`, `-L`, and no arguments (the default table), in the
  real formats (docs/FIELD_NOTES.md); an unknown field gives nvidia-smi's error and exit 2;
  a profile with a broken driver gives its failure text and status for every call.
- the holders scan (probes.holders_command): demo/holders.py's lines; ending one of them
  (freegpu.end_command): it is gone at once;
- the stats probe of gpu_tui/services/monitor/probes.py, recognised by its own builders
  (demo/scriptmatch.py); the loop repeats at its `sleep N`, with the compute apps
  every `$((i % N))`-th iteration, as the real script does.
- gpu-tui's job and conda scripts and commands (list, start, stop, log window and follow,
  prune, runner install, conda discovery, env pythons and sizes; the conda manager's create,
  remove, install, pip install and init, streamed, and their cancel): answered from the
  instance's simulated job table and conda install, see jobscripts.py and condarun.py;
  nothing the user types is run.
- `true`, `false`, `exit N`, `hostname`; anything else: `sh: 1: CMD: not found`, exit 127.
"""

from __future__ import annotations

import re
import shlex

from gpu_tui.core.metrics.nvsmi import compute_apps_argv
from gpu_tui.demo import condascripts, envprobe, jobscripts, watchloop
from gpu_tui.demo.holders import holders_text
from gpu_tui.demo.nvsource import DemoSource
from gpu_tui.demo.program import Program
from gpu_tui.demo.scriptmatch import HOLE_N, HOLE_S, HOLE_W, Template
from gpu_tui.demo.sim import nvsmi
from gpu_tui.demo.simulate import InstanceSim
from gpu_tui.services.monitor import probes
from gpu_tui.services.monitor.freegpu import end_command
from gpu_tui.services.monitor.probes import APPS_MARK, END_MARK, HOLDERS_MARK

__all__ = ["plan", "words"]

_REDIRECT = re.compile(r"^[0-9]*(?:>>?|<)(?:&[0-9-]|/dev/null)?$|^[0-9]*>&[0-9-]$|^[0-9]*>/dev/null$")
# the monitor's stats scripts, as services/monitor/probes.py builds them (HOLE_N: apps_every)
_STATS_LOOP = Template(probes.stats_loop_command(HOLE_S, HOLE_N), HOLE_N, HOLE_S)
_STATS_ONCE = {probes.stats_once_command(apps): apps for apps in (True, False)}
_HOLDERS = Template(probes.holders_command(HOLE_W), HOLE_W)
_HOLDERS_BARE = probes.holders_command(None)
_END = Template(end_command(HOLE_N, HOLE_N + 1), HOLE_N, HOLE_N + 1)
_APPS_ARGV = compute_apps_argv()[1:]


def words(command: str) -> list[str]:
    """The command line's words as the shell passes them (redirections dropped); ValueError on an open quote."""
    return [w for w in shlex.split(command) if not _REDIRECT.match(w)]


def _not_found(word: str) -> Program:
    return Program(stderr=f"sh: 1: {word}: not found\n", status=127)


def _nvidia_smi(args: list[str], sim: InstanceSim) -> Program:
    ans = nvsmi.answer(args, DemoSource(sim), sim.clock)
    if ans.interval is None or ans.tick is None:
        return Program(stdout=ans.out, status=ans.status)
    return Program(stdout=ans.out, interval=ans.interval, tick=ans.tick)


def _stats(sim: InstanceSim, *, apps: bool, every: int = 1, interval: float | None = None) -> Program:
    """The stats probe: host stats, the compute apps every `every`-th iteration, the end mark;
    once, or every `interval` seconds (the second after at most 1 s, as the script sleeps)."""
    clock, src = sim.clock, DemoSource(sim)

    def tick(i: int) -> str:
        t = clock()
        text = sim.stats_text(t)
        if apps and i % every == 0:
            text += APPS_MARK + "\n" + nvsmi.answer(_APPS_ARGV, src, lambda: t).out
            if interval is not None:  # the loop scans who holds the GPUs too
                text += HOLDERS_MARK + "\n" + holders_text(sim)
        return text + END_MARK + "\n"

    if interval is None:
        return Program(stdout=tick(0))
    interval = max(nvsmi.MIN_INTERVAL, interval)
    return Program(interval=interval, tick=tick, first_interval=min(1.0, interval))


def plan(command: str, sim: InstanceSim) -> Program:
    """What `sim` answers to `command` (an SSH exec request)."""
    whole = jobscripts.plan_line(command, sim, lambda inner: plan(inner, sim))
    if whole is not None:
        return whole
    watch = watchloop.plan_watch(command, sim, lambda inner: plan(inner, sim))
    if watch is not None:  # services/monitor/watch.sh, answered by demo/watchloop.py
        return watch
    if command in _STATS_ONCE:
        return _stats(sim, apps=_STATS_ONCE[command])
    if command == _HOLDERS_BARE or _HOLDERS.match(command) is not None:
        return Program(stdout=f"{HOLDERS_MARK}\n{holders_text(sim)}")
    end = _END.match(command)
    if end is not None:  # `P` / `kill`: the process takes its SIGINT
        pid = int(end[0])
        sim.ended.add(pid)
        return Program(stdout="gone INT\n")
    loop = _STATS_LOOP.match(command)
    if loop is not None:
        return _stats(sim, apps=True, every=max(1, int(loop[0])), interval=float(loop[1]))
    try:
        argv = words(command)
    except ValueError:
        return Program(stderr="sh: 1: Syntax error: Unterminated quoted string\n", status=2)
    if not argv:
        return Program()
    prog = argv[0].rsplit("/", 1)[-1]
    if prog in ("sh", "bash", "dash") and len(argv) >= 3 and argv[1] == "-c":
        script = argv[2]
        if envprobe.is_env_probe(script):  # before the job scripts: it embeds the conda finder
            return envprobe.env_probe(sim, _nvidia_smi)
        job_program = jobscripts.plan_script(script, sim)
        if job_program is not None:
            return job_program
        if not any(c in script for c in "\n;|&`$()<>"):
            return plan(script, sim)
        first = script.strip().split(None, 1)
        return _not_found(first[0] if first else "sh")
    if prog == "nvidia-smi":
        return _nvidia_smi(argv[1:], sim)
    if prog in ("true", ":"):
        return Program()
    if prog == "false":
        return Program(status=1)
    if prog == "exit":
        try:
            return Program(status=int(argv[1]) & 0xFF if len(argv) > 1 else 0)
        except ValueError:
            return Program(stderr=f"sh: 1: exit: Illegal number: {argv[1]}\n", status=2)
    if prog == "hostname":
        return Program(stdout=sim.hostname + "\n")
    if prog.startswith("python") and len(argv) >= 3 and argv[1] == "-c":
        in_env = condascripts.module_probe(argv[0], argv[2], sim)
        if in_env is not None:
            return in_env
        module = condascripts.probed_module(argv[2])
        if module is not None:
            gpu_ok = _nvidia_smi(["--query-gpu=name", "--format=csv,noheader"], sim).status == 0
            answer = envprobe.module_probe(module, gpu_ok)
            if answer is not None:
                return answer
    job_program = jobscripts.plan_command(argv, sim)
    if job_program is not None:
        return job_program
    return _not_found(argv[0])
