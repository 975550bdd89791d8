"""Lightning's CSVLogger `metrics.csv` (`<save_dir>/<name>/version_N/metrics.csv`).

One row per `log_metrics` call: `step`, often `epoch`, and a column per metric key, empty
where that call did not log it (train rows and validation rows share the file). The logger
rewrites the whole file with a wider header when a new key appears, so it is read whole every
time, never followed by offset. Every non-empty numeric cell but `step` is a point of its
column's series (`epoch` included, as in trainer_state.py); `nan` and `inf` cells are kept.
A last line without its newline may be half-written: it is left for the next read. No wall
time is kept in the file: every point's is None.
"""

from __future__ import annotations

import csv
import io
import math
from typing import TYPE_CHECKING

from gpu_tui.core.i18n import _
from gpu_tui.core.runfiles.model import CSV, RunFileError, SeriesSet

if TYPE_CHECKING:
    from gpu_tui.core.runfiles.model import Series

__all__ = ["read_metrics_csv"]


def _float(cell: str) -> float | None:
    try:
        return float(cell)
    except ValueError:
        return None


def read_metrics_csv(text: str | bytes) -> list[Series]:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if text and not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]
    rows = csv.reader(io.StringIO(text, newline=""))
    header = next(rows, None)
    if header is None:
        return []
    if "step" not in header:
        raise RunFileError(_("metrics.csv has no step column (its header: {header})").format(header=",".join(header)))
    step_at = header.index("step")
    columns = [(i, name) for i, name in enumerate(header) if i != step_at]
    out = SeriesSet(CSV)
    for row in rows:
        if len(row) <= step_at:
            continue
        step = _float(row[step_at])
        if step is None or not math.isfinite(step):
            continue
        for i, name in columns:
            if i < len(row) and row[i]:
                value = _float(row[i])
                if value is not None:
                    out.add(name, int(step), value, None)
    return out.series()
