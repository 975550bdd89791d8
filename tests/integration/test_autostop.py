"""Autostop on a real sshd: the watchdog runs ON the instance (detached, POSIX sh), waits while
GPUs, CPU or gpu-tui jobs are busy, fires the provider's shutdown (the fake, first on PATH) once
idle has lasted the idle time, survives the session that armed it, and can be cancelled.

The test machine is shared (other test runs, builds), so its CPU is rarely "idle": tests about
GPUs and jobs raise the CPU threshold out of the way (`cpu_busy_cores=1000`); the CPU test uses
the default threshold with a `yes` loop started by hand on the instance."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sshd import capture_query_gpu
from sshhelp import cli_env, config_text, ssh_host
from waiting import until

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.errors import InputError
from gpu_tui.core.jobs import JobRequest, new_job_id
from gpu_tui.remote.ssh import SshHost
from gpu_tui.services import autostop as svc
from gpu_tui.services.jobs import runner as jobsvc

pytestmark = pytest.mark.sshd

QUIET_CPU = 1000.0  # see the module docstring


def inst_of(sshd_instance, **kw) -> InstanceConfig:
    return InstanceConfig(name=sshd_instance.name, host=sshd_instance.host, port=sshd_instance.port, **kw)


async def connected(sshd_instance, tmp_path: Path) -> SshHost:
    host = ssh_host(sshd_instance, tmp_path)
    await host.connect()
    return host


def plan(idle: int = 2, **kw) -> svc.AutostopPlan:
    kw.setdefault("check_seconds", 1)
    kw.setdefault("cpu_busy_cores", QUIET_CPU)
    return svc.AutostopPlan(idle_seconds=idle, **kw)


def log_text(sshd_instance) -> str:
    path = sshd_instance.home() / ".gpu-tui" / "autostop.log"
    return path.read_text(errors="replace") if path.exists() else ""


def decisions(sshd_instance, kind: str) -> list[str]:
    return [ln for ln in log_text(sshd_instance).splitlines() if ln[21:].startswith(kind + " ")]


def off_at(sshd_instance) -> float:
    """When the fake shutdown powered the instance off (it writes the time)."""
    return float((sshd_instance.dir / "powered_off").read_text())


def gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")


async def test_busy_gpus_keep_it_from_firing(sshd_instance, tmp_path: Path) -> None:
    inst = inst_of(sshd_instance)  # the H100 capture: 96-100% busy
    host = await connected(sshd_instance, tmp_path)
    try:
        armed = await svc.arm(host, inst, plan(idle=2))
        await until(lambda: len(decisions(sshd_instance, "busy")) >= 4, what="four checks (two idle times)")
        assert not sshd_instance.powered_off and sshd_instance.shutdown_calls() == []
        assert len(decisions(sshd_instance, "busy")) >= 3
        st = await svc.read_status(host, inst)
        assert st.armed and st.state == "busy" and st.pid == armed.pid
        assert st.reason and st.reason.startswith("GPU 0 at ") and st.seconds_left is None
        assert st.summary() == "autostop armed (busy)"
        assert await svc.cancel(host, inst) == armed.pid
    finally:
        await host.close()


async def test_fires_once_idle_for_the_idle_time(sshd_instance, tmp_path: Path) -> None:
    """The figure: seconds from idle-threshold reached (idle start + idle time) to power-off."""
    idle = 3
    assert int(capture_query_gpu("h100-80gb")["memory.used"][1].split()[0]) > 0  # memory stays held
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    await svc.arm(host, inst, plan(idle=idle))
    await until(lambda: decisions(sshd_instance, "busy"), what="a busy check")
    await host.close()
    sshd_instance.set_utilization(0)
    became_idle = time.time()
    sshd_instance.wait_powered_off(timeout=idle + 15)
    late = off_at(sshd_instance) - (became_idle + idle)
    print(f"\nautostop: {late:.2f}s from idle-threshold reached to powered off (checks every 1s, idle {idle}s)")
    assert 0 <= late < 5  # one check (1s) to notice, then the shutdown line and the fake's 0.3s
    calls = sshd_instance.shutdown_calls()
    assert [(c["action"], c["argv"], c["uid"]) for c in calls] == [("poweroff", ["shutdown", "-h", "now"], 0)]
    log = log_text(sshd_instance)
    # held >= idle: on a loaded machine a check can come late, and the count jump from 2 to 4
    fired = re.search(rf"firing (\d+)/{idle}s gpu=0 ", log)
    assert fired is not None and int(fired.group(1)) >= idle, log
    assert 'shutdown if [ "$(id -u)" = 0 ]; then shutdown -h now' in log  # the generic profile's line


async def test_survives_the_session_that_armed_it(sshd_instance, tmp_path: Path) -> None:
    sshd_instance.set_utilization(0)
    res = cli(
        tmp_path,
        sshd_instance,
        "autostop",
        sshd_instance.name,
        "--idle",
        "4s",
        "--check-every",
        "1s",
        "--cpu-cores",
        str(QUIET_CPU),
    )
    assert res.returncode == 0, res.stderr
    assert "autostop armed" in res.stdout and "after 4s idle" in res.stdout
    # gpu-tui exited and its connection is gone; restart sshd as well (`systemctl restart ssh`)
    sshd_instance.stop(sessions=False)
    sshd_instance.start()
    assert not sshd_instance.powered_off
    sshd_instance.wait_powered_off(timeout=20)
    assert decisions(sshd_instance, "firing")


async def test_cancel_disarms(sshd_instance, tmp_path: Path) -> None:
    sshd_instance.set_utilization(0)
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    try:
        armed = await svc.arm(host, inst, plan(idle=3))
        await until(lambda: decisions(sshd_instance, "idle"), what="an idle check")
        assert await svc.cancel(host, inst) == armed.pid
        assert gone(armed.pid)
        assert not (sshd_instance.home() / ".gpu-tui" / "autostop.pid").exists()
        await asyncio.sleep(4)
        assert not sshd_instance.powered_off and sshd_instance.shutdown_calls() == []
        st = await svc.read_status(host, inst)
        assert not st.armed and st.last_line and st.last_line.endswith(" cancelled") and st.summary() == ""
        assert await svc.cancel(host, inst) is None
    finally:
        await host.close()


async def test_rearming_replaces_the_watchdog(sshd_instance, tmp_path: Path) -> None:
    sshd_instance.set_utilization(0)
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    first = await svc.arm(host, inst, plan(idle=600))
    await until(lambda: decisions(sshd_instance, "idle"), what="an idle check")
    st = await svc.read_status(host, inst)
    assert st.state == "idle" and st.idle_seconds == 600 and 590 <= (st.seconds_left or 0) <= 600
    assert re.fullmatch(r"autostop in (10m|9m\d*s?)", st.summary()), st.summary()
    second = await svc.arm(host, inst, plan(idle=2))
    await host.close()
    assert second.replaced_pid == first.pid and second.pid != first.pid and gone(first.pid)
    sshd_instance.wait_powered_off(timeout=15)
    assert len(sshd_instance.shutdown_calls()) == 1


async def test_a_running_job_keeps_it_from_firing(sshd_instance, tmp_path: Path) -> None:
    sshd_instance.set_utilization(0)
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    job = await jobsvc.start_job(host, inst, JobRequest(id=new_job_id(), command="sleep 6"))
    await svc.arm(host, inst, plan(idle=2))
    await asyncio.sleep(3.5)
    assert not sshd_instance.powered_off
    st = await svc.read_status(host, inst)
    assert st.state == "busy" and st.reason == "1 gpu-tui job(s) running"
    await host.close()
    sshd_instance.wait_powered_off(timeout=20)
    finished = int((sshd_instance.home() / ".gpu-tui" / "jobs" / job.id / "finished_at").read_text())
    assert off_at(sshd_instance) >= finished + 2 - 1  # whole seconds on the job's side


async def test_after_job_waits_for_that_job_only(sshd_instance, tmp_path: Path) -> None:
    sshd_instance.set_utilization(0)
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    await jobsvc.start_job(host, inst, JobRequest(id=new_job_id(), command="sleep 600", name="board"))
    train = await jobsvc.start_job(host, inst, JobRequest(id=new_job_id(), command="sleep 3", name="train"))
    with pytest.raises(InputError, match="no job 'nosuch'"):
        await svc.arm(host, inst, plan(after_job="nosuch"))
    armed = await svc.arm(host, inst, plan(idle=2, after_job="train"))
    assert armed.after_job_id == train.id and not armed.after_job_ended
    st = await svc.read_status(host, inst)
    assert st.after_job == train.id
    await host.close()
    sshd_instance.wait_powered_off(timeout=20)  # "board" still ran
    assert any(f"why=job {train.id} running" in ln for ln in decisions(sshd_instance, "busy"))


async def test_before_runs_first_and_its_output_is_logged(sshd_instance, tmp_path: Path) -> None:
    sshd_instance.set_utilization(0)
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    before = "echo \"copying $(pwd)\"; sleep 1; date +%s.%N > before-done; echo 'copied; ok'"
    await svc.arm(host, inst, plan(idle=1, before=before))
    await host.close()
    sshd_instance.wait_powered_off(timeout=15)
    log = log_text(sshd_instance)
    home = sshd_instance.home()
    order = ["before running (at most 600s)", f"copying {home}", "copied; ok", "before exit 0", " shutdown if ["]
    positions = [log.find(s) for s in order]
    assert -1 not in positions and positions == sorted(positions), log
    assert float((home / "before-done").read_text()) <= sshd_instance.shutdown_calls()[0]["time"]


async def test_a_stuck_before_command_is_cut_short(sshd_instance, tmp_path: Path) -> None:
    sshd_instance.set_utilization(0)
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    await svc.arm(host, inst, plan(idle=1, before="sleep 60", before_timeout_seconds=1))
    await host.close()
    sshd_instance.wait_powered_off(timeout=15)
    assert "before timed out after 1s" in log_text(sshd_instance)


async def test_a_cpu_bound_step_started_by_hand_keeps_it_from_firing(sshd_instance, tmp_path: Path) -> None:
    sshd_instance.set_utilization(0)
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    try:
        res = await host.run("setsid -f sh -c 'echo $$ > yes.pid; exec yes > /dev/null' < /dev/null > /dev/null 2>&1")
        assert res.ok, res.stderr
        pidfile = sshd_instance.home() / "yes.pid"
        await until(pidfile.exists, what="the yes loop")
        armed = await svc.arm(host, inst, svc.AutostopPlan(idle_seconds=2, check_seconds=1))  # default CPU rule
        await until(lambda: len(decisions(sshd_instance, "busy")) >= 4, what="four checks (two idle times)")
        assert not sshd_instance.powered_off
        busy = decisions(sshd_instance, "busy")
        assert len(busy) >= 3 and all("why=CPU at " in ln for ln in busy), busy
        st = await svc.read_status(host, inst)
        assert st.state == "busy" and st.reason and st.reason.startswith("CPU at ")
        await host.run(f"kill {int(pidfile.read_text())}")
        assert await svc.cancel(host, inst) == armed.pid
    finally:
        await host.close()


@pytest.mark.parametrize(
    ("setup", "why"),
    [
        (lambda i: i.set_mode("driver_failed"), "nvidia-smi failed (exit 9): NVIDIA-SMI has failed because"),
        (lambda i: i.set_mode("version_mismatch"), "nvidia-smi failed (exit 18): Failed to initialize NVML"),
        (lambda i: i.set_utilization("[N/A]"), "GPU 0 utilisation not reported ([N/A])"),  # MIG
        (lambda i: i.set_utilization([0, 0, 40]), "GPU 2 at 40%"),
    ],
    ids=["driver-failed", "version-mismatch", "not-reported", "one-of-several"],
)
async def test_unreadable_or_any_busy_gpu_counts_as_busy(sshd_factory, tmp_path: Path, setup, why: str) -> None:
    sshd_instance = sshd_factory("gpu", gpus=4)
    setup(sshd_instance)
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    try:
        armed = await svc.arm(host, inst, plan(idle=1))
        await until(lambda: len(decisions(sshd_instance, "busy")) >= 3, what="three checks (three idle times)")
        assert not sshd_instance.powered_off
        busy = decisions(sshd_instance, "busy")
        assert busy and all(why in ln for ln in busy), busy
        assert await svc.cancel(host, inst) == armed.pid
    finally:
        await host.close()


async def test_cpu_only_instance_without_nvidia_smi(sshd_instance, tmp_path: Path) -> None:
    """No nvidia-smi and no GPU device: nothing to wait for on the GPU side (AutoDL's no-GPU mode)."""
    sshd_instance.remove_nvidia_smi()
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    await svc.arm(host, inst, plan(idle=1))
    await host.close()
    if list(Path("/dev").glob("nvidia[0-9]*")):  # a GPU test machine: devices but no nvidia-smi
        await asyncio.sleep(3)
        assert not sshd_instance.powered_off
        assert "why=GPU devices present but nvidia-smi cannot run" in log_text(sshd_instance)
    else:
        sshd_instance.wait_powered_off(timeout=15)
        assert "gpu=none" in decisions(sshd_instance, "firing")[0]


async def test_provider_without_id_is_refused_before_anything_runs(sshd_instance, tmp_path: Path) -> None:
    inst = inst_of(sshd_instance, provider="vast")
    host = await connected(sshd_instance, tmp_path)
    try:
        with pytest.raises(InputError, match="provider_id"):
            await svc.arm(host, inst, plan())
        assert not (sshd_instance.home() / ".gpu-tui").exists()
    finally:
        await host.close()


# ------------------------------------------------------------------------------------ the CLI


def cli(tmp: Path, inst, *args: str, settings: str = "") -> subprocess.CompletedProcess[str]:
    """`python -m gpu_tui` with a config for `inst` (extra `[settings]` lines allowed), as
    sshhelp.run_gpu_tui does it."""
    cfg = tmp / "config.toml"
    cfg.write_text(config_text([inst]).replace("[settings]\n", "[settings]\n" + settings, 1))
    env = cli_env(tmp, known_hosts=inst.host_public_key_line + "\n")
    return subprocess.run(
        [sys.executable, "-m", "gpu_tui", "--config", str(cfg), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_cli_defaults_cancel_and_refusals(sshd_instance, tmp_path: Path) -> None:
    name = sshd_instance.name
    settings = "idle_minutes = 7\nidle_util_percent = 20\n"
    res = cli(tmp_path, sshd_instance, "autostop", name, settings=settings)
    assert res.returncode == 0, res.stderr
    assert "after 7m idle" in res.stdout and "every GPU under 20%" in res.stdout and "checked every 15s" in res.stdout
    status = cli(tmp_path, sshd_instance, "autostop", name, "--status")
    assert status.returncode == 0 and "autostop armed" in status.stdout and "idle time 7m" in status.stdout
    assert "every=15s gpu<20% cpu<0.50" in log_text(sshd_instance)

    for bad in (["--idle", "15"], ["--idle", "1.5h"], ["--idle", "0s"], ["--before-timeout", "soon"]):
        res = cli(tmp_path, sshd_instance, "autostop", name, *bad)
        assert res.returncode == 2 and ("write it like 30s, 15m, 1h" in res.stderr or "at least 1s" in res.stderr), bad
    res = cli(tmp_path, sshd_instance, "autostop", name, "--cancel", "--idle", "5m")
    assert res.returncode == 2 and "--cancel takes no other option" in res.stderr
    res = cli(tmp_path, sshd_instance, "autostop", name, "--after-job", "nosuch")
    assert res.returncode == 2 and "no job 'nosuch'" in res.stderr

    res = cli(tmp_path, sshd_instance, "autostop", name, "--cancel")
    assert res.returncode == 0 and f"{name}: autostop cancelled (pid " in res.stdout
    res = cli(tmp_path, sshd_instance, "autostop", name, "--cancel")
    assert res.returncode == 0 and res.stdout.strip() == f"{name}: autostop is not armed"
    res = cli(tmp_path, sshd_instance, "autostop", name, "--status")
    assert res.returncode == 0 and "autostop is not armed" in res.stdout and "cancelled" in res.stdout


async def test_an_amd_instance_is_busy_while_amdgpu_says_its_gpu_is(sshd_instance, tmp_path: Path) -> None:
    """No nvidia-smi, an AMD card (issue 28): amdgpu's gpu_busy_percent in sysfs (a stand-in
    under the instance's GPU_TUI_SYSROOT) keeps it from firing while busy; idle, it fires."""
    sshd_instance.remove_nvidia_smi()
    busy = sshd_instance.sys_dir / "sys/class/drm/card0/device/gpu_busy_percent"
    busy.parent.mkdir(parents=True)
    busy.write_text("87\n")
    inst = inst_of(sshd_instance)
    host = await connected(sshd_instance, tmp_path)
    try:
        await svc.arm(host, inst, plan(idle=1))
        await until(lambda: len(decisions(sshd_instance, "busy")) >= 3, what="three checks")
        assert not sshd_instance.powered_off
        assert all("gpu=87" in ln and "why=GPU 0 at 87%" in ln for ln in decisions(sshd_instance, "busy"))
        busy.write_text("0\n")
        sshd_instance.wait_powered_off(timeout=15)
        assert "gpu=0 " in decisions(sshd_instance, "firing")[0]
    finally:
        await host.close()
