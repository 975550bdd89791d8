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
- `sh -c SCRIPT` where SCRIPT is the stats probe of gpu_tui/services/monitor/probes.py, recognised by
  reading /proc/stat; a loop (`while :; do`) repeats at its `sleep N`, with the compute apps
  every `$((i % N))`-th iteration, as the real script does.
- gpu-tui's job and conda scripts and commands (list, start, stop, log window and follow,
  prune, runner install, conda discovery, env pythons and sizes; the conda manager's create,
  remove, install, pip install and init, streamed, and their cancel): answered from the
  instance's simulated job table and conda install, see jobscripts.py and condasim.py;
  nothing the user types is run.
- `true`, `false`, `exit N`, `hostname`; anything else: `sh: 1: CMD: not found`, exit 127.
"""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass

from gpu_tui.demo import condascripts, envprobe, jobscripts, watchloop
from gpu_tui.demo.program import Program
from gpu_tui.demo.simulate import InstanceSim, format_timestamp
from gpu_tui.services.monitor.probes import APPS_MARK, END_MARK

__all__ = ["plan", "GPU_FIELDS", "APP_FIELDS"]

MIN_INTERVAL = 0.05


# canonical field -> unit ("" = none). Where a value comes from: GpuSim.static, GpuSim.reading,
# or the clock (timestamp); the rest of _NA_FIELDS answer [N/A].
GPU_FIELDS: dict[str, str] = {
    "timestamp": "",
    "index": "",
    "uuid": "",
    "name": "",
    "count": "",
    "serial": "",
    "pci.bus_id": "",
    "driver_version": "",
    "vbios_version": "",
    "compute_cap": "",
    "compute_mode": "",
    "persistence_mode": "",
    "display_mode": "",
    "display_active": "",
    "pstate": "",
    "utilization.gpu": "%",
    "utilization.memory": "%",
    "memory.total": "MiB",
    "memory.used": "MiB",
    "memory.free": "MiB",
    "memory.reserved": "MiB",
    "temperature.gpu": "",
    "power.draw": "W",
    "power.draw.average": "W",
    "power.draw.instant": "W",
    "power.limit": "W",
    "enforced.power.limit": "W",
    "power.default_limit": "W",
    "power.min_limit": "W",
    "power.max_limit": "W",
    "fan.speed": "%",
    "clocks.current.sm": "MHz",
    "clocks.current.graphics": "MHz",
    "clocks.current.memory": "MHz",
    "clocks.max.sm": "MHz",
    "clocks.max.graphics": "MHz",
    "clocks.max.memory": "MHz",
    "mig.mode.current": "",
    "mig.mode.pending": "",
    "ecc.mode.current": "",
    "temperature.memory": "",
    "utilization.encoder": "%",
    "utilization.decoder": "%",
    "encoder.stats.sessionCount": "",
}
_NA_FIELDS = frozenset(
    {"temperature.memory", "utilization.encoder", "utilization.decoder", "encoder.stats.sessionCount"}
)
_GPU_ALIASES = {
    "gpu_name": "name",
    "gpu_uuid": "uuid",
    "gpu_bus_id": "pci.bus_id",
    "gpu_serial": "serial",
    "clocks.sm": "clocks.current.sm",
    "clocks.gr": "clocks.current.graphics",
    "clocks.mem": "clocks.current.memory",
    "clocks.max.gr": "clocks.max.graphics",
    "clocks.max.mem": "clocks.max.memory",
    "temperature.gpu.current": "temperature.gpu",
}
APP_FIELDS: dict[str, str] = {
    "timestamp": "",
    "gpu_name": "",
    "gpu_bus_id": "",
    "gpu_serial": "",
    "gpu_uuid": "",
    "pid": "",
    "process_name": "",
    "used_gpu_memory": "MiB",
}
_APP_ALIASES = {"name": "process_name", "used_memory": "used_gpu_memory"}

_REDIRECT = re.compile(r"^[0-9]*(?:>>?|<)(?:&[0-9-]|/dev/null)?$|^[0-9]*>&[0-9-]$|^[0-9]*>/dev/null$")
_SLEEP = re.compile(r"\bsleep\s+([0-9]*\.?[0-9]+)")
_FIRST_SLEEP = re.compile(r"\belse sleep\s+([0-9]*\.?[0-9]+)")  # the probe's quick second sample
_EVERY = re.compile(r"\$\(\(\s*i\s*%\s*([0-9]+)\s*\)\)")
_APPS_CALL = re.compile(r"nvidia-smi\b[^\n;|&]*--query-compute-apps[^\n;|]*")
_LOOP = re.compile(r"\bwhile\s+(?::|true)\s*;\s*do\b")

_INVALID_ARGS = "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n"


def _with_unit(value: str, unit: str) -> str:
    if not unit or not value or value[0] == "[" or value == "N/A":
        return value
    return f"{value} {unit}"


@dataclass(slots=True)
class _Call:
    """A parsed nvidia-smi invocation: `render(t)` is one tick's output."""

    header: str = ""
    render: Callable[[float], str] | None = None
    interval: float | None = None
    error: tuple[str, int] | None = None

    def once(self, t: float) -> str:
        if self.error is not None:
            return self.error[0]
        return self.header + (self.render(t) if self.render else "")


