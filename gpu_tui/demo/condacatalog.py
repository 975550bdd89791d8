"""The demo conda's packages (demo/condasim.py): what its channel and index have, and how conda
and pip name, version and size them. Data and pure functions; nothing here knows an install's
state, only where every instance has it (`CONDA_ROOT`, `CONDA_EXE`) and its `CONDA_VERSION`.

`CATALOG` holds the packages the demo knows by name (torch and its NVIDIA wheels, the usual
data and LLM stack, pip, setuptools, wheel): version, download and installed size, kind,
dependencies. `lookup` makes up a small pure package for any other name, and none for a name
starting with `no-such-` (no channel or index has those). `parse_spec` and `python_full` read
what a command asks for; `closure` and `install_order` follow dependencies; `build_string`,
`wheel_name`, `conda_size` and `pip_size` are the names and sizes conda 24.x and pip 24.x print.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

from gpu_tui.demo.sim import condatext

__all__ = [
    "CONDA_ROOT",
    "CONDA_EXE",
    "CONDA_VERSION",
    "Pkg",
    "CATALOG",
    "BASE_LIBS",
    "KIB_PER_GIB",
    "KIB_PER_MIB",
    "canonical",
    "lookup",
    "parse_spec",
    "python_full",
    "stable_hash",
    "build_string",
    "conda_size",
    "pip_size",
    "wheel_name",
    "closure",
    "install_order",
]

CONDA_ROOT = "/root/miniconda3"
CONDA_EXE = CONDA_ROOT + "/bin/conda"
CONDA_VERSION = condatext.VERSION

KIB_PER_GIB = 1024 * 1024  # 1 GiB, in KiB (sizes here are du -k figures)
KIB_PER_MIB = 1024  # 1 MiB, in KiB
_PYTHONS = condatext.PYTHONS
_PYTHON_BUILDS = {"3.11.10": "he870216_0", "3.12.7": "h5148396_0", "3.10.15": "he870216_1", "3.9.20": "he870216_1"}


# ---------------------------------------------------------------------------- packages


@dataclass(frozen=True, slots=True)
class Pkg:
    name: str
    version: str
    wheel_mb: float
    """The download (a wheel, or a conda package), in MB."""
    installed_mib: float
    kind: str
    """`py` a pure wheel (py3-none-any), `cp` a CPython wheel, `nv` an NVIDIA library wheel."""
    deps: tuple[str, ...]


# name, version, download MB, installed MiB, kind, dependencies (pip's names); an indented line
# continues the entry above (a long list of dependencies)
_CATALOG_TEXT = """
torch 2.4.1 797.1 1650 cp filelock typing-extensions sympy networkx jinja2 fsspec
    nvidia-cuda-nvrtc-cu12 nvidia-cuda-runtime-cu12 nvidia-cuda-cupti-cu12 nvidia-cudnn-cu12 nvidia-cublas-cu12
    nvidia-cufft-cu12 nvidia-curand-cu12 nvidia-cusolver-cu12 nvidia-cusparse-cu12 nvidia-nccl-cu12 nvidia-nvtx-cu12
    triton
