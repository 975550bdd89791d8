"""The values core/trainlog/line reads off one line and core/trainlog/summary adds up: Progress and LineInfo.

Kept apart from the recognisers so that core/trainlog/line (bars, metrics), core/trainlog/counters (run counters)
and core/trainlog/failures (failures) share them without importing each other in a circle.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from operator import attrgetter
from types import MappingProxyType
from typing import Any, TypeVar, cast

__all__ = ["Progress", "LineInfo", "NO_METRICS", "EMPTY", "replace"]

NO_METRICS: Mapping[str, float] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Progress:
    """Where a run is: a progress bar's state and/or the counters a line prints.

    From `parse_line` it is what one line says: a tqdm or Keras bar (`percent`, `step`, `steps`,
    times and rate are the bar's own), a counter line such as Megatron's `iteration 120/ 5000`
    or mmdet's `Epoch [1][50/1000]` (`step`/`steps` then count what that line counts), or an
    epoch header alone (Keras' `Epoch 17/100`: only `epoch`/`epochs`).

    From `LogSummary.progress` it is the run's (core/trainlog/progress): `percent` and `eta_seconds`
    cover the whole run where the log says how long the run is (`scope == "run"`), else they
    are the bar's own (`scope == "bar"`); `bar_percent` is then the inner bar's own percent.
    Any part the log does not show is None.
    """

    percent: float | None = None
    """0-100: tqdm's `45%`, else step/steps; the run's in LogSummary.progress (see `scope`)."""
    step: int | None = None
    """The counter: tqdm's `n` (`450/1000` -> 450; `1.50k` -> 1500), Keras' step in the epoch,
    Megatron's iteration, mmdet's iteration in the epoch."""
    steps: int | None = None
    """The counter's total; None for `450it [...]`, `450/?` and counters without one."""
    elapsed_seconds: int | None = None
    """The bar's `[00:12<...` -> 12; Keras' `- 5s` on a finished epoch."""
    eta_seconds: int | None = None
    """The bar's `<00:15` -> 15 (None for tqdm's `<?`), Keras' `ETA: 3s`; the run's in
    LogSummary.progress when `scope == "run"`."""
    rate: float | None = None
    """Items per second; tqdm's slow form `1.23s/it` is turned over (0.813...)."""
    rate_text: str | None = None
    """The rate as drawn: `36.10it/s`, `1.23s/it`, `?it/s`."""
    desc: str | None = None
    """The bar's label: `Epoch 1`, `Validation DataLoader 0`; None when it has none."""
    epoch: int | None = None
    """The epoch running, counted from 1 (a log that counts from 0 is shifted: YOLOv5 `0/299`,
    timm `Train: 0`, Lightning `Epoch 0`, PaddleDetection `Epoch: [0]`)."""
    epochs: int | None = None
    """How many epochs the run has, where the log says it."""
    run_eta_seconds: int | None = None
    """An ETA for the whole run that the line prints or implies (mmdet/mmengine/Paddle `eta:`,
    Megatron's time per iteration times the iterations left)."""
    global_step: int | None = None
    """parse_line only: the run's step printed next to an inner counter (fairseq `num_updates`,
    Paddle `global_step`); LogSummary.progress has it as `step`."""
    clock: float | None = None
    """The line's own timestamp (`2024-05-01 12:00:00`), seconds on a naive clock, for a rate."""
    scope: str = "bar"
    """What `percent`/`eta_seconds` cover: `bar` (the bar's own), `run` (the whole run). From
    parse_line also what the counters count (core/trainlog/counters: `inner`, `zero`, `header`, ...)."""
    bar_percent: float | None = None
    """LogSummary.progress only: the inner bar's own percent (the epoch's, for Keras)."""
    bar_step: int | None = None
    """LogSummary.progress only: the inner bar's or counter's own `n` (`step` is the run's)."""
    bar_steps: int | None = None
    """LogSummary.progress only: the inner bar's or counter's own total."""

    def as_json(self) -> dict[str, object]:
        """The `progress` object of `jobs --json` (CONTRACTS.md)."""
        return {
            "percent": self.percent,
            "eta_seconds": self.eta_seconds,
            "epoch": self.epoch,
            "epochs": self.epochs,
            "step": self.step,
            "steps": self.steps,
        }


@dataclass(frozen=True, slots=True)
class LineInfo:
    """What one line says; empty for most lines."""

    progress: Progress | None = None
    """The bar drawn on this line, or the run counters it prints, if any."""
    metrics: Mapping[str, float] = field(default_factory=lambda: NO_METRICS)
    """`name -> value`, names lower-cased, spaces as `_` (`Val Loss` -> `val_loss`); read-only.
    `nan`, `inf` and `-inf` are floats here too."""
    failure: str | None = None
    """A failure this line alone proves (core/trainlog/failures). Tracebacks span lines: see
    core/trainlog/summary."""
    columns: tuple[str, ...] | None = None
    """A table's header line (YOLO's `Epoch GPU_mem box_loss ...`): its column names."""


EMPTY = LineInfo()


_T = TypeVar("_T", Progress, LineInfo)


def _shape(cls: type) -> tuple[Callable[[Any], tuple[Any, ...]], dict[str, int], type]:
    names = tuple(f.name for f in fields(cls))
    return attrgetter(*names), {name: i for i, name in enumerate(names)}, cls


_SHAPES = {Progress: _shape(Progress), LineInfo: _shape(LineInfo)}


def replace(obj: _T, **changes: object) -> _T:
    """dataclasses.replace for Progress and LineInfo, a third of its cost: the recognisers make
    one or two per bar state (dataclasses.replace walks the fields' metadata every call)."""
    get, index, cls = _SHAPES[type(obj)]
    values = list(get(obj))
    for name, value in changes.items():
        values[index[name]] = value
    return cast(_T, cls(*values))
