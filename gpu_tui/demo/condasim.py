"""The demo's conda: one simulated miniconda install per instance, and the answers to what the
conda manager sends (services/conda.py, services/killable.py). Nothing is executed.

The install is /root/miniconda3 (conda 24.9.2, base python 3.12.7) with envs `llm` (python
3.11.10, torch and transformers, ~9.8 GiB) and `py311` (python 3.11.10, ~180 MiB). Each env
holds a package set (for pip's "Requirement already satisfied", the module probes and `du`).

Operations (`conda create`, `conda env remove`, `conda install`, `python -m pip install`,
`conda init`) are simulated processes (`CondaOp`): each gets a fake pid from the instance's pid
counter, prints output shaped like conda 24.x / pip 24.x on a timeline of real seconds (a
create takes `conda_seconds`, 6 s by default; the others are scaled from it), and changes the
env table only when it completes. A `kill` of its pid or process group ends it at once (exit
128 + the signal: 130 for INT; the env table unchanged); `kill -0` tells whether it still runs.
It runs on whether or not anyone reads its output (closing the channel does not stop conda).
Package names starting with `no-such-` exist on no channel or index (conda's
PackagesNotFoundError, pip's "No matching distribution", exit 1); removing base fails as conda
does. Time is the monotonic clock, not the fleet's (a frozen demo clock still lets conda finish).

Entry points (dispatched from jobscripts.py / commands.py): `plan_line` (the killable wrapper
and the kill commands, read from the raw command line), `pythons_script` / `sizes_script`
(`sh -c` scripts), `plain` (an unwrapped conda or pip command), `module_probe` (`PYTHON -c`).
"""

from __future__ import annotations

import json
import posixpath
import random
import re
import shlex
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpu_tui.demo.program import Program
from gpu_tui.services.killable import PID_MARK, killable_command

if TYPE_CHECKING:
    from gpu_tui.demo.simulate import InstanceSim

__all__ = [
    "CondaSim",
    "CondaOp",
    "Env",
    "CONDA_ROOT",
    "CONDA_EXE",
    "CONDA_VERSION",
    "CONDA_SECONDS",
    "OP_TICK",
    "START_ENVS",
    "plan_line",
    "plain",
    "pythons_script",
    "sizes_script",
    "module_probe",
]

CONDA_ROOT = "/root/miniconda3"
CONDA_EXE = CONDA_ROOT + "/bin/conda"
CONDA_VERSION = "24.9.2"
CONDA_SECONDS = 6.0
"""How long (real seconds) a `conda create` takes in the demo; the other operations scale from it."""
OP_TICK = 0.1
"""How often a running operation's stream is checked for new output (and for its end)."""

_GIB = 1024 * 1024  # 1 GiB, in KiB (sizes here are du -k figures)
_MIB = 1024  # 1 MiB, in KiB
_PLATFORM = "linux-64"
_CHANNEL_URLS = (
    "https://repo.anaconda.com/pkgs/main/linux-64",
    "https://repo.anaconda.com/pkgs/main/noarch",
    "https://repo.anaconda.com/pkgs/r/linux-64",
    "https://repo.anaconda.com/pkgs/r/noarch",
)
_PYTHONS = {
    "2.7": "2.7.18", "3.6": "3.6.13", "3.7": "3.7.16", "3.8": "3.8.20", "3.9": "3.9.20",
    "3.10": "3.10.15", "3.11": "3.11.10", "3.12": "3.12.7", "3.13": "3.13.0",
}
_PYTHON_BUILDS = {"3.11.10": "he870216_0", "3.12.7": "h5148396_0", "3.10.15": "he870216_1", "3.9.20": "he870216_1"}
_NEW_ENV_KIB = 120 * _MIB
_PKGS_CACHE_KIB = int(2.4 * _GIB)  # what `du` of the whole root adds besides base and the envs
_ROOT_WARNING = (
    "WARNING: Running pip as the 'root' user can result in broken permissions and conflicting behaviour "
    "with the system package manager, possibly rendering your system unusable. It is recommended to use a "
    "virtual environment instead: https://pip.pypa.io/warnings/venv. Use the --root-user-action option if "
    "you know what you are doing and want to suppress this warning.\n"
)
_CONDA_TAILS = {s: f"\nCondaSignalInterrupt: Signal interrupt SIG{n}\n\n" for n, s in (("INT", 2), ("TERM", 15))}
_PIP_TAILS = {2: "ERROR: Operation cancelled by user\n"}
_MAX_OPS = 200  # ended operations kept for `kill -0` (the oldest are forgotten)
_SIGNALS = {"HUP": 1, "INT": 2, "QUIT": 3, "KILL": 9, "USR1": 10, "USR2": 12, "TERM": 15}


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


