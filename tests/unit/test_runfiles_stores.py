"""MLflow's sqlite store (a real SQLite file with MLflow's own `metrics` table), the file
store's odd lines, and trainer_state.json that is not one."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

import pytest

from gpu_tui.core.runfiles.mlflow import read_metric_file, read_sqlite_metrics
from gpu_tui.core.runfiles.model import MLFLOW, RunFileError
from gpu_tui.core.runfiles.trainer_state import read_trainer_state

REAL_LOSS = (
    Path(__file__).resolve().parents[1]
    / "data/runfiles/real/swahili-stt/mlruns/1/ed05f9cd599442fe9a0c9222184710b8/metrics/loss"
)

# MLflow's table as its SQLAlchemy model declares it (mlflow/mlflow,
# mlflow/store/tracking/dbmodels/models.py, class SqlMetric): key String(250), value
# Float(53) not null, timestamp BigInteger, step BigInteger not null default 0, is_nan Boolean
# not null default false, run_uuid String(32) -> runs.run_uuid; primary key
# (key, timestamp, step, run_uuid, value, is_nan), index on run_uuid.
MLFLOW_METRICS_DDL = """
CREATE TABLE runs (run_uuid VARCHAR(32) NOT NULL, PRIMARY KEY (run_uuid));
CREATE TABLE metrics (
    key VARCHAR(250) NOT NULL,
    value FLOAT NOT NULL,
    timestamp BIGINT NOT NULL,
    run_uuid VARCHAR(32) NOT NULL,
    step BIGINT DEFAULT '0' NOT NULL,
    is_nan BOOLEAN DEFAULT '0' NOT NULL,
    CONSTRAINT metric_pk PRIMARY KEY (key, timestamp, step, run_uuid, value, is_nan),
    CHECK (is_nan IN (0, 1)),
    FOREIGN KEY(run_uuid) REFERENCES runs (run_uuid)
);
CREATE INDEX index_metrics_run_uuid ON metrics (run_uuid);
"""


def _log(db: sqlite3.Connection, run: str, key: str, value: float, timestamp_ms: int, step: int) -> None:
    """What MLflow's SqlAlchemyStore writes for one logged value: NaN as 0 with is_nan, an
    infinity as the largest float (SQL has neither)."""
    is_nan = math.isnan(value)
    stored = 0.0 if is_nan else math.copysign(1.7976931348623157e308, value) if math.isinf(value) else value
    db.execute(
        "INSERT INTO metrics (key, value, timestamp, run_uuid, step, is_nan) VALUES (?, ?, ?, ?, ?, ?)",
        (key, stored, timestamp_ms, run, step, is_nan),
    )


def test_the_sqlite_store_reads_one_runs_metrics(tmp_path: Path) -> None:
    file_store = read_metric_file("loss", REAL_LOSS.read_text())
    db = sqlite3.connect(tmp_path / "mlflow.db")
    db.executescript(MLFLOW_METRICS_DDL)
    db.executemany("INSERT INTO runs VALUES (?)", [("run_a",), ("run_b",)])
    for step, value, wall in file_store.points:  # the real run's loss, logged into sqlite
        _log(db, "run_a", "loss", value, round(wall * 1000), step)
    _log(db, "run_a", "val/loss", 2.5, 1628697800000, 0)
    _log(db, "run_a", "val/loss", float("nan"), 1628697900000, 1)
    _log(db, "run_b", "loss", 9.0, 1628697792090, 0)
    db.commit()
    got = {s.tag: s for s in read_sqlite_metrics(db, "run_a")}
    db.close()
    assert sorted(got) == ["loss", "val/loss"] and all(s.source == MLFLOW for s in got.values())
    assert got["loss"].points == file_store.points
    (s0, v0, w0), (s1, v1, w1) = got["val/loss"].points
    assert (s0, v0, w0) == (0, 2.5, 1628697800.0) and s1 == 1 and math.isnan(v1) and w1 == 1628697900.0


def test_old_file_store_lines_without_a_step_and_a_torn_last_line() -> None:
    series = read_metric_file("acc", b"1628697792090 0.5\n1628697793090 0.75 3\n1628697794")
    assert series.points == [(0, 0.5, 1628697792.09), (3, 0.75, 1628697793.09)]
    with pytest.raises(RunFileError, match=r"MLflow metric file acc, line 2: expected 'timestamp value step'"):
        read_metric_file("acc", "1628697792090 0.5 0\nnot a number here\n")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "trainer_state.json is not JSON"),
        ('{"global_step": 3}', "trainer_state.json has no log_history list"),
        ("[1, 2]", "trainer_state.json has no log_history list"),
    ],
)
def test_a_trainer_state_that_is_not_one_says_so(text: str, message: str) -> None:
    with pytest.raises(RunFileError, match=message):
        read_trainer_state(text)


def test_trainer_state_keeps_nan_and_leaves_out_what_is_not_a_number() -> None:
    got = read_trainer_state(
        '{"log_history": [{"loss": NaN, "step": 1, "note": "x", "flag": true, "lr": null},'
        ' {"loss": 0.5}, {"loss": 0.25, "step": 2}]}'
    )
    assert [s.tag for s in got] == ["loss"]
    (s1, v1, w1), second = got[0].points
    assert s1 == 1 and math.isnan(v1) and w1 is None and second == (2, 0.25, None)
