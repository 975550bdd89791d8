"""The demo's answer to the environment check (services/envcheck.py): the probe and the module
imports, built from the instance's profile so `c` and `gpu-tui env` show a plausible machine.

Recognised: the probe by its `@@section nvsmi` marker; `PYTHON -c <module probe>` by the
`import torch` / `find_spec('paddle')` text. Torch is 2.4.1+cu121 and sees the GPU, except where
the profile's driver is broken (then it cannot see one); paddle is absent.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from gpu_tui.demo.program import Output, Program
from gpu_tui.demo.simulate import InstanceSim

__all__ = ["is_env_probe", "env_probe", "module_probe"]

SECTION, RC = "@@section", "@@rc"


def is_env_probe(script: str) -> bool:
    return f"{SECTION} nvsmi" in script and "/proc/meminfo" in script


def _text(data: Output) -> str:
    # Output may be bytes (a job's log); nvidia-smi's answers are text, decoded as the client would
    return data if isinstance(data, str) else data.decode("utf-8", "replace")


def env_probe(sim: InstanceSim, nvidia_smi: Callable[[list[str], InstanceSim], Program]) -> Program:
    p = sim.profile
    names = nvidia_smi(["--query-gpu=name", "--format=csv,noheader"], sim)
    version = nvidia_smi(["--version"], sim)
    used = int(p.mem_total_kib * min(0.97, p.mem_used_share))
    free = p.disk_total_kib - p.disk_used_kib
    use_pct = 100 * p.disk_used_kib // p.disk_total_kib
    lines = [
        f"{SECTION} nvsmi",
        (_text(names.stdout) + _text(names.stderr)).rstrip("\n"),
        f"{RC} {names.status}",
        f"{SECTION} nvsmi_version",
        _text(version.stdout).rstrip("\n") if version.status == 0 else "",
        f"{SECTION} python",
        "Python 3.10.14",
        f"{RC} 0",
        f"{SECTION} conda",
        "/root/miniconda3/bin/conda",
        "conda 24.9.2",
        f"{SECTION} conda_init",
        "/root/.bashrc",
        f"{SECTION} disks",
        f"/ overlay {p.disk_total_kib} {p.disk_used_kib} {free} {use_pct}% /",
    ]
    if p.provider == "autodl":
        lines.append("/root/autodl-tmp /dev/vdb 52428800 9437184 42991616 18% /root/autodl-tmp")
    lines += [f"{SECTION} mem", f"MemTotal:       {p.mem_total_kib} kB", f"MemAvailable:   {p.mem_total_kib - used} kB"]
    return Program(stdout="\n".join(line for line in lines if line != "") + "\n")


def module_probe(module: str | None, gpu_ok: bool) -> Program | None:
    """The environment check's module probe (`module`: what demo/condascripts.probed_module read
    off it) on a box with torch and without paddle."""
    if module == "torch":
        return Program(stdout=json.dumps({"version": "2.4.1+cu121", "cuda_available": gpu_ok, "cuda": "12.1"}) + "\n")
    if module == "paddle":
        return Program(stdout=json.dumps({"error": "absent"}) + "\n")
    return None
