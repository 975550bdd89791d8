"""AMD GPUs over SSH (issue 28): an instance with no nvidia-smi and a stand-in amd-smi or rocm-smi
that answers with real outputs (tests/data/amd, each with its source). `status --json` gives
the same shape as for NVIDIA; the dashboard's row and panel show the card."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pilothelp import make_app, state_of
from sshhelp import run_gpu_tui
from waiting import wait_for

pytestmark = pytest.mark.sshd

DATA = Path(__file__).resolve().parents[1] / "data" / "amd"


def amd_smi(inst) -> None:
    inst.use_amd(
        "amd-smi",
        {
            "metric": (DATA / "amd-smi-metric-json-list-rx6600xt.json").read_text(),
            "static": (DATA / "amd-smi-static-json-list-rx6600xt.json").read_text(),
        },
    )


def test_status_reads_an_amd_instance_through_amd_smi(sshd_factory, tmp_path: Path) -> None:
    inst = sshd_factory("mi", gpus=1)
    amd_smi(inst)
    res = run_gpu_tui(tmp_path, [inst], "status", "--json")
    assert res.returncode == 0, res.stderr
    (entry,) = json.loads(res.stdout)["instances"]
    assert entry["gpu_error"] is None
    (g,) = entry["gpus"]
    assert g["name"] == "Navi 23 [Radeon RX 6600/6600 XT" and g["uuid"] == "0000:0b:00.0"
    assert (g["utilization_gpu"], g["memory_used_mib"], g["memory_total_mib"]) == (1, 202, 8176)
    assert (g["temperature_c"], g["power_draw_w"], g["power_limit_w"]) == (36, 6.0, None)


def test_status_reads_rocm_smi_where_there_is_no_amd_smi(sshd_factory, tmp_path: Path) -> None:
    inst = sshd_factory("radeon", gpus=1)
    inst.use_amd("rocm-smi", {"json": (DATA / "rocm-smi-json-rx7900xt-productname-use-vram.json").read_text()})
    res = run_gpu_tui(tmp_path, [inst], "status", "--json")
    assert res.returncode == 0, res.stderr
    (g,) = json.loads(res.stdout)["instances"][0]["gpus"]
    assert (g["name"], g["utilization_gpu"], g["memory_used_mib"]) == ("Radeon RX 7900 XT", 0, 26)


def test_an_amd_tool_that_sees_no_gpu_says_so_in_one_line(sshd_factory, tmp_path: Path) -> None:
    inst = sshd_factory("broken", gpus=1)
    inst.use_amd("amd-smi", {"metric": (DATA / "amd-smi-error-no-driver-26.1.0.txt").read_text(), "static": ""})
    res = run_gpu_tui(tmp_path, [inst], "status", "--json")
    assert res.returncode == 3
    entry = json.loads(res.stdout)["instances"][0]
    assert entry["gpus"] == [] and entry["gpu_error"].startswith(
        "amd-smi answered no GPUs: ERROR:root:Unable to get devices"
    )


def test_no_gpu_tool_at_all_is_still_nvidia_smi_not_found(sshd_factory, tmp_path: Path) -> None:
    inst = sshd_factory("cpu", gpus=1)
    inst.remove_nvidia_smi()
    res = run_gpu_tui(tmp_path, [inst], "status", "--json")
    assert "nvidia-smi not found" in json.loads(res.stdout)["instances"][0]["gpu_error"]


async def test_the_dashboard_shows_an_amd_card(sshd_factory, tmp_path: Path) -> None:
    inst = sshd_factory("mi", gpus=1)
    amd_smi(inst)
    app = make_app(tmp_path, [inst])
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: state_of(app, "mi") == "online", timeout=30)
        view = app.fleet.views["mi"]
        await wait_for(pilot, lambda: view.frame is not None and view.gpu_error is None, timeout=40)
        (g,) = view.frame.gpus
        assert (g.name, g.utilization_gpu, g.memory_total_mib) == ("Navi 23 [Radeon RX 6600/6600 XT", 1, 8176)
        assert view.shown_state == "online"
        assert "Navi 23" in app.dashboard.gpu_panel.render_view(view, app.dashboard.clock()).plain


def test_the_env_check_names_rocm_on_an_amd_instance(sshd_factory, tmp_path: Path) -> None:
    inst = sshd_factory("mi", gpus=1)
    inst.use_amd("amd-smi", {"version": (DATA / "amd-smi-version-23.4.2-changelog.txt").read_text()})
    res = run_gpu_tui(tmp_path, [inst], "env", "mi", "--json", timeout=120)
    doc = json.loads(res.stdout)
    first = doc["checks"][0]
    assert (first["name"], first["ok"]) == ("amd", True), doc["checks"]
    assert first["detail"] == "amd-smi: ROCm 6.1.0, amdgpu driver ?"
    assert doc["rocm_version"] == "6.1.0" and doc["driver_version"] is None


def test_an_amd_instances_gpu_processes_are_the_render_nodes_holders(sshd_factory, tmp_path: Path) -> None:
    """No driver process list on AMD: who holds a GPU's render node is who uses it (stand-in
    nodes under the instance's GPU_TUI_SYSROOT, a real process of this machine holding one)."""
    import os
    import stat
    import subprocess
    import sys

    from sshd import ENV_MARK

    inst = sshd_factory("mi", gpus=1)
    amd_smi(inst)
    dri = inst.sys_dir / "dev" / "dri"
    dri.mkdir(parents=True)
    os.mknod(dri / "renderD128", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    hold = "import sys, time\nf = open(sys.argv[1], 'rb')\nprint('ok', flush=True)\ntime.sleep(600)\n"
    env = dict(os.environ, **{ENV_MARK: str(inst.dir)})
    proc = subprocess.Popen([sys.executable, "-c", hold, str(dri / "renderD128")], stdout=subprocess.PIPE, env=env)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"ok\n"
        res = run_gpu_tui(tmp_path, [inst], "status", "--json")
        rows = json.loads(res.stdout)["instances"][0]["processes"]
        assert [(r["gpu"], r["pid"], r["attributed"]) for r in rows] == [(0, proc.pid, "fd")]
    finally:
        proc.kill()
        proc.wait()
