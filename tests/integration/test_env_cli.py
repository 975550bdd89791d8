"""`gpu-tui env` against a real sshd: fake nvidia-smi on PATH, a fake miniconda in HOME and off
PATH, envs without torch; checks, fixes, the JSON shape, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sshhelp import run_gpu_tui

pytestmark = pytest.mark.sshd

TOP_KEYS = {
    "checks",
    "driver_version",
    "cuda_version",
    "rocm_version",
    "amdgpu_version",
    "python_version",
    "conda_path",
    "conda_version",
    "torch",
    "disks",
    "indexes",
}


def env_json(tmp: Path, inst, *args: str) -> dict:
    res = run_gpu_tui(tmp, [inst], "env", inst.name, "--json", *args, timeout=120)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def by_name(doc: dict) -> dict[str, dict]:
    return {c["name"]: c for c in doc["checks"]}


def test_env_json_on_a_fresh_instance(sshd_instance, tmp_path: Path) -> None:
    doc = env_json(tmp_path, sshd_instance)
    assert set(doc) == TOP_KEYS
    checks = by_name(doc)
    # the fake nvidia-smi serves a real H100 capture (driver 590.48.01, CUDA 13.1)
    assert checks["nvidia-smi"]["ok"] and "driver 590.48.01, CUDA 13.1" in checks["nvidia-smi"]["detail"]
    assert "H100" in checks["nvidia-smi"]["detail"]
    assert (doc["driver_version"], doc["cuda_version"]) == ("590.48.01", "13.1")
    assert checks["python"]["ok"] and doc["python_version"]
    # conda is off PATH over SSH, and found anyway
    assert doc["conda_path"] == str(sshd_instance.conda_exe()) and checks["conda"]["ok"]
    assert doc["conda_version"]
    assert not checks["conda init"]["ok"] and "conda init bash" in checks["conda init"]["fix"]
    assert "NEW shell" in checks["conda init"]["fix"]
    # no torch in conda's base: a failed check with the fix, and null in the JSON
    assert not checks["torch"]["ok"] and "pip install torch" in checks["torch"]["fix"]
    assert "conda base" in checks["torch"]["detail"] and doc["torch"] is None
    assert checks["disk /"]["ok"] and doc["disks"][0]["path"] == "/"
    assert doc["disks"][0]["total_gib"] >= doc["disks"][0]["free_gib"] > 0
    assert checks["memory"]["ok"]
    for c in doc["checks"]:
        assert (c["fix"] is None) == c["ok"], c


def test_conda_init_and_a_missing_driver_are_seen(sshd_instance, tmp_path: Path) -> None:
    with open(sshd_instance.home() / ".bashrc", "a") as f:
        f.write("# >>> conda initialize >>>\n# <<< conda initialize <<<\n")
    sshd_instance.remove_nvidia_smi()
    doc = env_json(tmp_path, sshd_instance, "--env", "llm")
    checks = by_name(doc)
    assert checks["conda init"]["ok"]
    assert not checks["nvidia-smi"]["ok"] and "not found" in checks["nvidia-smi"]["detail"]
    assert doc["driver_version"] is None
    assert "env llm" in checks["torch"]["detail"]


def test_text_output_and_refusals(sshd_instance, tmp_path: Path) -> None:
    res = run_gpu_tui(tmp_path, [sshd_instance], "env", sshd_instance.name, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[0].startswith("ok  nvidia-smi")
    assert "fix: run" in res.stdout
    marker = tmp_path / "pwned"
    for env, message in (("nope", "no conda env 'nope'"), (f"x; touch {marker}", "conda env name")):
        bad = run_gpu_tui(tmp_path, [sshd_instance], "env", sshd_instance.name, "--env", env, timeout=120)
        assert bad.returncode == 2 and message in bad.stderr, bad.stderr
        assert "Traceback" not in bad.stderr
    assert not marker.exists()
