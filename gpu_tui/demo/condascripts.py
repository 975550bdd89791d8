"""The demo conda's answers to the command lines and scripts the conda manager sends
(services/conda.py, services/killable.py), recognised by the services' own builders
(demo/scriptmatch.py) and answered from the instance's conda install on disk
(demo/condarun.py). Nothing is executed; a change inside a service's script needs no change here.

Entry points (dispatched from jobscripts.py / shellsim.py): `plan_line` (the killable wrapper
and the cancel's kill commands, read from the raw command line), `pythons_script` /
`sizes_script` (`sh -c` scripts, one line per env), `plain` (an unwrapped conda or pip
command), `module_probe` (`PYTHON -c` with services/envcheck.py's module probe).
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING

from gpu_tui.demo.condarun import CONDA_EXE, CONDA_ROOT
from gpu_tui.demo.program import Program
from gpu_tui.demo.scriptmatch import HOLE_N, HOLE_W, Template
from gpu_tui.services.conda import env_python_line, env_size_line
from gpu_tui.services.envcheck import MODULE_PROBE
from gpu_tui.services.killable import PID_MARK, alive_command, killable_command, signal_command

if TYPE_CHECKING:
    from gpu_tui.demo.condarun import CondaBox
    from gpu_tui.demo.simulate import InstanceSim

__all__ = [
    "plan_line",
    "plain",
    "pythons_script",
    "sizes_script",
    "module_probe",
    "recognise_line",
    "read_env_script",
    "probed_module",
]

_SIGNALS = {"HUP": 1, "INT": 2, "QUIT": 3, "KILL": 9, "USR1": 10, "USR2": 12, "TERM": 15}

# placeholders for the builders' shell words (none is a prefix of another, nor of HOLE_W)
_NAME, _PREFIX, _SIGNAL, _PID = "GPUTUIENVNAME", "GPUTUIPREFIX", "GPUTUISIGNAL", str(HOLE_N)
_FIELDS = {_NAME: "name", _PREFIX: "prefix", _SIGNAL: "signal", _PID: "pid", HOLE_W: "command"}

_KILLABLE = Template(killable_command(HOLE_W), HOLE_W)
# command lines read whole: the cancel's signal to the process group, and its is-it-gone probe
_LINES: tuple[tuple[str, Template], ...] = (
    ("signal", Template(signal_command(_SIGNAL, HOLE_N), _SIGNAL, HOLE_N)),
    ("alive", Template(alive_command(HOLE_N), HOLE_N)),
)
# the per-env lines of `sh -c` scripts; base's size leaves out the other envs and the cache
_PYTHON_LINES: tuple[tuple[str, Template], ...] = (
    ("python", Template(env_python_line(_NAME, _PREFIX), _NAME, _PREFIX)),
)
_SIZE_LINES: tuple[tuple[str, Template], ...] = tuple(
    ("size_base" if base else "size", Template(env_size_line(_NAME, _PREFIX, base=base), _NAME, _PREFIX))
    for base in (True, False)
)
_MODULES = {code: name for name, code in MODULE_PROBE.items()}


def _words(command: str) -> list[str] | None:
    # imported here: shellsim imports this module
    from gpu_tui.demo.shellsim import words

    try:
        return words(command)
    except ValueError:
        return None


def _one_word(text: str) -> str | None:
    try:
        words = shlex.split(text)
    except ValueError:
        return None
    return words[0] if len(words) == 1 else None


def _match(text: str, templates: tuple[tuple[str, Template], ...]) -> tuple[str, dict[str, str]] | None:
    """The first template `text` is, and its fields as single shell words, unquoted; None
    where it is none, a value is not one word, or a placeholder repeats with another value."""
    for kind, template in templates:
        values = template.match(text)
        if values is None:
            continue
        fields: dict[str, str] = {}
        for hole, value in zip(template.holes, values, strict=True):
            word = _one_word(value)
            if word is None or fields.setdefault(_FIELDS[hole], word) != word:
                break
        else:
            return kind, fields
    return None


def recognise_line(command: str) -> tuple[str, dict[str, str]] | None:
    """Which of the cancel's command lines `command` is (`signal`: fields `signal`, `pid`;
    `alive`: `pid`), or None."""
    return _match(command, _LINES)


def read_env_script(script: str) -> list[tuple[str, dict[str, str]]] | None:
    """An env_pythons or env_sizes script, line by line: (`python` | `size_base` | `size`,
    fields `name` and `prefix`); None unless every line is one of the same script's."""
    for templates in (_PYTHON_LINES, _SIZE_LINES):
        seen = [_match(line, templates) for line in script.splitlines(keepends=True)]
        if seen and all(seen):
            return [s for s in seen if s is not None]
    return None


def probed_module(code: str) -> str | None:
    """Which module services/envcheck.py's probe `code` imports (`torch`, `paddle`), or None."""
    return _MODULES.get(code)


