"""A whole log's scalars as series: every loss, eval loss, learning rate... with its step.

`SeriesReader` follows one log's bytes in order (LogStream -> LogSummary, the same rules as
`jobs` and the log screen) and yields a `Point` for every scalar a line prints: tag `loss` is
the training loss LogSummary picks (`train_loss`), `eval_loss` the held-out one (`eval_loss`),
any other metric keeps the name the line gives it (`learning_rate`, `grad_norm`, `acc`). A
point's x is the run's step where the log says it, else the epoch (fractional), else the n-th
value of that tag (`axis` per tag, fixed by its first point, as LogSummary's `loss_axis`).

It is built to run on the instance (services/jobs/series/summariser.py, shipped like the
notification sender's rules) and to be resumed: `dumps`/`loads` keep the whole reader (stream,
summary, per-tag state), so feeding a log in any number of catch-ups gives the points one read
of the whole log gives. Points are written as one compact JSON array per line
(`encode_points`), so a series file only ever grows. `LogIdentity` says whether the file at the
log's path is still the log a saved reader has read (same inode, not shorter, same first
bytes): a truncated, rotated or replaced log is read again from its start.

Python 3.6 syntax rules apply to what this module does at run time: it is shipped (bundle.py
drops the annotations).
"""

from __future__ import annotations

import hashlib
import json
import math
import pickle
from collections.abc import Mapping
from dataclasses import dataclass

from gpu_tui.core.trainlog.line import is_eval_key, is_loss_key
from gpu_tui.core.trainlog.model import LineInfo
from gpu_tui.core.trainlog.stream import LogStream, StreamUpdate
from gpu_tui.core.trainlog.summary import LogSummary, eval_loss, train_loss

__all__ = [
    "FORMAT",
    "HEAD_BYTES",
    "LOSS",
    "EVAL_LOSS",
    "MAX_TAGS",
    "Point",
    "SeriesReader",
    "LogIdentity",
    "encode_points",
    "decode_points",
    "json_rows",
    "safe_cut",
    "LAST_MARK",
    "last_line",
]

FORMAT = 1
"""The version of a saved reader and of the points' line format: another one is read again."""
HEAD_BYTES = 4096
"""How much of a log's start its identity hashes."""
LAST_MARK = b"@@series-last "
"""The first bytes of series.last: the run's latest progress and loss as the whole log says them."""
PROGRESS_FIELDS = ("percent", "eta_seconds", "epoch", "epochs", "step", "steps", "scope")
LOSS, EVAL_LOSS = "loss", "eval_loss"
MAX_TAGS = 128
"""Tags followed per log (as LogSummary's metric names): later ones are left out."""

# What a line counts with, not what it measures: the x, never a series of its own.
_STEP_KEYS = ("step", "global_step", "num_updates", "iteration", "iter")
_COUNTERS = frozenset((*_STEP_KEYS, "epoch", "epochs", "steps", "total_steps", "max_steps"))
_AXES = ("step", "epoch", "index")


@dataclass(frozen=True)
class Point:
    tag: str
    x: float
    """The step (`axis` step), the epoch (fractional) or the tag's n-th value (index)."""
    value: float
    time: float | None = None
    """The line's own timestamp (seconds on the log's naive clock), where it prints one."""


class _Tag:
    __slots__ = ("axis", "count", "last_x", "last_value")

    def __init__(self, axis: str) -> None:
        self.axis = axis
        self.count = 0
        self.last_x: float | None = None
        self.last_value: float | None = None


def _number(x: float) -> float:
    """An integral x as an int (steps print as `12`, not `12.0`)."""
    return int(x) if float(x).is_integer() else x


