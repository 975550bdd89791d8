"""GcPacing (ui/gcpace): the full collections wait for `collect`; the young ones go on."""

from __future__ import annotations

import gc
import weakref

from gpu_tui.ui.gcpace import GcPacing


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def _garbage_cycle_in_the_oldest_generation() -> weakref.ref[_Node]:
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    gc.collect(1)  # survivors of the middle generation move to the oldest
    return weakref.ref(a)  # a and b are garbage from here on: only a cycle holds them


def _churn() -> list[list[int]]:
    """Enough surviving allocations for CPython to start full collections of its own: more
    than a quarter of what the oldest generation holds, over many young collections."""
    kept: list[list[int]] = []
    for _ in range(len(gc.get_objects()) // 2 + 100_000):
        kept.append([0])
    return kept


def test_the_full_collection_waits_for_collect_and_the_thresholds_come_back() -> None:
    before = gc.get_threshold()
    pacing = GcPacing()
    pacing.start()
    try:
        pacing.start()  # twice: still one saved threshold
        assert gc.get_threshold()[:2] == before[:2] and gc.get_threshold()[2] > 1_000_000
        ref = _garbage_cycle_in_the_oldest_generation()
        kept = _churn()
        assert ref() is not None, "a full collection ran on its own"
        assert pacing.collect() >= 2 and ref() is None
        del kept
    finally:
        pacing.stop()
    assert gc.get_threshold() == before and not pacing.started
    # the same churn without pacing: CPython's own full collection takes the cycle
    ref = _garbage_cycle_in_the_oldest_generation()
    kept = _churn()
    assert ref() is None
    del kept
