"""What only the demo's conda needs besides sim/conda.py (demo/condarun.py): `python -m pip
install` in an env on disk, what an env holds (its conda packages, from conda-meta/history, and
its pip ones, the `NAME-VERSION.dist-info` dirs pip leaves in site-packages), and how big that is
(`du`). Nothing is executed.

`PACKAGES`: what the index has by name (torch and its NVIDIA wheels, the usual stack), and the
sizes of conda's packages; any other name is a small pure package, and a `no-such-*` name is on
no index. pip prints like pip 24.x, through the operation's output layer (its lines paced, the
download being the wait a cancel can stop), and writes the dist-info dirs at the end only.
"""

from __future__ import annotations

import os
import re
import zlib

from gpu_tui.demo.sim import condastate as st

__all__ = ["PACKAGES", "PKGS_CACHE_MIB", "installed", "size_mib", "install"]

PKGS_CACHE_MIB = 2458  # what `du` of the whole root adds besides base and the envs: pkgs/
_ALIASES = {"pytorch": "torch", "sklearn": "scikit-learn", "opencv": "opencv-python"}
# name, version, download MB, installed MiB, dependencies; a version `-`: conda's only (no wheel)
_TABLE = """
python - 0 110
conda - 0 60
openssl - 0 6
ca-certificates - 0 0.5
pytorch-cuda - 0 6820
ipykernel 6.29.5 0.12 48
torch 2.4.1 797.1 2960 filelock typing-extensions sympy jinja2 nvidia-cudnn-cu12 nvidia-nccl-cu12 triton
nvidia-cudnn-cu12 9.1.0.70 664.8 1050 nvidia-cublas-cu12 nvidia-cusparse-cu12
nvidia-cublas-cu12 12.1.3.1 410.6 720
nvidia-cusparse-cu12 12.1.0.106 196.0 410 nvidia-nvjitlink-cu12
nvidia-nvjitlink-cu12 12.6.77 19.7 52
nvidia-nccl-cu12 2.20.5 176.2 380
triton 3.0.0 209.4 480 filelock
filelock 3.16.1 0.016 0.05
typing-extensions 4.12.2 0.037 0.15
sympy 1.13.3 6.2 68 mpmath
mpmath 1.3.0 0.54 4.5
jinja2 3.1.4 0.13 0.9 markupsafe
markupsafe 3.0.1 0.02 0.06
numpy 2.1.2 16.3 58
pandas 2.2.3 13.1 68 numpy python-dateutil pytz tzdata
python-dateutil 2.9.0.post0 0.23 0.8 six
six 1.16.0 0.011 0.04
pytz 2024.2 0.51 2.8
tzdata 2024.2 0.35 1.9
torchvision 0.19.1 7.0 21 torch numpy pillow
pillow 10.4.0 4.5 13
transformers 4.45.2 9.9 72 numpy pyyaml regex requests safetensors tokenizers tqdm
tokenizers 0.20.1 3.0 8.5
safetensors 0.4.5 0.44 1.1
regex 2024.9.11 0.79 2.6
pyyaml 6.0.2 0.76 2.1
accelerate 1.0.1 0.33 2.1 numpy torch
datasets 3.0.1 0.47 3.2 numpy pandas requests tqdm
tqdm 4.66.5 0.078 0.4
requests 2.32.3 0.065 0.3
einops 0.8.0 0.044 0.2
pip 24.2 1.8 8.5
setuptools 75.1.0 1.2 7.9
wheel 0.44.0 0.067 0.3
"""
PACKAGES = {
    w[0]: (w[1], float(w[2]), float(w[3]), tuple(w[4:])) for w in (line.split() for line in _TABLE.strip().splitlines())
}
"""name -> (version, download MB, installed MiB, dependencies)."""
_ROOT_WARNING = (
    "WARNING: Running pip as the 'root' user can result in broken permissions and conflicting behaviour "
    "with the system package manager, possibly rendering your system unusable. It is recommended to use a "
    "virtual environment instead: https://pip.pypa.io/warnings/venv. Use the --root-user-action option if "
    "you know what you are doing and want to suppress this warning.\n"
)


def canonical(name: str) -> str:
    """A name as pip compares them (PEP 503), with conda's `pytorch` as `torch`."""
    n = re.sub(r"[-_.]+", "-", name).lower()
    return _ALIASES.get(n, n)