def _signal_number(word: str) -> int:
    name = word.upper().removeprefix("SIG")
    return int(name) if name.isdigit() and int(name) < 65 else _SIGNALS.get(name, -1)


def _kill_line(command: str, conda: CondaBox) -> Program | None:
    """The cancel's kills (services/killable.py): a signal to the process group (its errors to
    /dev/null, and it ends in `true`), and `kill -0`, which fails once the group is gone."""
    seen = recognise_line(command)
    if seen is None or not seen[1]["pid"].isdigit():
        return None
    kind, fields = seen
    pid = int(fields["pid"])
    if kind == "alive":
        return Program(status=0 if conda.signal(pid, 0) else 1)
    signal = _signal_number(fields["signal"])
    if signal > 0:
        conda.signal(pid, signal)
    return Program()


def plan_line(command: str, sim: InstanceSim, fallback: Callable[[str], Program]) -> Program | None:
    """The raw command line: Killable's wrapper (`echo "@gpu-tui-pid $$"; exec CMD`) around a
    conda or pip operation (or anything else `fallback` answers), and the kill commands."""
    conda: CondaBox = sim.jobs.conda
    wrapped = _KILLABLE.match(command)
    if wrapped is not None:
        inner = wrapped[0]
        pid = conda.new_pid()
        head = f"{PID_MARK}{pid}\n"
        argv = _words(inner)
        if argv:
            op, answer = conda.run(argv, pid)
            if op is not None:
                return op.stream(head)
            if answer is not None:
                return _with_head(answer, head)
            if argv[0].startswith(CONDA_ROOT + "/") and not os.path.exists(conda.host(argv[0])):
                # gpu-tui's operations all end in 2>&1: the shell's complaint comes on stdout
                return Program(stdout=f"{head}sh: 1: exec: {argv[0]}: not found\n", status=127)
        return _with_head(fallback(inner), head)
    return _kill_line(command, conda)


def _with_head(program: Program, head: str) -> Program:
    if program.on_stdin is not None:
        return program
    out = program.stdout
    program.stdout = head.encode() + out if isinstance(out, bytes) else head + out
    return program


def plain(argv: list[str], sim: InstanceSim) -> Program | None:
    """An unwrapped `conda ...` or `PYTHON -m pip install ...` (no pid line)."""
    conda: CondaBox = sim.jobs.conda
    if argv[0] != CONDA_EXE and not (len(argv) >= 4 and argv[1:4] == ["-m", "pip", "install"]):
        return None
    pid = conda.new_pid()
    op, answer = conda.run(argv, pid)
    if op is not None:
        return op.stream("")
    return answer


def pythons_script(script: str, sim: InstanceSim) -> Program | None:
    """services/conda.env_pythons: `NAME<TAB>Python 3.x.y` per env line."""
    seen = read_env_script(script)
    if seen is None or seen[0][0] != "python":
        return None
    conda: CondaBox = sim.jobs.conda
    out = []
    for _kind, fields in seen:
        python = conda.python_of(fields["prefix"])
        out.append(f"{fields['name']}\t{f'Python {python}' if python else ''}\n")
    return Program(stdout="".join(out))


def sizes_script(script: str, sim: InstanceSim) -> Program | None:
    """services/conda.env_sizes: `NAME<TAB>KIB` per env line (`du -sk`)."""
    seen = read_env_script(script)
    if seen is None or seen[0][0] == "python":
        return None
    conda: CondaBox = sim.jobs.conda
    out = []
    for kind, fields in seen:
        kib = conda.du_kib(fields["prefix"], exclude_envs=kind == "size_base")
        out.append(f"{fields['name']}\t{'' if kib is None else kib}\n")
    return Program(stdout="".join(out))


def module_probe(python: str, code: str, sim: InstanceSim) -> Program | None:
    """`PYTHON -c <module probe>` where PYTHON is a conda env's: the env's own answer when it
    lacks the module (or the python is not there); None to let envprobe answer as for a box
    with torch."""
    module = probed_module(code)
    if module is None or not python.startswith(CONDA_ROOT + "/"):
        return None
    conda: CondaBox = sim.jobs.conda
    prefix = conda.env_of_python(python)
    if prefix is None:
        return Program(stdout=f"sh: 1: {python}: not found\n", status=127)  # gpu-tui sends it with 2>&1
    packages = conda.packages(prefix)
    if module == "torch" and "torch" not in packages:
        return Program(stdout=json.dumps({"error": "ModuleNotFoundError: No module named 'torch'"}) + "\n")
    paddle = next((n for n in packages if n.startswith("paddlepaddle")), None)
    if module == "paddle" and paddle is not None:
        answer = {"version": packages[paddle], "cuda_available": paddle.endswith("-gpu")}
        return Program(stdout=json.dumps(answer) + "\n")
    return None
