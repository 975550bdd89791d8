"""Who holds the VRAM (issue 27), end to end on real sshd: `status --json`'s `processes` and
`gpu-tui kill`, for the three ways a container's driver answers (nothing; host pids with memory;
the container's own pids without memory). The GPUs' device files are stand-ins under the
instance's GPU_TUI_SYSROOT (tests/sshd.py make_gpu_devices); the processes holding them are real
processes of this machine, which is what the instance's /proc shows."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sshd import ENV_MARK
from sshhelp import run_gpu_tui
from waiting import until_sync

pytestmark = pytest.mark.sshd

HOLD = (
    "import sys, time\nfiles = [open(p, 'rb') for p in sys.argv[1:]]\nprint('holding', flush=True)\ntime.sleep(600)\n"
)
HOST_PID = 3301877  # a pid of the host's, as a container's driver reports it


@pytest.fixture
def holders() -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """Start a process of this machine that holds the given device files open (its command line
    names itself `train.py`); every one is killed at the end."""
    started: list[subprocess.Popen[str]] = []

    def start(inst: object, *paths: Path) -> subprocess.Popen[str]:
        env = dict(os.environ, **{ENV_MARK: str(inst.dir)})  # type: ignore[attr-defined]
        proc = subprocess.Popen(
            [sys.executable, "-c", HOLD, *map(str, paths)],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,
        )
        started.append(proc)
        assert proc.stdout is not None and proc.stdout.readline() == "holding\n"
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def status(tmp: Path, inst: object) -> dict:
    res = run_gpu_tui(tmp, [inst], "status", "--json")
    assert res.returncode == 0, res.stderr
    (entry,) = json.loads(res.stdout)["instances"]
    return entry


def test_an_empty_driver_list_names_the_holder_from_inside(sshd_factory, holders, tmp_path: Path) -> None:
    inst = sshd_factory("box", gpus=2)
    inst.set_apps([])  # the driver lists nothing, as in many containers
    dev = inst.make_gpu_devices(2)
    proc = holders(inst, dev[1])
    entry = status(tmp_path, inst)
    assert entry["processes"] == [
        {
            "gpu": 1,
            "pid": proc.pid,
            "host_pid": None,
            "command": f"{sys.executable} -c {HOLD.replace(chr(10), ' ')} {dev[1]}".rstrip(),
            "user": "root",
            "job": None,
            "used_memory_mib": None,
            "attributed": "fd",
        }
    ]


def test_a_host_pid_with_memory_is_given_to_the_one_process_that_holds_its_gpu(
    sshd_factory, holders, tmp_path: Path
) -> None:
    inst = sshd_factory("box", gpus=2)
    inst.set_apps([f"0, {HOST_PID}, [Not Found], 15872", f"1, {HOST_PID + 1}, [Not Found], 2048"])
    dev = inst.make_gpu_devices(2)
    proc = holders(inst, dev[0])
    rows = status(tmp_path, inst)["processes"]
    # GPU 0: one holder here, one driver entry: the memory is that holder's
    assert rows[0]["gpu"] == 0 and rows[0]["pid"] == proc.pid and rows[0]["host_pid"] == HOST_PID
    assert rows[0]["used_memory_mib"] == 15872 and rows[0]["attributed"] == "fd"
    # GPU 1: a host pid no process here answers to (another container's)
    assert rows[1] == {
        "gpu": 1,
        "pid": None,
        "host_pid": HOST_PID + 1,
        "command": None,
        "user": None,
        "job": None,
        "used_memory_mib": 2048,
        "attributed": "driver",
    }
    assert len(rows) == 2


def test_container_pids_without_memory_are_the_drivers_and_confirmed_here(
    sshd_factory, holders, tmp_path: Path
) -> None:
    inst = sshd_factory("box", gpus=1)
    dev = inst.make_gpu_devices(1)
    proc = holders(inst, dev[0])
    other = holders(inst, dev[0])
    inst.set_apps([f"0, {proc.pid}, python3, [N/A]", f"0, {other.pid}, python3, [N/A]"])
    rows = status(tmp_path, inst)["processes"]
    assert [(r["pid"], r["host_pid"], r["used_memory_mib"], r["attributed"]) for r in rows] == [
        (proc.pid, proc.pid, None, "driver"),
        (other.pid, other.pid, None, "driver"),
    ]


def test_a_driver_pid_that_is_here_but_holds_no_gpu_is_not_trusted(sshd_factory, holders, tmp_path: Path) -> None:
    """A host pid can be the pid of an unrelated process of the container: it must hold the GPU."""
    inst = sshd_factory("box", gpus=1)
    dev = inst.make_gpu_devices(1)
    bystander = holders(inst)  # holds nothing
    inst.set_apps([f"0, {bystander.pid}, [Not Found], 4096"])
    rows = status(tmp_path, inst)["processes"]
    assert [(r["pid"], r["host_pid"], r["attributed"]) for r in rows] == [(None, bystander.pid, "driver")]
    assert dev


# ------------------------------------------------------------------------------------ kill


def test_kill_ends_a_holder_and_refuses_what_it_may_not_end(sshd_factory, holders, tmp_path: Path) -> None:
    inst = sshd_factory("box", gpus=2)
    inst.set_apps([f"0, {HOST_PID}, [Not Found], 15872", f"1, {HOST_PID + 1}, [Not Found], 2048"])
    dev = inst.make_gpu_devices(2)
    proc = holders(inst, dev[0])
    bystander = holders(inst)

    # the driver's pid of a process seen here: pointed at its pid here, nothing done
    res = run_gpu_tui(tmp_path, [inst], "kill", "box", str(HOST_PID), "--yes")
    assert res.returncode == 2 and f"end it as pid {proc.pid}" in res.stderr, res.stderr
    # another container's: refused, in one line
    res = run_gpu_tui(tmp_path, [inst], "kill", "box", str(HOST_PID + 1), "--yes")
    assert res.returncode == 2 and "host pid" in res.stderr and res.stderr.count("\n") == 1, res.stderr
    res = run_gpu_tui(tmp_path, [inst], "kill", "box", str(bystander.pid), "--yes")
    assert res.returncode == 2 and "holds no GPU" in res.stderr and str(proc.pid) in res.stderr, res.stderr
    assert bystander.poll() is None
    # no terminal to ask on, no --yes: nothing is done, and it says how
    res = run_gpu_tui(tmp_path, [inst], "kill", "box", str(proc.pid))
    assert res.returncode == 2 and "--yes" in res.stderr and "15,872 MiB" in res.stderr, res.stderr
    assert proc.poll() is None

    res = run_gpu_tui(tmp_path, [inst], "kill", "box", str(proc.pid), "--yes")
    assert res.returncode == 0, res.stderr
    assert res.stdout == f"box: pid {proc.pid}: ended on SIGINT\n"
    assert proc.wait(5) == -signal.SIGINT or proc.returncode != 0


def test_kill_escalates_to_sigkill_for_a_process_that_ignores_the_others(sshd_factory, holders, tmp_path: Path) -> None:
    inst = sshd_factory("box", gpus=1)
    inst.set_apps([])
    dev = inst.make_gpu_devices(1)
    script = tmp_path / "stubborn.py"
    script.write_text(
        "import signal, sys, time\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        f"f = open({str(dev[0])!r}, 'rb')\n"
        "print('holding', flush=True)\n"
        "time.sleep(600)\n"
    )
    env = dict(os.environ, **{ENV_MARK: str(inst.dir)})
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "holding\n"
        t0 = time.monotonic()
        res = run_gpu_tui(tmp_path, [inst], "kill", "box", str(proc.pid), "--yes")
        assert res.returncode == 0 and "SIGKILL" in res.stdout, res.stderr
        assert time.monotonic() - t0 > 7.5  # INT's 5 s and TERM's 3 s were waited out first
        assert proc.wait(5) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_kill_of_an_unreachable_instance_exits_3(sshd_factory, tmp_path: Path) -> None:
    inst = sshd_factory("box", gpus=1)
    inst.stop()
    res = run_gpu_tui(tmp_path, [inst], "kill", "box", "1234", "--yes")
    assert res.returncode == 3 and res.stderr.count("\n") == 1, res.stderr


def test_a_jobs_process_is_named_with_its_job_and_stopped_as_the_job(sshd_factory, tmp_path: Path) -> None:
    inst = sshd_factory("box", gpus=1)
    inst.set_apps([f"0, {HOST_PID}, [Not Found], 15872"])
    dev = inst.make_gpu_devices(1)
    script = tmp_path / "train.py"
    script.write_text(f"import time\nf = open({str(dev[0])!r}, 'rb')\nprint('holding', flush=True)\ntime.sleep(600)\n")
    res = run_gpu_tui(tmp_path, [inst], "run", "box", "--name", "train", "--", sys.executable, str(script))
    assert res.returncode == 0, res.stderr
    job = res.stdout.split()[0]

    def rows() -> list[dict]:
        return status(tmp_path, inst)["processes"]

    found = until_sync(lambda: rows() or None, 30, what="the job's process holding the GPU")
    assert found[0]["job"] == job and found[0]["attributed"] == "fd", found
    assert found[0]["used_memory_mib"] == 15872 and found[0]["host_pid"] == HOST_PID
    # the job alone holds GPU 0: its VRAM is the driver's 15,872 MiB and what no one is named for
    used = status(tmp_path, inst)["gpus"][0]["memory_used_mib"]
    assert used > 15872 + 256
    listed = json.loads(run_gpu_tui(tmp_path, [inst], "jobs", "box", "--json").stdout)["jobs"]
    assert [(j["id"], j["vram_mib"]) for j in listed] == [(job, used)]
    res = run_gpu_tui(tmp_path, [inst], "kill", "box", str(found[0]["pid"]), "--yes")
    assert res.returncode == 0, res.stderr
    assert "its job stopped on SIGINT" in res.stdout
    jobs = json.loads(run_gpu_tui(tmp_path, [inst], "jobs", "box", "--json").stdout)
    assert [(j["state"], j["vram_mib"]) for j in jobs["jobs"] if j["id"] == job] == [("stopped", None)], jobs
