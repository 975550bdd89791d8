"""The simulated conda of the sshd tier: a miniconda-like install on disk, run by
tests/fakes/conda (its ``bin/conda``). What it prints is sim/condatext.py's, the forms the
demo's in-memory conda (demo/condaops.py) prints too.

tests/sshd.py installs the launcher as ``<HOME>/miniconda3/bin/conda`` for every user of a
simulated instance, next to a copy of this folder; like on a rented machine, that dir is NOT on
PATH for ``ssh host cmd``: gpu-tui has to find it. The install's root prefix is the launcher's
``<root>/bin/conda`` (``main``'s ``root``), so moving the whole dir (``~/anaconda3``,
``~/miniforge3``) keeps it working. An environment is a dir holding ``conda-meta/history``
(what real conda checks too); its ``bin/python`` is a symlink to a real interpreter. ``conda
list`` replays the ``+``/``-`` lines of that history file, which is written in real conda's
format (``==> DATE <==``, ``# cmd:``, ``+defaults/linux-64::NAME-VER-BUILD``).

State, in ``main``'s state dir (every file optional, re-read on every call):

    version      conda version to claim (default 24.9.2); < 23.11 switches ``conda activate``
                 to the old CommandNotFoundError text, < 4.4 calls base "root"
    delay        seconds create/install/remove spend "Downloading and Extracting Packages"
                 (after printing the plan, before the env changes on disk)
    unavailable  package names (one a line) that no channel has; names starting with
                 "no-such-" are never available either (PackagesNotFoundError)

Supported (output shaped like conda 24.x): ``--version``; ``info`` (text, ``--json``,
``--envs``/``-e``, ``--base``); ``env list`` / ``info --envs`` (text and ``--json``);
``env remove``; ``list [--json]``; ``create``; ``install``; ``remove`` (``--all`` or
packages); ``run`` (``-n``/``-p``, ``--cwd``, ``--no-capture-output``/``-s``/``--live-stream``);
``activate``/``deactivate`` (the "Run 'conda init'" error: this binary is not the shell
function); ``init [bash|zsh] [--reverse]``; ``shell.{bash,posix,zsh} hook|activate|deactivate``
(what ``conda init``'s block and ``source bin/activate`` evaluate). Prompts (``Proceed
([y]/n)?``) read stdin like conda: an empty line or EOF takes the default, and a stdin that
stays open (asyncssh's ``run()`` without input) waits, as real conda does. Errors go to stderr
as conda prints them (``\\nName: message\\n\\n``, exit 1), or as a JSON object on stdout with
``--json``; usage errors exit 2. Anything else: a usage error (exit 2).

Stdlib only; imports what a command needs (``json``/``subprocess`` only when used).
"""

from __future__ import annotations

import os
import sys
import time

from . import condatext as ct
from .condatext import BASE_PYTHON, PLATFORM, PYTHONS

TYPE_CHECKING = False  # typing costs a fake ~30 ms a start: annotations only
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    Seq = Sequence[str]
    Opts = dict[str, Any]

DEFAULT_VERSION = ct.VERSION
SOLVER_UA = "solver/libmamba conda-libmamba-solver/24.9.0 libmambapy/1.5.8"
DEFAULT_CHANNELS = list(ct.CHANNEL_URLS)
KNOWN = {
    "pip": "24.2", "setuptools": "75.1.0", "wheel": "0.44.0", "ca-certificates": "2024.9.24",
    "openssl": "3.0.15", "numpy": "1.26.4", "pandas": "2.2.2", "scipy": "1.13.1",
    "requests": "2.32.3", "pytorch": "2.3.0", "torchvision": "0.18.1", "transformers": "4.45.2",
    "cudatoolkit": "11.8.0", "pytorch-cuda": "12.1", "matplotlib": "3.9.2", "tqdm": "4.66.5",
    "jupyter": "1.0.0", "ipykernel": "6.29.5",
}
PYTHON_DEPS = ("ca-certificates", "openssl", "pip", "setuptools", "wheel")
BASE_PACKAGES = ("conda", "requests")
NAME_FORBIDDEN = ("/", " ", ":", "#")

TOP_COMMANDS = (
    "activate", "clean", "commands", "compare", "config", "create", "deactivate", "env",
    "export", "info", "init", "install", "list", "notices", "package", "remove", "rename",
    "run", "search", "uninstall", "update", "upgrade", "doctor",
)

BLOCK_START = "# >>> conda initialize >>>"
BLOCK_END = "# <<< conda initialize <<<"


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


ROOT = ""  # the install's root prefix, and where its state lies: set by main()
STATE_DIR = None


def state(name: str, default: str = "") -> str:
    try:
        with open(os.path.join(STATE_DIR or "/nonexistent", name), encoding="utf-8") as f:
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
    return os.path.expanduser("~")


def base_name() -> str:
    return "root" if version_tuple(conda_version()) < (4, 4) else "base"


def envs_dirs() -> list[str]:
    return [os.path.join(ROOT, "envs"), os.path.join(home(), ".conda", "envs")]


def environments_txt() -> str:
    return os.path.join(home(), ".conda", "environments.txt")


def is_env(prefix: str) -> bool:
    return os.path.isfile(os.path.join(prefix, "conda-meta", "history"))


def same(a: str, b: str) -> bool:
    return os.path.normpath(a) == os.path.normpath(b)


