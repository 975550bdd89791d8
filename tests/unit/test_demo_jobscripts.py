"""The demo recognises every job script the services build, by the services' own builders
(demo/jobscripts.recognise over demo/scriptmatch.py), and reads back the values they carry."""

from __future__ import annotations

import shlex

import pytest

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.demo.jobscripts import recognise
from gpu_tui.services.jobs import runner, sched_plain
from gpu_tui.services.jobs.jobdir import job_dir
from gpu_tui.services.statedir import shell_state_dir

JOB = "20261202-000102-a1b2"
OTHER = "20261202-000103-c3d4"
STATE_DIRS = ("~/.gpu-tui", "/data/my state", "/srv/it's here/", "~/")


def _builds(inst: InstanceConfig) -> dict[str, tuple[str, bool]]:
    """Each builder the services call, as they call it: builder -> (text, is a whole command line)."""
    state, d = shell_state_dir(inst), job_dir(inst, JOB)
    return {
        "list_script": (runner.list_script(state), False),
        "window_script": (runner.window_script(d, 4096), False),
        "state_path_script": (runner.state_path_script(state), False),
        "summary_command": (runner.summary_command(d, 262144), True),
        "follow_command": (runner.follow_command(d, 0), True),
        "follow_log_command": (runner.follow_log_command(inst, JOB, 1234), True),
        "prune_command": (runner.prune_command([d, job_dir(inst, OTHER)]), True),
        "start_script": (sched_plain.start_script(state, d, "~/my work", tmux=True), False),
        "install_runner_script": (sched_plain.install_runner_script(state), False),
        "stop_script": (sched_plain.stop_script(d, sched_plain.stop_plan(runner.STOP_STEPS)), False),
    }


def _path(word: str) -> str:
    return shlex.split(word)[0]


def test_every_builder_the_job_services_export_is_tried_here() -> None:
    # a new script builder must be added above (and so be recognised by the demo)
    exported = {
        name
        for module in (runner, sched_plain)
        for name in module.__all__
        if name.endswith(("_script", "_command")) and name != "command_script"  # command.sh: stdin
    }
    assert exported == set(_builds(InstanceConfig(name="a", host="h")))


@pytest.mark.parametrize("state_dir", STATE_DIRS)
def test_each_job_script_is_recognised_with_its_values(state_dir: str) -> None:
    inst = InstanceConfig(name="a", host="h", state_dir=state_dir)
    built = _builds(inst)
    seen = {name: recognise(text, line=line) for name, (text, line) in built.items()}
    kinds = {name: s[0] if s else None for name, s in seen.items()}
    assert kinds == {
        "list_script": "list",
        "window_script": "window",
        "state_path_script": "state_path",
        "summary_command": "summary",
        "follow_command": "follow",
        "follow_log_command": "follow",
        "prune_command": "prune",
        "start_script": "start",
        "install_runner_script": "install_runner",
        "stop_script": "stop",
    }
    fields = {name: s[1] for name, s in seen.items() if s}
    job_path = _path(job_dir(inst, JOB))
    state = shell_state_dir(inst)
    assert fields["list_script"]["state"] == state
    assert fields["state_path_script"]["state"] == state
    assert _path(fields["window_script"]["dir"]) == job_path
    assert fields["window_script"]["n"] == "4096"
    assert (fields["summary_command"]["n"], _path(fields["summary_command"]["dir"])) == ("262144", job_path)
    assert fields["follow_command"]["n"] == "1"  # tail counts from byte 1
    assert fields["follow_log_command"]["n"] == "1235"
    assert [p.rsplit("/", 1)[-1] for p in shlex.split(fields["prune_command"]["dir"])] == [JOB, OTHER]
    start = fields["start_script"]
    assert (start["state"], _path(start["dir"]), start["runner"]) == (state, job_path, sched_plain.RUNNER_NAME)
    assert (_path(start["cwd"]), start["cwd_text"]) == ("$HOME/my work", "'~/my work'")
    assert fields["install_runner_script"]["runner"] == sched_plain.RUNNER_NAME
    assert fields["stop_script"]["plan"].split()[0] == "INT:50"


def test_a_start_without_a_working_directory_or_tmux_is_a_start_too() -> None:
    inst = InstanceConfig(name="a", host="h")
    script = sched_plain.start_script(shell_state_dir(inst), job_dir(inst, JOB), None, tmux=False)
    seen = recognise(script)
    assert seen is not None and seen[0] == "start" and "cwd" not in seen[1]


def test_other_text_is_none_of_them() -> None:
    inst = InstanceConfig(name="a", host="h")
    listing = runner.list_script(shell_state_dir(inst))
    assert recognise(listing + "echo more\n") is None  # the whole script, not a part of it
    assert recognise(listing, line=True) is None  # a script is not a command line
    assert recognise("tail -c 100 -- /etc/passwd", line=True) is None
    assert recognise("hostname") is None
