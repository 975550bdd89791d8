"""AMD GPUs (issue 28): amd-smi's and rocm-smi's JSON, read from real outputs
(tests/data/amd, each file with its source), into the rows nvidia-smi's give."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpu_tui.core.metrics.amdgpu import AmdReadError, parse_amd_smi, parse_rocm_smi

DATA = Path(__file__).resolve().parents[1] / "data" / "amd"


def read(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def test_amd_smi_metric_and_static_of_an_rx_6600_xt() -> None:
    frame = parse_amd_smi(
        read("amd-smi-metric-json-list-rx6600xt.json"), read("amd-smi-static-json-list-rx6600xt.json"), 5.0
    )
    (g,) = frame.gpus
    assert frame.taken_at == 5.0
    assert (g.index, g.name, g.uuid) == (0, "Navi 23 [Radeon RX 6600/6600 XT", "0000:0b:00.0")
    assert (g.utilization_gpu, g.memory_used_mib, g.memory_total_mib) == (1, 202, 8176)  # "MB" is MiB
    assert (g.temperature_c, g.power_draw_w, g.power_limit_w) == (36, 6.0, None)


def test_the_gpu_data_shape_of_amd_smi_26_reads_the_same() -> None:
    """amd-smi 26 wraps the same per-GPU objects in {"gpu_data": [...]}: the real list output,
    wrapped (the only real gpu_data paste found is cut short; it is tested below)."""
    listed = json.loads(read("amd-smi-metric-json-list-rx6600xt.json"))
    wrapped = json.dumps({"gpu_data": listed})
    static = json.dumps({"gpu_data": json.loads(read("amd-smi-static-json-list-rx6600xt.json"))})
    assert parse_amd_smi(wrapped, static, 1.0) == parse_amd_smi(
        read("amd-smi-metric-json-list-rx6600xt.json"), read("amd-smi-static-json-list-rx6600xt.json"), 1.0
    )


def test_a_power_only_metric_leaves_the_rest_unknown_never_zero() -> None:
    (g,) = parse_amd_smi(read("amd-smi-metric-power-json-list-changelog-rocm6.1.json"), None, 0.0).gpus
    assert g.power_draw_w == 10.0
    assert (g.utilization_gpu, g.memory_used_mib, g.temperature_c, g.name) == (None, None, None, None)


@pytest.mark.parametrize(
    "name",
    [
        "amd-smi-metric-json-gpu_data-2x-r9700-truncated-head40.txt",  # cut by the poster's `head`
        "amd-smi-error-no-driver-26.1.0.txt",
        "rocm-smi-error-no-driver-rocm5.2.3.txt",
    ],
)
def test_output_that_is_not_whole_json_is_one_clear_error(name: str) -> None:
    with pytest.raises(AmdReadError):
        parse_amd_smi(read(name), None, 0.0)


def test_rocm_smi_json_of_an_rx_7900_xt() -> None:
    (g,) = parse_rocm_smi(read("rocm-smi-json-rx7900xt-productname-use-vram.json"), 0.0).gpus
    assert (g.index, g.name, g.utilization_gpu) == (0, "Radeon RX 7900 XT", 0)
    assert (g.memory_used_mib, g.memory_total_mib) == (27856896 // 2**20, 21458059264 // 2**20)
    assert (g.temperature_c, g.power_draw_w) == (None, None)  # sensors it left out


def test_rocm_smi_skips_its_system_section_and_a_card_with_names_only() -> None:
    (g,) = parse_rocm_smi(read("rocm-smi-showallinfo-json-rx6600xt-via-jq.json"), 0.0).gpus
    assert (g.name, g.uuid, g.utilization_gpu, g.memory_used_mib) == (
        "Navi 23 [Radeon RX 6600/6600 XT/6600M]",
        "0000:0b:00.0",
        0,
        None,
    )
    (mi250,) = parse_rocm_smi(read("rocm-smi-json-mi250x-productname.json"), 0.0).gpus
    assert mi250.name == "AMD INSTINCT MI200 (MCM) OAM LC MBA HPE C2" and mi250.utilization_gpu is None
    with pytest.raises(AmdReadError):
        parse_rocm_smi(read("rocm-smi-error-no-driver-rocm5.2.3.txt"), 0.0)


def test_torch_built_for_rocm_is_a_gpu_build() -> None:
    from gpu_tui.core.env.check import EnvFacts, PyModule, build_checks, parse_module

    m = parse_module('{"version": "2.4.1+rocm6.1", "cuda_available": true, "cuda": null, "hip": "6.1.40091"}')
    assert (m.hip, m.cuda, m.cuda_available) == ("6.1.40091", None, True)
    torch = [c for c in build_checks(EnvFacts(torch=m)) if c.name == "torch"][0]
    assert torch.ok and "ROCm 6.1.40091, sees the GPU" in str(torch.detail)
    blind = PyModule(version="2.4.1+rocm6.1", cuda_available=False, hip="6.1.40091")
    torch = [c for c in build_checks(EnvFacts(torch=blind)) if c.name == "torch"][0]
    assert not torch.ok and "cannot see a GPU" in str(torch.detail) and "ROCm" in str(torch.fix)
