"""Snapshots of the main screens (pytest-textual-snapshot), from the demo fleet on a fixed clock.

Grouped by feature: the dashboard at 80x24 and wide, the gpu-error state, detail, help.
Update after an intended visual change with `pytest tests/ui/test_snapshots.py --snapshot-update`.
"""

from __future__ import annotations

import pytest

from gpu_tui.ui.factory import build_app, demo_source
from gpu_tui.ui.still import settle

FIXED_CLOCK = 1_796_000_000.0


def demo_app():
    return build_app(demo_source(seed=0, clock=lambda: FIXED_CLOCK), clock=lambda: FIXED_CLOCK)


async def _settle(pilot) -> None:
    await settle(pilot.app)


@pytest.mark.parametrize(
    ("size", "keys"),
    [((80, 24), []), ((120, 36), ["j", "j"])],
    ids=["80x24-training", "120x36-h100x8"],
)
def test_dashboard(snap_compare, size, keys) -> None:
    assert snap_compare(demo_app(), terminal_size=size, press=keys, run_before=_settle)


def test_dashboard_gpu_error_state(snap_compare) -> None:
    assert snap_compare(demo_app(), terminal_size=(80, 24), press=["j", "j", "j", "j"], run_before=_settle)


def test_detail_screen(snap_compare) -> None:
    assert snap_compare(demo_app(), terminal_size=(100, 40), press=["j", "j", "enter"], run_before=_settle)


def test_help_screen(snap_compare) -> None:
    assert snap_compare(demo_app(), terminal_size=(80, 24), press=["question_mark"], run_before=_settle)