torchvision 0.19.1 7.0 21 cp torch numpy pillow
torchaudio 2.4.1 3.4 11 cp torch
filelock 3.16.1 0.016 0.05 py
typing-extensions 4.12.2 0.037 0.15 py
sympy 1.13.3 6.2 68 py mpmath
mpmath 1.3.0 0.54 4.5 py
networkx 3.4.1 1.7 16 py
jinja2 3.1.4 0.13 0.9 py markupsafe
markupsafe 3.0.1 0.02 0.06 cp
fsspec 2024.9.0 0.18 1.2 py
nvidia-cuda-nvrtc-cu12 12.1.105 23.7 60 nv
nvidia-cuda-runtime-cu12 12.1.105 0.82 2.5 nv
nvidia-cuda-cupti-cu12 12.1.105 14.1 44 nv
nvidia-cudnn-cu12 9.1.0.70 664.8 1050 nv nvidia-cublas-cu12
nvidia-cublas-cu12 12.1.3.1 410.6 720 nv
nvidia-cufft-cu12 11.0.2.54 121.6 250 nv
nvidia-curand-cu12 10.3.2.106 56.5 110 nv
nvidia-cusolver-cu12 11.4.5.107 124.2 270 nv nvidia-cublas-cu12 nvidia-nvjitlink-cu12 nvidia-cusparse-cu12
nvidia-cusparse-cu12 12.1.0.106 196.0 410 nv nvidia-nvjitlink-cu12
nvidia-nccl-cu12 2.20.5 176.2 380 nv
nvidia-nvtx-cu12 12.1.105 0.099 0.4 nv
nvidia-nvjitlink-cu12 12.6.77 19.7 52 nv
triton 3.0.0 209.4 480 cp filelock
numpy 2.1.2 16.3 58 cp
pandas 2.2.3 13.1 68 cp numpy python-dateutil pytz tzdata
python-dateutil 2.9.0.post0 0.23 0.8 py six
six 1.16.0 0.011 0.04 py
pytz 2024.2 0.51 2.8 py
tzdata 2024.2 0.35 1.9 py
scipy 1.14.1 41.2 112 cp numpy
scikit-learn 1.5.2 13.3 45 cp numpy scipy joblib threadpoolctl
joblib 1.4.2 0.3 1.4 py
threadpoolctl 3.5.0 0.018 0.07 py
matplotlib 3.9.2 8.3 38 cp contourpy cycler fonttools kiwisolver numpy packaging pillow pyparsing python-dateutil
contourpy 1.3.0 0.32 1.1 cp numpy
cycler 0.12.1 0.008 0.03 py
fonttools 4.54.1 4.9 16 cp
kiwisolver 1.4.7 1.4 3.2 cp
pyparsing 3.2.0 0.11 0.5 py
packaging 24.1 0.054 0.2 py
pillow 10.4.0 4.5 13 cp
transformers 4.45.2 9.9 72 py filelock huggingface-hub numpy packaging pyyaml regex requests safetensors tokenizers tqdm
huggingface-hub 0.25.2 0.44 2.9 py filelock fsspec packaging pyyaml requests tqdm typing-extensions
tokenizers 0.20.1 3.0 8.5 cp huggingface-hub
safetensors 0.4.5 0.44 1.1 cp
regex 2024.9.11 0.79 2.6 cp
pyyaml 6.0.2 0.76 2.1 cp
tqdm 4.66.5 0.078 0.4 py
requests 2.32.3 0.065 0.3 py charset-normalizer idna urllib3 certifi
charset-normalizer 3.4.0 0.14 0.6 cp
idna 3.10 0.07 0.4 py
urllib3 2.2.3 0.13 0.7 py
certifi 2024.8.30 0.17 0.5 py
accelerate 1.0.1 0.33 2.1 py numpy packaging psutil pyyaml torch huggingface-hub safetensors
psutil 6.1.0 0.29 1.5 cp
datasets 3.0.1 0.47 3.2 py filelock numpy pyarrow dill pandas requests tqdm xxhash multiprocess fsspec huggingface-hub
    packaging pyyaml
pyarrow 17.0.0 39.9 150 cp numpy
dill 0.3.8 0.12 0.6 py
xxhash 3.5.0 0.19 0.4 cp
multiprocess 0.70.16 0.14 0.8 py dill
einops 0.8.0 0.044 0.2 py
opencv-python 4.10.0.84 62.5 160 cp numpy
wandb 0.18.3 13.1 48 cp click docker-pycreds gitpython platformdirs protobuf psutil pyyaml requests sentry-sdk
    setproctitle
