"""The simulated conda (sim/conda.py): its state, its install on disk (envs, conda-meta/history)
and its output layer (`Io`). ``conda.main`` runs a call with an `Io` (the
install's root, its state dir, where it writes, reads and waits), one per thread: the fake's is
its own process's, the demo gives each operation its own (demo/condarun.py). tests/sshd.py
builds installs with ``make_prefix`` and reads them with ``read_packages``.
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

    Seq = Sequence[str]

KNOWN, DEPS = ct.KNOWN, ct.DEPS


class CondaError(Exception):
    """Printed like conda's exception handler does; ``name`` is the exception class name."""

    def __init__(self, message: str, name: str = "CondaError") -> None:
        Exception.__init__(self, message)
        self.message, self.name = message, name


class Usage(Exception):
    """An argparse error, as argparse prints it (stderr, exit 2)."""


class Cancelled(BaseException):
    """Raised in a run whose `Io` was cancelled (a signal): it stops before the env changes."""


class Io:
    """One call's install (`root`, `state_dir`) and its I/O: the process's own stdout, stderr,
    stdin and HOME; `pause` is the transaction's wait (the `delay` state)."""

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

    def home(self) -> str:
        return os.path.expanduser("~")

    def pause(self) -> None:
        end = time.monotonic() + delay()
        while time.monotonic() < end:
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
            return f.read().strip() or default
    except OSError:
        return default


def conda_version() -> str:
    return state("version", ct.VERSION)


def delay() -> float:
    try:
        return max(0.0, float(state("delay", "0")))
    except ValueError:
        return 0.0


def unavailable(name: str) -> bool:
    return name.startswith("no-such-") or name in state("unavailable").split()


def home() -> str:
    return io().home()


def envs_dir() -> str:
    return os.path.join(root(), "envs")


def is_env(prefix: str) -> bool:
    return os.path.isfile(os.path.join(prefix, "conda-meta", "history"))


def same(a: str, b: str) -> bool:
    return os.path.normpath(a) == os.path.normpath(b)


def all_prefixes() -> list[str]:
    try:
        names = os.listdir(envs_dir())
    except OSError:
        names = []
    return [root()] + sorted(os.path.join(envs_dir(), n) for n in names if is_env(os.path.join(envs_dir(), n)))


def env_name(prefix: str) -> str:
    """What conda shows for a prefix: base, the dir name inside the envs dir, else ''."""
    if same(prefix, root()):
        return "base"
    return os.path.basename(prefix) if same(os.path.dirname(prefix), envs_dir()) else ""


def locate(name: str | None, must_exist: bool = False) -> str:
    """conda's determine_target_prefix: -n NAME, else base (no env is active over SSH)."""
    if name is not None and ("/" in name or not name.strip()):
        raise CondaError(f"Invalid environment name: {name!r}", "CondaValueError")
    target = root() if name in (None, "base", "root") else os.path.join(envs_dir(), name)
    if must_exist and not os.path.isdir(target):
        raise CondaError(ct.not_an_env(target), "EnvironmentLocationNotFound")
    if must_exist and not is_env(target):
        raise CondaError(ct.NOT_AN_ENV_DIR + target, "DirectoryNotACondaEnvironmentError")
    return target


# -------------------------------------------------------------------------- packages / history


def build_string(name: str, version: str) -> str:
    h = 0
    for ch in name + "-" + version:
        h = (h * 131 + ord(ch)) & 0xFFFFFFF
    return f"h{h:07x}_0"


def parse_spec(spec: str) -> tuple[str, str]:
    """'numpy', 'numpy=1.26', 'numpy==1.26.4', 'numpy>=1.2' -> (name, version constraint or '')."""
    spec = spec.strip()
    cut = next((i for i, ch in enumerate(spec) if ch in "=<>! "), len(spec))
    name, constraint = spec[:cut].strip().lower(), spec[cut:].strip()
    if not name or any(c in name for c in "/\\'\"$`;&|:"):
        raise CondaError(f"Invalid spec for 'conda install': {spec}", "InvalidMatchSpec")
    return name, constraint


def resolve_version(name: str, constraint: str) -> str:
    default = conda_version() if name == "conda" else (BASE_PYTHON if name == "python" else KNOWN.get(name, "1.0.0"))
    c = constraint.lstrip("=").strip().rstrip("*").rstrip(".")
    if not c or constraint[0] in "<>!":
        return default
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


def dist_line(name: str, version: str, channel: str = "defaults") -> str:
    return f"{channel}/{PLATFORM}::{name}-{version}-{build_string(name, version)}"


