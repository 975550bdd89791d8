"""The simulated conda: a miniconda-like install on disk, run by tests/fakes/conda (its
``bin/conda``, for the sshd tier) and by the demo (demo/condarun.py runs ``main`` in-process,
with its own output layer, `condastate.Io`). It prints sim/condatext.py's texts; condastate.py
holds its state, the install on disk and the output.

It answers what gpu-tui sends (services/conda.py, services/envcheck.py): ``--version``, ``env
list [--json]``, ``create``, ``install``, ``env remove`` and ``init [bash|zsh] [--reverse]``;
anything else is a usage error (exit 2), as argparse words it. Output is shaped like conda 24.x.

tests/sshd.py installs the launcher as ``<HOME>/miniconda3/bin/conda`` for every user of a
simulated instance, next to a copy of this folder; like on a rented machine, that dir is NOT on
PATH for ``ssh host cmd``: gpu-tui has to find it. The install's root prefix is the launcher's
``<root>/bin/conda`` (``main``'s ``root``), so moving the whole dir (``~/anaconda3``) keeps it
working. An environment is a dir holding ``conda-meta/history`` (what real conda checks too),
written in real conda's format (``==> DATE <==``, ``# cmd:``, ``+defaults/linux-64::NAME-VER-BUILD``);
its ``bin/python`` is a symlink to a real interpreter.

State, in ``main``'s state dir (every file optional, re-read on every call):

    version      conda version to claim (default 24.9.2)
    delay        seconds create/install/remove spend "Downloading and Extracting Packages"
                 (after printing the plan, before the env changes on disk)
    unavailable  package names (one a line) that no channel has; names starting with
                 "no-such-" are never available either (PackagesNotFoundError)

Prompts (``Proceed ([y]/n)?``) read stdin like conda: an empty line or EOF takes the default,
and a stdin that stays open (asyncssh's ``run()`` without input) waits, as real conda does.
Errors go to stderr as conda prints them (``\\nName: message\\n\\n``, exit 1).

Stdlib only; imports what a command needs (``json``/``shutil`` only when used).
"""

from __future__ import annotations

import argparse
import os

from . import condastate as st
from . import condatext as ct
from .condastate import CondaError, out

TYPE_CHECKING = False  # typing costs a fake ~30 ms a start: annotations only
if TYPE_CHECKING:
    from typing import NoReturn

BLOCK_START = "# >>> conda initialize >>>"
BLOCK_END = "# <<< conda initialize <<<"
NAME_FORBIDDEN = ("/", " ", ":", "#")


class _Parser(argparse.ArgumentParser):
    """argparse's errors through the run's output layer (the demo has no stderr of its own)."""

    def error(self, message: str) -> NoReturn:
        raise st.Usage(f"{self.format_usage()}{self.prog}: error: {message}\n")


def parser() -> argparse.ArgumentParser:
    top = _Parser(prog="conda", add_help=False)
    top.add_argument("-V", "--version", action="store_true")
    verbs = top.add_subparsers(dest="verb", parser_class=_Parser)
    env = verbs.add_parser("env", add_help=False).add_subparsers(dest="sub", required=True, parser_class=_Parser)

    def verb(parent: argparse._SubParsersAction[_Parser], name: str, words: str | None = None) -> None:
        p = parent.add_parser(name, add_help=False)
        p.add_argument("-n", "--name")
        for flag in ("-y", "--yes"), ("--json",), ("-q", "--quiet"):
            p.add_argument(*flag, action="store_true")
        if words:
            p.add_argument(words, nargs="*")

    verb(env, "list")
    verb(env, "remove")
    verb(verbs, "create", "specs")
    verb(verbs, "install", "specs")
    init = verbs.add_parser("init", add_help=False)
    init.add_argument("shells", nargs="*")
    init.add_argument("--reverse", action="store_true")
    return top


def main(argv: list[str], root: str, state_dir: str | None = None, io: st.Io | None = None) -> int:
    """Run ``conda ARGV`` for the install at ``root``, its state files in ``state_dir``; ``io``:
    where it writes, reads and waits (this process's stdio, else)."""
    run = io or st.Io()
    run.root, run.state_dir = root, state_dir
    st.set_io(run)
    try:
        args = parser().parse_args(argv)
        if args.version:
            out("conda " + st.conda_version())
            return 0
        command = {"create": cmd_create, "install": cmd_install, "init": cmd_init}.get(args.verb or "")
        if args.verb == "env":
            command = env_list if args.sub == "list" else env_remove
        if command is None:
            raise st.Usage(parser().format_usage() + "conda: error: the simulated conda needs a command\n")
        return command(args, argv)
    except CondaError as e:
        st.flush()
        st.err(ct.error(e.name, e.message))
        return 1
    except st.Usage as e:
        st.flush()
        st.err(str(e))
        return 2
    except BrokenPipeError:
        return 1


def env_list(args: argparse.Namespace, argv: list[str]) -> int:
    prefixes = st.all_prefixes()
    if args.json:
        import json

        st.write(json.dumps({"envs": prefixes}, indent=2, sort_keys=True) + "\n")
    else:
        st.write(ct.env_list([(st.env_name(p), False, p) for p in prefixes]))
    return 0