class SeriesReader:
    """One log's points, fed as its bytes arrive (see the module docstring).

    `feed(data)` the log's next bytes; `close()` at the log's end (a finished job): the rows
    still being redrawn and a last line without a newline become lines. `offset` counts the bytes
    fed; `axes` holds each tag's axis.
    """

    def __init__(self, charset: str | None = None) -> None:
        self._stream = LogStream(max_lines=1, charset=charset)
        self.summary = LogSummary(max_points=16)
        """The run as LogSummary reads it (progress, last loss, failure); its own curves are
        kept short: the series are the points."""
        self._tags: dict[str, _Tag] = {}
        self._bar_key: object = None
        self.offset = 0
        self.closed = False

    @property
    def axes(self) -> dict[str, str]:
        return {tag: t.axis for tag, t in self._tags.items()}

    def feed(self, data: bytes) -> list[Point]:
        self.offset += len(data)
        return self._update(self._stream.feed(data))

    def close(self) -> list[Point]:
        self.closed = True
        return self._update(self._stream.close())

    def dumps(self) -> bytes:
        """The whole reader, to resume with `loads` (same FORMAT, same python, same rules)."""
        return pickle.dumps((FORMAT, self), protocol=pickle.HIGHEST_PROTOCOL)

    @staticmethod
    def loads(blob: bytes) -> SeriesReader | None:
        """A reader `dumps` saved; None when it cannot be taken up (another format or rules)."""
        try:
            version, reader = pickle.loads(blob)  # noqa: S301 (our own file, in the job's directory)
        except Exception:  # noqa: BLE001 (anything unreadable: read the log again)
            return None
        return reader if version == FORMAT and isinstance(reader, SeriesReader) else None

    # ------------------------------------------------------------------ internals

    def _update(self, update: StreamUpdate) -> list[Point]:
        out: list[Point] = []
        summary = self.summary
        for event in update.events:
            info = summary.add_line(event.text, final=event.final)
            if info.metrics:
                self._points(info, out)
        summary.set_live(update.live)
        return out

    def _x(self, metrics: Mapping[str, float]) -> dict[str, float | None]:
        """The line's x on each axis (None: the line does not say it); LogSummary._x's order."""
        step: float | None = None
        epoch: float | None = None
        for key in _STEP_KEYS:
            if key in metrics:
                step = metrics[key]
                break
        p = self.summary.progress
        if step is None and p is not None:
            if p.step is not None:
                step = p.step
            elif p.epoch is None and p.bar_step is not None:
                step = p.bar_step  # one bar over the run (HF Trainer): its n
        if p is not None and p.epoch is not None:
            epoch = p.epoch - 1 + (p.bar_percent or 0.0) / 100.0
        elif "epoch" in metrics:
            epoch = metrics["epoch"]  # HF Trainer's dicts: `'epoch': 0.42`
        return {"step": step, "epoch": epoch}

    def _points(self, info: LineInfo, out: list[Point]) -> None:
        metrics = info.metrics
        bar = info.progress
        loss = train_loss(metrics, bar is not None and bar.steps is not None and bar.step == bar.steps)
        ev = eval_loss(metrics)
        values: dict[str, float] = {}
        if loss is not None:
            values[LOSS] = loss
        if ev is not None:
            values[EVAL_LOSS] = ev
        for key, value in metrics.items():
            if key in _COUNTERS or key in values or "train_runtime" in metrics:
                continue
            if is_loss_key(key) and value in (loss, ev) and (value == ev) == is_eval_key(key):
                continue  # the value tag `loss` / `eval_loss` already holds
            values[key] = value
        if bar is not None:  # a bar redraws the same step and postfix many times: one point
            drawn = (bar.step, tuple(sorted(values.items())))
            if drawn == self._bar_key:
                return
            self._bar_key = drawn
        xs: dict[str, float | None] | None = None
        clock = bar.clock if bar is not None else None
        for tag, value in values.items():
            if not math.isfinite(value):
                continue  # a NaN loss is a failure (LogSummary), not a point
            t = self._tags.get(tag)
            if xs is None:
                xs = self._x(metrics)
            if t is None:
                if len(self._tags) >= MAX_TAGS:
                    continue
                axis = "step" if xs["step"] is not None else "epoch" if xs["epoch"] is not None else "index"
                t = self._tags[tag] = _Tag(axis)
            x = xs.get(t.axis) if t.axis != "index" else t.count
            if x is None:
                x = t.last_x if t.last_x is not None else t.count
            # A bar's postfix repeats the last validation loss for a whole epoch: one point.
            if bar is not None and (
                (x == t.last_x and value == t.last_value) or (tag == EVAL_LOSS and value == t.last_value)
            ):
                continue
            t.count += 1
            t.last_x, t.last_value = x, value
            out.append(Point(tag, _number(x), value, clock))


