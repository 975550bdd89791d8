"""The operations of the demo's conda (demo/condasim.py), and the envs they change: `conda
create`, `conda env remove`, `conda install`, `python -m pip install` and `conda init`. Nothing
is executed.

Each operation lays out on a Timeline (demo/condaoutput.py) what conda 24.x or pip 24.x prints,
over a duration scaled from the install's `seconds`, and starts it as a `CondaOp` with a fake
pid; it changes the env table only when it completes (a signal first leaves it unchanged).
`CondaOperations` is CondaSim's base class: the operations work on CondaSim's envs, clock, RNG
and process table. `Env` is one environment: its prefix, python, packages and size.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from gpu_tui.demo.condacatalog import (
    BASE_LIBS,
    CATALOG,
    CONDA_ROOT,
    KIB_PER_MIB,
    Pkg,
    build_string,
    canonical,
    closure,
    install_order,
    lookup,
    parse_spec,
    pip_size,
    python_full,
    stable_hash,
    wheel_name,
)
from gpu_tui.demo.condaoutput import (
    CONDA_TAILS,
    PIP_ROOT_WARNING,
    PIP_TAILS,
    CondaOp,
    Timeline,
    package_plan,
    write_channels,
    write_not_found,
    write_transaction,
)
from gpu_tui.demo.sim import condatext as ct

__all__ = ["CondaOperations", "Env"]

_NEW_ENV_KIB = 120 * KIB_PER_MIB
_MAX_OPS = 200  # ended operations kept for `kill -0` (the oldest are forgotten)


@dataclass(slots=True)
class Env:
    """One env of the install: where it is, its python, its packages, its size (`du -sk`)."""

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
                self.added_kib += int(p.installed_mib * KIB_PER_MIB)
            self.packages[p.name] = (versions or {}).get(p.name, p.version)


class CondaOperations:
    """What each operation prints and changes; a base class of CondaSim (demo/condasim.py),
    which sets these attributes."""

    envs: dict[str, Env]
    ops: dict[int, CondaOp]
    """Running and recently ended operations, by pid."""
    seconds: float
    """How long a `conda create` takes (real seconds); the other operations scale from it."""
    rng: random.Random
    now: Callable[[], float]
    initialized: bool

    def _start(
        self,
        tl: Timeline,
        status: int,
        on_done: Callable[[], None] | None,
        *,
        pid: int,
        tails: dict[int, str] | None = None,
    ) -> CondaOp:
        if len(self.ops) >= _MAX_OPS:
            for old in [p for p, o in self.ops.items() if not o.running][: len(self.ops) // 2]:
                del self.ops[old]
        op = CondaOp(
            pid, self.now(), tl.events, tl.duration, status, on_done, tails=CONDA_TAILS if tails is None else tails
        )
        self.ops[pid] = op
        return op

    def _fail_now(self, name: str, message: str, pid: int) -> CondaOp:
        """conda's exception `name` (its `message`), printed at once."""
        tl = Timeline(self.seconds * 0.08)
        tl.at(1.0, ct.error(name, message))
        return self._start(tl, 1, None, pid=pid)

    def _create(self, name: str | None, specs: list[str], pid: int) -> CondaOp:
        if not name:
            return self._fail_now("CondaValueError", ct.need_target("create"), pid)
        prefix = f"{CONDA_ROOT}/envs/{name}"
        tl = Timeline(self.seconds)
        if name in ("base", "root"):
            return self._fail_now("CondaValueError", ct.BASE_TARGET, pid)
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
        write_channels(tl, solve_until=0.3)
        if missing:
            tl.duration = self.seconds * 0.35
            write_not_found(tl, missing)
            return self._start(tl, 1, None, pid=pid)
        py_minor = ".".join(python.split(".")[:2]) if python else None
        base_libs = [(Pkg(n, v, 0.0, 0.0, "c", ()), v) for n, v, _ in BASE_LIBS]
        py_pkgs: list[tuple[Pkg, str]] = []
        if python:
            py_pkgs = [(Pkg("python", python, 30.7, 0.0, "c", ()), python)]
            py_pkgs += [(CATALOG[n], CATALOG[n].version) for n in ("pip", "setuptools", "wheel")]
        extra = [(p, p.version) for p in closure([p for p, _ in wanted]) if p.name not in {w.name for w, _ in wanted}]
        downloads = py_pkgs + wanted + extra
        tl.at(0.3, ct.SOLVED)
        tl.at(0.32, package_plan(prefix, specs, base_libs + downloads, py_minor, downloads=downloads))
        write_transaction(tl, downloads, py_minor, 0.36, 0.86)
        tl.at(1.0, ct.EXECUTED + ct.activate_hint(name))

        def created() -> None:
            size_kib = int(_NEW_ENV_KIB * self.rng.uniform(0.97, 1.03)) if python else 4 * KIB_PER_MIB
            env = Env(name, prefix, python, size_kib)
            if python:
                env.packages.update({n: CATALOG[n].version for n in ("pip", "setuptools", "wheel")})
            env.add([p for p, _ in wanted] + [p for p, _ in extra], {p.name: v for p, v in wanted})
            self.envs[name] = env

        return self._start(tl, 0, created, pid=pid)

    def _remove(self, name: str | None, pid: int) -> CondaOp:
        if not name:
            return self._fail_now("CondaValueError", ct.need_target("remove"), pid)
        if name in ("base", "root"):
            return self._fail_now("CondaEnvironmentError", ct.REMOVE_ROOT, pid)
        env = self.envs.get(name)
        if env is None:
            return self._fail_now("EnvironmentLocationNotFound", ct.not_an_env(f"{CONDA_ROOT}/envs/{name}"), pid)
        tl = Timeline(self.seconds * 0.6)
        tl.at(0.0, f"\nRemove all packages in environment {env.prefix}:\n\n")
        dists = [(Pkg(n, v, 0.0, 0.0, "c", ()), v) for n, v, _ in BASE_LIBS]
        if env.python:
            dists.append((Pkg("python", env.python, 0.0, 0.0, "c", ()), env.python))
        dists += [(CATALOG.get(n) or Pkg(n, v, 0.0, 0.0, "py", ()), v) for n, v in env.packages.items()]
        dists.sort(key=lambda d: d[0].name)
        removed = [f"  {p.name}-{v}-{build_string(p, v, env.py_minor)}" for p, v in dists]
        tl.at(0.15, ct.plan(env.prefix, [], [("packages will be REMOVED", removed)]))
        tl.at(0.3, ct.EXTRACTING + "\n")
        tl.at(0.5, ct.PREPARED)
        tl.at(0.65, ct.VERIFIED)
        tl.at(1.0, ct.EXECUTED)

        def removed_env() -> None:
            if self.envs.get(name) is env:
                del self.envs[name]

        return self._start(tl, 0, removed_env, pid=pid)

    def _conda_install(self, name: str | None, specs: list[str], pid: int) -> CondaOp:
        env = self.envs.get(name or "base")
        if env is None:
            return self._fail_now("EnvironmentLocationNotFound", ct.not_an_env(f"{CONDA_ROOT}/envs/{name}"), pid)
        if not specs:
            return self._fail_now("CondaValueError", ct.NO_SPECS, pid)
        tl = Timeline(self.seconds * 0.85)
        write_channels(tl, solve_until=0.35)
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
            write_not_found(tl, missing)
            return self._start(tl, 1, None, pid=pid)
        if not wanted:
            tl.duration = self.seconds * 0.4
            tl.at(1.0, ct.SOLVED + ct.ALREADY_INSTALLED)
            return self._start(tl, 0, None, pid=pid)
        present = set(env.packages) | {w.name for w, _ in wanted}
        extra = [(p, p.version) for p in closure([p for p, _ in wanted]) if p.name not in present]
        downloads = wanted + extra
        tl.at(0.35, ct.SOLVED)
        tl.at(0.37, package_plan(env.prefix, specs, downloads, env.py_minor, downloads=downloads))
        write_transaction(tl, downloads, env.py_minor, 0.4, 0.86)
        tl.at(1.0, ct.EXECUTED)

        def installed() -> None:
            env.add([p for p, _ in downloads], {p.name: v for p, v in wanted})

        return self._start(tl, 0, installed, pid=pid)

    def _pip_install(self, env: Env, args: list[str], pid: int) -> CondaOp:
        specs = [a for a in args if not a.startswith("-")]
        tl = Timeline(self.seconds)
        if not specs:
            tl.duration = self.seconds * 0.1
            tl.at(1.0, "ERROR: You must give at least one requirement to install (see \"pip help install\")\n")
            return self._start(tl, 1, None, pid=pid, tails=PIP_TAILS)
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
            metadata_mb = 0.002 + (stable_hash(pkg.name) % 80) / 1000
            resolve.append(f"  Downloading {wheel_name(pkg, v, cp)}.metadata ({pip_size(metadata_mb)})\n")
            new[pkg.name] = (pkg, v)
            queue += [(CATALOG[d], None, pkg.name) for d in pkg.deps if d in CATALOG]
        if failed is not None:
            tl.duration = self.seconds * 0.35
            for j, line in enumerate(resolve):
                tl.at(0.8 * (j + 1) / (len(resolve) + 1), line)
            tl.at(1.0, f"ERROR: Could not find a version that satisfies the requirement {failed} "
                  "(from versions: none)\n"
                  f"ERROR: No matching distribution found for {canonical(parse_spec(failed)[0])}\n")
            return self._start(tl, 1, None, pid=pid, tails=PIP_TAILS)
        if not new:
            tl.duration = self.seconds * 0.3
            for j, line in enumerate(resolve):
                tl.at(0.9 * (j + 1) / len(resolve), line)
            tl.at(1.0, PIP_ROOT_WARNING)
            return self._start(tl, 0, None, pid=pid, tails=PIP_TAILS)
        total_mb = sum(p.wheel_mb for p, _ in new.values())
        tl.duration = self.seconds * min(1.3, 0.7 + total_mb / 3000)
        for j, line in enumerate(resolve):
            tl.at(0.05 + 0.3 * j / len(resolve), line)
        done = 0.0
        for pkg, v in new.values():
            done += pkg.wheel_mb
            size = pip_size(pkg.wheel_mb)
            text = f"Downloading {wheel_name(pkg, v, cp)} ({size})\n"
            if pkg.wheel_mb > 0.512:
                speed = 20 + (stable_hash(pkg.name + str(pid)) % 700) / 10
                amount = size.split()[0]
                unit = size.split()[1]
                text += f"   {'━' * 40} {amount}/{amount} {unit} {speed:.1f} MB/s eta 0:00:00\n"
            tl.at(0.36 + 0.48 * done / total_mb, text)
        order = install_order(list(new))
        tl.at(0.88, f"Installing collected packages: {', '.join(order)}\n")
        for n in order:
            if n in replaced:
                tl.at(0.9, f"  Attempting uninstall: {n}\n    Found existing installation: {n} {replaced[n]}\n"
                      f"    Uninstalling {n}-{replaced[n]}:\n      Successfully uninstalled {n}-{replaced[n]}\n")
        versions = " ".join(f"{n}-{new[n][1]}" for n in sorted(new, key=str.lower))
        tl.at(1.0, "Successfully installed " + versions + "\n" + PIP_ROOT_WARNING)

        def installed() -> None:
            env.add([p for p, _ in new.values()], {n: v for n, (_, v) in new.items()})

        return self._start(tl, 0, installed, pid=pid, tails=PIP_TAILS)

    def _init(self, shells: list[str], reverse: bool, pid: int) -> CondaOp:
        tl = Timeline(self.seconds * 0.15)
        # only ~/.bashrc holds the block (as envprobe reports): it changes when `reverse` is what is there
        rcs = [(f"/root/.{s}rc", s == "bash" and self.initialized == reverse) for s in shells if s in ("bash", "zsh")]
        changed = any(c for _, c in rcs)
        *lines, tail = ct.init_report(CONDA_ROOT, rcs)
        for j, line in enumerate(lines):
            tl.at(0.9 * (j + 1) / len(lines), line)
        tl.at(1.0, tail)

        def done() -> None:
            if changed:
                self.initialized = not reverse

        return self._start(tl, 0, done, pid=pid, tails={})