def resolve(specs: Seq) -> dict[str, str]:
    """name -> the dist line the solver picks, for `specs` and what they bring along."""
    want = {name: dist_line(name, resolve_version(name, c)) for name, c in map(parse_spec, specs)}
    for dep in deps_of(list(want)):
        want.setdefault(dep, dist_line(dep, KNOWN[dep]))
    return want


def read_packages(prefix: str) -> dict[str, tuple[str, str, str]]:
    """{name: (version, build, channel)} replayed from conda-meta/history."""
    pkgs: dict[str, tuple[str, str, str]] = {}
    try:
        with open(os.path.join(prefix, "conda-meta", "history"), encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return pkgs
    for line in lines:
        chan_plat, _, dist = line[1:].rpartition("::")
        parts = dist.rsplit("-", 2)
        if line[:1] not in ("+", "-") or len(parts) != 3:
            continue
        if line[0] == "+":
            pkgs[parts[0]] = (parts[1], parts[2], chan_plat.rsplit("/", 1)[0] or "defaults")
        else:
            pkgs.pop(parts[0], None)
    return pkgs


def history_entry(argv: Seq, removed: Seq = (), added: Seq = (), specs: Seq = (), conda_exe: str = "") -> str:
    lines = [
        time.strftime("==> %Y-%m-%d %H:%M:%S <=="),
        "# cmd: " + " ".join([conda_exe or os.path.join(root(), "bin", "conda"), *argv]),
        "# conda version: " + conda_version(),
        *("-" + d for d in removed),
        *("+" + d for d in added),
    ]
    if specs:
        lines.append(f"# update specs: {list(specs)!r}")
    return "\n".join(lines) + "\n"


def link_python(prefix: str, python: str | None = None) -> None:
    """bin/python -> a real interpreter (base's), bin/python3 -> python (what PATH finds)."""
    b = os.path.join(prefix, "bin")
    os.makedirs(b, exist_ok=True)
    if python is None:
        link = os.path.join(root(), "bin", "python")
        python = os.path.join(root(), "bin", os.readlink(link)) if os.path.islink(link) else sys.executable
    for name, target in (("python", python), ("python3", "python")):
        if not os.path.lexists(os.path.join(b, name)):
            os.symlink(target, os.path.join(b, name))


def make_prefix(
    prefix: str, specs: Seq, argv: Seq = ("create",), python: str | None = None, conda_exe: str = ""
) -> list[str]:
    """Create an environment on disk: conda-meta/history (+ bin/python if python is in specs).

    Used by ``conda create`` and by tests/sshd.py (default envs; python = the interpreter the
    env's bin/python should point at, conda_exe = the conda that the history says ran)."""
    os.makedirs(os.path.join(prefix, "conda-meta"), exist_ok=True)
    want = resolve(specs)
    if "python" in want:
        link_python(prefix, python)
    added = [want[n] for n in sorted(want)]
    with open(os.path.join(prefix, "conda-meta", "history"), "a", encoding="utf-8") as f:
        f.write(history_entry(argv, added=added, specs=specs, conda_exe=conda_exe))
    return added


# ------------------------------------------------------------------------------- output


def out(text: str = "") -> None:
    write(text + "\n")


def flush() -> None:
    try:
        io().flush()
    except BrokenPipeError:
        pass


def confirm(message: str, default: str, assume_yes: bool) -> None:
    """conda's confirm_yn: --yes passes; otherwise read a line (EOF / empty = the default). A
    stdin that stays open waits, as real conda does: a command gpu-tui sent without -y hangs."""
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
            if choices[answer] == "no":
                raise CondaError("Exiting.", "CondaSystemExit")
            return
        out(f"Invalid choice: {answer}")


def print_plan(
    prefix: str, specs: Seq, new: Seq = (), updated: Seq = (), removed: Seq = (), solve: bool = True
) -> None:
    if solve:
        write(ct.channels(["defaults"]) + ct.METADATA + ct.SOLVED)

    def row(d: str) -> str:
        chan_plat, _, dist = d.rpartition("::")
        chan = "pkgs/main" + chan_plat[len("defaults") :] if chan_plat.startswith("defaults") else chan_plat
        return f"  {dist.rsplit('-', 2)[0]:<18} {chan}::{dist}"

    titles = ("NEW packages will be INSTALLED", "packages will be UPDATED", "packages will be REMOVED")
    groups = [(title, [row(d) for d in dists]) for title, dists in zip(titles, (new, updated, removed), strict=True)]
    write(ct.plan(prefix, specs, groups))


def run_transaction() -> None:
    write(ct.EXTRACTING)
    flush()
    io().pause()
    write("\n" + ct.PREPARED + ct.VERIFIED + ct.EXECUTED)
