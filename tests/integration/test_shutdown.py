"""Verified shutdown against real sshd whose fake `shutdown` (first on PATH) ends that
instance's sessions and stops its sshd: stopped only when verified, loud otherwise."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from sshhelp import run_gpu_tui, ssh_host

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.services.power import shutdown_instance, shutdown_many

pytestmark = pytest.mark.sshd


def inst_of(sshd, **kw) -> InstanceConfig:
    return InstanceConfig(name=sshd.name, host=sshd.host, port=sshd.port, **kw)


def test_shutdown_one_is_verified(sshd_instance, tmp_path: Path) -> None:
    res = run_gpu_tui(tmp_path, [sshd_instance], "shutdown", sshd_instance.name, "--yes")
    assert res.returncode == 0, res.stderr
    assert "stopped (verified in" in res.stdout
    assert sshd_instance.powered_off and not sshd_instance.is_running
    calls = sshd_instance.shutdown_calls()
    assert len(calls) == 1 and calls[0]["uid"] == 0


def test_shutdown_all_with_one_already_down(sshd_factory, tmp_path: Path) -> None:
    fleet = [sshd_factory(f"box{i}") for i in range(3)]
    fleet[1].stop()
    started = time.monotonic()
    res = run_gpu_tui(tmp_path, fleet, "shutdown", "--all", "--yes")
    took = time.monotonic() - started
    assert res.returncode == 3, (res.stdout, res.stderr)
    assert fleet[0].powered_off and fleet[2].powered_off and not fleet[1].powered_off
    assert "box1" in res.stderr and "cannot reach it" in res.stderr and "NOT shut down: box1" in res.stderr
    assert res.stdout.count("stopped (verified") == 2
    assert took < 15, took


def test_failing_shutdown_command_is_loud(sshd_instance, tmp_path: Path) -> None:
    res = run_gpu_tui(
        tmp_path,
        [sshd_instance],
        "shutdown",
        sshd_instance.name,
        "--yes",
        config_extra='shutdown_command = "echo no power for you >&2; exit 4"\n',
    )
    assert res.returncode == 3
    assert "the shutdown command failed (exit 4): no power for you" in res.stderr
    assert sshd_instance.is_running and not sshd_instance.powered_off


def test_refusals_before_anything_runs(sshd_instance, tmp_path: Path) -> None:
    for args, message in [
        ([sshd_instance.name], "--yes"),  # no terminal to ask on
        ([], "name the instances"),
        (["--all", sshd_instance.name], "not both"),
        (["nope", "--yes"], "no instance named 'nope'"),
    ]:
        res = run_gpu_tui(tmp_path, [sshd_instance], "shutdown", *args)
        assert res.returncode == 2 and message in res.stderr, (args, res.stderr)
    assert sshd_instance.is_running and sshd_instance.shutdown_calls() == []


async def test_a_shutdown_that_does_nothing_is_not_called_done(sshd_instance, tmp_path: Path) -> None:
    inst = inst_of(sshd_instance, shutdown_command="true")
    result = await shutdown_instance(inst, lambda: ssh_host(sshd_instance, tmp_path), verify_seconds=1.5)
    assert not result.stopped and "still up after 1.5 s" in result.detail


async def test_non_root_without_sudo_is_not_shut_down(sshd_instance, password_user, tmp_path: Path) -> None:
    inst = InstanceConfig(
        name=sshd_instance.name, host=sshd_instance.host, port=sshd_instance.port, user=password_user.name
    )
    result = await shutdown_instance(
        inst,
        lambda: ssh_host(
            sshd_instance, tmp_path, user=password_user.name, password=password_user.password, use_key=False
        ),
        verify_seconds=3,
    )
    assert not result.stopped and "NOT shut down: the shutdown command failed" in result.detail
    assert sshd_instance.is_running


async def test_many_in_parallel(sshd_factory, tmp_path: Path) -> None:
    fleet = [sshd_factory(f"p{i}") for i in range(4)]
    by_name = {s.name: s for s in fleet}
    for s in fleet:
        (tmp_path / s.name).mkdir()
    started = time.monotonic()
    # one dir each: ssh_host writes that instance's key as the trusted one
    results = await shutdown_many([inst_of(s) for s in fleet], lambda i: ssh_host(by_name[i.name], tmp_path / i.name))
    took = time.monotonic() - started
    assert [r.stopped for r in results] == [True] * 4
    assert took < 5, took  # in parallel: about one instance's time


def test_results_are_pulled_before_the_shutdown(sshd_instance, tmp_path: Path) -> None:
    out = sshd_instance.home() / "proj" / "out"
    out.mkdir(parents=True)
    (out / "metrics.json").write_text('{"acc": 0.93}\n')
    local = tmp_path / "results"
    extra = f'sync = {{ local = "{local}", remote = "proj/out" }}\n'
    res = run_gpu_tui(tmp_path, [sshd_instance], "shutdown", sshd_instance.name, "--yes", config_extra=extra)
    assert res.returncode == 0, res.stderr
    assert "pulling the results of" in res.stdout
    assert (local / "metrics.json").read_text() == '{"acc": 0.93}\n'
    assert sshd_instance.powered_off


def test_a_failed_pull_keeps_it_up_unless_no_sync(sshd_instance, tmp_path: Path) -> None:
    extra = f'sync = {{ local = "{tmp_path / "r"}", remote = "no/such/dir" }}\n'
    res = run_gpu_tui(tmp_path, [sshd_instance], "shutdown", sshd_instance.name, "--yes", config_extra=extra)
    assert res.returncode == 3 and "pulling its results first failed" in res.stderr and "--no-sync" in res.stderr
    assert sshd_instance.is_running and sshd_instance.shutdown_calls() == []
    res = run_gpu_tui(
        tmp_path, [sshd_instance], "shutdown", sshd_instance.name, "--yes", "--no-sync", config_extra=extra
    )
    assert res.returncode == 0, res.stderr
    assert sshd_instance.powered_off
