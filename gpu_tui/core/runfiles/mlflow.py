"""MLflow's two local stores, as a run's metrics.

- The file store (`mlruns/<experiment>/<run>/metrics/<key>`, a key with `/` in it is a
  subfolder): one line per logged value, `<timestamp ms> <value> <step>` (MLflow before 1.0
  wrote no step: 0 then), appended as the run logs. `read_metric_file(key, text)`; a last
  line without its newline may be half-written and is left for the next read.
- The sqlite store (`mlflow.db`, table `metrics`: key, value, timestamp, step, run_uuid,
  is_nan; MLflow's mlflow/store/tracking/dbmodels/models.py `SqlMetric`): NaN is stored as
  value 0 with is_nan 1, and read back as NaN. `read_sqlite_metrics(connection, run_uuid)`
  takes a DB-API connection its caller opened (core opens no file); `series_from_rows` is the
  same reading of rows fetched elsewhere.

MLflow's timestamps are milliseconds since the epoch; points carry seconds.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from gpu_tui.core.i18n import _
from gpu_tui.core.runfiles.model import MLFLOW, RunFileError, Series, SeriesSet

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any, Protocol

    class _Connection(Protocol):
        def execute(self, sql: str, parameters: tuple[str, ...]) -> Any: ...


__all__ = ["METRICS_QUERY", "metric_key", "read_metric_file", "read_sqlite_metrics", "series_from_rows"]

METRICS_QUERY = (
    "SELECT key, value, timestamp, step, is_nan FROM metrics WHERE run_uuid = ? ORDER BY key, timestamp, step"
)


def metric_key(relative_path: str) -> str:
    """The metric key of a file under a run's `metrics/` (`train/loss` for `train\\loss` too)."""
    return relative_path.replace("\\", "/").strip("/")


def read_metric_file(key: str, text: str | bytes) -> Series:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    series = Series(key, MLFLOW)
    lines = text.split("\n")
    for number, line in enumerate(lines[:-1], 1):  # the piece after the last newline may be half-written
        parts = line.split()
        if not parts:
            continue
        if len(parts) not in (2, 3):
            raise RunFileError(
                _("MLflow metric file {key}, line {line}: expected 'timestamp value step'").format(key=key, line=number)
            )
        try:
            timestamp, value = int(parts[0]), float(parts[1])
            step = int(parts[2]) if len(parts) == 3 else 0
        except ValueError:
            raise RunFileError(
                _("MLflow metric file {key}, line {line}: expected 'timestamp value step'").format(key=key, line=number)
            ) from None
        series.points.append((step, value, timestamp / 1000.0))
    return series


def series_from_rows(rows: Iterable[tuple[str, float, int, int, object]]) -> list[Series]:
    """(key, value, timestamp ms, step, is_nan) rows, as METRICS_QUERY selects them."""
    out = SeriesSet(MLFLOW)
    for key, value, timestamp, step, is_nan in rows:
        number = math.nan if is_nan else float(value)
        out.add(str(key), int(step), number, None if timestamp is None else int(timestamp) / 1000.0)
    return out.series()


def read_sqlite_metrics(connection: _Connection, run_uuid: str) -> list[Series]:
    """The metrics of run `run_uuid` in an MLflow sqlite store, through `connection`
    (sqlite3.connect(path), opened by the caller)."""
    return series_from_rows(connection.execute(METRICS_QUERY, (run_uuid,)))
