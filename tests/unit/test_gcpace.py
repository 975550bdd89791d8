"""GcPacing (ui/gcpace): the full collections wait for `collect`; the young ones go on."""

from __future__ import annotations

import gc
import weakref

from gpu_tui.ui.gcpace import GcPacing


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def _garbage_cycle(*, oldest: bool = False) -> weakref.ref[_Node]:
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    if oldest:
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
        ref = _garbage_cycle(oldest=True)
        kept = _churn()
        assert ref() is not None, "a full collection ran on its own"
        assert pacing.collect() >= 2 and ref() is None
        del kept
    finally:
        pacing.stop()
    assert gc.get_threshold() == before and not pacing.started
    # the same churn without pacing: CPython's own full collection takes the cycle
    ref = _garbage_cycle(oldest=True)
    kept = _churn()
    assert ref() is None
    del kept


def test_a_hold_stops_every_collection_until_released() -> None:
    pacing = GcPacing()
    assert not pacing.hold() and gc.isenabled()  # not paced (start-up): nothing held
    pacing.start()
    try:
        assert pacing.hold() and not gc.isenabled()
        assert not pacing.hold()  # held already: one release is owed, not two
        ref = _garbage_cycle()
        kept = [[0] for _ in range(50_000)]  # many young collections' worth of allocations
        assert ref() is not None, "a collection ran while held"
        pacing.release()
        assert gc.isenabled()
        more = [[0] for _ in range(5_000)]  # the young collection CPython owes now
        assert ref() is None
        del kept, more
        pacing.release()  # again: nothing to give back
        assert gc.isenabled()
        assert pacing.hold()
    finally:
        pacing.stop()  # gives a hold back too
    assert gc.isenabled()


def test_a_hold_leaves_a_collector_someone_else_turned_off_alone() -> None:
    pacing = GcPacing()
    pacing.start()
    gc.disable()
    try:
        assert not pacing.hold()
        pacing.release()
        assert not gc.isenabled()
    finally:
        gc.enable()
        pacing.stop()
