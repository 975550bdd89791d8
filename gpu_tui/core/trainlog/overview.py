"""A series file's overview, kept as its points are written: what the log screen draws first
when it has no copy of a run's series yet.

A 200 MB log makes 1.5 million points (45 MB of series); fetching and parsing them all took 4.5 s
before the first curve. The summariser (services/jobs/series/summariser.py) feeds a
`SeriesOverview` every row it writes to series.jsonl and saves it with its state, so the
overview costs the instance about a microsecond a point and is ready at once. Per series (stream,
event file, tag, as core/trainlog/series_decode groups them) it keeps:

- buckets of consecutive points, each keeping its lowest and highest point (a spike stays
  visible), at most 2 x BUCKETS of them: when full, neighbours merge and a bucket holds twice
  the points;
- the last TAIL points whole (a zoom on the run's end).

`rows()` gives them back as series-file rows (the same forms: `[tag, x, value, time]` for the
log's, with the stream and the event file after them for a run file's) in file order, so the
client's decoder reads them as it reads the file. `{"reset": stream}` drops that stream's series,
as it does there.

Python 3.7 rules apply to what this module does at run time: it is shipped (bundle.py drops the
annotations).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

__all__ = ["BUCKETS", "TAIL", "SeriesOverview", "split_row"]

BUCKETS = 512
"""Buckets kept per series between merges (so 512 to 1,024, two points each): wider than any
chart's 2 x width dots."""
TAIL = 1024
"""The last points kept whole per series."""

if TYPE_CHECKING:  # not at run time: an instance's python3 < 3.9 cannot subscript tuple
    # (n, x, value, time): n counts the series' points from 1, for their order
    _Kept = tuple[int, float, float, "float | None"]


def _below(a: _Kept, b: _Kept) -> bool:
    """a is kept as the lower of the two (a NaN is never kept over a number)."""
    return a[2] < b[2] or (b[2] != b[2] and a[2] == a[2])


def _above(a: _Kept, b: _Kept) -> bool:
    """a is kept as the higher of the two."""
    return a[2] > b[2] or (b[2] != b[2] and a[2] == a[2])


class _Series:
    __slots__ = ("size", "buckets", "count", "lo", "hi", "tail", "n")

    def __init__(self) -> None:
        self.size = 1
        """Points per full bucket."""
        self.buckets: list[tuple[_Kept, _Kept]] = []
        self.count = 0
        """Points in the bucket being filled (its lowest and highest: lo, hi)."""
        self.lo: _Kept = (0, 0.0, 0.0, None)
        self.hi: _Kept = self.lo
        self.tail: deque[_Kept] = deque(maxlen=TAIL)
        self.n = 0

    def add(self, x: float, value: float, time: float | None) -> None:
        self.n += 1
        p = (self.n, x, value, time)
        self.tail.append(p)
        if self.count == 0:
            self.lo = self.hi = p
        else:
            if _below(p, self.lo):
                self.lo = p
            if _above(p, self.hi):
                self.hi = p
        self.count += 1
        if self.count == self.size:
            self.buckets.append((self.lo, self.hi))
            self.count = 0
            if len(self.buckets) >= 2 * BUCKETS:
                self._merge()

    def _merge(self) -> None:
        b = self.buckets
        merged: list[tuple[_Kept, _Kept]] = []
        for i in range(0, len(b) - 1, 2):
            (lo1, hi1), (lo2, hi2) = b[i], b[i + 1]
            merged.append((lo2 if _below(lo2, lo1) else lo1, hi2 if _above(hi2, hi1) else hi1))
        self.buckets = merged
        self.size *= 2

    def points(self) -> list[_Kept]:
        """The kept points in order: the buckets' up to the tail, then the tail."""
        first_tail = self.tail[0][0] if self.tail else self.n + 1
        seen: set[int] = set()
        out: list[_Kept] = []
        pairs = list(self.buckets)
        if self.count:
            pairs.append((self.lo, self.hi))
        for lo, hi in pairs:
            for p in (lo, hi) if lo[0] <= hi[0] else (hi, lo):
                if p[0] < first_tail and p[0] not in seen:
                    seen.add(p[0])
                    out.append(p)
        out.extend(self.tail)
        return out


def split_row(row: list[Any]) -> tuple[tuple[str, str, str], Any, Any, Any] | None:
    """A points row of a series file as ((stream, event file, tag), x, value, time): the log's
    `[tag, x, value, time]` (stream `log`), a run file's `[tag, step, value, time, stream]` and an
    event file's with its path after them; None for a row of no known form."""
    n = len(row)
    if n == 4:
        return ("log", "", str(row[0])), row[1], row[2], row[3]
    if n == 5:
        return (str(row[4]), "", str(row[0])), row[1], row[2], row[3]
    if n == 6:
        return (str(row[4]), str(row[5]), str(row[0])), row[1], row[2], row[3]
    return None


class SeriesOverview:
    """Every series of one series file, bounded (see the module docstring). Picklable: the
    summariser saves it with its state."""

    def __init__(self) -> None:
        self._series: dict[tuple[str, str, str], _Series] = {}

    def _of(self, key: tuple[str, str, str]) -> _Series:
        s = self._series.get(key)
        if s is None:
            s = self._series[key] = _Series()
        return s

    def add_log_point(self, tag: str, x: float, value: float, time: float | None) -> None:
        """One of the log's points (core/trainlog/series.Point), before it is encoded."""
        self._of(("log", "", tag)).add(x, value, time)

    def add_row(self, row: object) -> None:
        """One row of the series file as JSON decodes it (what SeriesDecoder.feed reads)."""
        if isinstance(row, list):
            found = split_row(row)
            if found is not None:
                key, x, value, time = found
                self._of(key).add(x, value, time)
        elif isinstance(row, dict) and "reset" in row:
            gone = str(row["reset"])
            for key in [k for k in self._series if k[0] == gone]:
                del self._series[key]

    def __len__(self) -> int:
        return len(self._series)

    def rows(self) -> Iterator[list[object]]:
        """The kept points as series-file rows, series by series in the order they began."""
        for (stream, run, tag), series in self._series.items():
            for _n, x, value, time in series.points():
                if stream == "log" and not run:
                    yield [tag, x, value, time]
                elif not run:
                    yield [tag, x, value, time, stream]
                else:
                    yield [tag, x, value, time, stream, run]