def encode_points(points: list[Point]) -> str:
    """One `[tag, x, value, time]` JSON array per line, each ending in a newline."""
    return "".join(
        json.dumps([p.tag, p.x, p.value, p.time], separators=(",", ":"), ensure_ascii=False) + "\n" for p in points
    )


def json_rows(text: str) -> list[object]:
    """Each whole line of `text` as JSON: one parse for all of them; a damaged line left out."""
    end = text.rfind("\n") + 1  # a catch-up killed mid-write leaves a line without its newline
    try:
        rows: list[object] = json.loads("[" + text[:end].rstrip("\n").replace("\n", ",") + "]")  # one parse
    except ValueError:
        rows = []
        for line in text[:end].splitlines():
            try:
                rows.append(json.loads(line))
            except ValueError:
                continue
    return rows


def decode_points(text: str) -> dict[str, list[tuple[float, float, float | None]]]:
    """{tag: [(x, value, time), ...]} of the log's points in a series file, in file order (a torn
    last line is left out)."""
    rows = json_rows(text)
    out: dict[str, list[tuple[float, float, float | None]]] = {}
    for row in rows:
        if isinstance(row, list) and len(row) == 4:
            tag, x, value, time = row
            out.setdefault(str(tag), []).append((x, value, time))
    return out


def safe_cut(data: bytes) -> int:
    """How much of `data` a running job's catch-up feeds: up to its last `\\n` or `\\r`, so a
    character cut by the read's end waits for the next one (the rest is read again then)."""
    return max(data.rfind(b"\n"), data.rfind(b"\r")) + 1


@dataclass(frozen=True)
class LogIdentity:
    """Which file a reader has read: its inode, and a hash of its first bytes."""

    inode: int
    head_len: int
    head_hash: str

    @staticmethod
    def of(inode: int, head: bytes) -> LogIdentity:
        head = head[:HEAD_BYTES]
        return LogIdentity(inode, len(head), hashlib.sha1(head).hexdigest())  # noqa: S324 (not security)

    def same_log(self, inode: int, size: int, offset: int, head: bytes) -> bool:
        """Whether the file now at the path (`inode`, `size`, its first `head_len` bytes) is the
        log read up to `offset`: else it was truncated, rotated or replaced."""
        return (
            inode == self.inode
            and size >= offset
            and len(head) >= self.head_len
            and hashlib.sha1(head[: self.head_len]).hexdigest() == self.head_hash  # noqa: S324
        )

    def as_json(self) -> dict[str, object]:
        return {"inode": self.inode, "head_len": self.head_len, "head_hash": self.head_hash}

    @staticmethod
    def from_json(obj: object) -> LogIdentity | None:
        if not isinstance(obj, dict):
            return None
        try:
            return LogIdentity(int(obj["inode"]), int(obj["head_len"]), str(obj["head_hash"]))
        except (KeyError, TypeError, ValueError):
            return None


def last_line(reader: SeriesReader, size: int) -> bytes:
    """series.last's one line for `reader` after a catch-up of a `size`-byte log."""
    s = reader.summary
    p = s.progress
    loss = s.last_loss
    doc = {
        "read": reader.offset,
        "size": size,
        "last_loss": loss if loss is not None and math.isfinite(loss) else None,
        "progress": None if p is None else {k: getattr(p, k) for k in PROGRESS_FIELDS},
    }
    return LAST_MARK + json.dumps(doc, separators=(",", ":")).encode("utf-8") + b"\n"