def all_prefixes() -> list[str]:
    found = {ROOT}
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
    if same(prefix, ROOT):
        return base_name()
    if any(same(os.path.dirname(prefix), d) for d in envs_dirs()):
        return os.path.basename(prefix)
    return ""


def active_prefix() -> str | None:
    return os.environ.get("CONDA_PREFIX") or None


def real_python() -> str:
    link = os.path.join(ROOT, "bin", "python")
    try:
        target = os.readlink(link)
        return target if os.path.isabs(target) else os.path.join(ROOT, "bin", target)
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
            target = ROOT
        elif "/" in name:
            raise CondaValueError(f"'/' not allowed in environment name: {name}")
        else:
            found = [os.path.join(d, name) for d in envs_dirs() if os.path.isdir(os.path.join(d, name))]
            target = found[0] if found else os.path.join(envs_dirs()[0], name)
    elif prefix is not None:
        target = os.path.abspath(os.path.expanduser(prefix))
    else:
        target = active_prefix() or ROOT
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
    argv: list[str], removed: Seq = (), added: Seq = (), specs_kind: str = "update", specs: Seq = (),
    conda_exe: str | None = None,
) -> str:
    lines = [
        time.strftime("==> %Y-%m-%d %H:%M:%S <=="),
        "# cmd: " + " ".join([conda_exe or os.path.join(ROOT, "bin", "conda")] + list(argv)),
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
    prefix: str, specs: Seq, argv: Seq = ("create",), python: str | None = None, channel: str = "defaults",
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
    if "python" in want:
        for dep in PYTHON_DEPS:
            want.setdefault(dep, ("defaults", KNOWN[dep]))
        link_python(prefix, python)
    for name in sorted(want):
        added.append(dist_line(want[name][0], name, want[name][1]))
    with open(os.path.join(prefix, "conda-meta", "history"), "a", encoding="utf-8") as f:
        f.write(history_entry(list(argv), added=added, specs=list(specs), conda_exe=conda_exe))
    return added


# ------------------------------------------------------------------------------- output


def out(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def dump_json(obj: object) -> None:
    import json

    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=True, separators=(",", ": ")) + "\n")


def flush() -> None:
    try:
        sys.stdout.flush()
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
        sys.stdout.write(f"{message} ({options})? ")
        flush()
        answer = sys.stdin.readline().strip().lower() if sys.stdin else ""
        if answer in choices:
            out()
            flush()
            if choices[answer] == "no":
                raise CondaError("Exiting.", "CondaSystemExit")
            return
        out(f"Invalid choice: {answer}")


def print_envs(prefixes: list[str]) -> None:
    active = active_prefix()
    sys.stdout.write(ct.env_list([(env_name(p), bool(active and same(p, active)), p) for p in prefixes]))


def print_plan(
    prefix: str, specs: Seq, new: Seq = (), updated: Seq = (), removed: Seq = (), cli_channels: Seq = (),
    solve: bool = True,
) -> None:
    if solve:
        sys.stdout.write(ct.channels([c for c in cli_channels if c] or ["defaults"]) + ct.METADATA + ct.SOLVED)

    def row(d: str) -> str:
        chan_plat, _, dist = d.rpartition("::")
        chan = "pkgs/main" + chan_plat[len("defaults"):] if chan_plat.startswith("defaults") else chan_plat
        return f"  {dist.rsplit('-', 2)[0]:<18} {chan}::{dist}"

    groups = (("NEW packages will be INSTALLED", new), ("packages will be UPDATED", updated),
              ("packages will be REMOVED", removed))
    sys.stdout.write(ct.plan(prefix, specs, [(title, [row(d) for d in dists]) for title, dists in groups]))


def run_transaction() -> None:
    sys.stdout.write(ct.EXTRACTING)
    flush()
    d = delay()
    end = time.monotonic() + d
    while d > 0 and time.monotonic() < end:
        time.sleep(min(0.1, end - time.monotonic()))
    sys.stdout.write("\n" + ct.PREPARED + ct.VERIFIED + ct.EXECUTED)


# ----------------------------------------------------------------------------- arg parsing

COMMON_FLAGS = {
    "--json": "json", "-y": "yes", "--yes": "yes", "-q": "quiet", "--quiet": "quiet",
    "-v": "verbose", "--verbose": "verbose", "-d": "dry_run", "--dry-run": "dry_run",
    "--offline": "offline", "--debug": "verbose", "--override-channels": "override_channels",
    "--no-default-packages": "no_default_packages", "--use-local": "use_local",
}
PREFIX_OPTS = {"-n": "name", "--name": "name", "-p": "prefix", "--prefix": "prefix"}
CHANNEL_OPTS = {"-c": "channel", "--channel": "channel"}