def _lookup(name: str) -> tuple[str, float, float, tuple[str, ...]] | None:
    """What the index has for `name` (a made-up small pure package if it is not in the table)."""
    if name.startswith("no-such-"):
        return None
    h = zlib.crc32(name.encode())
    made_up = (f"{1 + h % 3}.{h // 3 % 12}.{h // 36 % 6}", 0.02 + (h % 900) / 300.0, 0.1 + (h % 900) / 100.0, ())
    found = PACKAGES.get(name, made_up)
    return None if found[0] == "-" else found


def _site(prefix: str, python: str) -> str:
    return f"{prefix}/lib/python{'.'.join(python.split('.')[:2])}/site-packages"


def installed(prefix: str) -> dict[str, str]:
    """The env's packages, conda's and pip's: canonical name -> version."""
    pkgs = {canonical(n): v[0] for n, v in st.read_packages(prefix).items()}
    site = _site(prefix, pkgs.get("python", "3"))
    try:
        names = os.listdir(site)
    except OSError:
        names = []
    for d in names:
        if d.endswith(".dist-info"):
            n, _, v = d.removesuffix(".dist-info").rpartition("-")
            pkgs[canonical(n)] = v
    return pkgs


def size_mib(pkgs: dict[str, str]) -> float:
    """What `du` finds of these packages (MiB)."""
    return sum(PACKAGES[n][2] if n in PACKAGES else 1.0 for n in pkgs)


def _size(mb: float) -> str:
    """pip's format_size: `26 kB`, `2.9 kB`, `797.1 MB`."""
    if mb >= 1:
        return f"{mb:.1f} MB"
    return f"{int(mb * 1000)} kB" if mb >= 0.01 else f"{mb * 1000:.1f} kB"


def _wheel(name: str, version: str, cp: str) -> str:
    if PACKAGES.get(name, ("", 0.0, 0.0, ()))[1] > 5 and not name.startswith("nvidia-"):
        return f"{name.replace('-', '_')}-{version}-{cp}-{cp}-manylinux1_x86_64.whl"
    return f"{name.replace('-', '_')}-{version}-py3-none-any.whl"


def install(io: st.Io, prefix: str, args: list[str]) -> int:
    """`PREFIX/bin/python -m pip install ARGS` (`prefix` on this machine), printing through `io`."""
    have = installed(prefix)
    python = have.get("python", "3.12")
    site = _site(prefix, python)
    specs = [a for a in args if not a.startswith("-")]
    if not specs:
        st.write('ERROR: You must give at least one requirement to install (see "pip help install")\n')
        return 1
    cp = "cp" + "".join(python.split(".")[:2])
    queue: list[tuple[str, str | None, str | None]] = []  # (name, pinned version, required by)
    for spec in specs:
        m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*(?:==\s*([A-Za-z0-9.+!_-]+))?", spec.strip())
        queue.append((canonical(m[1] if m else spec), m[2] if m else None, None))
    new: dict[str, str] = {}
    for name, version, by in queue:
        if name in new or (by and name in have):
            continue
        frm = f" (from {by})" if by else ""
        if name in have and version in (None, have[name]):
            st.write(f"Requirement already satisfied: {name} in {site}{frm} ({have[name]})\n")
            continue
        found = _lookup(name)
        if found is None:
            st.write(
                f"ERROR: Could not find a version that satisfies the requirement {name} (from versions: none)\n"
                f"ERROR: No matching distribution found for {name}\n"
            )
            return 1
        new[name] = version or found[0]
        metadata = _size(0.002 + zlib.crc32(name.encode()) % 80 / 1000)
        st.write(
            f"Collecting {name + ('==' + version if version else '')}{frm}\n"
            f"  Downloading {_wheel(name, new[name], cp)}.metadata ({metadata})\n"
        )
        queue += [(d, None, name) for d in found[3]]
    if new:
        for name, version in new.items():
            st.write(f"Downloading {_wheel(name, version, cp)} ({_size(PACKAGES.get(name, ('', 0.5))[1])})\n")
        io.pause()
        order = list(reversed(new))  # what is needed before what needs it
        st.write(f"Installing collected packages: {', '.join(order)}\n")
        for name in order:
            os.makedirs(f"{site}/{name.replace('-', '_')}-{new[name]}.dist-info", exist_ok=True)
        st.write("Successfully installed " + " ".join(f"{n}-{new[n]}" for n in sorted(new)) + "\n")
    st.write(_ROOT_WARNING)
    return 0
