"""The environment check: what one probe of an instance found, and what it means for the user.

`parse_probe` reads the tagged output of services/envcheck.py's shell probe; `build_checks`
turns the facts into the checks of CONTRACTS.md (`nvidia-smi`, `python`, `conda`, `conda init`,
`torch`, `paddle` when present, `disk <path>`, `memory`), each ok or not with a one-line detail
and, when not ok, the fix.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from gpu_tui.core.bilingual import Said, say
from gpu_tui.core.env.mirrors import IndexAnswer
from gpu_tui.core.i18n import N_
from gpu_tui.core.metrics import nvsmi
from gpu_tui.core.models import GpuErrorKind
from gpu_tui.core.units import format_latency_ms

__all__ = [
    "Check",
    "EnvFacts",
    "Disk",
    "PyModule",
    "parse_probe",
    "parse_module",
    "build_checks",
    "env_json",
    "SECTION",
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
    """In the language in force, as `fix`."""
    fix: str | None = None
    detail_en: str | None = field(default=None, compare=False, repr=False)
    """`detail` in English, for `env --json` (None: `detail` is English already)."""
    fix_en: str | None = field(default=None, compare=False, repr=False)


def _check(name: str, ok: bool, detail: Said, fix: Said | None = None) -> Check:
    return Check(name, ok, detail.text, fix.text if fix else None, detail.english, fix.english if fix else None)


def _said(text: str | Said) -> Said:
    return text if isinstance(text, Said) else Said(text, text)


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
    hip: str | None = None
    """`torch.version.hip`: a ROCm build (AMD GPUs; `cuda_available` is then about ROCm)."""
    error: str | Said | None = None
    """The import error, or None when the import worked (what python printed, or a `Said`)."""


@dataclass(frozen=True, slots=True)
class AmdFacts:
    tool: str | None
    """`amd-smi` or `rocm-smi`; None where neither is on PATH."""
    rocm: str | None
    driver: str | None


_ROCM_VERSION = re.compile(r"ROCm version:\s*([0-9][\w.+-]*)")
_DRIVER_VERSION = re.compile(r"Driver version:\s*([0-9][\w.+-]*)", re.I)


def parse_amd(lines: list[str]) -> AmdFacts | None:
    """The probe's `amd` section: None where it is empty (nvidia-smi exists, or no AMD at all)."""
    if not any(line.strip() for line in lines):
        return None
    tool = rocm = driver = None
    for line in lines:
        word, _, rest = line.partition(" ")
        if word == "tool" and rest.strip() in ("amd-smi", "rocm-smi"):
            tool = rest.strip()
        elif word == "rocm" and rest.strip():
            rocm = rocm or rest.strip()
        elif word == "amdgpu" and rest.strip():
            driver = rest.strip()
        elif (m := _ROCM_VERSION.search(line)) is not None and m[1] != "N/A":
            rocm = m[1]
        elif (m := _DRIVER_VERSION.search(line)) is not None:
            driver = driver or m[1]
    return AmdFacts(tool, rocm, driver) if (tool or rocm or driver) else None


@dataclass
class EnvFacts:
    nvsmi_text: str = ""
    nvsmi_rc: int | None = None
    version_text: str = ""
    amd: AmdFacts | None = None
    """Where there is no nvidia-smi: the AMD tool there, ROCm's and the amdgpu driver's versions."""
    python_version: str | None = None
    conda_path: str | None = None
    conda_version: str | None = None
    conda_init: list[str] = field(default_factory=list)
    """The shell rc files holding conda's `>>> conda initialize >>>` block."""
    disks: list[Disk] = field(default_factory=list)
    mem_total_gib: float | None = None
    mem_available_gib: float | None = None
    python_checked: str | Said | None = None
    """Which python torch was imported with (an env's, conda base's, or python3 on PATH)."""
    torch: PyModule | None = None
    paddle: PyModule | None = None
    condarc_texts: list[str] = field(default_factory=list)
    """~/.condarc, then conda's root .condarc (the first one setting a key wins)."""
    pip_conf_texts: list[str] = field(default_factory=list)
    """pip's config files in its loading order (global, legacy user, user: the last wins)."""
    pip_env_index: str | None = None
    """PIP_INDEX_URL as the instance's non-interactive shell has it."""
    indexes: list[IndexAnswer] = field(default_factory=list)
    """What conda's and pip's index answered, asked from the instance."""