def parse(
    argv: list[str], usage: str, values: dict[str, str] | None = None, flags: dict[str, str] | None = None,
    remainder: bool = False,
) -> tuple[Opts, list[str]]:
    """A small argparse: returns (opts, positionals). ``remainder``: everything from the first
    positional on is positional (``conda run``'s REMAINDER)."""
    values = dict(PREFIX_OPTS, **CHANNEL_OPTS, **(values or {}))
    flags = dict(COMMON_FLAGS, **(flags or {}))
    opts: Opts = {"channel": []}
    pos = []
    i = 0
    while i < len(argv):
        a = argv[i]
        i += 1
        if a == "--":
            pos.extend(argv[i:])
            break
        if a in ("-h", "--help"):
            out(usage)
            raise SystemExit(0)
        if a.startswith("-") and a != "-":
            key, eq, val = a.partition("=")
            if key in values:
                if not eq:
                    if i >= len(argv):
                        raise Usage(f"argument {key}: expected one argument", usage)
                    val = argv[i]
                    i += 1
                dest = values[key]
                if dest == "channel":
                    opts["channel"].append(val)
                else:
                    if dest in ("name", "prefix") and opts.get("name" if dest == "prefix" else "prefix") is not None:
                        raise Usage("argument -p/--prefix: not allowed with argument -n/--name", usage)
                    opts[dest] = val
                continue
            if a in flags:
                opts[flags[a]] = True
                continue
            raise Usage(f"unrecognized arguments: {a}", usage)
        pos.append(a)
        if remainder:
            pos.extend(argv[i:])
            break
    return opts, pos


# -------------------------------------------------------------------------------- commands


def info_dict(with_envs: bool = True) -> dict[str, Any]:
    uid, gid = os.getuid(), os.getgid()
    ver = conda_version()
    ap = active_prefix()
    d = {
        "GID": gid,
        "UID": uid,
        "active_prefix": ap,
        "active_prefix_name": (env_name(ap) or ap) if ap else None,
        "av_data_dir": os.path.join(ROOT, "etc", "conda"),
        "av_metadata_url_base": None,
        "channels": list(DEFAULT_CHANNELS),
        "conda_build_version": "not installed",
        "conda_env_version": ver,
        "conda_location": os.path.join(ROOT, "lib", "python3.12", "site-packages", "conda"),
        "conda_prefix": ROOT,
        "conda_shlvl": int(os.environ.get("CONDA_SHLVL", "-1") or -1),
        "conda_version": ver,
        "config_files": [],
        "default_prefix": ap or ROOT,
        "env_vars": {},
        "envs_dirs": envs_dirs(),
        "netrc_file": None,
        "offline": False,
        "pkgs_dirs": [os.path.join(ROOT, "pkgs"), os.path.join(home(), ".conda", "pkgs")],
        "platform": PLATFORM,
        "python_version": BASE_PYTHON + ".final.0",
        "rc_path": os.path.join(home(), ".condarc"),
        "requests_version": "2.32.3",
        "root_prefix": ROOT,
        "root_writable": os.access(ROOT, os.W_OK),
        "site_dirs": [],
        "solver": {"default": True, "name": "libmamba", "user_agent": SOLVER_UA},
        "sys.executable": os.path.join(ROOT, "bin", "python"),
        "sys.prefix": ROOT,
        "sys.version": BASE_PYTHON + " | packaged by Anaconda, Inc. | (main, Oct  4 2024, 13:27:36) [GCC 11.2.0]",
        "user_agent": f"conda/{ver} requests/2.32.3 CPython/{BASE_PYTHON} Linux/{os.uname().release} "
                      f"glibc/2.36 {SOLVER_UA}",
        "user_rc_path": os.path.join(home(), ".condarc"),
        "virtual_pkgs": [
            ["__archspec", "1", os.uname().machine], ["__conda", ver, "0"], ["__cuda", "12.8", "0"],
            ["__glibc", "2.36", "0"], ["__linux", os.uname().release.split("-")[0], "0"], ["__unix", "0", "0"],
        ],
    }
    if with_envs:
        d["envs"] = all_prefixes()
    return d


def cmd_info(argv: list[str]) -> int:
    usage = "usage: conda info [-h] [--json] [-v] [-q] [-a] [--base] [-e] [-s] [--unsafe-channels]"
    opts, pos = parse(argv, usage, flags={"--base": "base", "-e": "envs", "--envs": "envs", "-a": "all",
                                           "--all": "all", "-s": "system", "--system": "system"})
    if pos:
        raise Usage(f"unrecognized arguments: {' '.join(pos)}", usage)
    if opts.get("json"):
        if opts.get("base"):
            dump_json({"root_prefix": ROOT})
        else:
            dump_json(info_dict())
        return 0
    if opts.get("base"):
        out(ROOT)
        return 0
    if opts.get("envs") and not opts.get("all"):
        print_envs(all_prefixes())
        return 0
    d = info_dict(with_envs=False)
    ap = d["active_prefix"]
    rows = [
        ("active environment", d["active_prefix_name"] or "None"),
    ]
    if ap:
        rows.append(("active env location", ap))
    rows += [
        ("shell level", str(max(d["conda_shlvl"], 0))),
        ("user config file", d["user_rc_path"]),
        ("populated config files", ""),
        ("conda version", d["conda_version"]),
        ("conda-build version", d["conda_build_version"]),
        ("python version", d["python_version"]),
        ("solver", "libmamba (default)"),
        ("virtual packages", ["=".join(v) for v in d["virtual_pkgs"]]),
        ("base environment", f"{ROOT}  ({'writable' if d['root_writable'] else 'read only'})"),
        ("conda av data dir", d["av_data_dir"]),
        ("conda av metadata url", "None"),
        ("channel URLs", d["channels"]),
        ("package cache", d["pkgs_dirs"]),
        ("envs directories", d["envs_dirs"]),
        ("platform", PLATFORM),
        ("user-agent", d["user_agent"]),
        ("UID:GID", f"{d['UID']}:{d['GID']}"),
        ("netrc file", "None"),
        ("offline mode", "False"),
    ]
    out()
    for key, value in rows:
        values = value if isinstance(value, list) else [value]
        out(f"{key:>23} : {values[0]}")
        for v in values[1:]:
            out(f"{'':>23}   {v}")
    out()
    if opts.get("envs"):
        print_envs(all_prefixes())
    return 0


