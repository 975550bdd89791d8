"""The demo instance's readings as nvidia-smi reports them: a `Source` (demo/sim/nvsmi.py, the one
nvidia-smi of the demo and the sshd tier) over the moving model of demo/simulate.py, with its
default table (in short), -L and --version drawn from the profile.
"""

from __future__ import annotations

import time

from gpu_tui.demo.sim.nvsmi import Source
from gpu_tui.demo.simulate import InstanceSim

__all__ = ["DemoSource", "GPU_FIELDS", "APP_FIELDS"]

# canonical field -> unit ("" = none): what gpu-tui asks (core/metrics/nvsmi.py QUERY_FIELDS and
# COMPUTE_APPS_FIELDS, services/jobs/gpupick.py), from GpuSim.static, GpuSim.reading or the clock
GPU_FIELDS: dict[str, str] = {
    "timestamp": "",
    "index": "",
    "uuid": "",
    "name": "",
    "pci.bus_id": "",
    "serial": "",
    "driver_version": "",
    "utilization.gpu": "%",
    "memory.total": "MiB",
    "memory.used": "MiB",
    "temperature.gpu": "",
    "power.draw": "W",
    "power.limit": "W",
    "fan.speed": "%",
    "clocks.current.sm": "MHz",
    "mig.mode.current": "",
}
_GPU_ALIASES = {"gpu_uuid": "uuid", "clocks.sm": "clocks.current.sm"}
APP_FIELDS: dict[str, str] = {"timestamp": "", "pid": "", "process_name": "", "used_gpu_memory": "MiB", "gpu_uuid": ""}
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
            return [dict(sim.app_values(a, t), _gpu=str(a.gpu)) for a in sim.live_apps()]
        moving = any(n not in sim.gpus[0].static and n != "timestamp" for n in fields)
        return [{**g.static, **(g.reading(t) if moving else {})} for g in sim.gpus]

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
    """The plain `nvidia-smi` table's title and a line per GPU (services/envcheck.py reads the
    title where `--version` fails; the demo's does not)."""
    p = sim.profile
    title = f"NVIDIA-SMI {p.driver_version:<22}Driver Version: {p.driver_version:<15}CUDA Version: {p.cuda_version:<9}"
    lines = [time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(t)), "+" + "-" * 89 + "+", f"| {title:<88}|"]
    for g in sim.gpus:
        r = g.reading(t)
        used = f"{r['memory.used']}MiB / {g.static['memory.total']}MiB  {r['temperature.gpu']:>3}C"
        row = f"{g.index:>3}  {g.spec.name[:28]:<28}  {g.static['pci.bus_id']:>17}  {used:>27}"
        lines.append(f"| {row:<88}|")
    return "\n".join(lines + ["+" + "-" * 89 + "+"]) + "\n"
