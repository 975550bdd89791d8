"""`gpu-tui status` end to end: a real config, real sshd fleet, exit codes, JSON shape, timing."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from sshhelp import run_gpu_tui

pytestmark = pytest.mark.sshd

GPU_KEYS = {
    "index",
    "uuid",
    "name",
    "utilization_gpu",
    "memory_used_mib",
    "memory_total_mib",
    "temperature_c",
    "power_draw_w",
    "power_limit_w",
}


def run_cli(
    tmp: Path, instances: list[object], *args: str, trust: bool = True, **cfg: float
) -> subprocess.CompletedProcess[str]:
    return run_gpu_tui(tmp, instances, "status", *args, trust=trust, **cfg)


def test_status_json_for_a_fleet(sshd_fleet, tmp_path: Path) -> None:
    res = run_cli(tmp_path, sshd_fleet, "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert [i["name"] for i in doc["instances"]] == [i.name for i in sshd_fleet]
    for inst in doc["instances"]:
        assert set(inst) == {
            "name",
            "online",
            "error",
            "gpu_error",
            "hourly_rate",
            "currency",
            "uptime_seconds",
            "cost_so_far",
            "gpus",
            "source",
            "gpus_from",
            "xids",
            "processes",
            "release_at",
        }
        assert inst["source"] == inst["gpus_from"] == "ssh" and inst["xids"] == []
        assert inst["currency"] == "¥"  # the settings' (no instance has its own)
        assert inst["online"] is True and inst["error"] is None and inst["gpu_error"] is None
        assert isinstance(inst["uptime_seconds"], int) and inst["uptime_seconds"] >= 0
        assert inst["cost_so_far"] == round(1.5 * inst["uptime_seconds"] / 3600, 2)
        assert inst["gpus"]
        for g in inst["gpus"]:
            assert set(g) == GPU_KEYS
            assert all(v != "" for v in g.values())
            assert g["memory_total_mib"] is None or isinstance(g["memory_total_mib"], int)


def test_status_table_and_name_filter(sshd_fleet, tmp_path: Path) -> None:
    res = run_cli(tmp_path, sshd_fleet, sshd_fleet[1].name)
    assert res.returncode == 0, res.stderr
    assert sshd_fleet[1].name in res.stdout and sshd_fleet[0].name not in res.stdout
    assert "online" in res.stdout and "MiB" in res.stdout


def test_one_dead_and_one_frozen_instance_do_not_block_the_rest(sshd_factory, tmp_path: Path) -> None:
    good, dead, frozen = sshd_factory("good"), sshd_factory("dead"), sshd_factory("frozen")
    dead.stop()
    frozen.freeze()
    try:
        t0 = time.monotonic()
        res = run_cli(tmp_path, [good, dead, frozen], "--json", connect_timeout=2.0)
        elapsed = time.monotonic() - t0
    finally:
        frozen.thaw()
    assert res.returncode == 3
    doc = {i["name"]: i for i in json.loads(res.stdout)["instances"]}
    assert doc["good"]["online"] and doc["good"]["gpus"]
    assert not doc["dead"]["online"] and "refused" in doc["dead"]["error"]
    assert not doc["frozen"]["online"] and doc["frozen"]["gpus"] == []
    assert "dead" in res.stderr and "frozen" in res.stderr and "good" not in res.stderr
    assert elapsed < 10, f"a frozen host should cost about the connect timeout, took {elapsed:.1f}s"


def test_unknown_host_key_refused_non_interactively(sshd_instance, tmp_path: Path) -> None:
    res = run_cli(tmp_path, [sshd_instance], trust=False)
    assert res.returncode == 3
    assert "unknown host key" in res.stdout + res.stderr
    assert sshd_instance.host_key_fingerprint in res.stderr