def cmd_env(argv: list[str]) -> int:
    usage = "usage: conda env [-h] command ..."
    if not argv or argv[0] in ("-h", "--help"):
        out(usage)
        return 0
    sub, rest = argv[0], argv[1:]
    if sub == "list":
        u = "usage: conda env list [-h] [--json] [-v] [-q]"
        opts, pos = parse(rest, u)
        if pos:
            raise Usage(f"unrecognized arguments: {' '.join(pos)}", u)
        prefixes = all_prefixes()
        if opts.get("json"):
            dump_json({"envs": prefixes})
        else:
            print_envs(prefixes)
        return 0
    if sub == "remove":
        u = "usage: conda env remove [-h] [-n ENVIRONMENT | -p PATH] [-d] [--json] [-v] [-q] [-y]"
        opts, pos = parse(rest, u)
        if pos:
            raise Usage(f"unrecognized arguments: {' '.join(pos)}", u)
        return remove_env(opts)
    if sub in ("create", "export", "update", "config"):
        raise Usage(f"the fake conda (tests/fakes/conda) does not implement `conda env {sub}`", usage)
    raise Usage(
        f"argument command: invalid choice: '{sub}' (choose from 'config', 'create', 'export', "
        "'list', 'remove', 'update')",
        usage,
    )


def remove_env(opts: Opts) -> int:
    if opts.get("name") is None and opts.get("prefix") is None:
        raise CondaValueError(ct.need_target("remove"))
    prefix = locate(opts.get("name"), opts.get("prefix"))
    active = active_prefix() or ROOT
    if same(prefix, active):
        raise CondaError(
            "Cannot remove current environment. Deactivate and run conda remove again", "CondaEnvironmentError"
        )
    if same(prefix, ROOT):
        raise CondaError(ct.REMOVE_ROOT, "CondaEnvironmentError")
    require_env(prefix)
    pkgs = read_packages(prefix)
    if not opts.get("json"):
        sys.stderr.write(f"\nRemove all packages in environment {prefix}:\n\n")
        sys.stderr.flush()
        print_plan(prefix, [], removed=[dist_line(v[2], n, v[0]) for n, v in sorted(pkgs.items())], solve=False)
    confirm(
        f"Everything found within the environment ({prefix}), including any conda environment "
        "configurations and any non-conda files, will be deleted. Do you wish to continue?\n",
        default="no",
        assume_yes=opts.get("yes"),
        dry_run=opts.get("dry_run"),
    )
    if not opts.get("json"):
        run_transaction()
    else:
        time.sleep(delay())
    import shutil

    shutil.rmtree(prefix, ignore_errors=True)
    unregister(prefix)
    if opts.get("json"):
        dump_json({"actions": {"PREFIX": prefix, "UNLINK": sorted(pkgs)}, "success": True})
    return 0


def register(prefix: str) -> None:
    path = environments_txt()
    try:
        with open(path, encoding="utf-8") as f:
            known = f.read().splitlines()
    except OSError:
        known = []
    if prefix not in known:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a", encoding="utf-8") as f:
            f.write(prefix + "\n")


def unregister(prefix: str) -> None:
    path = environments_txt()
    try:
        with open(path, encoding="utf-8") as f:
            known = f.read().splitlines()
    except OSError:
        return
    keep = [p for p in known if p and not same(p, prefix)]
    if len(keep) != len(known):
        with open(path, "w", encoding="utf-8") as f:
            f.write("".join(p + "\n" for p in keep))


def cmd_list(argv: list[str]) -> int:
    usage = "usage: conda list [-h] [-n ENVIRONMENT | -p PATH] [--json] [-v] [-q] [regex]"
    opts, pos = parse(argv, usage, flags={"--export": "export", "-e": "export", "--explicit": "explicit"})
    if len(pos) > 1:
        raise Usage(f"unrecognized arguments: {' '.join(pos[1:])}", usage)
    prefix = locate(opts.get("name"), opts.get("prefix"), must_exist=True)
    pkgs = read_packages(prefix)
    names = sorted(n for n in pkgs if not pos or pos[0] in n)
    if opts.get("json"):
        rows = []
        for n in names:
            version, build, channel = pkgs[n]
            main = channel in ("defaults", "pkgs/main")
            rows.append({
                "base_url": "https://repo.anaconda.com/pkgs/main" if main else f"https://conda.anaconda.org/{channel}",
                "build_number": 0,
                "build_string": build,
                "channel": "pkgs/main" if main else channel,
                "dist_name": f"{n}-{version}-{build}",
                "name": n,
                "platform": PLATFORM,
                "version": version,
            })
        dump_json(rows)
        return 0
    out(f"# packages in environment at {prefix}:")
    out("#")
    out("# Name                    Version                   Build  Channel")
    for n in names:
        version, build, channel = pkgs[n]
        ch = "" if channel in ("defaults", "pkgs/main") else channel
        out(f"{n:<25} {version:<15} {build:>15}  {ch}")
    return 0


