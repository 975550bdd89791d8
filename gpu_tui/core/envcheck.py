"""The environment check: what one probe of an instance found, and what it means for the user.

`parse_probe` reads the tagged output of services/envcheck.py's shell probe; `build_checks`
turns the facts into the checks of CONTRACTS.md (`nvidia-smi`, `python`, `conda`, `conda init`,
`torch`, `paddle` when present, `disk <path>`, `memory`), each ok or not with a one-line detail
and, when not ok, the fix.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from gpu_tui.core import nvsmi

__all__ = [
    "Check", "EnvFacts", "Disk", "PyModule", "parse_probe", "parse_module", "build_checks", "env_json", "SECTION",
]

SECTION = "@@section"
RC = "@@rc"
LOW_DISK_GIB = 2.0
LOW_MEMORY_GIB = 1.0


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str | None = None


@dataclass(frozen=True, slots=True)
class Disk:
    path: str
    free_gib: float
    total_gib: float


@dataclass(frozen=True, slots=True)
class PyModule:
    """What importing torch (or paddle) in the checked python said."""

    version: str | None = None
    cuda_available: bool | None = None
    cuda: str | None = None
    error: str | None = None
    """The import error, or None when the import worked."""


@dataclass
class EnvFacts:
    nvsmi_text: str = ""
    nvsmi_rc: int | None = None
    version_text: str = ""
    python_version: str | None = None
    conda_path: str | None = None
    conda_version: str | None = None
    conda_init: list[str] = field(default_factory=list)
    """The shell rc files holding conda's `>>> conda initialize >>>` block."""
    disks: list[Disk] = field(default_factory=list)
    mem_total_gib: float | None = None
    mem_available_gib: float | None = None
    python_checked: str | None = None
    """Which python torch was imported with (an env's, conda base's, or python3 on PATH)."""
    torch: PyModule | None = None
    paddle: PyModule | None = None


def _sections(text: str) -> dict[str, tuple[list[str], int | None]]:
    out: dict[str, tuple[list[str], int | None]] = {}
    name: str | None = None
    lines: list[str] = []
    rc: int | None = None
    for line in text.splitlines():
        if line.startswith(SECTION + " "):
            if name is not None:
                out[name] = (lines, rc)
            name, lines, rc = line.split(" ", 1)[1].strip(), [], None
        elif line.startswith(RC + " ") and name is not None:
            value = line.split(" ", 1)[1].strip()
            rc = int(value) if value.lstrip("-").isdigit() else None
        elif name is not None:
            lines.append(line)
    if name is not None:
        out[name] = (lines, rc)
    return out


def parse_probe(text: str) -> EnvFacts:
    """The probe's `@@section NAME` blocks (each optionally ending in `@@rc N`) as facts."""
    s = _sections(text)
    f = EnvFacts()
    lines, f.nvsmi_rc = s.get("nvsmi", ([], None))
    f.nvsmi_text = "\n".join(lines)
    f.version_text = "\n".join(s.get("nvsmi_version", ([], None))[0])
    py, rc = s.get("python", ([], None))
    if rc == 0 and py and py[0].startswith("Python "):
        f.python_version = py[0].split()[1]
    conda = [line for line in s.get("conda", ([], None))[0] if line.strip()]
    if conda and conda[0].startswith("/"):
        f.conda_path = conda[0].strip()
        if len(conda) > 1 and conda[1].startswith("conda "):
            f.conda_version = conda[1].split()[1]
    f.conda_init = [line.strip() for line in s.get("conda_init", ([], None))[0] if line.strip()]
    for line in s.get("disks", ([], None))[0]:
        parts = line.split()
        # "<path> <filesystem> <1024-blocks> <used> <available> <capacity> <mount>"
        if len(parts) >= 5 and parts[2].isdigit() and parts[4].isdigit():
            f.disks.append(Disk(parts[0], round(int(parts[4]) / 1048576, 1), round(int(parts[2]) / 1048576, 1)))
    for line in s.get("mem", ([], None))[0]:
        key, _, rest = line.partition(":")
        value = rest.split()[0] if rest.split() else ""
        if value.isdigit():
            gib = round(int(value) / 1048576, 1)
            if key == "MemTotal":
                f.mem_total_gib = gib
            elif key == "MemAvailable":
                f.mem_available_gib = gib
    return f


def parse_module(text: str) -> PyModule:
    """The JSON line the module probe printed, or the reason there is none."""
    for line in reversed(text.strip().splitlines()):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict):
            if data.get("error"):
                return PyModule(error=str(data["error"])[:200])
            return PyModule(
                version=str(data.get("version")) if data.get("version") is not None else None,
                cuda_available=bool(data.get("cuda_available")),
                cuda=str(data["cuda"]) if data.get("cuda") else None,
            )
    return PyModule(error=(text.strip().splitlines() or ["no answer"])[-1][:200])


