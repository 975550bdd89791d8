"""The simulated conda of the sshd tier: a miniconda-like install on disk, run by
tests/fakes/conda (its ``bin/conda``), and the demo's (demo/condarun.py runs ``main``
in-process, with its own output layer, `condastate.Io`). It prints sim/condatext.py's texts.
This module: activation, the shell hooks, ``init``, ``run``, the entry point; condacmds.py the
env commands (info, env, list, create, install, remove); condastate.py the state, the install on
disk and the output; condaargs.py the argument parser.

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

from . import condastate as st
from . import condatext as ct
from .condaargs import parse
from .condacmds import cmd_create, cmd_env, cmd_info, cmd_install, cmd_list, cmd_remove
from .condastate import (
    CondaError,
    Usage,
    conda_version,
    dump_json,
    env_name,
    envs_dirs,
    flush,
    home,
    is_env,
    locate,
    out,
    require_env,
    same,
    version_tuple,
)

TYPE_CHECKING = False  # typing costs a fake ~30 ms a start: annotations only
if TYPE_CHECKING:
    from collections.abc import Mapping

TOP_COMMANDS = (
    "activate",
    "clean",
    "commands",
    "compare",
    "config",
    "create",
    "deactivate",
    "env",
    "export",
    "info",
    "init",
    "install",
    "list",
    "notices",
    "package",
    "remove",
    "rename",
    "run",
    "search",
    "uninstall",
    "update",
    "upgrade",
    "doctor",
)

BLOCK_START = "# >>> conda initialize >>>"
BLOCK_END = "# <<< conda initialize <<<"

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
        "CONDA_EXE": os.path.join(st.root(), "bin", "conda"),
        "_CE_M": "",
        "_CE_CONDA": "",
        "CONDA_PYTHON_EXE": os.path.join(st.root(), "bin", "python"),
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
        conda = os.path.join(st.root(), "bin", "conda")
        out(
            "\n".join(
                [
                    f"export CONDA_EXE={sh_quote(conda)}",
                    "export _CE_M=''",
                    "export _CE_CONDA=''",
                    f"export CONDA_PYTHON_EXE={sh_quote(os.path.join(st.root(), 'bin', 'python'))}",
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
                    f'    export PATH={sh_quote(os.path.join(st.root(), "condabin"))}":${{PATH:-}}"',
                    "fi",
                    "",
                    "conda activate base" if "--no-auto" not in rest else "",
                ]
            )
        )
        return 0
    if action == "activate":
        args = [a for a in rest if not a.startswith("-")]
        target = args[0] if args else "base"
        if target in ("base", "root"):
            prefix = st.root()
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
    conda = os.path.join(st.root(), "bin", "conda")
    return (
        "\n".join(
            [
                BLOCK_START,
                "# !! Contents within this block are managed by 'conda init' !!",
                f"__conda_setup=\"$('{conda}' 'shell.bash' 'hook' 2> /dev/null)\"",
                "if [ $? -eq 0 ]; then",
                '    eval "$__conda_setup"',
                "else",
                f'    if [ -f "{st.root()}/etc/profile.d/conda.sh" ]; then',
                f'        . "{st.root()}/etc/profile.d/conda.sh"',
                "    else",
                f'        export PATH="{st.root()}/bin:$PATH"',
                "    fi",
                "fi",
                "unset __conda_setup",
                BLOCK_END,
            ]
        )
        + "\n"
    )


def cmd_init(argv: list[str]) -> int:
    usage = "usage: conda init [-h] [--all] [--reverse] [--dry-run] [SHELLS ...]"
    opts, shells = parse(
        argv,
        usage,
        flags={"--all": "all", "--reverse": "reverse", "--user": "user", "--no-user": "no_user", "--system": "system"},
    )
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
    st.write("".join(ct.init_report(st.root(), rcs)))
    return 0


def cmd_run(argv: list[str]) -> int:
    usage = (
        "usage: conda run [-h] [-v] [--dev] [--debug-wrapper-scripts] [--cwd CWD] [-s] [-n ENVIRONMENT | -p PATH] ..."
    )
    opts, call = parse(
        argv,
        usage,
        values={"--cwd": "cwd"},
        flags={
            "-s": "no_capture",
            "--no-capture-output": "no_capture",
            "--live-stream": "no_capture",
            "--dev": "dev",
            "--debug-wrapper-scripts": "debug",
        },
        remainder=True,
    )
    prefix = locate(opts.get("name"), opts.get("prefix"))
    require_env(prefix)
    if call and call[0] == "--":
        call = call[1:]
    if not call:
        raise CondaError("No executable provided. Usage: conda run [-n ENV | -p PREFIX] CMD [ARGS...]", "ArgumentError")
    import subprocess

    env = dict(os.environ)
    env.update(activation_env(prefix, os.environ))
    cwd = opts.get("cwd") or os.getcwd()
    capture = not opts.get("no_capture")
    script = f"/tmp/tmp{os.urandom(4).hex()}"
    try:
        proc = subprocess.Popen(
            call,
            env=env,
            cwd=cwd,
            stdout=subprocess.PIPE if capture else None,
            stderr=subprocess.PIPE if capture else None,
        )
    except FileNotFoundError as e:
        if e.filename == cwd or not os.path.isdir(cwd):
            stdout, stderr, rc = "", f"{script}: line 3: cd: {cwd}: No such file or directory\n", 1
        else:
            stdout, stderr, rc = "", f"{script}: line 3: {call[0]}: command not found\n", 127
        if capture:
            st.err(stderr + "\n")
        else:
            st.err(stderr)
    except PermissionError:
        stdout, stderr, rc = "", f"{script}: line 3: {call[0]}: Permission denied\n", 126
        st.err(stderr + ("\n" if capture else ""))
    else:
        if capture:
            raw_out, raw_err = proc.communicate()
            stdout, stderr = raw_out.decode("utf-8", "replace"), raw_err.decode("utf-8", "replace")
            # conda prints captured output with print(): one extra newline each.
            if stdout:
                out(stdout)
            if stderr:
                st.err(stderr + "\n")
        else:
            proc.wait()
        rc = proc.returncode
        if rc < 0:
            rc = 128 - rc
    if rc != 0:
        flush()
        st.err(f"ERROR conda.cli.main_run:execute(125): `conda run {' '.join(call)}` failed. (See above for error)\n")
    return rc


UNSUPPORTED = (
    "clean",
    "commands",
    "compare",
    "config",
    "export",
    "notices",
    "package",
    "rename",
    "search",
    "update",
    "upgrade",
    "doctor",
)


def main(argv: list[str], root: str, state_dir: str | None = None, io: st.Io | None = None) -> int:
    """Run ``conda ARGV`` for the install at ``root``, its state files in ``state_dir``; ``io``:
    where it writes, reads and waits (this process's stdio, else)."""
    run = io or st.Io()
    run.root, run.state_dir = root, state_dir
    st.set_io(run)
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
            st.err(ct.error(e.name, e.message))
        return e.rc
    except Usage as e:
        flush()
        st.err(f"{e.usage}\nconda: error: {e}\n")
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
        return cmd_shell(cmd[len("shell.") :], rest)
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