def check_available(names: list[str], channels: list[str]) -> None:
    missing = [n for n in names if unavailable(n)]
    if missing:
        raise CondaError(ct.not_found(missing, channels or ["defaults"]), "PackagesNotFoundError")


def cmd_create(argv: list[str]) -> int:
    usage = ("usage: conda create [-h] [--clone ENV] (-n ENVIRONMENT | -p PATH) [-c CHANNEL] [-y] [-d] "
             "[--json] [-q] [package_spec ...]")
    opts, specs = parse(argv, usage)
    if opts.get("name") is None and opts.get("prefix") is None:
        raise CondaValueError(ct.need_target("create"))
    name = opts.get("name")
    if name is not None and name not in ("base", "root"):
        bad = [c for c in NAME_FORBIDDEN if c in name]
        if bad or not name.strip():
            raise CondaValueError(f"Invalid environment name: {name!r}\n  Characters not allowed: {NAME_FORBIDDEN}")
    prefix = locate(name, opts.get("prefix"))
    if same(prefix, ROOT):
        raise CondaValueError(ct.BASE_TARGET)
    parsed = [parse_spec(s) for s in specs]
    check_available([p[1] for p in parsed], opts["channel"])
    quiet_json = opts.get("json")
    if is_env(prefix):
        if not quiet_json:
            out(f"WARNING: A conda environment already exists at '{prefix}'")
            out()
        confirm("Remove existing environment?\nThis will remove ALL directories contained within this "
                "specified prefix directory.\n", default="no", assume_yes=opts.get("yes"))
        import shutil

        shutil.rmtree(prefix)
    elif os.path.isdir(prefix) and os.listdir(prefix):
        if not quiet_json:
            out(f"WARNING: A directory already exists at the target location '{prefix}'")
            out("but it is not a conda environment.")
        confirm("Continue creating environment", default="no", assume_yes=opts.get("yes"))
    channel = channel_of(opts["channel"], None)
    # What make_prefix will write, shown first (so a delayed create is visible mid-way).
    want = {}
    for ch, n, c in parsed:
        want[n] = dist_line(channel_of(opts["channel"], ch), n, resolve_version(n, c))
    if "python" in want:
        for dep in PYTHON_DEPS:
            want.setdefault(dep, dist_line("defaults", dep, KNOWN[dep]))
    if not quiet_json:
        print_plan(prefix, specs, new=[want[n] for n in sorted(want)], cli_channels=opts["channel"])
    confirm("Proceed", assume_yes=opts.get("yes") or quiet_json, dry_run=opts.get("dry_run"))
    if quiet_json:
        time.sleep(delay())
    else:
        run_transaction()
    added = make_prefix(prefix, specs, argv=["create"] + list(argv), channel=channel)
    register(prefix)
    if quiet_json:
        dump_json({"actions": {"LINK": added, "PREFIX": prefix}, "prefix": prefix, "success": True})
        return 0
    sys.stdout.write(ct.activate_hint(name or prefix))
    return 0


def cmd_install(argv: list[str], verb: str = "install") -> int:
    usage = (f"usage: conda {verb} [-h] [-n ENVIRONMENT | -p PATH] [-c CHANNEL] [-y] [-d] [--json] [-q] "
             "[package_spec ...]")
    opts, specs = parse(argv, usage, flags={"--force-reinstall": "force"})
    prefix = locate(opts.get("name"), opts.get("prefix"), must_exist=True)
    if not specs:
        raise CondaValueError(ct.NO_SPECS)
    parsed = [parse_spec(s) for s in specs]
    check_available([p[1] for p in parsed], opts["channel"])
    have = read_packages(prefix)
    new, updated, removed = [], [], []
    for ch, n, c in parsed:
        version = resolve_version(n, c)
        line = dist_line(channel_of(opts["channel"], ch), n, version)
        if n in have:
            if have[n][0] == version and not opts.get("force"):
                continue
            removed.append(dist_line(have[n][2], n, have[n][0]))
            updated.append(line)
        else:
            new.append(line)
    if "python" in [p[1] for p in parsed] and "python" not in have:
        for dep in PYTHON_DEPS:
            if dep not in have:
                new.append(dist_line("defaults", dep, KNOWN[dep]))
    json_mode = opts.get("json")
    if not new and not updated:
        if json_mode:
            dump_json({"message": "All requested packages already installed.", "success": True})
        else:
            sys.stdout.write(ct.channels(opts["channel"] or ["defaults"]) + ct.METADATA + ct.SOLVED
                             + ct.ALREADY_INSTALLED)
        return 0
    if not json_mode:
        print_plan(prefix, specs, new=new, updated=updated, cli_channels=opts["channel"])
    confirm("Proceed", assume_yes=opts.get("yes") or json_mode, dry_run=opts.get("dry_run"))
    if json_mode:
        time.sleep(delay())
    else:
        run_transaction()
    with open(os.path.join(prefix, "conda-meta", "history"), "a", encoding="utf-8") as f:
        f.write(history_entry([verb] + list(argv), removed=removed, added=sorted(new + updated), specs=specs))
    if any(p[1] == "python" for p in parsed):
        link_python(prefix)
    if json_mode:
        dump_json({"actions": {"LINK": sorted(new + updated), "PREFIX": prefix, "UNLINK": removed}, "success": True})
    return 0