def env_remove(args: argparse.Namespace, argv: list[str]) -> int:
    if args.name is None:
        raise CondaError(ct.need_target("remove"), "CondaValueError")
    if args.name in ("base", "root"):
        raise CondaError(ct.REMOVE_ROOT, "CondaEnvironmentError")
    prefix = st.locate(args.name, must_exist=True)
    pkgs = st.read_packages(prefix)
    st.err(f"\nRemove all packages in environment {prefix}:\n\n")
    st.print_plan(prefix, [], removed=[st.dist_line(n, v[0], v[2]) for n, v in sorted(pkgs.items())], solve=False)
    st.confirm(
        f"Everything found within the environment ({prefix}), including any conda environment "
        "configurations and any non-conda files, will be deleted. Do you wish to continue?\n",
        default="no",
        assume_yes=args.yes,
    )
    st.run_transaction()
    import shutil

    shutil.rmtree(prefix, ignore_errors=True)
    return 0


def check_available(specs: list[str]) -> None:
    """PackagesNotFoundError (after the solve's lines) if no channel has one of `specs`."""

    def missing(name: str, constraint: str) -> bool:
        pinned = constraint[:1] == "=" and name == "python"
        return st.unavailable(name) or pinned and ".".join(constraint.lstrip("=").split(".")[:2]) not in ct.PYTHONS

    lacking = [s.strip() for s in specs if missing(*st.parse_spec(s))]
    if lacking:
        st.write(ct.channels(["defaults"]) + ct.METADATA + "Solving environment: failed\n")
        raise CondaError(ct.not_found(lacking, ct.CHANNEL_URLS), "PackagesNotFoundError")


def cmd_create(args: argparse.Namespace, argv: list[str]) -> int:
    name = args.name
    if name is None:
        raise CondaError(ct.need_target("create"), "CondaValueError")
    if name in ("base", "root"):
        raise CondaError(ct.BASE_TARGET, "CondaValueError")
    if any(c in name for c in NAME_FORBIDDEN) or not name.strip():
        forbidden = f"Invalid environment name: {name!r}\n  Characters not allowed: {NAME_FORBIDDEN}"
        raise CondaError(forbidden, "CondaValueError")
    prefix = st.locate(name)
    check_available(args.specs)
    if st.is_env(prefix):
        out(f"WARNING: A conda environment already exists at '{prefix}'\n")
        st.confirm(
            "Remove existing environment?\nThis will remove ALL directories contained within this "
            "specified prefix directory.\n",
            default="no",
            assume_yes=args.yes,
        )
        import shutil

        shutil.rmtree(prefix)
    # what make_prefix will write, shown first (so a delayed create is visible mid-way)
    want = st.resolve(args.specs)
    st.print_plan(prefix, args.specs, new=[want[n] for n in sorted(want)])
    st.confirm("Proceed", default="yes", assume_yes=args.yes)
    st.run_transaction()
    st.make_prefix(prefix, args.specs, argv=argv)
    st.write(ct.activate_hint(name))
    return 0


def cmd_install(args: argparse.Namespace, argv: list[str]) -> int:
    prefix = st.locate(args.name, must_exist=True)
    if not args.specs:
        raise CondaError(ct.NO_SPECS, "CondaValueError")
    check_available(args.specs)
    have = st.read_packages(prefix)
    new, updated, removed = [], [], []
    want = st.resolve(args.specs)
    for name, line in want.items():
        if name not in have:
            new.append(line)
        elif line != (old := st.dist_line(name, have[name][0], have[name][2])):
            removed.append(old)
            updated.append(line)
    if not new and not updated:
        st.write(ct.channels(["defaults"]) + ct.METADATA + ct.SOLVED + ct.ALREADY_INSTALLED)
        return 0
    st.print_plan(prefix, args.specs, new=new, updated=updated)
    st.confirm("Proceed", default="yes", assume_yes=args.yes)
    st.run_transaction()
    with open(os.path.join(prefix, "conda-meta", "history"), "a", encoding="utf-8") as f:
        f.write(st.history_entry(argv, removed=removed, added=sorted(new + updated), specs=args.specs))
    if "python" in want:
        st.link_python(prefix)
    return 0


def init_block() -> str:
    conda, root = os.path.join(st.root(), "bin", "conda"), st.root()
    return f"""{BLOCK_START}
# !! Contents within this block are managed by 'conda init' !!
__conda_setup="$('{conda}' 'shell.bash' 'hook' 2> /dev/null)"
if [ $? -eq 0 ]; then
    eval "$__conda_setup"
else
    if [ -f "{root}/etc/profile.d/conda.sh" ]; then
        . "{root}/etc/profile.d/conda.sh"
    else
        export PATH="{root}/bin:$PATH"
    fi
fi
unset __conda_setup
{BLOCK_END}
"""


def cmd_init(args: argparse.Namespace, argv: list[str]) -> int:
    rcs = []
    for shell in args.shells or ["bash"]:
        if shell not in ("bash", "zsh"):
            continue  # other shells: no rc file of ours
        path = os.path.join(st.home(), "." + shell + "rc")
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:
            text = ""
        start, end = text.find(BLOCK_START), text.find(BLOCK_END)
        if start >= 0 and end > start:
            stop = end + len(BLOCK_END) + (text[end + len(BLOCK_END) : end + len(BLOCK_END) + 1] == "\n")
            new = text[:start] + ("" if args.reverse else init_block()) + text[stop:]
        elif args.reverse:
            new = text
        else:
            new = text + ("" if not text or text.endswith("\n") else "\n") + "\n" + init_block()
        if new != text:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
        rcs.append((path, new != text))
    st.write("".join(ct.init_report(st.root(), rcs)))
    return 0