def _query_gpu(sim: InstanceSim, names: list[str], units: bool, header: bool, ids: set[str] | None) -> _Call:
    canon = []
    for raw in names:
        name = _GPU_ALIASES.get(raw, raw)
        if name not in GPU_FIELDS:
            return _Call(error=(f'Field "{raw}" is not a valid field to query.\n\n', 2))
        canon.append(name)
    gpus = [g for g in sim.gpus if ids is None or str(g.index) in ids or g.uuid in ids]
    if ids is not None and not gpus:
        return _Call(error=("No devices were found\n", 6))
    # per field: 0 = static (drawn at start), 1 = moving (GpuSim.reading), 2 = timestamp, 3 = [N/A]
    plan_ = tuple(
        (
            2 if n == "timestamp" else 3 if n in _NA_FIELDS else 0 if n in gpus[0].static else 1,
            n,
            GPU_FIELDS[n] if units else "",
        )
        for n in canon
    )
    head = ", ".join(f"{n} [{GPU_FIELDS[n]}]" if GPU_FIELDS[n] else n for n in canon) + "\n" if header else ""
    need_reading = any(src == 1 for src, _, _ in plan_)
    need_ts = any(src == 2 for src, _, _ in plan_)

    def render(t: float) -> str:
        ts = format_timestamp(t) if need_ts else ""
        lines = []
        for g in gpus:
            sources = (g.static, g.reading(t) if need_reading else g.static)
            vals = [
                ts if src == 2 else "[N/A]" if src == 3 else _with_unit(sources[src][n], u) for src, n, u in plan_
            ]
            lines.append(", ".join(vals))
        lines.append("")
        return "\n".join(lines)

    return _Call(header=head, render=render)


def _query_apps(sim: InstanceSim, names: list[str], units: bool, header: bool, ids: set[str] | None) -> _Call:
    canon = []
    for raw in names:
        name = _APP_ALIASES.get(raw, raw)
        if name not in APP_FIELDS:
            return _Call(error=(f'Field "{raw}" is not a valid field to query.\n\n', 2))
        canon.append(name)
    apps = [
        a for a in sim.profile.apps if ids is None or str(a.gpu) in ids or sim.gpus[a.gpu].uuid in ids
    ]
    head = ", ".join(f"{n} [{APP_FIELDS[n]}]" if APP_FIELDS[n] else n for n in canon) + "\n" if header else ""
    fields = tuple((n, APP_FIELDS[n] if units else "") for n in canon)
    need_ts = "timestamp" in canon

    def render(t: float) -> str:
        if not apps:
            return ""
        ts = format_timestamp(t) if need_ts else ""
        out = []
        for a in apps:
            v = sim.app_values(a, t, ts)
            out.append(", ".join(_with_unit(v[n], u) for n, u in fields))
        out.append("")
        return "\n".join(out)

    return _Call(header=head, render=render)


