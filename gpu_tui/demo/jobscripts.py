"""The demo's answers to gpu-tui's job and conda scripts (services/jobs/runner.py, services/conda.py,
services/killable.py), from the instance's simulated job table (demo/jobs.py) and conda install
(demo/condasim.py; demo/condascripts.py does the conda part). Nothing is executed.

gpu-tui sends most of them as `sh -c SCRIPT`; each is recognised by text only it has, and the
values it carries (the job directory, the window size, ...) are read from its own lines:

| script (services/...)      | recognised by                                       | answer                  |
|----------------------------|-----------------------------------------------------|-------------------------|
| jobs `_LIST`               | the `@@job` mark (core.jobs.JOB_MARK) and `boot_id`   | the listing             |
| jobs `_START`              | `setsid -f` and `read -r json`; reads stdin          | `started`, or 90-93     |
| jobs `_INSTALL_RUNNER`     | `cat > .../bin/NAME.tmp` and `mv`; reads stdin        | exit 0                  |
| the runner check           | exactly `[ -f .../bin/NAME ]`                        | 0 if installed, else 1  |
| jobs `_WINDOW`             | `wc -c`, `head -c`, `f=DIR/log`, `w=N`                | size line + last N bytes|
| jobs `_STOP`               | `stop_requested` and `kill -s`, `d=DIR`              | `stopped INT`, ...      |
| `state_dir_path`           | exactly `cd DIR 2>/dev/null && pwd -P`               | /root/.gpu-tui          |
| conda `FIND_CONDA_SCRIPT`  | the script itself, or `bin/conda` and `[ -x`         | /root/miniconda3/bin/conda |
| conda `env_pythons`        | each line `printf ...; if [ -x P/bin/python ]; ...`  | `NAME<TAB>Python 3.x.y` |
| conda `env_sizes`          | each line `printf ...; (du -sk ... P) ... cut -f 1`  | `NAME<TAB>KIB`          |

and as plain commands: `tail -c [+]N [-F|-f] -- DIR/log` (the summary read and the log
follow: a stream of the log's new bytes from the offset on), `rm -rf -- DIR...` (prune),
`/root/miniconda3/bin/conda env list [--json]` / `--version`, and (demo/condascripts.py)
these command lines as they come, before they are split into words (`plan_line`):

| command line (services/...)                      | answer                                            |
|--------------------------------------------------|---------------------------------------------------|
| killable `echo "@gpu-tui-pid $$"; exec CMD`      | `@gpu-tui-pid N` (a fake pid), then CMD's answer  |
|   CMD = `CONDA create -n NAME python=X -y 2>&1`  | conda 24.x's output over ~6 s; the env then exists |
|   CMD = `CONDA env remove -n NAME -y 2>&1`       | ... over ~4 s, then it is gone; base: exit 1      |
|   CMD = `CONDA install -n ENV -y PKG... 2>&1`    | ... over ~5 s; `no-such-*`: PackagesNotFoundError |
|   CMD = `PREFIX/bin/python -m pip install PKG... 2>&1` | pip 24.x's output over 4-8 s; `no-such-*`: exit 1 |
|   CMD = `CONDA init bash 2>&1`                   | `no change ...` lines (the demo's .bashrc has it) |
|   CMD = anything else                            | shellsim.plan's answer to CMD                     |
| killable's cancel `kill -s SIG -- -N ...; true`  | stops operation N (its exit 128+SIG), exit 0      |
| killable's check `kill -0 -- -N ... (or N)`      | 0 while operation N runs, else 1                  |

`PREFIX/bin/python -c <module probe>` (services/envcheck.py) answers from the env's packages
(condascripts.module_probe, via shellsim.plan): no torch in `py311` or a new env until
installed.

A job is named by its directory `<state_dir>/jobs/<id>`: only the id is used (the demo has one
state dir). Anything else falls through (None) to shellsim.plan's `not found`.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING

from gpu_tui.core.jobs import JOB_ID_RE, JOB_MARK
from gpu_tui.demo import condascripts
from gpu_tui.demo.jobs import CONDA_EXE, STATE_DIR, JobTable
from gpu_tui.demo.program import Program
from gpu_tui.services.conda import FIND_CONDA_SCRIPT

if TYPE_CHECKING:
    from gpu_tui.demo.simulate import InstanceSim

__all__ = ["plan_script", "plan_command", "plan_line", "FOLLOW_INTERVAL"]

FOLLOW_INTERVAL = 0.25
"""How often a followed log is checked for new bytes (GNU tail -F: 1 s, or at once with inotify)."""
_CHUNK = 256 * 1024  # most bytes one write of a followed log carries

_LINE_D = re.compile(r"^d=(.+)$", re.MULTILINE)
_LINE_F = re.compile(r"^f=(.+)/log$", re.MULTILINE)
_LINE_W = re.compile(r"^w=([0-9]+)$", re.MULTILINE)
_JOB_DIR = re.compile(r"/jobs/([^/]+)/*$")
_JOB_LOG = re.compile(r"/jobs/([^/]+)/log$")
_CWD_CHECK = re.compile(
    r"^if \[ (\S+) = 1 \] && ! \[ -d (.+?) \]; "
    r"then echo \"(working directory .*? does not exist)\"; exit ([0-9]+); fi$",
    re.MULTILINE,
)
_RUNNER_IN_START = re.compile(r"^runner=\"\$state/bin/([^\"/]+)\"$", re.MULTILINE)
_INSTALL = re.compile(r"^cat > (.+)/bin/([^/\s]+)\.tmp$", re.MULTILINE)
_RUNNER_CHECK = re.compile(r"\s*\[ -f (.+)/bin/([^/\s]+) \]\s*")
_STOP_STEPS = re.compile(r"^for step in ([A-Z0-9]+):", re.MULTILINE)
_STATE_PATH = re.compile(r"\s*cd (.+?) 2>/dev/null && pwd -P\s*")


def _word(text: str) -> str | None:
    """One shell word as the shell would read it (quotes removed); None if it is not one word."""
    try:
        words = shlex.split(text)
    except ValueError:
        return None
    return words[0] if len(words) == 1 else None


def _job_id(path_word: str | None, pattern: re.Pattern[str] = _JOB_DIR) -> str | None:
    if path_word is None:
        return None
    m = pattern.search(path_word)
    return m[1] if m and JOB_ID_RE.match(m[1]) else None


def _group_word(pattern: re.Pattern[str], script: str) -> str | None:
    m = pattern.search(script)
    return _word(m[1]) if m else None


# ---------------------------------------------------------------------------- sh -c scripts


def _list(table: JobTable) -> Program:
    return Program(stdout=table.listing(JOB_MARK))


def _start(script: str, table: JobTable) -> Program:
    # the real script checks before it reads its stdin; the answer waits for the client's EOF
    # anyway, so that the client's stdin never meets a closed channel
    def started(data: bytes) -> Program:
        job_id = _job_id(_group_word(_LINE_D, script))
        if job_id is None:
            return Program(stderr="gpu-tui demo: cannot read the job directory of this start script\n", status=94)
        m = _CWD_CHECK.search(script)
        if m is not None and m[1] == "1":
            cwd = _word(m[2])
            if cwd is None or not table.dir_exists(cwd):
                return Program(stdout=m[3] + "\n", status=int(m[4]))
        runner = _RUNNER_IN_START.search(script)
        if runner is not None and runner[1] not in table.runners:
            return Program(stdout="runner missing\n", status=93)
        text = data.decode("utf-8", "replace")
        json_line, _, command_sh = text.partition("\n")
        try:
            request = json.loads(json_line)
        except ValueError:
            request = None
        command = request.get("command") if isinstance(request, dict) else None
        if not isinstance(command, str):
            command = command_sh  # command.sh ends with the command as typed
        table.start(job_id, json_line, command)
        return Program(stdout="started\n")

    return Program(on_stdin=started)


def _install(script: str, table: JobTable) -> Program:
    name = _INSTALL.search(script)
    assert name is not None

    def installed(_data: bytes) -> Program:
        table.runners.add(name[2])
        return Program()

    return Program(on_stdin=installed)


def _window(script: str, table: JobTable) -> Program:
    job_id = _job_id(_group_word(_LINE_F, script))
    w = _LINE_W.search(script)
    window = int(w[1]) if w else 256 * 1024
    table.advance()
    job = table.get(job_id) if job_id else None
    if job is None:
        return Program(stdout="0\n")
    size = len(job.log)
    start = size - window if size > window else 0
    return Program(stdout=f"{size}\n".encode() + bytes(job.log[start:]))


def _stop(script: str, table: JobTable) -> Program:
    job_id = _job_id(_group_word(_LINE_D, script))
    table.advance()
    job = table.get(job_id) if job_id else None
    if job is None:
        return Program(stdout="no pid\n", status=3)
    if not table.stop(job.id):
        return Program(stdout="finished\n")
    m = _STOP_STEPS.search(script)
    return Program(stdout=f"stopped {m[1] if m else 'INT'}\n")


def _state_dir(path_text: str, table: JobTable) -> Program:
    word = _word(path_text)
    if word is None:
        return Program(status=2)
    path = table.expand(word)
    exists = table.state_dir_exists if path == STATE_DIR else table.dir_exists(path)
    return Program(stdout=path + "\n") if exists else Program(status=2)


def plan_script(script: str, sim: InstanceSim) -> Program | None:
    """The answer to `sh -c SCRIPT` when SCRIPT is one of gpu-tui's job or conda scripts."""
    table: JobTable = sim.jobs
    if JOB_MARK in script and "boot_id" in script:
        return _list(table)
    if "setsid -f" in script and "read -r json" in script:
        return _start(script, table)
    if _INSTALL.search(script) and "mv " in script:
        return _install(script, table)
    if "wc -c" in script and "head -c" in script and _LINE_F.search(script):
        return _window(script, table)
    if "stop_requested" in script and "kill -s" in script:
        return _stop(script, table)
    m = _RUNNER_CHECK.fullmatch(script)
    if m is not None:
        return Program(status=0 if m[2] in table.runners else 1)
    m = _STATE_PATH.fullmatch(script)
    if m is not None:
        return _state_dir(m[1], table)
    if script.strip() == FIND_CONDA_SCRIPT.strip() or ("bin/conda" in script and "[ -x" in script):
        return Program(stdout=CONDA_EXE + "\n")
    if "/bin/python --version" in script:
        return condascripts.pythons_script(script, sim)
    if "du -sk" in script and "cut -f 1" in script:
        return condascripts.sizes_script(script, sim)
    return None


