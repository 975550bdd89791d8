"""`gpu-tui fit --probe` end to end: real sshd instances with the fake nvidia-smi (an H100, eight
L40S, an RTX 4080 SUPER, from real captures), a real config, the GPU cache between runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sshhelp import run_gpu_tui

pytestmark = pytest.mark.sshd


def _largest_gpus(tmp_path: Path, fleet: list[object]) -> dict[str, int]:
    """What `status` reads: each instance's largest memory.total (MiB)."""
    res = run_gpu_tui(tmp_path, fleet, "status", "--json")
    assert res.returncode == 0, res.stderr
    return {i["name"]: max(g["memory_total_mib"] for g in i["gpus"]) for i in json.loads(res.stdout)["instances"]}


def test_probe_checks_the_fleets_gpus_and_remembers_them(sshd_fleet, tmp_path: Path) -> None:
    h100, l40s, rtx4080 = (i.name for i in sshd_fleet)
    largest = _largest_gpus(tmp_path, sshd_fleet)
    # qwen2.5-14b, bf16, 4096 tokens: 27.5 GiB weights + 0.75 KV + 5.5 activations = 33.8 GiB
    res = run_gpu_tui(tmp_path, sshd_fleet, "fit", "qwen2.5-14b", "--probe", "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["total_gib"] == pytest.approx(33.8, abs=0.05)
    mine = {f["instance"]: f for f in doc["fits"] if f["instance"]}
    assert list(mine) == [h100, l40s, rtx4080]
    for name, f in mine.items():
        assert f["memory_gib"] == round(largest[name] / 1024, 2) and f["gpu"]
    assert mine[h100]["fits"] is True and mine[l40s]["fits"] is True and mine[rtx4080]["fits"] is False

    # no probe: the cards come from the cache the probe wrote, said to be from then
    res = run_gpu_tui(tmp_path, sshd_fleet, "fit", "qwen2.5-14b")
    assert res.returncode == 0, res.stderr
    rows = {line.split()[0]: line for line in res.stdout.splitlines() if line.startswith("  ")}
    assert "8x " in rows[l40s] and "fits" in rows[l40s] and "GPUs seen" in rows[l40s]
    assert "does not fit" in rows[rtx4080]
    # every instance bills the same: the smallest card that holds it is the cheapest choice
    assert f"cheapest fitting card in your fleet: {l40s} (" in res.stdout


def test_an_unreachable_instance_keeps_its_last_gpus_and_exits_3(sshd_factory, tmp_path: Path) -> None:
    up, down = sshd_factory("fit-up"), sshd_factory("fit-down")
    first = run_gpu_tui(tmp_path, [up, down], "fit", "7b", "--probe", "--json")
    assert first.returncode == 0, first.stderr
    down.stop()
    res = run_gpu_tui(tmp_path, [up, down], "fit", "7b", "--probe", "--json", connect_timeout=2.0)
    assert res.returncode == 3
    assert [line.split(":")[1].strip() for line in res.stderr.splitlines()] == [down.name]
    mine = {f["instance"]: f for f in json.loads(res.stdout)["fits"] if f["instance"]}
    assert mine[down.name]["memory_gib"] is not None  # as seen by the first probe
    assert mine[up.name]["fits"] is True


def test_a_reader_that_goes_away_is_no_traceback(tmp_path: Path) -> None:
    """`gpu-tui fit --list | head -1`: the pipe closes before gpu-tui is done writing."""
    import os
    import subprocess
    import sys

    (tmp_path / "none.toml").write_text("")
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line
    try:
        res = subprocess.run(
            [sys.executable, "-m", "gpu_tui", "--config", str(tmp_path / "none.toml"), "fit", "--list"],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            env={**os.environ, "HOME": str(tmp_path)},
        )
    finally:
        os.close(write)
    assert "Traceback" not in res.stderr and "BrokenPipe" not in res.stderr, res.stderr
    assert res.returncode == 0