def cmd_remove(argv: list[str], verb: str = "remove") -> int:
    usage = f"usage: conda {verb} [-h] [-n ENVIRONMENT | -p PATH] [--all] [-y] [-d] [--json] [-q] [package_name ...]"
    opts, names = parse(argv, usage, flags={"--all": "all", "--force": "force"})
    if opts.get("all"):
        if opts.get("name") is None and opts.get("prefix") is None:
            opts["prefix"] = active_prefix() or ROOT
        return remove_env(opts)
    if not names:
        raise CondaValueError(f'no package names supplied,\n       try "conda {verb} -h" for more details')
    prefix = locate(opts.get("name"), opts.get("prefix"), must_exist=True)
    have = read_packages(prefix)
    missing = [n for n in names if n.lower() not in have]
    if missing:
        raise CondaError(
            "The following packages are missing from the target environment:\n"
            + "".join(f"  - {m}\n" for m in missing),
            "PackagesNotFoundError",
        )
    if same(prefix, ROOT) and any(n.lower() in ("python", "conda") for n in names):
        raise CondaError("cannot remove python, conda from root environment", "CondaEnvironmentError")
    removed = [dist_line(have[n.lower()][2], n.lower(), have[n.lower()][0]) for n in names]
    if not opts.get("json"):
        print_plan(prefix, names, removed=removed)
    confirm("Proceed", assume_yes=opts.get("yes") or opts.get("json"), dry_run=opts.get("dry_run"))
    if not opts.get("json"):
        run_transaction()
    with open(os.path.join(prefix, "conda-meta", "history"), "a", encoding="utf-8") as f:
        f.write(history_entry([verb] + list(argv), removed=removed, specs_kind="remove", specs=names))
    if opts.get("json"):
        dump_json({"actions": {"PREFIX": prefix, "UNLINK": removed}, "success": True})
    return 0


# ----------------------------------------------------------------------------- activation


def strip_path(path: str, prefix: str | None) -> str:
    if not prefix:
        return path
    drop = os.path.join(prefix, "bin")
    return os.pathsep.join(p for p in path.split(os.pathsep) if p and not same(p, drop))


def activation_env(prefix: str, environ: Mapping[str, str]) -> dict[str, str]:
    """The variables conda's activate sets for ``prefix`` (replacing the active env)."""
    old = environ.get("CONDA_PREFIX")
    try:
        shlvl = int(environ.get("CONDA_SHLVL", "0") or 0)
    except ValueError:
        shlvl = 0
    shown = env_name(prefix) or prefix
    new = {
        "PATH": os.path.join(prefix, "bin") + os.pathsep + strip_path(environ.get("PATH", ""), old),
        "CONDA_PREFIX": prefix,
        "CONDA_SHLVL": str(shlvl + 1),
        "CONDA_DEFAULT_ENV": shown,
        "CONDA_PROMPT_MODIFIER": f"({shown}) ",
        "CONDA_EXE": os.path.join(ROOT, "bin", "conda"),
        "_CE_M": "",
        "_CE_CONDA": "",
        "CONDA_PYTHON_EXE": os.path.join(ROOT, "bin", "python"),
    }
    if old:
        new[f"CONDA_PREFIX_{shlvl}"] = old
    return new


def sh_quote(s: str) -> str:
    return "'" + s.replace("'", "'\"'\"'") + "'"


def cmd_shell(shell: str, argv: list[str]) -> int:
    if not argv:
        raise Usage(f"the fake conda expects `conda {shell} hook|activate|deactivate`")
    action, rest = argv[0], argv[1:]
    if action == "hook":
        conda = os.path.join(ROOT, "bin", "conda")
        out("\n".join([
            f"export CONDA_EXE={sh_quote(conda)}",
            "export _CE_M=''",
            "export _CE_CONDA=''",
            f"export CONDA_PYTHON_EXE={sh_quote(os.path.join(ROOT, 'bin', 'python'))}",
            "",
            "__conda_exe() (",
            '    "$CONDA_EXE" $_CE_M $_CE_CONDA "$@"',
            ")",
            "",
            "__conda_activate() {",
            "    \\local ask_conda",
            '    ask_conda="$(PS1="${PS1:-}" __conda_exe shell.posix "$@")" || \\return',
            '    \\eval "$ask_conda"',
            "    \\hash -r",
            "}",
            "",
            "conda() {",
            '    \\local cmd="${1-__missing__}"',
            '    case "$cmd" in',
            "        activate|deactivate)",
            '            __conda_activate "$@"',
            "            ;;",
            "        *)",
            '            __conda_exe "$@"',
            "            ;;",
            "    esac",
            "}",
            "",
            'if [ -z "${CONDA_SHLVL+x}" ]; then',
            "    \\export CONDA_SHLVL=0",
            f'    export PATH={sh_quote(os.path.join(ROOT, "condabin"))}":${{PATH:-}}"',
            "fi",
            "",
            "conda activate base" if "--no-auto" not in rest else "",
        ]))
        return 0
    if action == "activate":
        args = [a for a in rest if not a.startswith("-")]
        target = args[0] if args else "base"
        if target in ("base", "root"):
            prefix = ROOT
        elif "/" in target:
            prefix = os.path.abspath(os.path.expanduser(target))
            if not is_env(prefix):
                raise CondaError(ct.not_an_env(prefix), "EnvironmentLocationNotFound")
        else:
            found = [os.path.join(d, target) for d in envs_dirs() if is_env(os.path.join(d, target))]
            if not found:
                raise CondaError(
                    f"Could not find conda environment: {target}\n"
                    "You can list all discoverable environments with `conda info --envs`.\n",
                    "EnvironmentNameNotFound",
                )
            prefix = found[0]
        env = activation_env(prefix, os.environ)
        for k in sorted(env):
            out(f"export {k}={sh_quote(env[k])}")
        return 0
    if action == "deactivate":
        old = os.environ.get("CONDA_PREFIX")
        if not old:
            return 0
        try:
            shlvl = int(os.environ.get("CONDA_SHLVL", "1") or 1)
        except ValueError:
            shlvl = 1
        path = strip_path(os.environ.get("PATH", ""), old)
        prev = os.environ.get(f"CONDA_PREFIX_{shlvl - 1}")
        if prev:
            out(f"export PATH={sh_quote(os.path.join(prev, 'bin') + os.pathsep + path)}")
            out(f"export CONDA_PREFIX={sh_quote(prev)}")
            out(f"export CONDA_DEFAULT_ENV={sh_quote(env_name(prev) or prev)}")
            out(f"export CONDA_PROMPT_MODIFIER={sh_quote('(' + (env_name(prev) or prev) + ') ')}")
            out(f"unset CONDA_PREFIX_{shlvl - 1}")
        else:
            out(f"export PATH={sh_quote(path)}")
            out("unset CONDA_PREFIX")
            out("unset CONDA_DEFAULT_ENV")
            out("unset CONDA_PROMPT_MODIFIER")
        out(f"export CONDA_SHLVL='{max(shlvl - 1, 0)}'")
        return 0
    raise Usage(f"the fake conda does not implement `conda {shell} {action}`")