click 8.1.7 0.097 0.4 py
docker-pycreds 0.4.0 0.009 0.03 py six
gitpython 3.1.43 0.21 1.3 py
platformdirs 4.3.6 0.018 0.08 py
protobuf 5.28.2 0.32 1.6 cp
sentry-sdk 2.17.0 0.31 1.9 py urllib3 certifi
setproctitle 1.3.3 0.03 0.1 cp
tensorboard 2.18.0 5.5 17 py numpy packaging protobuf
ipykernel 6.29.5 0.12 0.8 py
jupyter 1.1.1 0.003 0.01 py ipykernel
vllm 0.6.3 185.4 520 cp torch transformers numpy
pip 24.2 1.8 8.5 py
setuptools 75.1.0 1.2 7.9 py
wheel 0.44.0 0.067 0.3 py
"""


def _catalog(text: str) -> dict[str, Pkg]:
    entries: list[str] = []
    for line in text.strip().splitlines():
        if line[:1].isspace():
            entries[-1] += " " + line
        else:
            entries.append(line)
    out = {}
    for entry in entries:
        name, version, mb, mib, kind, *deps = entry.split()
        out[name] = Pkg(name, version, float(mb), float(mib), kind, tuple(deps))
    return out


CATALOG = _catalog(_CATALOG_TEXT)
_ALIASES = {"pytorch": "torch", "pillow-simd": "pillow", "sklearn": "scikit-learn", "opencv": "opencv-python"}
BASE_LIBS = (  # what a python env on `defaults` brings besides python, pip, setuptools, wheel
    ("_libgcc_mutex", "0.1", "main"), ("_openmp_mutex", "5.1", "1_gnu"), ("bzip2", "1.0.8", "h5eee18b_6"),
    ("ca-certificates", "2024.9.24", "h06a4308_0"), ("ld_impl_linux-64", "2.40", "h12ee557_0"),
    ("libffi", "3.4.4", "h6a678d5_1"), ("libgcc-ng", "11.2.0", "h1234567_1"), ("libgomp", "11.2.0", "h1234567_1"),
    ("libstdcxx-ng", "11.2.0", "h1234567_1"), ("libuuid", "1.41.5", "h5eee18b_0"), ("ncurses", "6.4", "h6a678d5_0"),
    ("openssl", "3.0.15", "h5eee18b_0"), ("readline", "8.2", "h5eee18b_0"), ("sqlite", "3.45.3", "h5eee18b_0"),
    ("tk", "8.6.14", "h39e8969_0"), ("tzdata", "2024b", "h04d1e81_0"), ("xz", "5.4.6", "h5eee18b_1"),
    ("zlib", "1.2.13", "h5eee18b_1"),
)
_BASE_LIBS_BUILDS = tuple((n, b) for n, _, b in BASE_LIBS)


def canonical(name: str) -> str:
    """A package name as pip compares them (PEP 503), with conda's `pytorch` as `torch`."""
    n = re.sub(r"[-_.]+", "-", name).lower()
    return _ALIASES.get(n, n)


def stable_hash(text: str) -> int:
    """The same number for the same text in every run (what made-up versions, builds, sizes and
    speeds are drawn from)."""
    return zlib.crc32(text.encode())


def lookup(name: str) -> Pkg | None:
    """A package any index has: the catalog's, or one made up for an unknown name (small, pure);
    None for a `no-such-*` name."""
    n = canonical(name)
    if n.startswith("no-such-"):
        return None
    pkg = CATALOG.get(n)
    if pkg is not None:
        return pkg
    h = stable_hash(n)
    version = f"{1 + h % 3}.{h // 3 % 12}.{h // 36 % 6}"
    return Pkg(n, version, 0.02 + (h % 900) / 300.0, 0.1 + (h % 900) / 100.0, "py", ())


_SPEC = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*(.*)$")


