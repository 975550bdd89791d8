"""The demo's answers to gpu-tui's job and conda scripts (services/jobs/runner.py,
services/jobs/sched_plain.py, services/conda.py, services/killable.py), from the instance's
simulated job table (demo/jobs.py) and conda install (demo/condarun.py; demo/condascripts.py does
the conda part). Nothing is executed.

Each job script is recognised by calling the service's own builder with placeholders
(demo/scriptmatch.py): the text around them is the service's, so a change inside a script needs
no change here; only the values it carries (the job directory, the window size, ...) are read:

| script (services/jobs/...)                   | answer                                      |
|----------------------------------------------|---------------------------------------------|
| `sh -c` runner.list_script                   | the listing                                 |
| `sh -c` sched_plain.start_script             | `started`, or 91 (no cwd), 93 (no runner); reads stdin |
| `sh -c` sched_plain.install_runner_script    | exit 0, the runner then exists; reads stdin |
| `sh -c` runner.window_script                 | size line + last N bytes                    |
| `sh -c` sched_plain.stop_script              | `stopped SIG` (the plan's first), `finished`, `no pid` (3) |
| `sh -c` runner.state_path_script             | /root/.gpu-tui once something is there, else 2 |
| `sh -c` series.read.catch_up_script          | the summariser's answer: every point of the log so far |
| `sh -c` ... with `thin`                      | its overview of them (core/trainlog/overview)          |
| runner.summary_command (`cat; tail -c N`)    | the log's last N bytes                      |
| runner.follow_command (`tail -c +N -F`)      | a stream of the log's new bytes from byte N on |
| runner.prune_command (`rm -rf -- DIR...`)    | the jobs are gone                           |

The user's data (job.json and command.sh) comes on stdin and is read as it arrives. Conda, by
text only its scripts have (`sh -c`):

| script (services/...)      | recognised by                                       | answer                  |
|----------------------------|-----------------------------------------------------|-------------------------|
| conda `FIND_CONDA_SCRIPT`  | the script itself, or `bin/conda` and `[ -x`         | /root/miniconda3/bin/conda |
| conda `env_pythons`        | each line `printf ...; if [ -x P/bin/python ]; ...`  | `NAME<TAB>Python 3.x.y` |
| conda `env_sizes`          | each line `printf ...; (du -sk ... P) ... cut -f 1`  | `NAME<TAB>KIB`          |

and as plain commands `/root/miniconda3/bin/conda env list [--json]` / `--version`, and
(demo/condascripts.py) these command lines as they come, before they are split into words
(`plan_line`):

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
import posixpath
import shlex
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from gpu_tui.core.jobs import JOB_ID_RE, JOB_MARK
from gpu_tui.core.trainlog.overview import SeriesOverview
from gpu_tui.core.trainlog.series import SeriesReader, encode_points, safe_cut
from gpu_tui.demo import condascripts
from gpu_tui.demo.jobs import CONDA_EXE, STATE_DIR, JobTable
from gpu_tui.demo.program import Program
from gpu_tui.demo.scriptmatch import HOLE_N, Template
from gpu_tui.services.conda import FIND_CONDA_SCRIPT
from gpu_tui.services.jobs import runner, sched_plain
from gpu_tui.services.jobs.series.read import catch_up_script

if TYPE_CHECKING:
    from gpu_tui.demo.simulate import InstanceSim

__all__ = ["plan_script", "plan_command", "plan_line", "recognise", "FOLLOW_INTERVAL"]

FOLLOW_INTERVAL = 0.25
"""How often a followed log is checked for new bytes (GNU tail -F: 1 s, or at once with inotify)."""
_CHUNK = 256 * 1024  # most bytes one write of a followed log carries

# placeholders for the builders' shell words (none is a prefix of another)
_STATE, _DIR, _CWD, _RUNNER, _PLAN = "GPUTUISTATE", "GPUTUIJOBDIR", "GPUTUICWD", "GPUTUIRUNNER", "GPUTUIPLAN"
_NAMES = {
    _STATE: "state",
    _DIR: "dir",
    _CWD: "cwd",
    _RUNNER: "runner",
    _PLAN: "plan",
    str(HOLE_N): "n",
    str(HOLE_N + 1): "n",
}

# `sh -c` scripts: (name, template); a start with and without a working directory, with and
# without tmux (each a literal 0 or 1 in the script)
_SCRIPTS: tuple[tuple[str, Template], ...] = (
    ("list", Template(runner.list_script(_STATE), _STATE)),
    *(
        (
            "start",
            Template(
                sched_plain.start_script(_STATE, _DIR, cwd, tmux=tmux, runner=_RUNNER), _STATE, _DIR, _CWD, _RUNNER
            ),
        )
        for cwd in (None, _CWD)
        for tmux in (False, True)
    ),
    ("install_runner", Template(sched_plain.install_runner_script(_STATE, _RUNNER), _STATE, _RUNNER)),
    ("window", Template(runner.window_script(_DIR, HOLE_N), _DIR, HOLE_N)),
    ("stop", Template(sched_plain.stop_script(_DIR, _PLAN), _DIR, _PLAN)),
    ("state_path", Template(runner.state_path_script(_STATE), _STATE)),
    ("series", Template(catch_up_script(_STATE, _DIR), _STATE, _DIR)),
    ("series_thin", Template(catch_up_script(_STATE, _DIR, thin=True), _STATE, _DIR)),
)
# command lines, before they are split into words; the follow before the summary read, which
# would take `+N -F` for its N. follow_command prints offset + 1: the hole is HOLE_N + 1.
_LINES: tuple[tuple[str, Template], ...] = (
    ("follow", Template(runner.follow_command(_DIR, HOLE_N), _DIR, HOLE_N + 1)),
    ("summary", Template(runner.summary_command(_DIR, HOLE_N), _DIR, HOLE_N)),
    ("prune", Template(runner.prune_command([_DIR]), _DIR)),
)


def recognise(text: str, *, line: bool = False) -> tuple[str, dict[str, str]] | None:
    """Which job script `text` is (a `sh -c` script; with `line`, a whole command line) and the
    values it carries, by field (`state`, `dir`, `cwd`, `runner`, `plan`, `n`: the shell words
    as they came); None if it is none of them. A placeholder the script holds again gives
    `<field>_text` too, from its second place (a start's cwd as its refusal prints it)."""
    for name, template in _LINES if line else _SCRIPTS:
        values = template.match(text)
        if values is None:
            continue
        fields: dict[str, str] = {}
        for hole, value in zip(template.holes, values, strict=True):
            key = _NAMES[hole]
            fields.setdefault(key if key not in fields else key + "_text", value)
        return name, fields
    return None


def _word(text: str | None) -> str | None:
    """One shell word as the shell would read it (quotes removed); None if it is not one word."""
    if text is None:
        return None
    try:
        words = shlex.split(text)
    except ValueError:
        return None
    return words[0] if len(words) == 1 else None


def _job_id(path: str | None) -> str | None:
    """The id of the job directory `path` (`.../jobs/<id>`, already a plain path); else None."""
    if path is None:
        return None
    parent, job_id = posixpath.split(path.rstrip("/"))
    return job_id if posixpath.basename(parent) == "jobs" and JOB_ID_RE.match(job_id) else None


def _number(text: str | None) -> int | None:
    return int(text) if text is not None and text.isdigit() else None


# ---------------------------------------------------------------------------- sh -c scripts


def _list(table: JobTable) -> Program:
    return Program(stdout=table.listing(JOB_MARK))


def _start(fields: dict[str, str], table: JobTable) -> Program:
    # the real script checks before it reads its stdin; the answer waits for the client's EOF
    # anyway, so that the client's stdin never meets a closed channel
    def started(data: bytes) -> Program:
        job_id = _job_id(_word(fields.get("dir")))
        if job_id is None:
            return Program(stderr="gpu-tui demo: cannot read the job directory of this start script\n", status=94)
        if "cwd" in fields:
            cwd = _word(fields["cwd"])
            if cwd is None or not table.dir_exists(cwd):
                text = fields.get("cwd_text", fields["cwd"])
                return Program(stdout=f"working directory {text} does not exist\n", status=91)
        if fields.get("runner") not in table.runners:
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


def _install(fields: dict[str, str], table: JobTable) -> Program:
    name = _word(fields["runner"]) or fields["runner"]

    def installed(_data: bytes) -> Program:
        table.runners.add(name)
        return Program()

    return Program(on_stdin=installed)


def _window(fields: dict[str, str], table: JobTable) -> Program:
    job_id = _job_id(_word(fields.get("dir")))
    window = _number(fields.get("n"))
    table.advance()
    job = table.get(job_id) if job_id else None
    if job is None:
        return Program(stdout="0\n")
    size = len(job.log)
    start = size - window if window is not None and size > window else 0
    return Program(stdout=f"{size}\n".encode() + bytes(job.log[start:]))


def _stop(fields: dict[str, str], table: JobTable) -> Program:
    job_id = _job_id(_word(fields.get("dir")))
    table.advance()
    job = table.get(job_id) if job_id else None
    if job is None:
        return Program(stdout="no pid\n", status=3)
    if not table.stop(job.id):
        return Program(stdout="finished\n")
    first = fields.get("plan", "").split(":", 1)[0]  # `INT:50 TERM:25 ...`: the job ends at SIGINT
    return Program(stdout=f"stopped {first or 'INT'}\n")


def _state_dir(fields: dict[str, str], table: JobTable) -> Program:
    word = _word(fields.get("state"))
    if word is None:
        return Program(status=2)
    path = table.expand(word)
    exists = table.state_dir_exists if path == STATE_DIR else table.dir_exists(path)
    return Program(stdout=path + "\n") if exists else Program(status=2)


def _series(fields: dict[str, str], table: JobTable, thin: bool = False) -> Program:
    """The summariser's `once` answer (services/jobs/series/summariser.py) over the whole log;
    `thin`: its overview's rows (core/trainlog/overview) instead of every point."""
    job_id = _job_id(_word(fields.get("dir")))
    table.advance()
    job = table.get(job_id) if job_id else None
    if job is None:
        return Program(stdout="@@nojob\n")
    data, ended = bytes(job.log), job.exit_code is not None
    reader = SeriesReader()
    points = reader.feed(data if ended else data[: safe_cut(data)]) + (reader.close() if ended else [])
    status: dict[str, object] = {
        "read": reader.offset,
        "reread": False,
        "offset": reader.offset,
        "size": len(data),
        "closed": ended,
    }
    text = encode_points(points)
    if thin:
        overview = SeriesOverview()
        for p in points:
            overview.add_log_point(p.tag, p.x, p.value, p.time)
        status["thin"] = True
        text = "".join(json.dumps(row) + "\n" for row in overview.rows())
    body = zlib.compress(text.encode("utf-8"))
    return Program(stdout=b"@@status " + json.dumps(status).encode("utf-8") + b"\n" + body)


_SCRIPT_ANSWERS: dict[str, Callable[[dict[str, str], JobTable], Program]] = {
    "list": lambda _fields, table: _list(table),
    "start": _start,
    "install_runner": _install,
    "window": _window,
    "stop": _stop,
    "state_path": _state_dir,
    "series": _series,
    "series_thin": lambda fields, table: _series(fields, table, thin=True),
}


def plan_script(script: str, sim: InstanceSim) -> Program | None:
    """The answer to `sh -c SCRIPT` when SCRIPT is one of gpu-tui's job or conda scripts."""
    table: JobTable = sim.jobs
    seen = recognise(script)
    if seen is not None:
        return _SCRIPT_ANSWERS[seen[0]](seen[1], table)
    if script.strip() == FIND_CONDA_SCRIPT.strip() or ("bin/conda" in script and "[ -x" in script):
        return Program(stdout=CONDA_EXE + "\n")
    answer = condascripts.pythons_script(script, sim)
    return answer if answer is not None else condascripts.sizes_script(script, sim)


# ---------------------------------------------------------------------------- plain commands


def _follow(table: JobTable, job_id: str, start: int) -> Program:
    """`tail -F`: the log from byte `start` on, as it grows."""
    pos = start

    def chunk(_i: int = 0) -> bytes:
        nonlocal pos
        table.advance()
        job = table.get(job_id)
        if job is None:
            return b""  # tail -F waits for the file to appear
        data = bytes(job.log[pos : pos + _CHUNK])
        pos += len(data)
        return data

    return Program(stdout=chunk(), interval=FOLLOW_INTERVAL, tick=chunk)


def _log_line(name: str, fields: dict[str, str], table: JobTable) -> Program | None:
    """The log reads: `tail -c N` (its last N bytes) and `tail -c +N -F` (from byte N on)."""
    path = _word(fields.get("dir"))
    job_id = _job_id(path)
    n = _number(fields.get("n"))
    if n is None:
        return None
    if job_id is None:
        # their `2>/dev/null` hides tail's complaint; the demo has no other files
        return Program(status=1)
    if name == "follow":
        return _follow(table, job_id, max(0, n - 1))
    table.advance()
    job = table.get(job_id)
    if job is None:
        return Program(status=1)
    return Program(stdout=bytes(job.log[max(0, len(job.log) - n) :]))


def _prune(fields: dict[str, str], table: JobTable) -> Program:
    try:
        paths = shlex.split(fields["dir"])
    except ValueError:
        return Program(stderr="sh: 1: Syntax error: Unterminated quoted string\n", status=2)
    for path in paths:
        job_id = _job_id(path)
        if job_id is not None:  # not a job directory: nothing to simulate
            table.remove(job_id)
    return Program()


def plan_line(command: str, sim: InstanceSim, fallback: Callable[[str], Program]) -> Program | None:
    """The answer to a command line read as a whole (before it is split into words), if it is
    one of the job services' (the log reads, prune) or the conda manager's: Killable's wrapper,
    the kills (condascripts.plan_line)."""
    seen = recognise(command, line=True)
    if seen is not None:
        name, fields = seen
        answer = _prune(fields, sim.jobs) if name == "prune" else _log_line(name, fields, sim.jobs)
        if answer is not None:
            return answer
    return condascripts.plan_line(command, sim, fallback)


def plan_command(argv: list[str], sim: InstanceSim) -> Program | None:
    """The answer to a plain command line (its words, redirections dropped), if it is one of
    gpu-tui's conda commands."""
    return condascripts.plain(argv, sim)
