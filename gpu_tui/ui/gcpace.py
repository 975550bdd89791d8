"""When the cyclic garbage collector makes its full collections: from a timer, not from inside a
key's work.

CPython starts a collection when allocations cross a threshold, so its collections fall in the
steps that allocate most: opening a screen allocates a whole frame of Strips and segments, and
on a 32 x 8 fleet a full collection (16-25 ms) landed in 2 of 20 log-screen opens, making them
the slowest (61 and 73 ms against a median of 38). The young generations are still collected as
CPython decides (a few ms each); the full collection waits for a timer, where a key lands in it
only by chance. From a key until its paint is out (`hold`, released KEY_HOLD_SECONDS later) no
collection runs at all: the young ones, 0.5-2 ms in a screen's open in-process (with a gen-1 in
a third to two thirds of them), run just after instead.
"""

from __future__ import annotations

import gc

__all__ = ["FULL_COLLECTION_SECONDS", "KEY_HOLD_SECONDS", "GcPacing"]

FULL_COLLECTION_SECONDS = 30.0
"""How often the full collection runs: garbage in cycles that outlived two young collections
waits at most this long (CPython's own pace is a full collection per roughly 70,000 surviving
allocations)."""

KEY_HOLD_SECONDS = 0.15
"""How long a key holds the collector off: its work and first paint take 10-45 ms, a log
screen's first open (composing it) 70-85 ms on a 32 x 8 fleet. A held key (autorepeat) holds it
again only once this has passed, so collections still run between."""

_NEVER = 1 << 30
"""A threshold for the oldest generation that CPython never reaches: young collections counted."""


class GcPacing:
    """`start` moves the full collections to `collect` (a timer's), `stop` gives them back."""

    def __init__(self) -> None:
        self._saved: tuple[int, int, int] | None = None
        self._held = False

    @property
    def started(self) -> bool:
        return self._saved is not None

    def start(self) -> None:
        if self._saved is None:
            self._saved = young, middle, _ = gc.get_threshold()
            gc.set_threshold(young, middle, _NEVER)

    def collect(self) -> int:
        """A full collection now; the number of unreachable objects found."""
        return gc.collect()

    def hold(self) -> bool:
        """No collection until `release` (while paced, and the collector was on): True if this
        call turned it off, and so someone must release it."""
        if self._saved is None or self._held or not gc.isenabled():
            return False
        gc.disable()
        self._held = True
        return True

    def release(self) -> None:
        if self._held:
            self._held = False
            gc.enable()

    def stop(self) -> None:
        self.release()
        if self._saved is not None:
            gc.set_threshold(*self._saved)
            self._saved = None
