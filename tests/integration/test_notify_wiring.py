"""Issue 15 end to end, as a user does it: `notify add` ships the target to the instance (real
sshd), a job started with `run` that fails while no gpu-tui process runs is reported by the
instance itself, once, to a loopback webhook; a target that wants only laptop events stays off
the instance; `notify test NAME` sends from the laptop and from that instance; `notify remove`
takes the instance's copy away."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from notifyserver import notify_server
from sshhelp import cli_env, config_text
from waiting import until_sync

pytestmark = pytest.mark.sshd


def run(tmp: Path, inst, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = cli_env(tmp, known_hosts=f"{inst.host_public_key_line}\n", keyring="keyrings.alt.file.PlaintextKeyring")
    return subprocess.run(
        [sys.executable, "-m", "gpu_tui", "--config", str(tmp / "config.toml"), "--lang", "en", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_add_run_fail_test_remove(sshd_instance, tmp_path: Path) -> None:
    inst = sshd_instance
    (tmp_path / "config.toml").write_text(config_text([inst]))
    targets_file = inst.home() / ".gpu-tui" / "notify" / "targets.json"
    with notify_server() as srv:
        hook = f"json://127.0.0.1:{srv.port}/hook"
        added = run(tmp_path, inst, "notify", "add", "-", "--events", "job_end", stdin=hook + "\n")
        assert added.returncode == 0, added.stderr
        assert "not reachable" not in added.stdout
        doc = json.loads(targets_file.read_text())
        assert [t["events"] for t in doc["targets"]] == [["job_end"]]
        assert stat.S_IMODE(targets_file.stat().st_mode) == 0o600

        # a laptop-only event: not on the instance
        laptop_only = f"json://127.0.0.1:{srv.port}/balance"
        added = run(tmp_path, inst, "notify", "add", "-", "--events", "balance", stdin=laptop_only + "\n")
        assert added.returncode == 0, added.stderr
        assert len(json.loads(targets_file.read_text())["targets"]) == 1

        started = run(
            tmp_path,
            inst,
            "run",
            inst.name,
            "--name",
            "train",
            "--",
            "python3",
            "-c",
            "import torch_missing_module_xyz",
        )
        assert started.returncode == 0, started.stderr
        # nothing of gpu-tui runs now: the instance sends it
        sent = until_sync(lambda: [r for r in srv.requests if r.path == "/hook"], 60, what="the job's end, sent")
        body = sent[0].json()
        assert isinstance(body, dict)
        text = json.dumps(body, ensure_ascii=False)
        assert inst.name in text and "train" in text and "ModuleNotFoundError: torch_missing_module_xyz" in text
        assert not [r for r in srv.requests if r.path == "/balance"]

        before = len(srv.requests)
        tested = run(tmp_path, inst, "notify", "test", inst.name)
        assert tested.returncode == 0, tested.stdout + tested.stderr
        assert f"ok      {inst.name} -> " in tested.stdout
        # the laptop to both targets, the instance to the one it holds
        paths = sorted(r.path for r in srv.requests[before:])
        assert paths == ["/balance", "/hook", "/hook"], paths
        assert len([r for r in srv.requests if r.path == "/hook"]) == 3  # the job's end was sent once

        removed = run(tmp_path, inst, "notify", "remove", "1")
        assert removed.returncode == 0, removed.stderr
        assert not targets_file.exists()  # the one left wants no instance event
