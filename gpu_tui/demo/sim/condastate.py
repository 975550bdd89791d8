"""The sshd tier's conda (sim/conda.py): its state, its install on disk (envs, conda-meta/history,
environments.txt), its output layer (`Io`); condaargs.py holds its argument parser. ``conda.main`` runs a call
with an `Io` (the install's root, its state dir, where it writes, reads and waits), one per
thread: the fake's is its own process's, the demo gives each operation its own
(demo/condarun.py). tests/sshd.py builds installs with ``make_prefix`` and reads them with
``read_packages``.
"""

from __future__ import annotations

import os
import sys
import threading
import time

from . import condatext as ct
from .condatext import BASE_PYTHON, PLATFORM, PYTHONS

TYPE_CHECKING = False  # typing costs a fake ~30 ms a start: annotations only
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    Seq = Sequence[str]
    Opts = dict[str, Any]

DEFAULT_VERSION = ct.VERSION
SOLVER_UA = "solver/libmamba conda-libmamba-solver/24.9.0 libmambapy/1.5.8"
DEFAULT_CHANNELS = list(ct.CHANNEL_URLS)
KNOWN, PYTHON_DEPS, DEPS = ct.KNOWN, ct.PYTHON_DEPS, ct.DEPS
BASE_PACKAGES = ("conda", "requests")
NAME_FORBIDDEN = ("/", " ", ":", "#")


class CondaError(Exception):
    """Printed like conda's exception handler does; ``name`` is the exception class name."""

    def __init__(self, message: str, name: str = "CondaError", rc: int = 1, **extra: Any) -> None:
        Exception.__init__(self, message)
        self.message = message
        self.name = name
        self.rc = rc
        self.extra = extra


class Usage(Exception):
    """An argparse error: ``usage: ...`` / ``conda: error: ...`` on stderr, exit 2."""

    def __init__(self, message: str, usage: str = "usage: conda [-h] [-v] [--no-plugins] [-V] COMMAND ...") -> None:
        Exception.__init__(self, message)
        self.usage = usage


# ---------------------------------------------------------------------------------- state


class Cancelled(BaseException):
    """Raised in a run whose `Io` was cancelled (a signal): it stops before the env changes."""


class Io:
    """One call's install (`root`, `state_dir`) and its I/O: the process's own stdout, stderr,
    stdin, environment and HOME; `pause` is the transaction's wait (the `delay` state)."""

    def __init__(self, root: str = "", state_dir: str | None = None) -> None:
        self.root, self.state_dir = root, state_dir

    def write(self, text: str) -> None:
        sys.stdout.write(text)

    def error(self, text: str) -> None:
        flush()
        sys.stderr.write(text)
        sys.stderr.flush()

    def flush(self) -> None:
        sys.stdout.flush()

    def readline(self) -> str:
        return sys.stdin.readline() if sys.stdin else ""

    def getenv(self, name: str) -> str | None:
        return os.environ.get(name)

    def home(self) -> str:
        return os.path.expanduser("~")

    def pause(self) -> None:
        d = delay()
        end = time.monotonic() + d
        while d > 0 and time.monotonic() < end:
            time.sleep(min(0.1, end - time.monotonic()))


_DEFAULT_IO = Io()
_local = threading.local()


def io() -> Io:
    """This thread's run (set by ``conda.main``), else the process's own."""
    current: Io = getattr(_local, "io", None) or _DEFAULT_IO
    return current


def set_io(value: Io | None) -> None:
    _local.io = value


def root() -> str:
    """The install's root prefix."""
    return io().root


def write(text: str) -> None:
    io().write(text)


def err(text: str) -> None:
    io().error(text)


def state(name: str, default: str = "") -> str:
    try:
        with open(os.path.join(io().state_dir or "/nonexistent", name), encoding="utf-8") as f:
            value = f.read().strip()
    except OSError:
        return default
    return value if value else default


def conda_version() -> str:
    return state("version", DEFAULT_VERSION)


def version_tuple(text: str) -> tuple[int, ...]:
    out = []
    for part in text.split("."):
        digits = ""
        for ch in part:
            if not ch.isdigit():
                break
            digits += ch
        out.append(int(digits or 0))
    return tuple(out)


def delay() -> float:
    try:
        return max(0.0, float(state("delay", "0")))
    except ValueError:
        return 0.0


def unavailable(name: str) -> bool:
    if name.startswith("no-such-"):
        return True
    return name in (state("unavailable", "") or "").split()


def home() -> str:
    return io().home()


def base_name() -> str:
    return "root" if version_tuple(conda_version()) < (4, 4) else "base"


def envs_dirs() -> list[str]:
    return [os.path.join(root(), "envs"), os.path.join(home(), ".conda", "envs")]


def environments_txt() -> str:
    return os.path.join(home(), ".conda", "environments.txt")


def is_env(prefix: str) -> bool:
    return os.path.isfile(os.path.join(prefix, "conda-meta", "history"))


def same(a: str, b: str) -> bool:
    return os.path.normpath(a) == os.path.normpath(b)