def _parse_nvsmi(args: list[str], sim: InstanceSim) -> _Call:
    failure = sim.profile.failure
    if failure is not None:
        return _Call(error=(failure[0] + "\n", failure[1]))
    query: tuple[str, list[str]] | None = None
    fmt: list[str] | None = None
    interval: float | None = None
    ids: set[str] | None = None
    i = 0

    def value() -> str | None:
        nonlocal i
        if "=" in args[i]:
            return args[i].split("=", 1)[1]
        i += 1
        return args[i] if i < len(args) else None

    try:
        while i < len(args):
            a = args[i]
            key = a.split("=", 1)[0]
            if key in ("--query-gpu", "--query-compute-apps"):
                v = value()
                if not v:
                    return _Call(error=(_INVALID_ARGS, 2))
                query = ("gpu" if key == "--query-gpu" else "apps", [f.strip() for f in v.split(",") if f.strip()])
            elif key == "--format":
                v = value()
                if not v:
                    return _Call(error=(_INVALID_ARGS, 2))
                fmt = [f.strip() for f in v.split(",")]
            elif key in ("-l", "--loop"):
                v = value()
                interval = float(v) if v else 5.0
            elif key in ("-lms", "--loop-ms"):
                v = value()
                interval = float(v) / 1000.0 if v else 5.0
            elif key in ("-i", "--id"):
                v = value()
                if not v:
                    return _Call(error=(_INVALID_ARGS, 2))
                ids = {x.strip() for x in v.split(",")}
            elif a == "--version" and len(args) == 1:
                return _Call(header=_version_text(sim))
            elif a in ("-L", "--list-gpus") and len(args) == 1:
                return _Call(
                    header="".join(f"GPU {g.index}: {g.spec.name} (UUID: {g.uuid})\n" for g in sim.gpus)
                )
            else:
                return _Call(
                    error=(f"nvidia-smi (gpu-tui demo): {a!r} is not simulated here. Please run 'nvidia-smi -h'.\n", 2)
                )
            i += 1
    except ValueError:
        return _Call(error=(_INVALID_ARGS, 2))
    if interval is not None:
        interval = max(MIN_INTERVAL, interval)
    if query is None:
        if fmt is not None:
            return _Call(error=(_INVALID_ARGS, 2))
        return _Call(render=lambda t: _default_table(sim, t), interval=interval)
    if fmt is None or "csv" not in fmt or any(f not in ("csv", "noheader", "nounits") for f in fmt):
        return _Call(error=('"--format" must be specified as csv[,noheader][,nounits] in query mode.\n', 2))
    builder = _query_gpu if query[0] == "gpu" else _query_apps
    call = builder(sim, query[1], "nounits" not in fmt, "noheader" not in fmt, ids)
    call.interval = interval
    return call


def _version_text(sim: InstanceSim) -> str:
    p = sim.profile
    nvml = ".".join(p.driver_version.split(".")[:2])
    return (
        f"NVIDIA-SMI version  : {p.driver_version}\n"
        f"NVML version        : {nvml}\n"
        f"DRIVER version      : {p.driver_version}\n"
        f"CUDA Version        : {p.cuda_version}\n"
    )


def _default_table(sim: InstanceSim, t: float) -> str:
    """A faithful-enough rendition of the plain `nvidia-smi` table (R550 layout)."""
    p = sim.profile
    rule = "+-----------------------------------------+------------------------+----------------------+"
    title = f"NVIDIA-SMI {p.driver_version:<22}Driver Version: {p.driver_version:<15}CUDA Version: {p.cuda_version:<9}"
    lines = [
        time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(t)),
        "+" + "-" * 89 + "+",
        "| " + title.ljust(88) + "|",
        "|-----------------------------------------+------------------------+----------------------+",
        "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
        "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
        "|                                         |                        |               MIG M. |",
        "|=========================================+========================+======================|",
    ]
    for g in sim.gpus:
        r = g.reading(t)
        st = g.static
        fan = r["fan.speed"] + "%" if r["fan.speed"][0] != "[" else "N/A"
        util = r["utilization.gpu"] + "%" if r["utilization.gpu"][0] != "[" else "N/A"
        mig = {"Enabled": "Enabled", "Disabled": "Disabled"}.get(st["mig.mode.current"], "N/A")
        left = f"{g.index:>4}  {g.spec.name[:28]}"
        c1 = left + " " * (41 - len(left) - 4) + "On  "
        c2 = f"{st['pci.bus_id']:>19} Off "
        c3 = f"{'Off' if g.spec.has_fan else '0':>21} "
        left = f"{fan:>5}{r['temperature.gpu'] + 'C':>6}{r['pstate']:>6}"
        right = f"{float(r['power.draw']):>4.0f}W / {g.spec.power_limit_w:>4.0f}W "
        d1 = left + " " * max(1, 41 - len(left) - len(right)) + right
        d2 = f"{r['memory.used'] + 'MiB':>11} / {st['memory.total'] + 'MiB':>9} "
        d3 = f"{util:>8}      Default "
        lines += [
            f"|{c1[:41]}|{c2[-24:]:>24}|{c3[-22:]:>22}|",
            f"|{d1[-41:]}|{d2[-24:]:>24}|{d3[-22:]:>22}|",
            f"|{'':41}|{'':24}|{mig + ' ':>22}|",
            rule,
        ]
    lines += [
        "",
        "+" + "-" * 89 + "+",
        "| Processes:" + " " * 78 + "|",
        "|  GPU   GI   CI        PID   Type   Process name                              GPU Memory |",
        "|        ID   ID                                                               Usage      |",
        "|" + "=" * 89 + "|",
    ]
    if not p.apps:
        lines.append("|  No running processes found" + " " * 61 + "|")
    for a in p.apps:
        v = sim.app_values(a, t)
        gi = "N/A" if not p.mig else "1"
        mem = v["used_gpu_memory"] + "MiB" if v["used_gpu_memory"][0] != "[" else "N/A"
        name = v["process_name"] if a.name is not None else "N/A"
        if len(name) > 41:
            name = "..." + name[-38:]
        lines.append(f"|  {a.gpu:>3}  {gi:>3}  {gi:>3}  {a.pid:>9}      C   {name:<41}{mem:>11} |")
    lines.append("+" + "-" * 89 + "+")
    return "\n".join(lines) + "\n"


