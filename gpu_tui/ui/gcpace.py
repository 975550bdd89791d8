"""When the cyclic garbage collector makes its full collections: from a timer, not from inside a
key's work.

CPython starts a collection when allocations cross a threshold, so its collections fall in the
steps that allocate most: opening a screen allocates a whole frame of Strips and segments, and
on a 32 x 8 fleet a full collection (16-25 ms) landed in 2 of 20 log-screen opens, making them
the slowest (61 and 73 ms against a median of 38). The young generations are still collected as
CPython decides (a few ms each); the full collection waits for a timer, where a key lands in it
only by chance.
"""

from __future__ import annotations

import gc

__all__ = ["FULL_COLLECTION_SECONDS", "GcPacing"]

FULL_COLLECTION_SECONDS = 30.0
"""How often the full collection runs: garbage in cycles that outlived two young collections
waits at most this long (CPython's own pace is a full collection per roughly 70,000 surviving
allocations)."""

_NEVER = 1 << 30
"""A threshold for the oldest generation that CPython never reaches: young collections counted."""


class GcPacing:
    """`start` moves the full collections to `collect` (a timer's), `stop` gives them back."""

    def __init__(self) -> None:
        self._saved: tuple[int, int, int] | None = None

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

    def stop(self) -> None:
        if self._saved is not None:
            gc.set_threshold(*self._saved)
            self._saved = None
