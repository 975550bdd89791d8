"""HF Trainer's `trainer_state.json` (written with every checkpoint): its `log_history`.

Each entry is one `Trainer.log` call: a training log (`loss`, `grad_norm`, `learning_rate`,
`epoch`, `step`), an evaluation (`eval_loss`, `eval_*`), or the run's last summary
(`train_loss`, `train_runtime`, `total_flos`...). Every numeric key but `step` becomes a point
of the series it names, at x = that entry's `step`; `epoch` is a series of its own like the
others (its value is the fractional epoch HF prints), so a caller that wants epochs as an x
axis can look a step up in it. Entries without a step, and non-numbers (strings, booleans,
null), are left out. trainer_state.json keeps no wall time: every point's is None.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

from gpu_tui.core.i18n import _
from gpu_tui.core.runfiles.model import TRAINER_STATE, RunFileError, SeriesSet

if TYPE_CHECKING:
    from gpu_tui.core.runfiles.model import Series

__all__ = ["read_trainer_state"]


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def read_trainer_state(text: str | bytes) -> list[Series]:
    """The series of a trainer_state.json's text (NaN and Infinity, which Python's json
    writes, read as such)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    try:
        state = json.loads(text)
    except ValueError as exc:
        raise RunFileError(_("trainer_state.json is not JSON ({reason})").format(reason=exc)) from None
    history = state.get("log_history") if isinstance(state, dict) else None
    if not isinstance(history, list):
        raise RunFileError(_("trainer_state.json has no log_history list"))
    out = SeriesSet(TRAINER_STATE)
    for entry in history:
        if not isinstance(entry, dict):
            continue
        step = entry.get("step")
        if isinstance(step, bool) or not isinstance(step, (int, float)) or not math.isfinite(step):
            continue
        for key, raw in entry.items():
            value = _number(raw)
            if key != "step" and value is not None:
                out.add(key, int(step), value, None)
    return out.series()
