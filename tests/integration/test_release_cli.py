"""`status` says when a stopped AutoDL instance may be released (issue 28): real sshd, the real
ledger file (the first `status` records the sighting), the instance then stopped."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from sshhelp import run_gpu_tui

pytestmark = pytest.mark.sshd

DAY = 86400


def test_a_stopped_autodl_instance_counts_down_from_its_last_sighting(sshd_factory, tmp_path: Path) -> None:
    inst = sshd_factory("box", gpus=1)
    t0 = time.time()
    res = run_gpu_tui(tmp_path, [inst], "status", "--json", config_extra='provider = "autodl"\n')
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["instances"][0]["release_at"] is None  # up: nothing counts down
    t1 = time.time()
    inst.stop()

    res = run_gpu_tui(tmp_path, [inst], "status", "--json", config_extra='provider = "autodl"\n')
    assert res.returncode == 3
    (entry,) = json.loads(res.stdout)["instances"]
    assert entry["online"] is False
    assert int(t0) - 1 + 15 * DAY <= entry["release_at"] <= t1 + 15 * DAY

    res = run_gpu_tui(tmp_path, [inst], "status", config_extra='provider = "autodl"\n')
    assert res.returncode == 3
    line = next(ln for ln in res.stdout.splitlines() if ln.startswith("box: its provider may release it"))
    assert "(in 14d" in line and "without a GPU" in line, line

    # the instance's own rule wins; 0: never released
    res = run_gpu_tui(tmp_path, [inst], "status", "--json", config_extra='provider = "autodl"\nrelease_days = 2\n')
    assert int(t0) - 1 + 2 * DAY <= json.loads(res.stdout)["instances"][0]["release_at"] <= t1 + 2 * DAY
    res = run_gpu_tui(tmp_path, [inst], "status", "--json", config_extra='provider = "autodl"\nrelease_days = 0\n')
    assert json.loads(res.stdout)["instances"][0]["release_at"] is None
    # a lab box: no rule
    res = run_gpu_tui(tmp_path, [inst], "status", "--json")
    assert json.loads(res.stdout)["instances"][0]["release_at"] is None