def _sections(text: str, repeated: list[list[str]] | None = None) -> dict[str, tuple[list[str], int | None]]:
    """Sections by name; those named `pipconf` (one per file) go to `repeated`, in order."""
    out: dict[str, tuple[list[str], int | None]] = {}
    name: str | None = None
    lines: list[str] = []
    rc: int | None = None
    for line in text.splitlines():
        if line.startswith(SECTION + " "):
            if name is not None:
                out[name] = (lines, rc)
            name, lines, rc = line.split(" ", 1)[1].strip(), [], None
            if name == "pipconf" and repeated is not None:
                repeated.append(lines)
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
    pip_files: list[list[str]] = []
    s = _sections(text, pip_files)
    f = EnvFacts()
    lines, f.nvsmi_rc = s.get("nvsmi", ([], None))
    f.nvsmi_text = "\n".join(lines)
    f.version_text = "\n".join(s.get("nvsmi_version", ([], None))[0])
    f.amd = parse_amd(s.get("amd", ([], None))[0])
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
    f.condarc_texts = ["\n".join(s.get(k, ([], None))[0]) for k in ("condarc_user", "condarc_root")]
    f.pip_conf_texts = ["\n".join(lines) for lines in pip_files]
    f.pip_env_index = next((line.strip() for line in s.get("pip_env", ([], None))[0] if line.strip()), None)
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
                hip=str(data["hip"]) if data.get("hip") else None,
            )
    lines = text.strip().splitlines()
    return PyModule(error=lines[-1][:200] if lines else say(N_("no answer")))


def _gpus(text: str) -> Said:
    names = [line.strip() for line in text.splitlines() if line.strip()]
    if not names:
        return say(N_("no GPUs"))
    short = [n.removeprefix("NVIDIA ").removeprefix("GeForce ") for n in names]
    kinds = sorted(set(short), key=short.index)
    return _said(", ".join(f"{short.count(k)}x {k}" for k in kinds))


def build_checks(f: EnvFacts) -> list[Check]:
    checks: list[Check] = []
    error = nvsmi.detect_error(f.nvsmi_text, f.nvsmi_rc)
    version = nvsmi.parse_version(f.version_text)
    if f.amd is not None and f.amd.tool is not None and error is not None and error.kind is GpuErrorKind.NOT_FOUND:
        # an AMD instance: its tool, ROCm and the amdgpu driver instead of nvidia-smi (issue 28)
        detail = say(
            N_("{tool}: ROCm {rocm}, amdgpu driver {driver}"),
            tool=f.amd.tool,
            rocm=f.amd.rocm or "?",
            driver=f.amd.driver or "?",
        )
        checks.append(_check("amd", True, detail))
    elif error is None and f.nvsmi_text.strip():
        driver, cuda = version["driver_version"] or "?", version["cuda_version"] or "?"
        detail = say(N_("driver {driver}, CUDA {cuda}, {gpus}"), driver=driver, cuda=cuda, gpus=_gpus(f.nvsmi_text))
        checks.append(_check("nvidia-smi", True, detail))
    else:
        reason = Said(error.reason, error.reason_en) if error else say(N_("nvidia-smi printed nothing"))
        checks.append(
            _check(
                "nvidia-smi",
                False,
                reason,
                say(
                    N_(
                        "is this instance running with a GPU (not in no-GPU mode)? "
                        "if it is, the driver failed: restart the instance or ask the provider"
                    )
                ),
            )
        )
    if f.python_version:
        checks.append(_check("python", True, _said(f"python3 {f.python_version}")))
    else:
        checks.append(
            _check(
                "python", False, say(N_("no python3 on PATH")), say(N_("install python3, or use a conda env (--env)"))
            )
        )
    if f.conda_path:
        conda_version = _said(f.conda_version) if f.conda_version else say(N_("version unknown"))
        checks.append(_check("conda", True, say("{path} ({version})", path=f.conda_path, version=conda_version)))
        if f.conda_init:
            checks.append(_check("conda init", True, say(N_("done in {files}"), files=", ".join(f.conda_init))))
        else:
            checks.append(
                _check(
                    "conda init",
                    False,
                    say(N_("conda is not set up for your shell (`conda activate` fails)")),
                    say(N_("run `{conda} init bash`, then open a NEW shell"), conda=f.conda_path),
                )
            )
    else:
        looked = "$CONDA_EXE, PATH, ~/miniconda3, ~/anaconda3, ~/miniforge3, /opt/conda"
        checks.append(
            _check(
                "conda",
                False,
                say(N_("no conda (looked in {places})"), places=looked),
                say(N_("install Miniconda, or use python3 with pip")),
            )
        )
    where = say(" ({python})", python=_said(f.python_checked)) if f.python_checked else _said("")
    if f.torch is not None:
        t = f.torch
        if t.error:
            checks.append(
                _check(
                    "torch",
                    False,
                    say(N_("not importable{where}: {error}"), where=where, error=_said(t.error)),
                    say(N_("pip install torch (the CUDA build that matches the driver: pytorch.org/get-started)")),
                )
            )
        elif t.cuda_available and t.hip:
            rocm = say(N_("{version}, ROCm {hip}, sees the GPU{where}"), version=t.version, hip=t.hip, where=where)
            checks.append(_check("torch", True, rocm))
        elif t.cuda_available:
            checks.append(
                _check(
                    "torch",
                    True,
                    say(
                        N_("{version}, CUDA {cuda}, sees the GPU{where}"),
                        version=t.version,
                        cuda=t.cuda or "?",
                        where=where,
                    ),
                )
            )
        elif t.hip:
            checks.append(
                _check(
                    "torch",
                    False,
                    say(
                        N_("{version} (ROCm {hip}) cannot see a GPU{where}"), version=t.version, hip=t.hip, where=where
                    ),
                    say(N_("install the torch built for this instance's ROCm (pytorch.org/get-started)")),
                )
            )
        elif t.version and ("+cpu" in t.version or not t.cuda):
            checks.append(
                _check(
                    "torch",
                    False,
                    say(N_("{version} is the CPU build{where}"), version=t.version, where=where),
                    say(N_("reinstall the CUDA build of torch (pytorch.org/get-started)")),
                )
            )
        else:
            checks.append(
                _check(
                    "torch",
                    False,
                    say(
                        N_("{version} (CUDA {cuda}) cannot see a GPU{where}"),
                        version=t.version,
                        cuda=t.cuda,
                        where=where,
                    ),
                    say(
                        N_("the driver may be too old for this CUDA build: install a torch built for the driver's CUDA")
                    ),
                )
            )
    if f.paddle is not None and f.paddle.error is None:
        ok = bool(f.paddle.cuda_available)
        seen = N_("{version}, sees the GPU") if ok else N_("{version}, cannot see the GPU")
        checks.append(
            _check(
                "paddle",
                ok,
                say(seen, version=f.paddle.version),
                None if ok else say(N_("install paddlepaddle-gpu for the driver's CUDA")),
            )
        )
    for d in f.disks:
        low = d.free_gib < LOW_DISK_GIB
        fix = say(N_("free space: `gpu-tui jobs NAME --prune`, clear caches (~/.cache), or keep data on the data disk"))
        detail = say(N_("{free:g} of {total:g} GiB free"), free=d.free_gib, total=d.total_gib)
        checks.append(_check(f"disk {d.path}", not low, detail, fix if low else None))
    checks += _index_checks(f)
    if f.mem_total_gib is not None:
        avail = f.mem_available_gib
        low = avail is not None and avail < LOW_MEMORY_GIB
        shown = avail if avail is not None else "?"
        checks.append(
            _check(
                "memory",
                not low,
                say(N_("{available} of {total:g} GiB available"), available=shown, total=f.mem_total_gib),
                say(N_("something is using the RAM: see the processes, or stop a job")) if low else None,
            )
        )
    return checks


