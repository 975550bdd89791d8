"""Snapshots of the main screens in Simplified Chinese (pytest-textual-snapshot), from the demo
fleet on a fixed clock: the dashboard at 80x24 and wide, help, detail.

The language is applied when the app is built (build_app's `language`); the UI tests' fixture
puts English back after each. Update after an intended visual change with
`pytest tests/ui/test_snapshots_zh.py --snapshot-update`.
"""

from __future__ import annotations

import pytest

from gpu_tui.ui.app import GpuTuiApp
from gpu_tui.ui.factory import build_app, demo_source
from gpu_tui.ui.still import settle

FIXED_CLOCK = 1_796_000_000.0


def demo_app_zh() -> GpuTuiApp:
    return build_app(demo_source(seed=0, clock=lambda: FIXED_CLOCK), clock=lambda: FIXED_CLOCK, language="zh-CN")


async def _settle(pilot) -> None:
    await settle(pilot.app)


@pytest.mark.parametrize(
    ("size", "keys"),
    [((80, 24), []), ((120, 36), ["j", "j"])],
    ids=["80x24-training", "120x36-h100x8"],
)
def test_dashboard_zh(snap_compare, size, keys) -> None:
    assert snap_compare(demo_app_zh(), terminal_size=size, press=keys, run_before=_settle)


def test_help_screen_zh(snap_compare) -> None:
    assert snap_compare(demo_app_zh(), terminal_size=(80, 24), press=["question_mark"], run_before=_settle)


def test_detail_screen_zh(snap_compare) -> None:
    assert snap_compare(demo_app_zh(), terminal_size=(100, 40), press=["j", "j", "enter"], run_before=_settle)