def cmd_activate(command: str) -> int:
    if version_tuple(conda_version()) >= (23, 11):
        raise CondaError(f"Run 'conda init' before 'conda {command}'")
    raise CondaError(
        f"Your shell has not been properly configured to use 'conda {command}'.\n"
        "To initialize your shell, run\n\n"
        "    $ conda init <SHELL_NAME>\n\n"
        "Currently supported shells are:\n"
        "  - bash\n  - fish\n  - tcsh\n  - xonsh\n  - zsh\n  - powershell\n\n"
        "See 'conda init --help' for more information and options.\n\n"
        "IMPORTANT: You may need to close and restart your shell after running 'conda init'.\n\n",
        "CommandNotFoundError",
        rc=1,
    )


def init_block() -> str:
    conda = os.path.join(ROOT, "bin", "conda")
    return "\n".join([
        BLOCK_START,
        "# !! Contents within this block are managed by 'conda init' !!",
        f"__conda_setup=\"$('{conda}' 'shell.bash' 'hook' 2> /dev/null)\"",
        "if [ $? -eq 0 ]; then",
        '    eval "$__conda_setup"',
        "else",
        f'    if [ -f "{ROOT}/etc/profile.d/conda.sh" ]; then',
        f'        . "{ROOT}/etc/profile.d/conda.sh"',
        "    else",
        f'        export PATH="{ROOT}/bin:$PATH"',
        "    fi",
        "fi",
        "unset __conda_setup",
        BLOCK_END,
    ]) + "\n"


def cmd_init(argv: list[str]) -> int:
    usage = "usage: conda init [-h] [--all] [--reverse] [--dry-run] [SHELLS ...]"
    opts, shells = parse(argv, usage, flags={"--all": "all", "--reverse": "reverse", "--user": "user",
                                             "--no-user": "no_user", "--system": "system"})
    rc_files = {"bash": ".bashrc", "zsh": ".zshrc"}
    if opts.get("all"):
        shells = ["bash", "zsh"]
    shells = shells or ["bash"]
    for s in shells:
        if s not in rc_files and s not in ("fish", "tcsh", "xonsh", "powershell", "cmd.exe"):
            raise Usage(
                f"argument SHELLS: invalid choice: '{s}' (choose from 'bash', 'fish', 'tcsh', 'xonsh', "
                "'zsh', 'powershell', 'cmd.exe')",
                usage,
            )
    rcs = []
    block = init_block()
    for s in shells:
        if s not in rc_files:
            continue  # other shells: nothing to do here (no rc file of ours)
        path = os.path.join(home(), rc_files[s])
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:
            text = ""
        start, end = text.find(BLOCK_START), text.find(BLOCK_END)
        if start >= 0 and end > start:
            stop = end + len(BLOCK_END)
            if stop < len(text) and text[stop] == "\n":
                stop += 1
            new = text[:start] + ("" if opts.get("reverse") else block) + text[stop:]
        elif opts.get("reverse"):
            new = text
        else:
            new = text + ("" if not text or text.endswith("\n") else "\n") + "\n" + block
        if new != text and not opts.get("dry_run"):
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
        rcs.append((path, new != text))
    sys.stdout.write("".join(ct.init_report(ROOT, rcs)))
    return 0