def _index_checks(f: EnvFacts) -> list[Check]:
    out = []
    for a in f.indexes:
        name = f"{a.tool} index" if a.tool else "index"
        if a.answers:
            out.append(_check(name, True, say(N_("{url} answers in {time}"), url=a.url, time=format_latency_ms(a.ms))))
            continue
        why = (
            say(N_("{url} answers HTTP {status}"), url=a.url, status=a.status)
            if a.status is not None
            else say(
                N_("{url} does not answer from the instance: {error}"), url=a.url, error=_said(a.error or "no answer")
            )
        )
        out.append(
            _check(
                name,
                False,
                why,
                say(N_("use a mirror that answers: gpu-tui conda NAME mirror tuna (or ustc, bfsu, aliyun)")),
            )
        )
    return out


def env_json(f: EnvFacts, checks: list[Check]) -> dict[str, object]:
    """The `env --json` object of CONTRACTS.md."""
    version = nvsmi.parse_version(f.version_text)
    torch = None
    if f.torch is not None and f.torch.error is None:
        torch = {"version": f.torch.version, "cuda_available": f.torch.cuda_available, "hip": f.torch.hip}
    return {
        # English whatever the language: JSON values are not translated
        "checks": [
            {
                "name": c.name,
                "ok": c.ok,
                "detail": c.detail if c.detail_en is None else c.detail_en,
                "fix": c.fix if c.fix_en is None else c.fix_en,
            }
            for c in checks
        ],
        "driver_version": version["driver_version"],
        "cuda_version": version["cuda_version"],
        "rocm_version": f.amd.rocm if f.amd is not None else None,
        "amdgpu_version": f.amd.driver if f.amd is not None else None,
        "python_version": f.python_version,
        "conda_path": f.conda_path,
        "conda_version": f.conda_version,
        "torch": torch,
        "disks": [{"path": d.path, "free_gib": d.free_gib, "total_gib": d.total_gib} for d in f.disks],
        "indexes": [
            {"tool": a.tool, "url": a.url, "answers": a.answers, "status": a.status, "ms": a.ms, "error": a.error}
            for a in f.indexes
        ],
    }
