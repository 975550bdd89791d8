"""`gpu-tui conda` against a real sshd whose HOME holds a fake miniconda off PATH."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sshhelp import run_gpu_tui

pytestmark = pytest.mark.sshd


def conda(tmp: Path, inst, *args: str):
    return run_gpu_tui(tmp, [inst], "conda", inst.name, *args, timeout=120)


def test_list_create_install_remove_init(sshd_instance, tmp_path: Path) -> None:
    res = conda(tmp_path, sshd_instance, "list", "--json")
    assert res.returncode == 0, res.stderr
    envs = {e["name"]: e for e in json.loads(res.stdout)["envs"]}
    assert set(envs) == {"base", "llm", "py311"}
    assert envs["base"]["path"] == str(sshd_instance.conda_root())
    assert all(e["python"] and e["python"].count(".") == 2 for e in envs.values())
    assert all(isinstance(e["size_bytes"], int) and e["size_bytes"] > 0 for e in envs.values())
    text = conda(tmp_path, sshd_instance, "list")
    assert text.returncode == 0 and "KiB" in text.stdout and "py311" in text.stdout

    made = conda(tmp_path, sshd_instance, "create", "exp", "--python", "3.11")
    assert made.returncode == 0, made.stderr
    assert "exp" in sshd_instance.conda_envs()
    again = conda(tmp_path, sshd_instance, "create", "exp", "--python", "3.11")
    assert again.returncode == 2 and "already exists" in again.stderr

    inst = conda(tmp_path, sshd_instance, "install", "exp", "numpy>=1.26", "einops")
    assert inst.returncode == 0, inst.stderr
    assert {"numpy", "einops"} <= set(sshd_instance.conda_packages("exp"))

    no_tty = conda(tmp_path, sshd_instance, "remove", "exp")
    assert no_tty.returncode == 2 and "--yes" in no_tty.stderr
    assert "exp" in sshd_instance.conda_envs()
    gone = conda(tmp_path, sshd_instance, "remove", "exp", "--yes")
    assert gone.returncode == 0, gone.stderr
    assert "exp" not in sshd_instance.conda_envs()

    init = conda(tmp_path, sshd_instance, "init")
    assert init.returncode == 0 and "NEW shell" in init.stdout
    assert ">>> conda initialize >>>" in (sshd_instance.home() / ".bashrc").read_text()


def test_names_are_refused_before_anything_runs(sshd_instance, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    cases = [
        (["create", f"x; touch {marker}", "--python", "3.11"], "conda env name"),
        (["create", "ok", "--python", "3.11; reboot"], "--python"),
        (["install", "llm", f"numpy; touch {marker}"], "not a package name"),
        (["install", "nope", "numpy"], "no conda env 'nope'"),
        (["remove", "base", "--yes"], "base env cannot be removed"),
    ]
    for args, message in cases:
        res = conda(tmp_path, sshd_instance, *args)
        assert res.returncode == 2, (args, res.stderr)
        assert message in res.stderr and "Traceback" not in res.stderr, (args, res.stderr)
    assert not marker.exists()
    assert sshd_instance.conda_envs() == ["base", "llm", "py311"]
