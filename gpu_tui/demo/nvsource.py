"""The demo instance's readings as nvidia-smi reports them: a `Source` (demo/sim/nvsmi.py, the one
nvidia-smi of the demo and the sshd tier) over the moving model of demo/simulate.py, with its
default table, -L and --version drawn from the profile.
"""

from __future__ import annotations

import time

from gpu_tui.demo.sim.nvsmi import Source
from gpu_tui.demo.simulate import InstanceSim

__all__ = ["DemoSource", "GPU_FIELDS", "APP_FIELDS"]

# canonical field -> unit ("" = none). Where a value comes from: GpuSim.static, GpuSim.reading,
# or the clock (timestamp); _NA_FIELDS answer [N/A].
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
_NA = {
    n: "[N/A]"
    for n in ("temperature.memory", "utilization.encoder", "utilization.decoder", "encoder.stats.sessionCount")
}
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
_HEADERS = {
    kind: {n: f"{n} [{u}]" if u else n for n, u in fields.items()}
    for kind, fields in (("gpu", GPU_FIELDS), ("apps", APP_FIELDS))
}


class DemoSource(Source):
    """One demo instance's GPUs and compute processes, as functions of its clock."""

    def __init__(self, sim: InstanceSim) -> None:
        self.sim = sim

    def failure(self) -> tuple[str, int] | None:
        return self.sim.profile.failure

    def headers(self, kind: str) -> dict[str, str]:
        return _HEADERS[kind]

    def aliases(self, kind: str) -> dict[str, str]:
        return _GPU_ALIASES if kind == "gpu" else _APP_ALIASES

    def rows(self, kind: str, t: float, tick: int, fields: list[str]) -> list[dict[str, str]]:
        sim = self.sim
        if kind == "apps":
            return [dict(sim.app_values(a, t), _gpu=str(a.gpu)) for a in sim.profile.apps]
        moving = any(n not in sim.gpus[0].static and n != "timestamp" and n not in _NA for n in fields)
        return [{**g.static, **_NA, **(g.reading(t) if moving else {})} for g in sim.gpus]

    def text(self, what: str, t: float) -> str | None:
        p = self.sim.profile
        if what == "list":
            return "".join(f"GPU {g.index}: {g.spec.name} (UUID: {g.uuid})\n" for g in self.sim.gpus)
        if what == "version":
            nvml = ".".join(p.driver_version.split(".")[:2])
            return (
                f"NVIDIA-SMI version  : {p.driver_version}\nNVML version        : {nvml}\n"
                f"DRIVER version      : {p.driver_version}\nCUDA Version        : {p.cuda_version}\n"
            )
        return _default_table(self.sim, t) if what == "table" else None


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