# name, version, download MB, installed MiB, kind, dependencies (pip's names)
_CATALOG_TEXT = """
torch 2.4.1 797.1 1650 cp filelock typing-extensions sympy networkx jinja2 fsspec nvidia-cuda-nvrtc-cu12 nvidia-cuda-runtime-cu12 nvidia-cuda-cupti-cu12 nvidia-cudnn-cu12 nvidia-cublas-cu12 nvidia-cufft-cu12 nvidia-curand-cu12 nvidia-cusolver-cu12 nvidia-cusparse-cu12 nvidia-nccl-cu12 nvidia-nvtx-cu12 triton
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
datasets 3.0.1 0.47 3.2 py filelock numpy pyarrow dill pandas requests tqdm xxhash multiprocess fsspec huggingface-hub packaging pyyaml
pyarrow 17.0.0 39.9 150 cp numpy
dill 0.3.8 0.12 0.6 py
xxhash 3.5.0 0.19 0.4 cp
multiprocess 0.70.16 0.14 0.8 py dill
einops 0.8.0 0.044 0.2 py
opencv-python 4.10.0.84 62.5 160 cp numpy
wandb 0.18.3 13.1 48 cp click docker-pycreds gitpython platformdirs protobuf psutil pyyaml requests sentry-sdk setproctitle
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
    out = {}
    for line in text.strip().splitlines():
        name, version, mb, mib, kind, *deps = line.split()
        out[name] = Pkg(name, version, float(mb), float(mib), kind, tuple(deps))
    return out


CATALOG = _catalog(_CATALOG_TEXT)
_ALIASES = {"pytorch": "torch", "pillow-simd": "pillow", "sklearn": "scikit-learn", "opencv": "opencv-python"}
_ENV_PACKAGES = {
    # base has torch too: the demo's env check finds it in conda base, as on AutoDL's images
    "base": ("pip", "setuptools", "wheel", "requests", "tqdm", "torch"),
    "llm": ("pip", "setuptools", "wheel", "torch", "torchvision", "transformers", "accelerate", "datasets", "einops"),
    "py311": ("pip", "setuptools", "wheel"),
}
START_ENVS = (("base", "3.12.7", 3.1 * _GIB), ("llm", "3.11.10", 9.8 * _GIB), ("py311", "3.11.10", 180 * _MIB))
"""The envs when the fleet starts: name, python, size in KiB (base without envs/ and pkgs/)."""


def canonical(name: str) -> str:
    """A package name as pip compares them (PEP 503), with conda's `pytorch` as `torch`."""
    n = re.sub(r"[-_.]+", "-", name).lower()
    return _ALIASES.get(n, n)


def _hash(text: str) -> int:
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
    h = _hash(n)
    return Pkg(n, f"{1 + h % 3}.{h // 3 % 12}.{h // 36 % 6}", 0.02 + (h % 900) / 300.0, 0.1 + (h % 900) / 100.0, "py", ())


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


def _build(pkg: Pkg, version: str, py: str | None) -> str:
    """A conda build string: `py311h06a4308_0` for a python package, `h5eee18b_6` for a library."""
    if pkg.name == "python":
        return _PYTHON_BUILDS.get(version, f"h{_hash(version) & 0xFFFFFFF:07x}_0")
    if pkg.kind == "c":
        return dict(_BASE_LIBS_BUILDS).get(pkg.name) or f"h{_hash(pkg.name + version) & 0xFFFFFFF:07x}_0"
    h = f"h{_hash(pkg.name + version) & 0xFFFFFFF:07x}_0"
    return f"py{py.replace('.', '')}{h}" if py else h


def _conda_size(mb: float) -> str:
    """conda's human_bytes: `143 KB`, `30.7 MB`, `1.20 GB`."""
    b = mb * 1_000_000
    if b < 1024:
        return f"{b:.0f} B"
    if b < 1024**2:
        return f"{b / 1024:.0f} KB"
    if b < 1024**3:
        return f"{b / 1024**2:.1f} MB"
    return f"{b / 1024**3:.2f} GB"


def _pip_size(mb: float) -> str:
    """pip's format_size: `26 kB`, `2.9 kB`, `797.1 MB`."""
    b = mb * 1_000_000
    if b >= 1_000_000:
        return f"{b / 1_000_000:.1f} MB"
    if b >= 10_000:
        return f"{int(b / 1000)} kB"
    if b >= 1000:
        return f"{b / 1000:.1f} kB"
    return f"{int(b)} bytes"


# ---------------------------------------------------------------------------- envs and operations


@dataclass(slots=True)
class Env:
    name: str
    prefix: str
    python: str | None
    """The full python version (`3.11.10`), None for an env without python."""
    base_kib: int
    packages: dict[str, str] = field(default_factory=dict)
    """Canonical name -> version."""
    added_kib: int = 0

    @property
    def size_kib(self) -> int:
        return self.base_kib + self.added_kib

    @property
    def py_minor(self) -> str:
        return ".".join((self.python or "3.12").split(".")[:2])

    @property
    def site_packages(self) -> str:
        return f"{self.prefix}/lib/python{self.py_minor}/site-packages"

    def add(self, pkgs: list[Pkg], versions: dict[str, str] | None = None) -> None:
        for p in pkgs:
            if p.name not in self.packages:
                self.added_kib += int(p.installed_mib * _MIB)
            self.packages[p.name] = (versions or {}).get(p.name, p.version)


@dataclass(slots=True)
class CondaOp:
    """One simulated conda or pip process: its output on a timeline, its end, its effect."""

    pid: int
    started: float
    events: list[tuple[float, str]]
    """(seconds after the start, text), in order."""
    duration: float
    status: int
    on_done: Callable[[], None] | None = None
    ended_at: float | None = None
    exit_status: int | None = None
    tails: dict[int, str] = field(default_factory=dict)
    """What it prints when a signal stops it, by signal number."""
    _sent: int = 0
    _cut: float | None = None
    _tail: str = ""

    @property
    def running(self) -> bool:
        return self.exit_status is None

    def poll(self, now: float) -> None:
        if self.exit_status is None and now >= self.started + self.duration:
            self.exit_status = self.status
            self.ended_at = self.started + self.duration
            if self.on_done is not None:
                self.on_done()

    def kill(self, signal: int, now: float) -> None:
        if self.exit_status is not None or signal == 0:
            return
        self._cut = now - self.started
        self.ended_at = now
        self.exit_status = 128 + signal
        self._tail = self.tails.get(signal, "")

    def take(self, now: float) -> str:
        """The output due by `now` that was not taken yet (everything once it has ended)."""
        upto = now - self.started
        if self._cut is not None:
            upto = self._cut
        elif self.exit_status is not None:
            upto = float("inf")
        parts = []
        while self._sent < len(self.events) and self.events[self._sent][0] <= upto:
            parts.append(self.events[self._sent][1])
            self._sent += 1
        if self._cut is not None and self._tail:
            parts.append(self._tail)
            self._tail = ""
        return "".join(parts)

    @property
    def drained(self) -> bool:
        """Ended, and all it printed was taken."""
        if self.exit_status is None or self._tail:
            return False
        return self._cut is not None or self._sent >= len(self.events)