def _gpus(text: str) -> str:
    names = [line.strip() for line in text.splitlines() if line.strip()]
    if not names:
        return "no GPUs"
    short = [n.removeprefix("NVIDIA ").removeprefix("GeForce ") for n in names]
    kinds = sorted(set(short), key=short.index)
    return ", ".join(f"{short.count(k)}x {k}" for k in kinds)


def build_checks(f: EnvFacts) -> list[Check]:
    checks: list[Check] = []
    error = nvsmi.detect_error(f.nvsmi_text, f.nvsmi_rc)
    version = nvsmi.parse_version(f.version_text)
    if error is None and f.nvsmi_text.strip():
        driver, cuda = version["driver_version"] or "?", version["cuda_version"] or "?"
        detail = f"driver {driver}, CUDA {cuda}, {_gpus(f.nvsmi_text)}"
        checks.append(Check("nvidia-smi", True, detail))
    else:
        reason = error.reason if error else "nvidia-smi printed nothing"
        checks.append(Check("nvidia-smi", False, reason, "is this instance running with a GPU (not in no-GPU mode)? "
                            "if it is, the driver failed: restart the instance or ask the provider"))
    if f.python_version:
        checks.append(Check("python", True, f"python3 {f.python_version}"))
    else:
        checks.append(Check("python", False, "no python3 on PATH", "install python3, or use a conda env (--env)"))
    if f.conda_path:
        checks.append(Check("conda", True, f"{f.conda_path} ({f.conda_version or 'version unknown'})"))
        if f.conda_init:
            checks.append(Check("conda init", True, "done in " + ", ".join(f.conda_init)))
        else:
            checks.append(Check("conda init", False, "conda is not set up for your shell (`conda activate` fails)",
                                f"run `{f.conda_path} init bash`, then open a NEW shell"))
    else:
        looked = "$CONDA_EXE, PATH, ~/miniconda3, ~/anaconda3, ~/miniforge3, /opt/conda"
        checks.append(Check("conda", False, f"no conda (looked in {looked})",
                            "install Miniconda, or use python3 with pip"))
    where = f" ({f.python_checked})" if f.python_checked else ""
    if f.torch is not None:
        t = f.torch
        if t.error:
            checks.append(Check("torch", False, f"not importable{where}: {t.error}",
                                "pip install torch (the CUDA build that matches the driver: pytorch.org/get-started)"))
        elif t.cuda_available:
            checks.append(Check("torch", True, f"{t.version}, CUDA {t.cuda or '?'}, sees the GPU{where}"))
        elif t.version and ("+cpu" in t.version or not t.cuda):
            checks.append(Check("torch", False, f"{t.version} is the CPU build{where}",
                                "reinstall the CUDA build of torch (pytorch.org/get-started)"))
        else:
            checks.append(Check("torch", False, f"{t.version} (CUDA {t.cuda}) cannot see a GPU{where}",
                                "the driver may be too old for this CUDA build: "
                                "install a torch built for the driver's CUDA"))
    if f.paddle is not None and f.paddle.error is None:
        ok = bool(f.paddle.cuda_available)
        checks.append(Check("paddle", ok, f"{f.paddle.version}, {'sees' if ok else 'cannot see'} the GPU",
                            None if ok else "install paddlepaddle-gpu for the driver's CUDA"))
    for d in f.disks:
        low = d.free_gib < LOW_DISK_GIB
        fix = "free space: `gpu-tui jobs NAME --prune`, clear caches (~/.cache), or keep data on the data disk"
        checks.append(Check(f"disk {d.path}", not low, f"{d.free_gib:g} of {d.total_gib:g} GiB free",
                            fix if low else None))
    if f.mem_total_gib is not None:
        avail = f.mem_available_gib
        low = avail is not None and avail < LOW_MEMORY_GIB
        shown = avail if avail is not None else "?"
        checks.append(Check("memory", not low, f"{shown} of {f.mem_total_gib:g} GiB available",
                            "something is using the RAM: see the processes, or stop a job" if low else None))
    return checks


def env_json(f: EnvFacts, checks: list[Check]) -> dict[str, object]:
    """The `env --json` object of CONTRACTS.md."""
    version = nvsmi.parse_version(f.version_text)
    torch = None
    if f.torch is not None and f.torch.error is None:
        torch = {"version": f.torch.version, "cuda_available": f.torch.cuda_available}
    return {
        "checks": [{"name": c.name, "ok": c.ok, "detail": c.detail, "fix": c.fix} for c in checks],
        "driver_version": version["driver_version"],
        "cuda_version": version["cuda_version"],
        "python_version": f.python_version,
        "conda_path": f.conda_path,
        "conda_version": f.conda_version,
        "torch": torch,
        "disks": [{"path": d.path, "free_gib": d.free_gib, "total_gib": d.total_gib} for d in f.disks],
    }
