"""The demo recognises every script and command line the conda manager sends, by the services'
own builders (demo/condascripts.py over demo/scriptmatch.py), and reads back the values they carry."""

from __future__ import annotations

import shlex

import pytest

from gpu_tui.demo.condascripts import probed_module, read_env_script, recognise_line
from gpu_tui.services import conda, killable
from gpu_tui.services.conda import env_python_line, env_size_line
from gpu_tui.services.envcheck import MODULE_PROBE

# a name with a space and one with a quote, under a root with a space (names from `conda env list`)
ENVS = {
    "base": "/root/mini conda3",
    "py311": "/root/mini conda3/envs/py311",
    "my env": "/root/mini conda3/envs/my env",
    "it's": "/srv/it's here/envs/it's",
}


def _pythons() -> str:
    return "".join(env_python_line(name, prefix) for name, prefix in ENVS.items())


def _sizes() -> str:
    return "".join(env_size_line(name, prefix, base=name == "base") for name, prefix in ENVS.items())


def test_every_line_builder_the_conda_services_export_is_tried_here() -> None:
    # a new script or line builder must be added here (and be recognised by the demo)
    built = {n for n in conda.__all__ if n.endswith("_line")} | {
        n
        for n in killable.__all__
        if n.endswith("_command") and n != "killable_command"  # its wrapper: a prefix
    }
    assert built == {"env_python_line", "env_size_line", "signal_command", "alive_command"}


def test_the_env_pythons_script_is_read_back_env_by_env() -> None:
    seen = read_env_script(_pythons())
    assert seen is not None
    assert [(kind, f["name"], f["prefix"]) for kind, f in seen] == [("python", n, p) for n, p in ENVS.items()]


def test_the_env_sizes_script_is_read_back_with_base_measured_without_the_other_envs() -> None:
    seen = read_env_script(_sizes())
    assert seen is not None
    assert [(kind, f["name"], f["prefix"]) for kind, f in seen] == [
        ("size_base" if n == "base" else "size", n, p) for n, p in ENVS.items()
    ]


@pytest.mark.parametrize(("signal", "pid"), [("INT", 4242), ("TERM", 7), ("KILL", 123456)])
def test_the_cancels_kill_lines_are_read_back(signal: str, pid: int) -> None:
    assert recognise_line(killable.signal_command(signal, pid)) == ("signal", {"signal": signal, "pid": str(pid)})
    assert recognise_line(killable.alive_command(pid)) == ("alive", {"pid": str(pid)})


def test_the_module_probes_are_told_apart() -> None:
    assert {name: probed_module(code) for name, code in MODULE_PROBE.items()} == {"torch": "torch", "paddle": "paddle"}


def test_near_misses_are_none_of_them() -> None:
    line = env_python_line("py311", "/opt/py311")
    assert read_env_script("") is None
    assert read_env_script(_pythons() + "echo more\n") is None  # every line, not some
    assert read_env_script(_pythons() + _sizes()) is None  # lines of two scripts
    assert read_env_script(line.replace("/opt/py311/bin/python --version", "/opt/other/bin/python --version")) is None
    assert read_env_script(env_python_line("my env", "/opt/x").replace(shlex.quote("my env"), "my env")) is None
    assert read_env_script(line.rstrip("\n") + "; rm -rf /\n") is None
    assert read_env_script(env_size_line("a", "/opt/a", base=False).replace("du -sk", "du -sh")) is None
    kill = killable.signal_command("INT", 42)
    assert recognise_line(kill + "; reboot") is None
    assert recognise_line(kill.replace("-- -42", "-- -43")) is None  # the group and the pid differ
    assert recognise_line("kill -9 42") is None
    assert recognise_line(killable.alive_command(42) + " || true") is None
    assert probed_module(MODULE_PROBE["torch"] + "print(1)\n") is None
    assert probed_module("import torch") is None
