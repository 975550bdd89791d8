"""The demo conda's answers to the command lines and scripts the conda manager sends
(services/conda.py, services/killable.py), recognised by their text and answered from the
instance's conda install on disk (demo/condarun.py). Nothing is executed.

Entry points (dispatched from jobscripts.py / shellsim.py): `plan_line` (the killable wrapper
and the kill commands, read from the raw command line), `pythons_script` / `sizes_script`
(`sh -c` scripts), `plain` (an unwrapped conda or pip command), `module_probe` (`PYTHON -c`).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING

from gpu_tui.demo.condarun import CONDA_EXE, CONDA_ROOT
from gpu_tui.demo.program import Program
from gpu_tui.services.killable import PID_MARK, killable_command

if TYPE_CHECKING:
    from gpu_tui.demo.condarun import CondaBox
    from gpu_tui.demo.simulate import InstanceSim

__all__ = [
    "plan_line",
    "plain",
    "pythons_script",
    "sizes_script",
    "module_probe",
]

_SIGNALS = {"HUP": 1, "INT": 2, "QUIT": 3, "KILL": 9, "USR1": 10, "USR2": 12, "TERM": 15}
_REDIRECT = re.compile(r"^[0-9]*(?:>>?|<)(?:&[0-9-]|/dev/null)?$|^[0-9]*>&[0-9-]$|^[0-9]*>/dev/null$")
_KILLABLE = killable_command("")


def _words(command: str) -> list[str] | None:
    try:
        return [w for w in shlex.split(command) if not _REDIRECT.match(w)]
    except ValueError:
        return None


def _signal_number(word: str) -> int:
    name = word.upper().removeprefix("SIG")
    return int(name) if name.isdigit() and int(name) < 65 else _SIGNALS.get(name, -1)


def _kill_one(words: list[str], conda: CondaBox) -> tuple[bool, str]:
    """One `kill` invocation: (success, stderr)."""
    signal = 15
    i = 1
    targets: list[str] = []
    while i < len(words):
        w = words[i]
        if w == "--":
            targets += words[i + 1 :]
            break
        if w == "-s" and i + 1 < len(words) and not targets:
            i += 1
            signal = _signal_number(words[i])
        elif w.startswith("-") and len(w) > 1 and not targets:
            signal = _signal_number(w[1:])
        else:
            targets.append(w)
        i += 1
    if signal < 0 or not targets:
        if signal < 0:
            return False, "sh: 1: kill: invalid signal\n"
        return False, "kill: usage: kill [-s sigspec | -n signum | -sigspec] pid\n"
    ok = True
    err = ""
    for t in targets:
        digits = t[1:] if t.startswith("-") else t
        if not digits.isdigit() or not conda.signal(int(digits), signal):
            ok = False
            err += "sh: 1: kill: No such process\n"
    return ok, err


_KILL_LINE = re.compile(r"^\s*kill\b[^;&|`$()<>]*(?:\|\|\s*kill\b[^;&|`$()<>]*)*(?:;\s*true\s*)?$")


def _kill_line(command: str, conda: CondaBox) -> Program | None:
    """`kill -s SIG -- -N 2>/dev/null || kill -s SIG N 2>/dev/null; true`, `kill -0 ...`."""
    if not _KILL_LINE.match(command.replace("2>/dev/null", "")):
        return None
    body, _, rest = command.partition(";")
    forced = rest.strip() == "true"
    errors = ""
    ok = False
    for alt in body.split("||"):
        words = _words(alt)
        if not words or words[0] != "kill":
            return None
        ok, err = _kill_one(words, conda)
        if "2>/dev/null" not in alt:
            errors += err
        if ok:
            break
    return Program(stderr=errors, status=0 if ok or forced else 1)


def plan_line(command: str, sim: InstanceSim, fallback: Callable[[str], Program]) -> Program | None:
    """The raw command line: Killable's wrapper (`echo "@gpu-tui-pid $$"; exec CMD`) around a
    conda or pip operation (or anything else `fallback` answers), and the kill commands."""
    conda: CondaBox = sim.jobs.conda
    if command.startswith(_KILLABLE):
        inner = command[len(_KILLABLE) :]
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
    if command.lstrip().startswith("kill"):
        return _kill_line(command, conda)
    return None


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


_PY_LINE = re.compile(
    r'^printf "%s\\t" (?P<name>.+?); if \[ -x (?P<prefix>.+?)/bin/python \]; then (?P=prefix)/bin/python --version '
    r"2>&1 \| head -n 1; else echo; fi$"
)
_DU_LINE = re.compile(r'^printf "%s\\t" (?P<name>.+?); \((?P<du>.+)\) 2>/dev/null \| head -n 1 \| cut -f 1; true$')


def _lines(script: str) -> list[str]:
    return [line for line in script.splitlines() if line.strip()]


def _one_word(text: str) -> str | None:
    try:
        words = shlex.split(text)
    except ValueError:
        return None
    return words[0] if len(words) == 1 else None


def pythons_script(script: str, sim: InstanceSim) -> Program | None:
    """services/conda.env_pythons: `NAME<TAB>Python 3.x.y` per env line."""
    lines = _lines(script)
    matches = [_PY_LINE.match(line) for line in lines]
    if not lines or not all(matches):
        return None
    conda: CondaBox = sim.jobs.conda
    out = []
    for m in matches:
        assert m is not None
        name, prefix = _one_word(m["name"]), _one_word(m["prefix"])
        python = conda.python_of(prefix) if prefix else None
        version = f"Python {python}" if python else ""
        out.append(f"{name or ''}\t{version}\n")
    return Program(stdout="".join(out))


def sizes_script(script: str, sim: InstanceSim) -> Program | None:
    """services/conda.env_sizes: `NAME<TAB>KIB` per env line (`du -sk`)."""
    lines = _lines(script)
    matches = [_DU_LINE.match(line) for line in lines]
    if not lines or not all(matches) or "du -sk" not in script:
        return None
    conda: CondaBox = sim.jobs.conda
    out = []
    for m in matches:
        assert m is not None
        first = _words(m["du"].split("||")[0]) or []
        kib = None
        if len(first) >= 3 and first[:2] == ["du", "-sk"]:
            exclude = any(w.startswith("--exclude=") for w in first)
            kib = conda.du_kib(first[-1], exclude_envs=exclude)
        out.append(f"{_one_word(m['name']) or ''}\t{'' if kib is None else kib}\n")
    return Program(stdout="".join(out))


def module_probe(python: str, code: str, sim: InstanceSim) -> Program | None:
    """`PYTHON -c <module probe>` where PYTHON is a conda env's: the env's own answer when it
    lacks the module (or the python is not there); None to let envprobe answer as for a box
    with torch."""
    if not python.startswith(CONDA_ROOT + "/"):
        return None
    conda: CondaBox = sim.jobs.conda
    prefix = conda.env_of_python(python)
    if prefix is None:
        return Program(stdout=f"sh: 1: {python}: not found\n", status=127)  # gpu-tui sends it with 2>&1
    packages = conda.packages(prefix)
    if "import torch" in code and "torch" not in packages:
        return Program(stdout=json.dumps({"error": "ModuleNotFoundError: No module named 'torch'"}) + "\n")
    paddle = next((n for n in packages if n.startswith("paddlepaddle")), None)
    if "find_spec('paddle')" in code and paddle is not None:
        answer = {"version": packages[paddle], "cuda_available": paddle.endswith("-gpu")}
        return Program(stdout=json.dumps(answer) + "\n")
    return None