def _words(command: str) -> list[str]:
    return [w for w in shlex.split(command) if not _REDIRECT.match(w)]


def _not_found(word: str) -> Program:
    return Program(stderr=f"sh: 1: {word}: not found\n", status=127)


def _nvidia_smi(args: list[str], sim: InstanceSim) -> Program:
    call = _parse_nvsmi(args, sim)
    if call.error is not None:
        return Program(stdout=call.error[0], status=call.error[1])
    if call.interval is None:
        return Program(stdout=call.once(sim.clock()))
    render = call.render
    assert render is not None
    clock = sim.clock
    return Program(stdout=call.header, interval=call.interval, tick=lambda _i: render(clock()))


def _stats_probe(script: str, sim: InstanceSim) -> Program:
    m = _APPS_CALL.search(script)
    apps: _Call | None = None
    if m is not None:
        try:
            apps = _parse_nvsmi(_words(m[0])[1:], sim)
        except ValueError:
            apps = None
    every_m = _EVERY.search(script)
    every = max(1, int(every_m[1])) if every_m else 1
    clock = sim.clock
    apps_head = APPS_MARK + "\n"
    end = END_MARK + "\n"

    def tick(i: int) -> str:
        t = clock()
        text = sim.stats_text(t)
        if apps is not None and i % every == 0:
            text += apps_head + apps.once(t)
        return text + end

    if _LOOP.search(script) is None:
        return Program(stdout=tick(0))
    sleep_m = _SLEEP.search(script)
    interval = max(MIN_INTERVAL, float(sleep_m[1])) if sleep_m else 5.0
    first_m = _FIRST_SLEEP.search(script)
    first = max(MIN_INTERVAL, float(first_m[1])) if first_m else None
    return Program(interval=interval, tick=tick, first_interval=first)


def plan(command: str, sim: InstanceSim) -> Program:
    """What `sim` answers to `command` (an SSH exec request)."""
    whole = jobscripts.plan_line(command, sim, lambda inner: plan(inner, sim))
    if whole is not None:
        return whole
    try:
        argv = _words(command)
    except ValueError:
        return Program(stderr="sh: 1: Syntax error: Unterminated quoted string\n", status=2)
    if not argv:
        return Program()
    prog = argv[0].rsplit("/", 1)[-1]
    if prog in ("sh", "bash", "dash") and len(argv) >= 3 and argv[1] == "-c":
        script = argv[2]
        if watchloop.is_watch(script):  # services/monitor/watch.sh, answered by demo/watchloop.py
            return watchloop.plan_watch(script, sim, lambda inner: plan(inner, sim))
        if "/proc/stat" in script:
            return _stats_probe(script, sim)
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
        gpu_ok = _nvidia_smi(["--query-gpu=name", "--format=csv,noheader"], sim).status == 0
        answer = envprobe.module_probe(argv[2], sim, gpu_ok)
        if answer is not None:
            return answer
    job_program = jobscripts.plan_command(argv, sim)
    if job_program is not None:
        return job_program
    return _not_found(argv[0])
