"""The VRAM fit screen (`v`): qwen2.5-7b against a small fleet with fixed GPUs (what the dashboard
passes from its instances' last frames), in English at both sizes and in Chinese at 80x24."""

from __future__ import annotations

from gpu_tui.config.language import apply_language
from gpu_tui.core.fit.estimate import Card
from gpu_tui.ui.screens.fit import FitScreen

from .shots import SIZES, HostApp

FLEET = [
    Card("RTX 4090", 24564, instance="autodl-4090-train", rate=1.98),
    Card("H100 80GB HBM3", 81559, instance="runpod-h100x8", rate=52.0, count=8),
    Card("RTX 3090", 24576, instance="autodl-3090", rate=1.58),
    Card("", 0, instance="vast-broken", rate=1.45),
]
"""A 4090 and a 3090 hold qwen2.5-7b in bf16 (17.2 GiB); the broken one never reported its GPUs."""


def _app() -> HostApp:
    return HostApp(lambda: FitScreen(lambda: FLEET, "¥"))


@SIZES
def test_fit(snap_compare, size) -> None:
    assert snap_compare(_app(), terminal_size=size)


def test_fit_zh(snap_compare) -> None:
    apply_language("zh-CN")  # the UI tests' fixture puts English back
    assert snap_compare(_app(), terminal_size=(80, 24))