def parse_spec(spec: str) -> tuple[str, str | None]:
    """`torch==2.4.1` -> ("torch", "2.4.1"); `numpy>=2`, `pandas` -> (name, None); conda's
    `numpy=1.26` -> ("numpy", "1.26")."""
    m = _SPEC.match(spec.strip())
    if m is None:
        return spec.strip(), None
    name, rest = m[1], m[3].strip()
    pinned = re.fullmatch(r"={1,2}\s*([A-Za-z0-9.+!_-]+?)(?:\.\*)?", rest)
    return name, pinned[1] if pinned else None


def python_full(spec: str | None) -> str | None:
    """`3.11` -> 3.11.10; `3.11.4` as it is; `3` -> 3.12.7; None for a python no channel has."""
    if spec is None or spec in ("3", ""):
        return _PYTHONS["3.12"]
    spec = spec.rstrip("*").rstrip(".")
    parts = spec.split(".")
    minor = ".".join(parts[:2])
    if minor not in _PYTHONS:
        return None
    return _PYTHONS[minor] if len(parts) == 2 else spec


def build_string(pkg: Pkg, version: str, py: str | None) -> str:
    """A conda build string: `py311h06a4308_0` for a python package, `h5eee18b_6` for a library."""
    if pkg.name == "python":
        return _PYTHON_BUILDS.get(version, f"h{stable_hash(version) & 0xFFFFFFF:07x}_0")
    if pkg.kind == "c":
        return dict(_BASE_LIBS_BUILDS).get(pkg.name) or f"h{stable_hash(pkg.name + version) & 0xFFFFFFF:07x}_0"
    h = f"h{stable_hash(pkg.name + version) & 0xFFFFFFF:07x}_0"
    return f"py{py.replace('.', '')}{h}" if py else h


def conda_size(mb: float) -> str:
    """conda's human_bytes: `143 KB`, `30.7 MB`, `1.20 GB`."""
    b = mb * 1_000_000
    if b < 1024:
        return f"{b:.0f} B"
    if b < 1024**2:
        return f"{b / 1024:.0f} KB"
    if b < 1024**3:
        return f"{b / 1024**2:.1f} MB"
    return f"{b / 1024**3:.2f} GB"


def pip_size(mb: float) -> str:
    """pip's format_size: `26 kB`, `2.9 kB`, `797.1 MB`."""
    b = mb * 1_000_000
    if b >= 1_000_000:
        return f"{b / 1_000_000:.1f} MB"
    if b >= 10_000:
        return f"{int(b / 1000)} kB"
    if b >= 1000:
        return f"{b / 1000:.1f} kB"
    return f"{int(b)} bytes"


def closure(pkgs: list[Pkg]) -> list[Pkg]:
    """`pkgs` and everything they depend on, each once."""
    out: dict[str, Pkg] = {}
    stack = list(pkgs)
    while stack:
        p = stack.pop()
        if p.name in out:
            continue
        out[p.name] = p
        stack += [CATALOG[d] for d in p.deps if d in CATALOG]
    return list(out.values())


def install_order(names: list[str]) -> list[str]:
    """Dependencies before what needs them (pip's order), among `names`."""
    want = set(names)
    out: list[str] = []

    def visit(n: str, path: frozenset[str]) -> None:
        if n in out or n in path:
            return
        for d in CATALOG[n].deps if n in CATALOG else ():
            if d in want:
                visit(d, path | {n})
        out.append(n)

    for n in names:
        visit(n, frozenset())
    return out


def wheel_name(pkg: Pkg, version: str, cp: str) -> str:
    """The wheel pip downloads for `pkg` at `version` on CPython `cp` (`cp311`)."""
    stem = f"{pkg.name.replace('-', '_')}-{version}"
    if pkg.kind == "cp":
        platform = "manylinux1_x86_64" if pkg.name == "torch" else "manylinux_2_17_x86_64.manylinux2014_x86_64"
        return f"{stem}-{cp}-{cp}-{platform}.whl"
    if pkg.kind == "nv":
        return f"{stem}-py3-none-manylinux1_x86_64.whl"
    return f"{stem}-py3-none-any.whl"