def all_prefixes() -> list[str]:
    found = {root()}
    try:
        with open(environments_txt(), encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if line and is_env(line):
                    found.add(os.path.normpath(line))
    except OSError:
        pass
    for d in envs_dirs():
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for n in names:
            p = os.path.join(d, n)
            if is_env(p):
                found.add(p)
    return sorted(found)


def env_name(prefix: str) -> str:
    """What conda shows for a prefix: base, the dir name inside an envs dir, else ''."""
    if same(prefix, root()):
        return base_name()
    if any(same(os.path.dirname(prefix), d) for d in envs_dirs()):
        return os.path.basename(prefix)
    return ""


def active_prefix() -> str | None:
    return io().getenv("CONDA_PREFIX") or None


def real_python() -> str:
    link = os.path.join(root(), "bin", "python")
    try:
        target = os.readlink(link)
        return target if os.path.isabs(target) else os.path.join(root(), "bin", target)
    except OSError:
        return sys.executable


def locate(name: str | None = None, prefix: str | None = None, must_exist: bool = False) -> str:
    """conda's determine_target_prefix: -n NAME / -p PATH / the active env / base."""
    if name is not None and prefix is not None:
        raise Usage("argument -p/--prefix: not allowed with argument -n/--name")
    if name is not None:
        if not name.strip():
            raise CondaError("Environment name cannot be empty", "CondaValueError")
        if name in ("base", "root"):
            target = root()
        elif "/" in name:
            raise CondaValueError(f"'/' not allowed in environment name: {name}")
        else:
            found = [os.path.join(d, name) for d in envs_dirs() if os.path.isdir(os.path.join(d, name))]
            target = found[0] if found else os.path.join(envs_dirs()[0], name)
    elif prefix is not None:
        target = os.path.abspath(os.path.expanduser(prefix))
    else:
        target = active_prefix() or root()
    if must_exist:
        require_env(target)
    return target


def require_env(prefix: str) -> None:
    if not os.path.isdir(prefix):
        raise CondaError(ct.not_an_env(prefix), "EnvironmentLocationNotFound", location=prefix)
    if not is_env(prefix):
        raise CondaError(
            f"The target directory exists, but it is not a conda environment.\n"
            f"Use 'conda create' to convert the directory to a conda environment.\n"
            f"  target directory: {prefix}",
            "DirectoryNotACondaEnvironmentError",
        )


def CondaValueError(message: str) -> CondaError:
    return CondaError(message, "CondaValueError")


# -------------------------------------------------------------------------- packages / history


def build_string(name: str, version: str) -> str:
    h = 0
    for ch in name + "-" + version:
        h = (h * 131 + ord(ch)) & 0xFFFFFFF
    return f"h{h:07x}_0"


def parse_spec(spec: str) -> tuple[str | None, str, str]:
    """'numpy', 'numpy=1.26', 'numpy==1.26.4', 'numpy>=1.2', 'conda-forge::numpy' ->
    (channel or None, name, version constraint or '')."""
    channel = None
    if "::" in spec:
        channel, spec = spec.split("::", 1)
    spec = spec.strip()
    cut = len(spec)
    for i, ch in enumerate(spec):
        if ch in "=<>! ":
            cut = i
            break
    name, constraint = spec[:cut].strip().lower(), spec[cut:].strip()
    if not name or any(c in name for c in "/\\'\"$`;&|"):
        raise CondaError(f"Invalid spec for 'conda install': {spec}", "InvalidMatchSpec")
    return channel, name, constraint


def resolve_version(name: str, constraint: str) -> str:
    default = conda_version() if name == "conda" else (BASE_PYTHON if name == "python" else KNOWN.get(name) or "1.0.0")
    c = constraint.lstrip("=").strip()
    if not constraint or constraint[0] in "<>!" or not c:
        return default
    c = c.rstrip("*").rstrip(".")
    if name == "python" and c in PYTHONS:
        return PYTHONS[c]
    if default.startswith(c + ".") or default == c:
        return default
    return c if c.count(".") >= 2 else c + ".0"


def deps_of(names: Seq) -> list[str]:
    """What `names` bring with them, recursively, not counting `names`."""
    out: list[str] = []
    todo = list(names)
    while todo:
        for dep in DEPS.get(todo.pop(), ()):
            if dep not in out and dep not in names:
                out.append(dep)
                todo.append(dep)
    return out


def channel_of(cli_channels: list[str], spec_channel: str | None) -> str:
    ch = spec_channel or (cli_channels[0] if cli_channels else "defaults")
    return "defaults" if ch in ("defaults", "pkgs/main") else ch


def dist_line(channel: str, name: str, version: str) -> str:
    return f"{channel}/{PLATFORM}::{name}-{version}-{build_string(name, version)}"


def read_packages(prefix: str) -> dict[str, tuple[str, str, str]]:
    """{name: (version, build, channel)} replayed from conda-meta/history."""
    pkgs: dict[str, tuple[str, str, str]] = {}
    try:
        with open(os.path.join(prefix, "conda-meta", "history"), encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return pkgs
    for line in lines:
        if not line or line[0] not in "+-":
            continue
        chan_plat, _, dist = line[1:].rpartition("::")
        try:
            name, version, build = dist.rsplit("-", 2)
        except ValueError:
            continue
        if line[0] == "+":
            pkgs[name] = (version, build, chan_plat.rsplit("/", 1)[0] or "defaults")
        else:
            pkgs.pop(name, None)
    return pkgs


def history_entry(
    argv: list[str],
    removed: Seq = (),
    added: Seq = (),
    specs_kind: str = "update",
    specs: Seq = (),
    conda_exe: str | None = None,
) -> str:
    lines = [
        time.strftime("==> %Y-%m-%d %H:%M:%S <=="),
        "# cmd: " + " ".join([conda_exe or os.path.join(root(), "bin", "conda")] + list(argv)),
        "# conda version: " + conda_version(),
    ]
    lines += ["-" + d for d in removed]
    lines += ["+" + d for d in added]
    if specs:
        lines.append(f"# {specs_kind} specs: {list(specs)!r}")
    return "\n".join(lines) + "\n"


def link_python(prefix: str, python: str | None = None) -> None:
    """bin/python -> a real interpreter, bin/python3 -> python (what conda run / PATH find)."""
    b = os.path.join(prefix, "bin")
    os.makedirs(b, exist_ok=True)
    for name, target in (("python", python or real_python()), ("python3", "python")):
        p = os.path.join(b, name)
        if not os.path.lexists(p):
            os.symlink(target, p)


def make_prefix(
    prefix: str,
    specs: Seq,
    argv: Seq = ("create",),
    python: str | None = None,
    channel: str = "defaults",
    conda_exe: str | None = None,
) -> list[str]:
    """Create an environment on disk: conda-meta/history (+ bin/python if python is in specs).

    Used by ``conda create`` and by tests/sshd.py (default envs; python = the interpreter the
    env's bin/python should point at, conda_exe = the conda that the history says ran)."""
    os.makedirs(os.path.join(prefix, "conda-meta"), exist_ok=True)
    added, want = [], {}
    for spec in specs:
        ch, name, constraint = parse_spec(spec)
        want[name] = (channel_of([channel], ch), resolve_version(name, constraint))
    for dep in deps_of(list(want)):
        want.setdefault(dep, ("defaults", KNOWN[dep]))
    if "python" in want:
        link_python(prefix, python)
    for name in sorted(want):
        added.append(dist_line(want[name][0], name, want[name][1]))
    with open(os.path.join(prefix, "conda-meta", "history"), "a", encoding="utf-8") as f:
        f.write(history_entry(list(argv), added=added, specs=list(specs), conda_exe=conda_exe))
    return added


# ------------------------------------------------------------------------------- output


def out(text: str = "") -> None:
    write(text + "\n")


def dump_json(obj: object) -> None:
    import json

    write(json.dumps(obj, indent=2, sort_keys=True, separators=(",", ": ")) + "\n")


def flush() -> None:
    try:
        io().flush()
    except BrokenPipeError:
        pass


def confirm(message: str, default: str = "yes", assume_yes: object = False, dry_run: object = False) -> None:
    """conda's confirm_yn: --yes passes; otherwise read a line (EOF / empty = the default)."""
    if dry_run:
        raise CondaError("Dry run. Exiting.", "DryRunExit", rc=0)
    if assume_yes:
        return
    options = "/".join(f"[{c[0]}]" if c == default else c[0] for c in ("yes", "no"))
    choices = {"yes": "yes", "y": "yes", "no": "no", "n": "no", "": default}
    while True:
        write(f"{message} ({options})? ")
        flush()
        answer = io().readline().strip().lower()
        if answer in choices:
            out()
            flush()
            if choices[answer] == "no":
                raise CondaError("Exiting.", "CondaSystemExit")
            return
        out(f"Invalid choice: {answer}")


def print_envs(prefixes: list[str]) -> None:
    active = active_prefix()
    write(ct.env_list([(env_name(p), bool(active and same(p, active)), p) for p in prefixes]))


def print_plan(
    prefix: str,
    specs: Seq,
    new: Seq = (),
    updated: Seq = (),
    removed: Seq = (),
    cli_channels: Seq = (),
    solve: bool = True,
) -> None:
    if solve:
        write(ct.channels([c for c in cli_channels if c] or ["defaults"]) + ct.METADATA + ct.SOLVED)

    def row(d: str) -> str:
        chan_plat, _, dist = d.rpartition("::")
        chan = "pkgs/main" + chan_plat[len("defaults") :] if chan_plat.startswith("defaults") else chan_plat
        return f"  {dist.rsplit('-', 2)[0]:<18} {chan}::{dist}"

    groups = (
        ("NEW packages will be INSTALLED", new),
        ("packages will be UPDATED", updated),
        ("packages will be REMOVED", removed),
    )
    write(ct.plan(prefix, specs, [(title, [row(d) for d in dists]) for title, dists in groups]))


def run_transaction() -> None:
    write(ct.EXTRACTING)
    flush()
    io().pause()
    write("\n" + ct.PREPARED + ct.VERIFIED + ct.EXECUTED)