class _Timeline:
    """Builds an operation's output: `at(fraction, text)`, a fraction of its duration (which
    may still change); never earlier than the text before it."""

    def __init__(self, duration: float) -> None:
        self.duration = duration
        self._marks: list[tuple[float, str]] = []

    def at(self, fraction: float, text: str) -> None:
        f = max(0.0, min(1.0, fraction))
        if self._marks and f < self._marks[-1][0]:
            f = self._marks[-1][0]
        self._marks.append((f, text))

    @property
    def events(self) -> list[tuple[float, str]]:
        return [(f * self.duration, text) for f, text in self._marks]


class CondaSim:
    """One instance's conda install: envs, running operations, and the answers about them."""

    def __init__(
        self,
        *,
        new_pid: Callable[[], int],
        seed_key: str,
        seconds: float = CONDA_SECONDS,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.new_pid = new_pid
        self.seconds = max(0.1, float(seconds))
        self.now = now
        self.rng = random.Random(f"gpu-tui-demo-conda:{seed_key}")
        self.envs: dict[str, Env] = {}
        self.ops: dict[int, CondaOp] = {}
        self.initialized = True
        """`conda init bash` was run: its block is in ~/.bashrc (as envprobe reports)."""
        for name, python, kib in START_ENVS:
            prefix = CONDA_ROOT if name == "base" else f"{CONDA_ROOT}/envs/{name}"
            env = Env(name, prefix, python, int(kib * self.rng.uniform(0.985, 1.015)))
            for pkg in _closure([CATALOG[n] for n in _ENV_PACKAGES[name]]):
                env.packages[pkg.name] = pkg.version
            if name == "base":
                env.packages["conda"] = CONDA_VERSION
            self.envs[name] = env

    # ------------------------------------------------------------------ reading

    def advance(self) -> float:
        now = self.now()
        for op in self.ops.values():
            op.poll(now)
        return now

    def prefixes(self) -> list[str]:
        self.advance()
        others = sorted(e.prefix for e in self.envs.values() if e.name != "base")
        return [CONDA_ROOT] + others

    def env_at(self, prefix: str) -> Env | None:
        prefix = posixpath.normpath(prefix) if prefix else prefix
        return next((e for e in self.envs.values() if e.prefix == prefix), None)

    def env_of_python(self, path: str) -> Env | None:
        """The env whose python `path` is (`PREFIX/bin/python`, `python3`, `python3.11`)."""
        d, base = posixpath.split(path)
        if not re.fullmatch(r"python(3(\.\d+)?)?", base) or posixpath.basename(d) != "bin":
            return None
        return self.env_at(posixpath.dirname(d))

    def du_kib(self, path: str, *, exclude_envs: bool) -> int | None:
        env = self.env_at(path)
        if env is None:
            return None
        if env.name != "base" or exclude_envs:
            return env.size_kib
        return env.size_kib + _PKGS_CACHE_KIB + sum(e.size_kib for e in self.envs.values() if e.name != "base")

    # ------------------------------------------------------------------ processes

    def _start(
        self, tl: _Timeline, status: int, on_done: Callable[[], None] | None, *, pid: int, tails: dict[int, str] | None = None
    ) -> CondaOp:
        if len(self.ops) >= _MAX_OPS:
            for old in [p for p, o in self.ops.items() if not o.running][: len(self.ops) // 2]:
                del self.ops[old]
        op = CondaOp(pid, self.now(), tl.events, tl.duration, status, on_done, tails=_CONDA_TAILS if tails is None else tails)
        self.ops[pid] = op
        return op

    def signal(self, pid: int, signal: int) -> bool:
        """`kill -SIG pid` (or its group): True if there was such a process."""
        now = self.advance()
        op = self.ops.get(pid)
        if op is None or not op.running:
            return False
        op.kill(signal, now)
        return True

    def stream(self, op: CondaOp, head: str) -> Program:
        """The channel of a running operation: `head`, then its output as it comes, then its exit."""

        def tick(_i: int) -> str:
            now = self.advance()
            return op.take(now)

        def done() -> int | None:
            return op.exit_status if op.drained else None

        return Program(stdout=head, interval=OP_TICK, tick=tick, exit_when=done)

    # ------------------------------------------------------------------ commands

    def run(self, argv: list[str], pid: int) -> tuple[CondaOp | None, Program | None]:
        """Start the operation `argv` asks for; or an immediate answer; (None, None): not ours."""
        if argv[0] == CONDA_EXE:
            return self._conda(argv[1:], pid)
        if len(argv) >= 4 and argv[1:4] == ["-m", "pip", "install"]:
            env = self.env_of_python(argv[0])
            if env is None:
                return None, None
            return self._pip_install(env, argv[4:], pid), None
        return None, None

    def _conda(self, args: list[str], pid: int) -> tuple[CondaOp | None, Program | None]:
        if args in (["--version"], ["-V"]):
            return None, Program(stdout=f"conda {CONDA_VERSION}\n")
        if args[:2] == ["env", "list"] or args[:2] == ["info", "--envs"] or args[:2] == ["info", "-e"]:
            return None, self._env_list(json_out="--json" in args[2:])
        flags, opts, pos = _parse(args[2:] if args[:2] == ["env", "remove"] else args[1:])
        if args[:1] == ["create"]:
            return self._create(opts.get("name"), pos, pid), None
        if args[:2] == ["env", "remove"] or (args[:1] == ["remove"] and "all" in flags):
            return self._remove(opts.get("name"), pid), None
        if args[:1] == ["install"]:
            return self._conda_install(opts.get("name"), pos, pid), None
        if args[:1] == ["init"]:
            return self._init(pos or ["bash"], "reverse" in flags, pid), None
        return None, Program(
            stderr=f"conda (gpu-tui demo): `conda {' '.join(args)}` is not simulated; try `conda env list`\n", status=2
        )

    def _env_list(self, *, json_out: bool) -> Program:
        prefixes = self.prefixes()
        if json_out:
            return Program(stdout=json.dumps({"envs": prefixes}, indent=2) + "\n")
        rows = [("base", CONDA_ROOT)] + [(p.rsplit("/", 1)[-1], p) for p in prefixes[1:]]
        width = max(len(n) for n, _ in rows) + 2
        text = "# conda environments:\n#\n" + "".join(
            f"{n:<{width}}{'*' if p == CONDA_ROOT else ' '}  {p}\n" for n, p in rows
        )
        return Program(stdout=text + "\n")

    def _fail_now(self, text: str, pid: int, fraction: float = 0.08) -> CondaOp:
        tl = _Timeline(self.seconds * fraction)
        tl.at(1.0, text)
        return self._start(tl, 1, None, pid=pid)

    def _head(self, tl: _Timeline, *, solve_until: float) -> None:
        tl.at(0.0, f"Channels:\n - defaults\nPlatform: {_PLATFORM}\n")
        tl.at(solve_until * 0.6, "Collecting package metadata (repodata.json): done\n")

    def _not_found(self, tl: _Timeline, missing: list[str]) -> None:
        tl.at(
            1.0,
            "Solving environment: failed\n\n"
            "PackagesNotFoundError: The following packages are not available from current channels:\n\n"
            + "".join(f"  - {m}\n" for m in missing)
            + "\nCurrent channels:\n\n"
            + "".join(f"  - {c}\n" for c in _CHANNEL_URLS)
            + "\nTo search for alternate channels that may provide the conda package you're\n"
            "looking for, navigate to\n\n    https://anaconda.org\n\nand use the search bar at the top of the page.\n\n\n",
        )

    def _plan_text(self, prefix: str, specs: list[str], dists: list[tuple[Pkg, str]], py: str | None, *, downloads: list[tuple[Pkg, str]]) -> str:
        lines = ["", "## Package Plan ##", "", f"  environment location: {prefix}", ""]
        if specs:
            lines += ["  added / updated specs:"] + [f"    - {s}" for s in specs] + ["", ""]
        if downloads:
            lines += ["The following packages will be downloaded:", ""]
            lines += ["    " + "package".ljust(27) + "|" + "build".rjust(17), "    " + "-" * 27 + "|" + "-" * 17]
            total = 0.0
            for pkg, version in downloads:
                lines.append(f"    {pkg.name + '-' + version:<27}|{_build(pkg, version, py):>17}{_conda_size(pkg.wheel_mb):>15}")
                total += pkg.wheel_mb
            lines += ["    " + "-" * 60, " " * 43 + "Total:" + f"{_conda_size(total):>15}", ""]
        if dists:
            lines += ["The following NEW packages will be INSTALLED:", ""]
            for pkg, version in sorted(dists, key=lambda d: d[0].name):
                sub = "noarch" if pkg.name == "tzdata" else _PLATFORM
                lines.append(f"  {pkg.name:<18} pkgs/main/{sub}::{pkg.name}-{version}-{_build(pkg, version, py)} ")
            lines += ["", ""]
        return "\n".join(lines) + "\n"

    def _transaction(self, tl: _Timeline, downloads: list[tuple[Pkg, str]], py: str | None, start: float, end: float) -> None:
        tl.at(start, "Downloading and Extracting Packages:\n")
        total = sum(p.wheel_mb for p, _ in downloads) or 1.0
        done = 0.0
        for pkg, version in downloads:
            done += pkg.wheel_mb
            tl.at(start + (end - start) * done / total, f"{pkg.name + '-' + version:<20} | {_conda_size(pkg.wheel_mb):<9} | {'#' * 10} | 100% \n")
        tl.at(end, "\n")
        tl.at(end + (1 - end) * 0.3, "Preparing transaction: done\n")
        tl.at(end + (1 - end) * 0.6, "Verifying transaction: done\n")

    def _create(self, name: str | None, specs: list[str], pid: int) -> CondaOp:
        if not name:
            return self._fail_now(
                '\nCondaValueError: either -n NAME or -p PREFIX option required,\ntry "conda create -h" for more details\n\n', pid
            )
        prefix = f"{CONDA_ROOT}/envs/{name}"
        tl = _Timeline(self.seconds)
        if name in ("base", "root"):
            return self._fail_now("\nCondaValueError: The target prefix is the base prefix. Aborting.\n\n", pid)
        python: str | None = None
        wanted: list[tuple[Pkg, str]] = []
        missing = []
        for spec in specs:
            pname, version = parse_spec(spec)
            if canonical(pname) == "python":
                python = python_full(version)
                if python is None:
                    missing.append(spec)
                continue
            pkg = lookup(pname)
            if pkg is None:
                missing.append(spec)
            else:
                wanted.append((pkg, version or pkg.version))
        if name in self.envs:
            tl.at(0.0, f"WARNING: A conda environment already exists at '{prefix}'\n\nRemove existing environment?\n"
                  "This will remove ALL directories contained within this specified prefix directory.\n\n")
        self._head(tl, solve_until=0.3)
        if missing:
            tl.duration = self.seconds * 0.35
            self._not_found(tl, missing)
            return self._start(tl, 1, None, pid=pid)
        py_minor = ".".join(python.split(".")[:2]) if python else None
        base_libs = [(Pkg(n, v, 0.0, 0.0, "c", ()), v) for n, v, _ in _BASE_LIBS]
        py_pkgs: list[tuple[Pkg, str]] = []
        if python:
            py_pkgs = [(Pkg("python", python, 30.7, 0.0, "c", ()), python)] + [(CATALOG[n], CATALOG[n].version) for n in ("pip", "setuptools", "wheel")]
        extra = [(p, p.version) for p in _closure([p for p, _ in wanted]) if p.name not in {w.name for w, _ in wanted}]
        downloads = py_pkgs + wanted + extra
        tl.at(0.3, "Solving environment: done\n")
        tl.at(0.32, self._plan_text(prefix, specs, base_libs + downloads, py_minor, downloads=downloads))
        self._transaction(tl, downloads, py_minor, 0.36, 0.86)
        tl.at(
            1.0,
            "Executing transaction: done\n#\n# To activate this environment, use\n#\n"
            f"#     $ conda activate {name}\n#\n# To deactivate an active environment, use\n#\n#     $ conda deactivate\n\n",
        )

        def created() -> None:
            env = Env(name, prefix, python, int(_NEW_ENV_KIB * self.rng.uniform(0.97, 1.03)) if python else 4 * _MIB)
            if python:
                env.packages.update({n: CATALOG[n].version for n in ("pip", "setuptools", "wheel")})
            env.add([p for p, _ in wanted] + [p for p, _ in extra], {p.name: v for p, v in wanted})
            self.envs[name] = env

        return self._start(tl, 0, created, pid=pid)

    def _remove(self, name: str | None, pid: int) -> CondaOp:
        if not name:
            return self._fail_now(
                '\nCondaValueError: either -n NAME or -p PREFIX option required,\ntry "conda remove -h" for more details\n\n', pid
            )
        if name in ("base", "root"):
            return self._fail_now(
                "\nCondaEnvironmentError: cannot remove root environment, add -n NAME or -p PREFIX option\n\n", pid
            )
        env = self.envs.get(name)
        if env is None:
            return self._fail_now(
                f"\nEnvironmentLocationNotFound: Not a conda environment: {CONDA_ROOT}/envs/{name}\n\n", pid
            )
        tl = _Timeline(self.seconds * 0.6)
        tl.at(0.0, f"\nRemove all packages in environment {env.prefix}:\n\n")
        dists = [(Pkg(n, v, 0.0, 0.0, "c", ()), v) for n, v, _ in _BASE_LIBS]
        if env.python:
            dists.append((Pkg("python", env.python, 0.0, 0.0, "c", ()), env.python))
        dists += [(CATALOG.get(n) or Pkg(n, v, 0.0, 0.0, "py", ()), v) for n, v in env.packages.items()]
        removed = "".join(
            f"  {p.name}-{v}-{_build(p, v, env.py_minor)}\n" for p, v in sorted(dists, key=lambda d: d[0].name)
        )
        tl.at(0.15, f"\n## Package Plan ##\n\n  environment location: {env.prefix}\n\n\n"
              f"The following packages will be REMOVED:\n\n{removed}\n\n")
        tl.at(0.3, "Downloading and Extracting Packages:\n\n")
        tl.at(0.5, "Preparing transaction: done\n")
        tl.at(0.65, "Verifying transaction: done\n")
        tl.at(1.0, "Executing transaction: done\n")

        def removed_env() -> None:
            if self.envs.get(name) is env:
                del self.envs[name]

        return self._start(tl, 0, removed_env, pid=pid)

    def _conda_install(self, name: str | None, specs: list[str], pid: int) -> CondaOp:
        env = self.envs.get(name or "base")
        if env is None:
            return self._fail_now(
                f"\nEnvironmentLocationNotFound: Not a conda environment: {CONDA_ROOT}/envs/{name}\n\n", pid
            )
        if not specs:
            return self._fail_now(
                "\nCondaValueError: too few arguments, must supply command line package specs or --file\n\n", pid
            )
        tl = _Timeline(self.seconds * 0.85)
        self._head(tl, solve_until=0.35)
        wanted: list[tuple[Pkg, str]] = []
        missing = []
        for spec in specs:
            pname, version = parse_spec(spec)
            pkg = lookup(pname)
            if pkg is None:
                missing.append(spec)
            else:
                have = env.packages.get(pkg.name)
                if have is None or (version is not None and version != have):
                    wanted.append((pkg, version or pkg.version))
        if missing:
            tl.duration = self.seconds * 0.35
            self._not_found(tl, missing)
            return self._start(tl, 1, None, pid=pid)
        if not wanted:
            tl.duration = self.seconds * 0.4
            tl.at(1.0, "Solving environment: done\n\n# All requested packages already installed.\n\n")
            return self._start(tl, 0, None, pid=pid)
        extra = [(p, p.version) for p in _closure([p for p, _ in wanted]) if p.name not in env.packages and p.name not in {w.name for w, _ in wanted}]
        downloads = wanted + extra
        tl.at(0.35, "Solving environment: done\n")
        tl.at(0.37, self._plan_text(env.prefix, specs, downloads, env.py_minor, downloads=downloads))
        self._transaction(tl, downloads, env.py_minor, 0.4, 0.86)
        tl.at(1.0, "Executing transaction: done\n")

        def installed() -> None:
            env.add([p for p, _ in downloads], {p.name: v for p, v in wanted})

        return self._start(tl, 0, installed, pid=pid)

    def _pip_install(self, env: Env, args: list[str], pid: int) -> CondaOp:
        specs = [a for a in args if not a.startswith("-")]
        tl = _Timeline(self.seconds)
        if not specs:
            tl.duration = self.seconds * 0.1
            tl.at(1.0, "ERROR: You must give at least one requirement to install (see \"pip help install\")\n")
            return self._start(tl, 1, None, pid=pid, tails=_PIP_TAILS)
        cp = "cp" + env.py_minor.replace(".", "")
        resolve: list[str] = []  # the resolution's lines, in order
        new: dict[str, tuple[Pkg, str]] = {}
        replaced: dict[str, str] = {}
        failed: str | None = None
        queue: list[tuple[Pkg, str | None, str | None]] = []  # (package, pinned version, required by)
        for spec in specs:
            pname, version = parse_spec(spec)
            pkg = lookup(pname)
            if pkg is None:
                failed = spec
                break
            queue.append((pkg, version, None))
        seen: set[str] = set()
        i = 0
        while i < len(queue):
            pkg, version, by = queue[i]
            i += 1
            if pkg.name in seen:
                continue
            seen.add(pkg.name)
            have = env.packages.get(pkg.name)
            frm = f" (from {by})" if by else ""
            if have is not None and (version is None or version == have):
                resolve.append(f"Requirement already satisfied: {pkg.name} in {env.site_packages}{frm} ({have})\n")
                continue
            v = version or pkg.version
            if have is not None:
                replaced[pkg.name] = have
            resolve.append(f"Collecting {pkg.name if not version else pkg.name + '==' + version}{frm}\n")
            resolve.append(f"  Downloading {_wheel(pkg, v, cp)}.metadata ({_pip_size(0.002 + (_hash(pkg.name) % 80) / 1000)})\n")
            new[pkg.name] = (pkg, v)
            queue += [(CATALOG[d], None, pkg.name) for d in pkg.deps if d in CATALOG]
        if failed is not None:
            tl.duration = self.seconds * 0.35
            for j, line in enumerate(resolve):
                tl.at(0.8 * (j + 1) / (len(resolve) + 1), line)
            tl.at(1.0, f"ERROR: Could not find a version that satisfies the requirement {failed} (from versions: none)\n"
                  f"ERROR: No matching distribution found for {canonical(parse_spec(failed)[0])}\n")
            return self._start(tl, 1, None, pid=pid, tails=_PIP_TAILS)
        if not new:
            tl.duration = self.seconds * 0.3
            for j, line in enumerate(resolve):
                tl.at(0.9 * (j + 1) / len(resolve), line)
            tl.at(1.0, _ROOT_WARNING)
            return self._start(tl, 0, None, pid=pid, tails=_PIP_TAILS)
        total_mb = sum(p.wheel_mb for p, _ in new.values())
        tl.duration = self.seconds * min(1.3, 0.7 + total_mb / 3000)
        for j, line in enumerate(resolve):
            tl.at(0.05 + 0.3 * j / len(resolve), line)
        done = 0.0
        for pkg, v in new.values():
            done += pkg.wheel_mb
            size = _pip_size(pkg.wheel_mb)
            text = f"Downloading {_wheel(pkg, v, cp)} ({size})\n"
            if pkg.wheel_mb > 0.512:
                speed = 20 + (_hash(pkg.name + str(pid)) % 700) / 10
                amount = size.split()[0]
                unit = size.split()[1]
                text += f"   {'━' * 40} {amount}/{amount} {unit} {speed:.1f} MB/s eta 0:00:00\n"
            tl.at(0.36 + 0.48 * done / total_mb, text)
        order = _install_order(list(new))
        tl.at(0.88, f"Installing collected packages: {', '.join(order)}\n")
        for n in order:
            if n in replaced:
                tl.at(0.9, f"  Attempting uninstall: {n}\n    Found existing installation: {n} {replaced[n]}\n"
                      f"    Uninstalling {n}-{replaced[n]}:\n      Successfully uninstalled {n}-{replaced[n]}\n")
        tl.at(1.0, "Successfully installed " + " ".join(f"{n}-{new[n][1]}" for n in sorted(new, key=str.lower)) + "\n" + _ROOT_WARNING)

        def installed() -> None:
            env.add([p for p, _ in new.values()], {n: v for n, (_, v) in new.items()})

        return self._start(tl, 0, installed, pid=pid, tails=_PIP_TAILS)

    def _init(self, shells: list[str], reverse: bool, pid: int) -> CondaOp:
        tl = _Timeline(self.seconds * 0.15)
        lines = [f"{'no change':<14}{CONDA_ROOT}/{rel}\n" for rel in _INIT_FILES]
        changed = False
        for shell in shells:
            if shell not in ("bash", "zsh"):
                continue
            rc = f"/root/.{shell}rc"
            if shell == "bash" and self.initialized != (not reverse):
                changed = True
                lines.append(f"{'modified':<14}{rc}\n")
            else:
                lines.append(f"{'no change':<14}{rc}\n")
        for j, line in enumerate(lines):
            tl.at(0.9 * (j + 1) / len(lines), line)
        if changed:
            tl.at(1.0, "\n==> For changes to take effect, close and re-open your current shell. <==\n\n")
        else:
            tl.at(1.0, "No action taken.\n")

        def done() -> None:
            if changed:
                self.initialized = not reverse

        return self._start(tl, 0, done, pid=pid, tails={})


_BASE_LIBS = (  # what a python env on `defaults` brings besides python, pip, setuptools, wheel
    ("_libgcc_mutex", "0.1", "main"), ("_openmp_mutex", "5.1", "1_gnu"), ("bzip2", "1.0.8", "h5eee18b_6"),
    ("ca-certificates", "2024.9.24", "h06a4308_0"), ("ld_impl_linux-64", "2.40", "h12ee557_0"),
    ("libffi", "3.4.4", "h6a678d5_1"), ("libgcc-ng", "11.2.0", "h1234567_1"), ("libgomp", "11.2.0", "h1234567_1"),
    ("libstdcxx-ng", "11.2.0", "h1234567_1"), ("libuuid", "1.41.5", "h5eee18b_0"), ("ncurses", "6.4", "h6a678d5_0"),
    ("openssl", "3.0.15", "h5eee18b_0"), ("readline", "8.2", "h5eee18b_0"), ("sqlite", "3.45.3", "h5eee18b_0"),
    ("tk", "8.6.14", "h39e8969_0"), ("tzdata", "2024b", "h04d1e81_0"), ("xz", "5.4.6", "h5eee18b_1"),
    ("zlib", "1.2.13", "h5eee18b_1"),
)
_BASE_LIBS_BUILDS = tuple((n, b) for n, _, b in _BASE_LIBS)
_INIT_FILES = (
    "condabin/conda", "bin/conda", "bin/conda-env", "bin/activate", "bin/deactivate", "etc/profile.d/conda.sh",
    "etc/fish/conf.d/conda.fish", "shell/condabin/Conda.psm1", "shell/condabin/conda-hook.ps1",
    "lib/python3.12/site-packages/xontrib/conda.xsh", "etc/profile.d/conda.csh",
)


def _closure(pkgs: list[Pkg]) -> list[Pkg]:
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


def _install_order(names: list[str]) -> list[str]:
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


def _wheel(pkg: Pkg, version: str, cp: str) -> str:
    stem = f"{pkg.name.replace('-', '_')}-{version}"
    if pkg.kind == "cp":
        platform = "manylinux1_x86_64" if pkg.name == "torch" else "manylinux_2_17_x86_64.manylinux2014_x86_64"
        return f"{stem}-{cp}-{cp}-{platform}.whl"
    if pkg.kind == "nv":
        return f"{stem}-py3-none-manylinux1_x86_64.whl"
    return f"{stem}-py3-none-any.whl"


_FLAGS = {"-y": "yes", "--yes": "yes", "-q": "quiet", "--quiet": "quiet", "--json": "json", "-d": "dry_run",
          "--dry-run": "dry_run", "--all": "all", "--reverse": "reverse", "-v": "verbose", "--verbose": "verbose"}
_OPTS = {"-n": "name", "--name": "name", "-p": "prefix", "--prefix": "prefix", "-c": "channel", "--channel": "channel"}


def _parse(args: list[str]) -> tuple[set[str], dict[str, str], list[str]]:
    flags: set[str] = set()
    opts: dict[str, str] = {}
    pos: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        key, eq, value = a.partition("=")
        if a in _FLAGS:
            flags.add(_FLAGS[a])
        elif key in _OPTS and eq:
            opts[_OPTS[key]] = value
        elif a in _OPTS and i + 1 < len(args):
            i += 1
            opts[_OPTS[a]] = args[i]
        elif not a.startswith("-"):
            pos.append(a)
        i += 1
    return flags, opts, pos


# ---------------------------------------------------------------------------- the exec requests

_REDIRECT = re.compile(r"^[0-9]*(?:>>?|<)(?:&[0-9-]|/dev/null)?$|^[0-9]*>&[0-9-]$|^[0-9]*>/dev/null$")
_KILLABLE = killable_command("")


def _words(command: str) -> list[str] | None:
    try:
        return [w for w in shlex.split(command) if not _REDIRECT.match(w)]
    except ValueError:
        return None


def _signal_number(word: str) -> int:
    name = word.upper().removeprefix("SIG")
    return int(name) if name.isdigit() and int(name) < 65 else _SIGNALS.get(name, -1)


def _kill_one(words: list[str], conda: CondaSim) -> tuple[bool, str]:
    """One `kill` invocation: (success, stderr)."""
    signal = 15
    i = 1
    targets: list[str] = []
    while i < len(words):
        w = words[i]
        if w == "--":
            targets += words[i + 1 :]
            break
        if w == "-s" and i + 1 < len(words) and not targets:
            i += 1
            signal = _signal_number(words[i])
        elif w.startswith("-") and len(w) > 1 and not targets:
            signal = _signal_number(w[1:])
        else:
            targets.append(w)
        i += 1
    if signal < 0 or not targets:
        return False, "sh: 1: kill: invalid signal\n" if signal < 0 else "kill: usage: kill [-s sigspec | -n signum | -sigspec] pid\n"
    ok = True
    err = ""
    for t in targets:
        digits = t[1:] if t.startswith("-") else t
        if not digits.isdigit() or not conda.signal(int(digits), signal):
            ok = False
            err += "sh: 1: kill: No such process\n"
    return ok, err


_KILL_LINE = re.compile(r"^\s*kill\b[^;&|`$()<>]*(?:\|\|\s*kill\b[^;&|`$()<>]*)*(?:;\s*true\s*)?$")


def _kill_line(command: str, conda: CondaSim) -> Program | None:
    """`kill -s SIG -- -N 2>/dev/null || kill -s SIG N 2>/dev/null; true`, `kill -0 ...`."""
    if not _KILL_LINE.match(command.replace("2>/dev/null", "")):
        return None
    body, _, rest = command.partition(";")
    forced = rest.strip() == "true"
    errors = ""
    ok = False
    for alt in body.split("||"):
        words = _words(alt)
        if not words or words[0] != "kill":
            return None
        ok, err = _kill_one(words, conda)
        if "2>/dev/null" not in alt:
            errors += err
        if ok:
            break
    return Program(stderr=errors, status=0 if ok or forced else 1)


def plan_line(command: str, sim: InstanceSim, fallback: Callable[[str], Program]) -> Program | None:
    """The raw command line: Killable's wrapper (`echo "@gpu-tui-pid $$"; exec CMD`) around a
    conda or pip operation (or anything else `fallback` answers), and the kill commands."""
    conda: CondaSim = sim.jobs.conda
    if command.startswith(_KILLABLE):
        inner = command[len(_KILLABLE) :]
        pid = conda.new_pid()
        head = f"{PID_MARK}{pid}\n"
        argv = _words(inner)
        if argv:
            op, answer = conda.run(argv, pid)
            if op is not None:
                return conda.stream(op, head)
            if answer is not None:
                return _with_head(answer, head)
            if argv[0].startswith("/") and (argv[0].startswith(CONDA_ROOT + "/") and not _exists(argv[0], conda)):
                # gpu-tui's operations all end in 2>&1: the shell's complaint comes on stdout
                return Program(stdout=f"{head}sh: 1: exec: {argv[0]}: not found\n", status=127)
        return _with_head(fallback(inner), head)
    if command.lstrip().startswith("kill"):
        return _kill_line(command, conda)
    return None


def _exists(path: str, conda: CondaSim) -> bool:
    return path == CONDA_EXE or conda.env_of_python(path) is not None


def _with_head(program: Program, head: str) -> Program:
    if program.on_stdin is not None:
        return program
    out = program.stdout
    program.stdout = head.encode() + out if isinstance(out, bytes) else head + out
    return program


def plain(argv: list[str], sim: InstanceSim) -> Program | None:
    """An unwrapped `conda ...` or `PYTHON -m pip install ...` (no pid line)."""
    conda: CondaSim = sim.jobs.conda
    if argv[0] != CONDA_EXE and not (len(argv) >= 4 and argv[1:4] == ["-m", "pip", "install"]):
        return None
    pid = conda.new_pid()
    op, answer = conda.run(argv, pid)
    if op is not None:
        return conda.stream(op, "")
    return answer


_PY_LINE = re.compile(
    r'^printf "%s\\t" (?P<name>.+?); if \[ -x (?P<prefix>.+?)/bin/python \]; then (?P=prefix)/bin/python --version '
    r"2>&1 \| head -n 1; else echo; fi$"
)
_DU_LINE = re.compile(r'^printf "%s\\t" (?P<name>.+?); \((?P<du>.+)\) 2>/dev/null \| head -n 1 \| cut -f 1; true$')


def _lines(script: str) -> list[str]:
    return [line for line in script.splitlines() if line.strip()]


def _one_word(text: str) -> str | None:
    try:
        words = shlex.split(text)
    except ValueError:
        return None
    return words[0] if len(words) == 1 else None


def pythons_script(script: str, sim: InstanceSim) -> Program | None:
    """services/conda.env_pythons: `NAME<TAB>Python 3.x.y` per env line."""
    lines = _lines(script)
    matches = [_PY_LINE.match(line) for line in lines]
    if not lines or not all(matches):
        return None
    conda: CondaSim = sim.jobs.conda
    conda.advance()
    out = []
    for m in matches:
        assert m is not None
        name, prefix = _one_word(m["name"]), _one_word(m["prefix"])
        env = conda.env_at(prefix) if prefix else None
        version = f"Python {env.python}" if env is not None and env.python else ""
        out.append(f"{name or ''}\t{version}\n")
    return Program(stdout="".join(out))


def sizes_script(script: str, sim: InstanceSim) -> Program | None:
    """services/conda.env_sizes: `NAME<TAB>KIB` per env line (`du -sk`)."""
    lines = _lines(script)
    matches = [_DU_LINE.match(line) for line in lines]
    if not lines or not all(matches) or "du -sk" not in script:
        return None
    conda: CondaSim = sim.jobs.conda
    conda.advance()
    out = []
    for m in matches:
        assert m is not None
        first = _words(m["du"].split("||")[0]) or []
        kib = None
        if len(first) >= 3 and first[:2] == ["du", "-sk"]:
            exclude = any(w.startswith("--exclude=") for w in first)
            kib = conda.du_kib(first[-1], exclude_envs=exclude)
        out.append(f"{_one_word(m['name']) or ''}\t{'' if kib is None else kib}\n")
    return Program(stdout="".join(out))


def module_probe(python: str, code: str, sim: InstanceSim) -> Program | None:
    """`PYTHON -c <module probe>` where PYTHON is a conda env's: the env's own answer when it
    lacks the module (or the python is not there); None to let envprobe answer as for a box
    with torch."""
    if not python.startswith(CONDA_ROOT + "/"):
        return None
    conda: CondaSim = sim.jobs.conda
    conda.advance()
    env = conda.env_of_python(python)
    if env is None or env.python is None:
        return Program(stdout=f"sh: 1: {python}: not found\n", status=127)  # gpu-tui sends it with 2>&1
    if "import torch" in code and "torch" not in env.packages:
        return Program(stdout=json.dumps({"error": "ModuleNotFoundError: No module named 'torch'"}) + "\n")
    paddle = next((n for n in env.packages if n.startswith("paddlepaddle")), None)
    if "find_spec('paddle')" in code and paddle is not None:
        answer = {"version": env.packages[paddle], "cuda_available": paddle.endswith("-gpu")}
        return Program(stdout=json.dumps(answer) + "\n")
    return None