def cmd_run(argv: list[str]) -> int:
    usage = ("usage: conda run [-h] [-v] [--dev] [--debug-wrapper-scripts] [--cwd CWD] [-s] "
             "[-n ENVIRONMENT | -p PATH] ...")
    opts, call = parse(argv, usage, values={"--cwd": "cwd"},
                       flags={"-s": "no_capture", "--no-capture-output": "no_capture", "--live-stream": "no_capture",
                              "--dev": "dev", "--debug-wrapper-scripts": "debug"}, remainder=True)
    prefix = locate(opts.get("name"), opts.get("prefix"))
    require_env(prefix)
    if call and call[0] == "--":
        call = call[1:]
    if not call:
        raise CondaError("No executable provided. Usage: conda run [-n ENV | -p PREFIX] CMD [ARGS...]",
                         "ArgumentError")
    import subprocess

    env = dict(os.environ)
    env.update(activation_env(prefix, os.environ))
    cwd = opts.get("cwd") or os.getcwd()
    capture = not opts.get("no_capture")
    script = f"/tmp/tmp{os.urandom(4).hex()}"
    try:
        proc = subprocess.Popen(call, env=env, cwd=cwd,
                                stdout=subprocess.PIPE if capture else None,
                                stderr=subprocess.PIPE if capture else None)
    except FileNotFoundError as e:
        if e.filename == cwd or not os.path.isdir(cwd):
            stdout, stderr, rc = "", f"{script}: line 3: cd: {cwd}: No such file or directory\n", 1
        else:
            stdout, stderr, rc = "", f"{script}: line 3: {call[0]}: command not found\n", 127
        if capture:
            sys.stderr.write(stderr + "\n")
        else:
            sys.stderr.write(stderr)
    except PermissionError:
        stdout, stderr, rc = "", f"{script}: line 3: {call[0]}: Permission denied\n", 126
        sys.stderr.write(stderr + ("\n" if capture else ""))
    else:
        if capture:
            raw_out, raw_err = proc.communicate()
            stdout, stderr = raw_out.decode("utf-8", "replace"), raw_err.decode("utf-8", "replace")
            # conda prints captured output with print(): one extra newline each.
            if stdout:
                out(stdout)
            if stderr:
                sys.stderr.write(stderr + "\n")
        else:
            proc.wait()
        rc = proc.returncode
        if rc < 0:
            rc = 128 - rc
    if rc != 0:
        flush()
        sys.stderr.write(f"ERROR conda.cli.main_run:execute(125): `conda run {' '.join(call)}` failed. "
                         "(See above for error)\n")
    return rc


UNSUPPORTED = ("clean", "commands", "compare", "config", "export", "notices", "package", "rename", "search",
               "update", "upgrade", "doctor")


def main(argv: list[str], root: str, state_dir: str | None = None) -> int:
    """Run ``conda ARGV`` for the install at ``root``, its state files in ``state_dir``."""
    global ROOT, STATE_DIR
    ROOT, STATE_DIR = root, state_dir
    json_mode = "--json" in argv
    try:
        return dispatch(argv)
    except CondaError as e:
        flush()
        if e.name == "DryRunExit":
            out()
            out("DryRunExit: Dry run. Exiting.")
            out()
            return 0
        if json_mode:
            d = {
                "caused_by": "None",
                "error": f"{e.name}: {e.message}",
                "exception_name": e.name,
                "exception_type": f"<class 'conda.exceptions.{e.name}'>",
                "message": e.message,
            }
            d.update(e.extra)
            dump_json(d)
        else:
            sys.stderr.write(ct.error(e.name, e.message))
        return e.rc
    except Usage as e:
        flush()
        sys.stderr.write(f"{e.usage}\nconda: error: {e}\n")
        return 2
    except BrokenPipeError:
        return 1


def dispatch(argv: list[str]) -> int:
    args = list(argv)
    while args and args[0] in ("-v", "--verbose", "--no-plugins", "-q", "--quiet"):
        args.pop(0)
    if not args or args[0] in ("-h", "--help"):
        out("usage: conda [-h] [-v] [--no-plugins] [-V] COMMAND ...")
        out()
        out("conda is a tool for managing and deploying applications, environments and packages.")
        out()
        out("commands:")
        out("  The following built-in and plugins subcommands are available.")
        out()
        out("  COMMAND")
        for c in TOP_COMMANDS:
            out("    " + c)
        return 0
    cmd, rest = args[0], args[1:]
    if cmd in ("-V", "--version"):
        out("conda " + conda_version())
        return 0
    if cmd.startswith("shell."):
        return cmd_shell(cmd[len("shell."):], rest)
    if cmd == "info":
        return cmd_info(rest)
    if cmd == "env":
        return cmd_env(rest)
    if cmd == "list":
        return cmd_list(rest)
    if cmd == "create":
        return cmd_create(rest)
    if cmd == "install":
        return cmd_install(rest)
    if cmd in ("remove", "uninstall"):
        return cmd_remove(rest, cmd)
    if cmd == "run":
        return cmd_run(rest)
    if cmd in ("activate", "deactivate"):
        return cmd_activate(cmd)
    if cmd == "init":
        return cmd_init(rest)
    if cmd in UNSUPPORTED:
        raise Usage(f"the fake conda (tests/fakes/conda) does not implement `conda {cmd}`")
    if cmd.startswith("-"):
        raise Usage(f"unrecognized arguments: {cmd}")
    choices = ", ".join(f"'{c}'" for c in TOP_COMMANDS)
    raise Usage(f"argument COMMAND: invalid choice: '{cmd}' (choose from {choices})")
