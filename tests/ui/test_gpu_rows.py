"""GPU rows fit the panel at 80 and 160 columns, for real cards whose VRAM text differs in width."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu_tui.core.metrics import nvsmi
from gpu_tui.ui.format import gpu_row, spark_width

DATA = Path(__file__).resolve().parents[1] / "data" / "nvidia-smi"


def real_rows(rel: str) -> list:
    return nvsmi.parse_rows((DATA / rel).read_text(encoding="utf-8"))


@pytest.mark.parametrize("width", [78, 118, 158])  # 80/120/160 columns less the panel's padding
@pytest.mark.parametrize(
    "rel",
    [
        "device/query-nounits.txt",
        "device/idle-after.txt",
        "cases/query-gpu/eight-gpu-a100.txt",
        "cases/query-gpu/rtx4090-with-units.txt",
        "cases/query-gpu/not-supported-every-column.txt",
    ],
)
def test_rows_fit_and_align(rel: str, width: int) -> None:
    gpus = real_rows(rel)
    assert gpus
    spark_w, tail_w = spark_width(gpus, width)
    history = [100, 0, 50, None] * 60
    rows = [gpu_row(g, history, history, spark_w, tail_w).plain for g in gpus]
    assert all(len(r) <= width for r in rows), [len(r) for r in rows]
    assert len({len(r) for r in rows}) == 1  # columns line up across the GPUs of a box
    assert width - len(rows[0]) <= 1  # and the sparklines take the room there is