# ---------------------------------------------------------------------------- plain commands


def _follow(table: JobTable, job_id: str, start: int | None, last: int | None) -> Program:
    """`tail -F`: the log from byte `start` (or its last `last` bytes) on, as it grows."""
    pos = start

    def chunk(_i: int = 0) -> bytes:
        nonlocal pos
        table.advance()
        job = table.get(job_id)
        if job is None:
            return b""  # tail -F waits for the file to appear
        if pos is None:
            pos = max(0, len(job.log) - (last or 0))
        data = bytes(job.log[pos : pos + _CHUNK])
        pos += len(data)
        return data

    return Program(stdout=chunk(), interval=FOLLOW_INTERVAL, tick=chunk)


def _tail(args: list[str], table: JobTable) -> Program | None:
    count: str | None = None
    follow = False
    paths: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            paths += args[i + 1 :]
            break
        if a in ("-F", "-f", "--follow", "--retry"):
            follow = True
        elif a == "-c" and i + 1 < len(args):
            i += 1
            count = args[i]
        elif a.startswith("-c") and len(a) > 2:
            count = a[2:]
        elif a.startswith("-") and a != "-":
            return None
        else:
            paths.append(a)
        i += 1
    if count is None or len(paths) != 1 or not count.lstrip("+").isdigit():
        return None
    path = paths[0]
    job_id = _job_id(path, _JOB_LOG)
    from_start = count.startswith("+")
    n = int(count.lstrip("+"))
    if job_id is None:
        return Program(stderr=f"tail: cannot open '{path}' for reading: No such file or directory\n", status=1)
    if follow:
        return _follow(table, job_id, max(0, n - 1) if from_start else None, None if from_start else n)
    table.advance()
    job = table.get(job_id)
    if job is None:
        return Program(stderr=f"tail: cannot open '{path}' for reading: No such file or directory\n", status=1)
    log = job.log
    data = log[max(0, n - 1) :] if from_start else log[max(0, len(log) - n) :]
    return Program(stdout=bytes(data))


