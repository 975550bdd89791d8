"""The environment check's parser and verdicts on hand-written probe output (core, no I/O)."""

from __future__ import annotations

from gpu_tui.core.env.check import PyModule, build_checks, env_json, parse_module, parse_probe

PROBE = """@@section nvsmi
NVIDIA GeForce RTX 4090
NVIDIA GeForce RTX 4090
@@rc 0
@@section nvsmi_version
NVIDIA-SMI version  : 550.54.15
NVML version        : 550.54
DRIVER version      : 550.54.15
CUDA Version        : 12.4
@@section python
Python 3.10.14
@@rc 0
@@section conda
/root/miniconda3/bin/conda
conda 24.9.2
@@section conda_init
/root/.bashrc
@@section disks
/ overlay 31457280 30408704 1048576 97% /
/root/autodl-tmp /dev/vdb 52428800 1048576 51380224 2% /root/autodl-tmp
@@section mem
MemTotal:       65536000 kB
MemAvailable:   52428800 kB
"""


def names(checks):
    return {c.name: c for c in checks}


def test_a_healthy_autodl_box_with_a_full_root_disk() -> None:
    f = parse_probe(PROBE)
    f.torch = parse_module('{"version": "2.4.1+cu121", "cuda_available": true, "cuda": "12.1"}')
    c = names(build_checks(f))
    assert c["nvidia-smi"].ok and c["nvidia-smi"].detail == "driver 550.54.15, CUDA 12.4, 2x RTX 4090"
    assert c["python"].detail == "python3 3.10.14"
    assert c["conda"].ok and c["conda init"].ok
    assert c["torch"].ok and "sees the GPU" in c["torch"].detail
    assert not c["disk /"].ok and c["disk /"].detail == "1 of 30 GiB free" and "prune" in c["disk /"].fix
    assert c["disk /root/autodl-tmp"].ok
    doc = env_json(f, build_checks(f))
    assert doc["torch"] == {"version": "2.4.1+cu121", "cuda_available": True, "hip": None}
    assert doc["disks"][1] == {"path": "/root/autodl-tmp", "free_gib": 49.0, "total_gib": 50.0}
    assert (doc["driver_version"], doc["cuda_version"], doc["conda_version"]) == ("550.54.15", "12.4", "24.9.2")


def test_cpu_torch_and_a_torch_that_cannot_see_the_gpu() -> None:
    f = parse_probe(PROBE)
    f.torch = PyModule(version="2.4.1+cpu", cuda_available=False, cuda=None)
    assert "CPU build" in names(build_checks(f))["torch"].detail
    f.torch = PyModule(version="2.5.0+cu124", cuda_available=False, cuda="12.4")
    t = names(build_checks(f))["torch"]
    assert not t.ok and "cannot see a GPU" in t.detail and "driver" in t.fix


def test_missing_everything_is_failed_checks_not_errors() -> None:
    f = parse_probe(
        "@@section nvsmi\nsh: 1: nvidia-smi: not found\n@@rc 127\n@@section python\nsh: python3: not found\n@@rc 127\n"
    )
    f.torch = parse_module("sh: 1: python3: not found")
    c = names(build_checks(f))
    assert not c["nvidia-smi"].ok and "not found" in c["nvidia-smi"].detail
    assert not c["python"].ok and not c["conda"].ok and "conda init" not in c
    assert not c["torch"].ok and "not found" in c["torch"].detail
    assert "memory" not in c and env_json(f, list(c.values()))["torch"] is None


def test_module_probe_output_with_noise_before_the_json() -> None:
    m = parse_module('UserWarning: something\n{"version": "2.1.0", "cuda_available": true, "cuda": "11.8"}\n')
    assert (m.version, m.cuda_available, m.cuda, m.error) == ("2.1.0", True, "11.8", None)
    missing = parse_module('{"error": "ModuleNotFoundError: No module named \'torch\'"}')
    assert missing.error.startswith("ModuleNotFound")
