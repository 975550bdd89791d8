"""The parser against one real machine's raw nvidia-smi output (tests/data/nvidia-smi/device/).

Expected values are read by eye from the files, not produced by the parser.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu_tui.core.metrics import nvsmi
from gpu_tui.core.models import GpuErrorKind, GpuFrame

DEVICE = Path(__file__).resolve().parents[1] / "data" / "nvidia-smi" / "device"
UUID = "GPU-d6bc5c2e-3f7f-12b9-e606-864b9a6a8141"


def raw(name: str) -> str:
    return (DEVICE / f"{name}.txt").read_bytes().decode("utf-8")


def exit_status(name: str) -> int:
    return int((DEVICE / f"{name}.exit").read_text().strip())


@pytest.mark.parametrize(
    ("name", "util", "power"),
    [("query-nounits", 100, 599.87), ("query-units", 100, 600.26), ("query-header", 99, 600.56)],
)
def test_one_row_under_load_with_or_without_units_and_header(name: str, util: int, power: float) -> None:
    rows = nvsmi.parse_rows(raw(name))
    assert len(rows) == 1
    gpu = rows[0]
    assert (gpu.index, gpu.uuid, gpu.name) == (0, UUID, "NVIDIA H200")
    assert gpu.utilization_gpu == util
    assert (gpu.memory_used_mib, gpu.memory_total_mib) == (20047, 143771)
    assert gpu.temperature_c == 54
    assert gpu.power_draw_w == power and gpu.power_limit_w == 700.0
    assert gpu.fan_speed_percent is None  # "[N/A]": passively cooled
    assert gpu.mig_mode == "Disabled"
    assert nvsmi.detect_error(raw(name), exit_status(name)) is None


def test_legacy_field_list_reads_the_same_row_without_mig() -> None:
    (gpu,) = nvsmi.parse_rows(raw("query-legacy"))
    assert (gpu.utilization_gpu, gpu.power_draw_w, gpu.mig_mode) == (99, 601.05, None)


def test_idle_h200_reports_zero_vram_used() -> None:
    (gpu,) = nvsmi.parse_rows(raw("idle-after"))
    assert (gpu.utilization_gpu, gpu.memory_used_mib, gpu.temperature_c) == (0, 0, 40)
    assert gpu.power_draw_w == 132.86


def test_unknown_field_exits_2_and_names_the_field() -> None:
    text, status = raw("query-badfield"), exit_status("query-badfield")
    assert status == 2
    assert nvsmi.unsupported_field(text) == "not.a.field"
    error = nvsmi.detect_error(text, status)
    assert error is not None and error.kind is GpuErrorKind.UNKNOWN
    assert nvsmi.parse_rows(text) == []


def test_lms_stream_gives_one_frame_per_tick() -> None:
    text = raw("lms-loop")
    assert exit_status("lms-loop") == 124  # the stream never ends by itself
    asm = nvsmi.FrameAssembler(clock=lambda: 0.0)
    frames = [out for line in text.splitlines() if isinstance(out := asm.feed(line), GpuFrame)]
    last = asm.flush()
    if last is not None:
        frames.append(last)
    assert len(text.splitlines()) == 20
    # the first tick closes only when the second arrives, and then the newer one wins
    assert len(frames) == 19
    assert [f.gpus[0].utilization_gpu for f in frames[:3]] == [100, 99, 100]
    assert frames[-1].gpus[0].power_draw_w == 601.95
    assert asm.expected == 1


@pytest.mark.parametrize("name", ["apps", "apps-header"])
def test_compute_apps_list_the_training_process(name: str) -> None:
    (proc,) = nvsmi.parse_compute_apps(raw(name))
    assert (proc.pid, proc.process_name, proc.used_memory_mib, proc.gpu_uuid) == (420, "python3", 20038, UUID)


@pytest.mark.parametrize("name", ["version", "table", "q"])
def test_driver_580_version_from_every_spelling(name: str) -> None:
    assert nvsmi.parse_version(raw(name)) == {"driver_version": "580.159.04", "cuda_version": "13.0"}


@pytest.mark.parametrize("name", ["table", "list", "q", "pmon", "dmon", "topo", "clocks", "version"])
def test_other_outputs_are_not_mistaken_for_rows_or_errors(name: str) -> None:
    text = raw(name)
    assert nvsmi.parse_rows(text) == []
    assert nvsmi.detect_error(text, 0) is None
