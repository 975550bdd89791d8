"""The demo's conda: one simulated miniconda install per instance (`CondaSim`). Nothing is
executed. Its packages are demo/condacatalog.py's, its operations demo/condaops.py's, how they
print demo/condaoutput.py's; demo/condascripts.py answers what the conda manager sends
(services/conda.py, services/killable.py) from it.

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
"""

from __future__ import annotations

import json
import posixpath
import random
import re
import time
from collections.abc import Callable

from gpu_tui.demo.condacatalog import (
    CATALOG,
    CONDA_EXE,
    CONDA_ROOT,
    CONDA_VERSION,
    KIB_PER_GIB,
    KIB_PER_MIB,
    closure,
)
from gpu_tui.demo.condaops import CondaOperations, Env
from gpu_tui.demo.condaoutput import CondaOp
from gpu_tui.demo.program import Program
from gpu_tui.demo.sim import condastate as simconda
from gpu_tui.demo.sim import condatext

__all__ = [
    "CondaSim",
    "CONDA_SECONDS",
    "OP_TICK",
    "START_ENVS",
]

CONDA_SECONDS = 6.0
"""How long (real seconds) a `conda create` takes in the demo; the other operations scale from it."""
OP_TICK = 0.1
"""How often a running operation's stream is checked for new output (and for its end)."""
_PKGS_CACHE_KIB = int(2.4 * KIB_PER_GIB)  # what `du` of the whole root adds besides base and the envs
_ENV_PACKAGES = {
    # base has torch too: the demo's env check finds it in conda base, as on AutoDL's images
    "base": ("pip", "setuptools", "wheel", "requests", "tqdm", "torch"),
    "llm": ("pip", "setuptools", "wheel", "torch", "torchvision", "transformers", "accelerate", "datasets", "einops"),
    "py311": ("pip", "setuptools", "wheel"),
}
START_ENVS = (
    ("base", "3.12.7", 3.1 * KIB_PER_GIB),
    ("llm", "3.11.10", 9.8 * KIB_PER_GIB),
    ("py311", "3.11.10", 180 * KIB_PER_MIB),
)
"""The envs when the fleet starts: name, python, size in KiB (base without envs/ and pkgs/)."""
_FLAGS = {"--all": "all", "--reverse": "reverse"}


class CondaSim(CondaOperations):
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
            for pkg in closure([CATALOG[n] for n in _ENV_PACKAGES[name]]):
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
        if "-h" in args or "--help" in args:
            return None, _not_simulated(args)
        try:  # the sshd tier's conda parser (it prints nothing itself but for -h)
            opts, pos = simconda.parse(args[2:] if args[:2] == ["env", "remove"] else args[1:], "", flags=_FLAGS)
        except simconda.Usage as e:
            return None, Program(stderr=f"usage: conda {args[0]} ...\nconda: error: {e}\n", status=2)
        if args[:1] == ["create"]:
            return self._create(opts.get("name"), pos, pid), None
        if args[:2] == ["env", "remove"] or (args[:1] == ["remove"] and opts.get("all")):
            return self._remove(opts.get("name"), pid), None
        if args[:1] == ["install"]:
            return self._conda_install(opts.get("name"), pos, pid), None
        if args[:1] == ["init"]:
            return self._init(pos or ["bash"], bool(opts.get("reverse")), pid), None
        return None, _not_simulated(args)

    def _env_list(self, *, json_out: bool) -> Program:
        prefixes = self.prefixes()
        if json_out:
            return Program(stdout=json.dumps({"envs": prefixes}, indent=2) + "\n")
        rows = [("base", True, CONDA_ROOT)] + [(p.rsplit("/", 1)[-1], False, p) for p in prefixes[1:]]
        return Program(stdout=condatext.env_list(rows))


def _not_simulated(args: list[str]) -> Program:
    text = f"conda (gpu-tui demo): `conda {' '.join(args)}` is not simulated; try `conda env list`\n"
    return Program(stderr=text, status=2)