def _rm(args: list[str], table: JobTable) -> Program:
    flags = "".join(a[1:] for a in args if a.startswith("-") and a != "--")
    paths = [a for a in args if not a.startswith("-")] if "--" not in args else args[args.index("--") + 1 :]
    errors = []
    for path in paths:
        job_id = _job_id(path)
        if job_id is None:
            continue  # not a job directory: nothing to simulate
        if "r" not in flags.lower():
            errors.append(f"rm: cannot remove '{path}': Is a directory\n")
            continue
        table.remove(job_id)
    return Program(stderr="".join(errors), status=1 if errors else 0)


_COMMANDS: dict[str, Callable[[list[str], JobTable], Program | None]] = {"tail": _tail, "rm": _rm}


def plan_line(command: str, sim: InstanceSim, fallback: Callable[[str], Program]) -> Program | None:
    """The answer to a command line read as a whole (before it is split into words), if it is
    one of the conda manager's: Killable's wrapper, the kills (condascripts.plan_line)."""
    return condascripts.plan_line(command, sim, fallback)


def plan_command(argv: list[str], sim: InstanceSim) -> Program | None:
    """The answer to a plain command line (its words, redirections dropped), if it is one of
    gpu-tui's job or conda commands."""
    table: JobTable = sim.jobs
    conda = condascripts.plain(argv, sim)
    if conda is not None:
        return conda
    handler = _COMMANDS.get(argv[0])
    return handler(argv[1:], table) if handler is not None else None
