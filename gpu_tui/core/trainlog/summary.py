"""What a whole training log amounts to: the latest progress, the losses, and why a job failed.

`LogSummary` follows one job's log in order, each line read by core/trainlog/line's `parse_line` (its `LineParser`),
and holds what the `jobs --json` output and the log screen need (docs/CONTRACTS.md, "Other
--json outputs"): the latest progress, `last_loss`, a bounded loss curve and `failure`. On top
of the single-line failures it follows Python tracebacks, which span lines: chained ones, and
ones interleaved by `[rankN]:` prefixes.

Known limits:

- A traceback's end is its first non-indented line that looks like `Name: message`; another
  program's output interleaved there without a `[rankN]:` prefix could be taken for it.
- `last_loss` is NaN/inf when the last loss printed was (the failure says so too); callers
  writing JSON turn it into null.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping

from gpu_tui.core.trainlog.counters import epochs_hint, steps_hint
from gpu_tui.core.trainlog.failures import INF_LOSS, INTERRUPTED, KILLED, NAN_LOSS
from gpu_tui.core.trainlog.line import (
    LineInfo,
    LineParser,
    Progress,
    is_eval_key,
    is_loss_key,
    strip_rank,
)
from gpu_tui.core.trainlog.progress import RunProgress
from gpu_tui.core.trainlog.stream import StreamUpdate
from gpu_tui.core.trainlog.tables import Table

__all__ = ["LogSummary", "train_loss", "eval_loss"]

_MAX_REASON = 120  # a failure is a short phrase, as in nvsmi

_TB_HEADER = "Traceback (most recent call last):"
_TB_CHAIN = (
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)
# The last line of a traceback: `ValueError: bad shape`, `json.decoder.JSONDecodeError: ...`,
# `KeyboardInterrupt`.
_EXCEPTION = re.compile(r"((?:[A-Za-z_]\w*\.)*[A-Z]\w*)(?::(?:\s+(.*))?)?")
# Where a SyntaxError in the main script is reported (no `Traceback` header, no `, in func`).
_SYNTAX_AT = re.compile(r'  File "[^"]*", line \d+$')
# A frame: a traceback whose header is not in the log (cut off by the window, or never printed).
_FRAME = re.compile(r'  File "[^"]*", line \d+, in ')
# An exception's own line with no traceback around it: `[rank0]: ValueError: bad shape`.
_BARE_EXCEPTION = re.compile(r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt)(?::(?:\s+.*)?)?")
# torchrun's summary under ChildFailedError: `  rank      : 0 (local_rank: 0)`, `  exitcode  : 1 (pid: 42)`.
_CHILD_FIELD = re.compile(r"\s*(rank|exitcode)\s*: (-?\d+)")
_CHILD = "NCCL ChildFailedError (torchrun)"

# Which of a line's metrics is the loss: the usual names first, in this order.
_TRAIN_KEYS = ("loss", "train_loss", "train/loss", "training_loss", "train_loss_step", "loss_step")
# A part of a loss the tool totals (YOLO's box_loss, mmdet's loss_cls): a metric, never the loss.
_COMPONENTS = frozenset({"box", "cls", "dfl", "obj", "seg", "kobj", "pose", "bbox", "rpn", "mask", "iou", "giou"})
_EVAL_KEYS = ("eval_loss", "val_loss", "eval/loss", "val/loss", "validation_loss", "valid_loss")


def train_loss(metrics: Mapping[str, float], epoch_done: bool = False) -> float | None:
    """The training loss among a line's metrics: `loss`, then `train_loss`, then any other
    loss-like name that is not an eval one; None when there is none.

    HF Trainer's closing `{'train_runtime': ..., 'train_loss': ...}` is the run's mean, not a
    step's loss: None. `epoch_done` (the line's bar is full): Lightning's `train/loss_epoch`,
    the epoch's mean, over the last step's `loss_step` (mid-epoch it is the previous epoch's).
    """
    if not metrics or "train_runtime" in metrics:
        return None
    if epoch_done:
        for key, value in metrics.items():
            if key.endswith("loss_epoch") and not is_eval_key(key):
                return value
    for key in _TRAIN_KEYS:
        if key in metrics:
            return metrics[key]
    for key, value in metrics.items():
        if is_loss_key(key) and not is_eval_key(key) and _COMPONENTS.isdisjoint(key.replace("/", "_").split("_")):
            return value
    return None


def eval_loss(metrics: Mapping[str, float]) -> float | None:
    """The held-out loss among a line's metrics (`eval_loss`, `val_loss`, ...), else None."""
    if not metrics:
        return None
    for key in _EVAL_KEYS:
        if key in metrics:
            return metrics[key]
    for key, value in metrics.items():
        if is_loss_key(key) and is_eval_key(key):
            return value
    return None


_DRAWN = ("bar", "yolo", "steps")  # scopes only a bar's own line has (core/trainlog/bars)


def _short(text: str) -> str:
    return text if len(text) <= _MAX_REASON else text[: _MAX_REASON - 1] + "…"


def _traceback_reason(name: str, message: str | None) -> str:
    """`Traceback: Name: message`; a KeyboardInterrupt is the user's Ctrl+C, not a crash."""
    if name == "KeyboardInterrupt":
        return INTERRUPTED
    return _short(f"Traceback: {name}: {message}" if message else f"Traceback: {name}")


class _Series:
    """At most `max_points` (x, value) points spread over the whole run.

    Every observation gets the next index (its x unless one is given). When the buffer is full every other point is
    dropped and from then on only every 2nd (4th, 8th...) observation is kept, so the curve
    always spans the run from its start at a resolution that halves as it grows. The newest
    value may therefore be missing; `last` always has it.
    """

    __slots__ = ("max_points", "points", "count", "stride", "last")

    def __init__(self, max_points: int) -> None:
        self.max_points = max_points
        self.points: list[tuple[float, float]] = []
        self.count = 0
        self.stride = 1
        self.last: float | None = None

    def add(self, value: float, x: float | None = None) -> None:
        index = self.count
        self.count += 1
        self.last = value
        if index % self.stride:
            return
        self.points.append((index if x is None else x, value))
        if len(self.points) > self.max_points:
            self.points = self.points[::2]
            self.stride *= 2


class _Trace:
    """Where one writer (one `[rankN]:` prefix, or none) is in a traceback."""

    __slots__ = ("state", "chain", "specific")

    IDLE, FRAMES, SYNTAX, AFTER, LINKED = range(5)

    def __init__(self) -> None:
        self.state = _Trace.IDLE
        self.chain = 0  # id of the chain this writer's current traceback belongs to
        self.specific = False  # a specific failure (OOM...) was seen inside the chain


_MAX_WRITERS = 256  # ranks followed at once; later ones share the unprefixed state
_MAX_METRIC_KEYS = 128


class LogSummary:
    """Follows one job's log, line by line in order, and says what it amounts to.

    Feed it LogStream output with `consume(update)`, or lines with `add_line` (completed
    lines; `final=False` for superseded progress states) and `set_live` (the rows still
    changing, for the current progress and loss).

    - `progress`: the newest bar state; among live rows the topmost bar wins (the overall bar
      over a nested eval/inner bar).
    - `last_loss`: the newest training loss (`loss`, `train_loss`, ...; eval losses are
      `last_eval_loss`), live bars included.
    - `loss_points` / `eval_points`: bounded curves (see _Series); non-finite values are left
      out of them (they are failures instead). Consecutive bar states repeating the same step
      and loss add one point.
    - `failure`: a specific failure (CUDA out of memory, killed, NaN/Inf loss, segmentation
      fault, aborted) wins, the first one seen; else the first traceback's exception as
      `Traceback: Name: message`, where a chained traceback ("During handling of the above
      exception...") reports its last exception, as Python's own last line does, and an OOM
      inside the chain reports `CUDA out of memory`. Tracebacks are followed per `[rankN]:`
      prefix, so interleaved ranks do not mix.
    - `finish(exit_code)`: the job's final `failure` (CONTRACTS.md).
    """

    def __init__(self, max_points: int = 2000) -> None:
        if max_points < 2:
            raise ValueError("max_points must be >= 2")
        self._run = RunProgress()
        self._table = Table()
        self._parser = LineParser()
        self.loss_axis: str | None = None
        """What the loss curves' x counts: `step` (the run's step), `epoch` (epochs, fractional)
        or `index` (the n-th loss printed); None before the first point."""
        self.last_loss: float | None = None
        self.last_eval_loss: float | None = None
        self.metrics: dict[str, float] = {}
        """Latest value of every metric name seen (at most 128 names)."""
        self.lines_seen = 0
        """Lines given to `add_line` (superseded bar states included)."""
        self._losses = _Series(max_points)
        self._evals = _Series(max_points)
        self._last_bar_point: tuple[int | None, float | None] | None = None
        self._specific: str | None = None
        self._nonfinite: str | None = None
        self._traceback: str | None = None
        self._wrapper: str | None = None  # torchrun's ChildFailedError: only when nothing better
        self._last_key: tuple[object, ...] | None = None
        self._fail_key: tuple[object, ...] | None = None
        self._failed = False
        self._plain_after = 0  # plain lines since the failure: a bar after them is a new start
        self._traceback_chain: int | None = None
        self._traces: dict[str | None, _Trace] = {}
        self._chains = 0

    # ------------------------------------------------------------------ results

    @property
    def failure(self) -> str | None:
        """What the log shows went wrong so far, or None (see the class docstring)."""
        return self._specific or self._traceback or self._wrapper

    @property
    def progress(self) -> Progress | None:
        """The run's progress (core/trainlog/progress): percent and ETA are the run's where the log
        says how long the run is, else the latest bar's own."""
        return self._run.progress

    @property
    def loss_points(self) -> list[tuple[float, float]]:
        """The training loss curve as (x, value), oldest first; x per `loss_axis`."""
        return list(self._losses.points)

    @property
    def eval_points(self) -> list[tuple[float, float]]:
        """The eval/val loss curve as (x, value), oldest first; x per `loss_axis`."""
        return list(self._evals.points)

    def finish(self, exit_code: int | None, killed_by_signal: bool = False) -> str | None:
        """The job's `failure` once it ended (CONTRACTS.md, `jobs --json`).

        A reason found in the log wins over `exit code N`. Exit 0 keeps only a NaN/Inf loss
        (the run "succeeded" on garbage); a traceback or OOM it printed and survived is not a
        failure. Nothing in the log: exit 137 (128 + SIGKILL), -9 or `killed_by_signal` ->
        `killed`, 130 -> `interrupted`, another non-zero code -> `exit code N`, None (unknown) -> None.
        """
        if exit_code == 0 and not killed_by_signal:
            return self._nonfinite
        found = self.failure
        if found is not None:
            return found
        if killed_by_signal or exit_code in (137, -9):
            return KILLED
        if exit_code in (130, -2):  # 128 + SIGINT: a Ctrl+C the program did not catch
            return INTERRUPTED
        if exit_code is None:
            return None
        return f"exit code {exit_code}"

    # ------------------------------------------------------------------ input

    def consume(self, update: StreamUpdate) -> None:
        """One LogStream update: its events in order, then its live rows."""
        for event in update.events:
            self.add_line(event.text, final=event.final)
        self.set_live(update.live)

    def add_line(self, line: str, *, final: bool = True) -> LineInfo:
        """One line, in log order. `final=False`: a bar state a newer one replaced (no
        traceback tracking, it cannot be part of one). Returns what the line said."""
        self.lines_seen += 1
        info = self._table.apply(line, self._parser.parse(line))
        if final and ("poch" in line or "steps" in line or "iters" in line):
            epochs, steps = epochs_hint(line), steps_hint(line)
            if epochs is not None or steps is not None:
                self._run.hint(epochs, steps)
        if info.progress is not None:
            self._moved(info.progress)
        if info.metrics:
            self._take_metrics(info, series=True)
        specific = info.failure
        if specific is not None:
            nonfinite = specific in (NAN_LOSS, INF_LOSS)
            if nonfinite and self._nonfinite is None:
                self._nonfinite = specific
            if self._specific is None:
                self._specific = specific
                if not nonfinite:  # a NaN loss does not stop a run: it is never dropped
                    self._mark_failed()
        if final:
            failed = self._failed
            self._follow_traceback(line, specific)
            if failed and self._failed and line and not line[0].isspace() and specific is None:
                trace = self._traces.get(strip_rank(line)[0])
                if trace is None or trace.state in (_Trace.IDLE, _Trace.AFTER) and line not in _TB_CHAIN:
                    self._plain_after += 1
        return info

    def set_live(self, lines: Iterable[str]) -> None:
        """The rows still being redrawn: they set `progress` and `last_loss`, nothing else
        (they are partial or will come again as events). Only a drawn bar moves the progress: a
        counter read off a row cut short mid-write (`[Epoch 5 / Train]: 100%|██| 1/1 ` before its
        `[00:00<...]`) would say another thing than the whole line."""
        bar: Progress | None = None
        for line in lines:
            info = self._table.apply(line, self._parser.parse(line))
            p = info.progress
            if p is not None and bar is None and (p.elapsed_seconds is not None or p.scope in _DRAWN):
                bar = p
            if info.metrics:
                self._take_metrics(info, series=False)
        if bar is not None:
            self._moved(bar)

    # ------------------------------------------------------------------ internals

    def _moved(self, p: Progress) -> None:
        """A line's progress. A failure followed by progress elsewhere than where it struck (a
        restart, a caught error and the next model) did not end the run: it is dropped."""
        self._run.add(p)
        key = (p.desc, p.epoch, p.step, p.global_step)
        self._last_key = key
        if self._failed and (key != self._fail_key or self._plain_after > 1):
            self._specific = self._nonfinite
            self._traceback = self._wrapper = None
            self._traceback_chain = None
            self._failed = False
        self._plain_after = 0  # plain lines since the failure: a bar after them is a new start

    def _mark_failed(self) -> None:
        if not self._failed:
            self._failed = True
            self._fail_key = self._last_key
            self._plain_after = 0

    def _x(self, metrics: Mapping[str, float]) -> float | None:
        """The loss curve's x for a point now: see `loss_axis`."""
        for key in ("step", "global_step", "num_updates", "iteration", "iter"):
            if key in metrics:
                x: float | None = metrics[key]
                axis = "step"
                break
        else:
            p = self._run.progress
            if p is not None and p.step is not None:
                x, axis = p.step, "step"
            elif p is not None and p.epoch is None and p.bar_step is not None:
                x, axis = p.bar_step, "step"  # one bar over the run (HF Trainer): its n
            elif p is not None and p.epoch is not None:
                x, axis = p.epoch - 1 + (p.bar_percent or 0.0) / 100.0, "epoch"
            else:
                x, axis = None, "index"
        if self.loss_axis is None:
            self.loss_axis = axis
        if axis != self.loss_axis:
            return self._losses.points[-1][0] if self._losses.points and self.loss_axis != "index" else None
        return x if axis != "index" else None

    def _take_metrics(self, info: LineInfo, series: bool) -> None:
        metrics = info.metrics
        store = self.metrics
        for key, value in metrics.items():
            if key in store or len(store) < _MAX_METRIC_KEYS:
                store[key] = value
        bar = info.progress
        loss = train_loss(metrics, bar is not None and bar.steps is not None and bar.step == bar.steps)
        if loss is None and self.last_loss is None and "train_runtime" in metrics:
            self.last_loss = metrics.get("train_loss")  # the run's mean: better than nothing
        if loss is not None:
            self.last_loss = loss
            if self._run.progress is None:
                self._run.training_seen()
        ev = eval_loss(metrics)
        if ev is not None:
            self.last_eval_loss = ev
        if not series:
            return
        if bar is not None:  # a bar redraws the same step and postfix many times: one point
            point = (bar.step, loss)
            if point == self._last_bar_point:
                return
            self._last_bar_point = point
        finite_loss = loss is not None and math.isfinite(loss)
        finite_ev = ev is not None and math.isfinite(ev) and (bar is None or ev != self._evals.last)
        if not finite_loss and not finite_ev:
            return
        x = self._x(metrics)
        if finite_loss and loss is not None:
            self._losses.add(loss, x)
        # A bar's postfix repeats the last validation loss for a whole epoch: one point.
        if finite_ev and ev is not None:
            self._evals.add(ev, x)

    def _bare_exception(self, body: str, specific: str | None) -> None:
        """`[rank0]: ValueError: ...` (or unprefixed) with no traceback header or frames."""
        if specific is not None or self._traceback is not None or _BARE_EXCEPTION.fullmatch(body) is None:
            return
        m = _EXCEPTION.fullmatch(body)
        if m is None:
            return
        name = m[1].rsplit(".", 1)[-1]
        if name == "ChildFailedError":
            if self._wrapper is None:
                self._wrapper = _CHILD
                self._mark_failed()
            return
        self._traceback = _traceback_reason(name, m[2])
        self._traceback_chain = None
        self._mark_failed()

    def _child_field(self, body: str) -> None:
        """The first rank and exit code of torchrun's summary, into the ChildFailedError reason."""
        m = _CHILD_FIELD.match(body)
        if m is None or self._wrapper is None:
            return
        if m[1] == "rank" and self._wrapper == _CHILD:
            self._wrapper = f"{_CHILD}: rank {m[2]}"
        elif m[1] == "exitcode" and self._wrapper != _CHILD:
            self._wrapper += f" exitcode {m[2]}"

    def _trace(self, writer: str | None) -> _Trace:
        trace = self._traces.get(writer)
        if trace is None:
            if len(self._traces) >= _MAX_WRITERS:
                writer = None
                trace = self._traces.get(None)
            if trace is None:
                trace = self._traces[writer] = _Trace()
        return trace

    def _follow_traceback(self, line: str, specific: str | None) -> None:
        writer, body = strip_rank(line)
        if self._wrapper is not None and "exitcode" not in self._wrapper:
            self._child_field(body)
        trace = self._traces.get(writer)
        if trace is None:
            # Only start following a writer at a traceback's first line.
            starts = body.endswith(_TB_HEADER) or (
                body.startswith("  File") and (_SYNTAX_AT.match(body) is not None or _FRAME.match(body) is not None)
            )
            if not starts:
                if body[:1].isalpha() and ("Error" in body or "Exception" in body or "Interrupt" in body):
                    self._bare_exception(body, specific)
                return
            trace = self._trace(writer)
            if body.startswith("  File") and _FRAME.match(body) is not None:
                self._chains += 1
                trace.chain = self._chains
                trace.specific = False
                trace.state = _Trace.FRAMES
                return
        state = trace.state
        if body.endswith(_TB_HEADER):  # also when glued after a bar or a logging prefix
            if state != _Trace.LINKED:
                self._chains += 1
                trace.chain = self._chains
                trace.specific = False
            trace.state = _Trace.FRAMES
            return
        if state == _Trace.FRAMES or state == _Trace.SYNTAX:
            if not body or body[0].isspace():
                return  # frames, source lines, carets
            m = _EXCEPTION.fullmatch(body)
            if m is None:
                if state == _Trace.SYNTAX:
                    trace.state = _Trace.IDLE
                return  # someone else's output interleaved: keep waiting
            if state == _Trace.SYNTAX:
                self._chains += 1
                trace.chain = self._chains
                trace.specific = False
            trace.state = _Trace.AFTER
            if specific is not None:
                trace.specific = True
            if trace.specific:
                return  # the OOM (etc.) is the failure, already recorded
            name = m[1].rsplit(".", 1)[-1]
            if name == "ChildFailedError":  # torchrun's wrapper: the ranks' own error wins
                if self._wrapper is None:
                    self._wrapper = _CHILD
                    self._mark_failed()
                return
            reason = _traceback_reason(name, m[2])
            if self._traceback is None or self._traceback_chain == trace.chain:
                self._traceback = reason
                self._traceback_chain = trace.chain
                self._mark_failed()
            return
        if state == _Trace.AFTER:
            if body in _TB_CHAIN:
                trace.state = _Trace.LINKED
            elif specific is not None:
                trace.specific = True
            return
        if state == _Trace.LINKED:
            if body.strip():
                trace.state = _Trace.AFTER
            return
        if state == _Trace.IDLE and body.startswith("  File") and _SYNTAX_AT.match(body):
            trace.state = _Trace.SYNTAX
