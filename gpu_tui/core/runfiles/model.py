"""What every reader returns: a `Series` per metric, every point as the file has it.

A point is `(step, value, wall_time)`: `step` an int (the file's own x), `value` a float (NaN
and infinities kept: a NaN loss is news), `wall_time` seconds since the epoch, or None where the
format keeps no time (trainer_state.json, metrics.csv). Points stay in the file's order, which
is oldest first for every format read here (the writers append); nothing is thinned or merged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["TENSORBOARD", "TRAINER_STATE", "CSV", "MLFLOW", "SOURCES", "Series", "RunFileError", "SeriesSet"]

if TYPE_CHECKING:
    # at run time these are only annotations, which the shipped copy drops (python3.6 has no
    # `tuple[...]` or `X | None` outside them)
    Point = tuple[int, float, float | None]

TENSORBOARD = "tensorboard"
TRAINER_STATE = "trainer_state"
CSV = "csv"
MLFLOW = "mlflow"
SOURCES = (TENSORBOARD, TRAINER_STATE, CSV, MLFLOW)


class RunFileError(ValueError):
    """A file that cannot be read as its format at all (not JSON, no `step` column); the
    message says so in a user's words. A torn or truncated end is not one: readers keep what
    came before it."""


class Series:
    """One metric of one file: `tag` as written (`train/loss`; HF's own training loss is
    `loss`), `source` one of SOURCES, `points` oldest first."""

    __slots__ = ("tag", "source", "points")

    def __init__(self, tag: str, source: str, points: list[Point] | None = None) -> None:
        self.tag = tag
        self.source = source
        self.points: list[Point] = [] if points is None else points

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Series):
            return NotImplemented
        return (self.tag, self.source, self.points) == (other.tag, other.source, other.points)

    def __repr__(self) -> str:
        return f"Series({self.tag!r}, {self.source!r}, {len(self.points)} points)"


class SeriesSet:
    """Series by tag, in the order their first point came: what a reader builds as it goes."""

    __slots__ = ("source", "_by_tag")

    def __init__(self, source: str) -> None:
        self.source = source
        self._by_tag: dict[str, Series] = {}

    def add(self, tag: str, step: int, value: float, wall_time: float | None) -> None:
        series = self._by_tag.get(tag)
        if series is None:
            series = self._by_tag[tag] = Series(tag, self.source)
        series.points.append((step, value, wall_time))

    def series(self) -> list[Series]:
        return list(self._by_tag.values())

    def __len__(self) -> int:
        return len(self._by_tag)
