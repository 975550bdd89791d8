"""The readers on real files from public runs (tests/data/runfiles/real/SOURCES.md): values read
off the files themselves, and the event file checked against tensorboard's own reader."""

from __future__ import annotations

from pathlib import Path

import pytest
from tbevents import float32

from gpu_tui.core.runfiles.lightning_csv import read_metrics_csv
from gpu_tui.core.runfiles.mlflow import metric_key, read_metric_file
from gpu_tui.core.runfiles.model import CSV, MLFLOW, TRAINER_STATE, RunFileError, Series
from gpu_tui.core.runfiles.tfevents import parse_event_file_name, read_event_file
from gpu_tui.core.runfiles.trainer_state import read_trainer_state

REAL = Path(__file__).resolve().parents[1] / "data" / "runfiles" / "real"
T5_EVENTS = REAL / "t5-summarization-runs" / "events.out.tfevents.1742826235.DESKTOP-41L2EO3.107869.0"
T5_EVAL = REAL / "t5-summarization-runs" / "events.out.tfevents.1742884204.DESKTOP-41L2EO3.107869.1"
SWAHILI_RUN = REAL / "swahili-stt" / "mlruns" / "1" / "ed05f9cd599442fe9a0c9222184710b8"


def _by_tag(series: list[Series]) -> dict[str, Series]:
    return {s.tag: s for s in series}


def test_hf_trainer_state_with_its_closing_summary() -> None:
    got = _by_tag(read_trainer_state((REAL / "t5-summarization.trainer_state.json").read_bytes()))
    assert all(s.source == TRAINER_STATE for s in got.values())
    loss = got["loss"].points
    assert len(loss) == 430 and loss[0] == (500, 1.9963, None) and loss[-1] == (215000, 1.7423, None)
    assert got["learning_rate"].points[0] == (500, 4.9883902905678084e-05, None)
    assert got["grad_norm"].points[-1] == (215000, 2.5202980041503906, None)
    # the summary entry: one point each, at the last step; epoch runs through it too
    assert got["train_loss"].points == [(215337, 1.8040490566820844, None)]
    assert got["train_runtime"].points == [(215337, 54713.1806, None)]
    assert len(got["epoch"].points) == 431 and got["epoch"].points[-1] == (215337, 3.0, None)


def test_hf_trainer_state_of_a_checkpoint_with_evaluations() -> None:
    got = _by_tag(read_trainer_state((REAL / "tinyllama-lora.trainer_state.json").read_text()))
    assert len(got["loss"].points) == 186 and got["loss"].points[0] == (15, 2.0762, None)
    assert got["loss"].points[-1] == (2790, 1.025, None)
    evals = got["eval_loss"].points
    assert len(evals) == 14 and [s for s, _v, _w in evals] == list(range(200, 2801, 200))
    assert evals[0] == (200, 1.622266411781311, None) and evals[-1] == (2800, 1.1219322681427002, None)
    # evaluation entries carry epoch too: 186 train + 14 eval entries
    assert len(got["epoch"].points) == 200 and got["epoch"].points[-1] == (2800, 1.9949220489977728, None)
    assert "step" not in got


def test_the_event_file_of_the_same_hf_run_agrees_with_its_trainer_state() -> None:
    """HF's TensorBoard callback writes the same log dicts as float32 simple_values."""
    state = _by_tag(read_trainer_state((REAL / "t5-summarization.trainer_state.json").read_text()))
    events = _by_tag(read_event_file(T5_EVENTS.read_bytes()).series())
    for key in ("loss", "grad_norm", "learning_rate", "epoch", "train_loss", "total_flos"):
        assert [(s, v) for s, v, _w in events[f"train/{key}"].points] == [
            (s, float32(v)) for s, v, _w in state[key].points
        ], key


def test_a_real_event_file_reads_as_tensorboards_own_reader_reads_it() -> None:
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing import event_accumulator

    for path in (T5_EVENTS, T5_EVAL):
        acc = event_accumulator.EventAccumulator(str(path), size_guidance={event_accumulator.SCALARS: 0})
        acc.Reload()
        ours = _by_tag(read_event_file(path.read_bytes(), check_data=True).series())
        assert sorted(ours) == sorted(acc.Tags()["scalars"])
        for tag, series in ours.items():
            assert series.points == [(e.step, e.value, e.wall_time) for e in acc.Scalars(tag)], tag
    reader = read_event_file(T5_EVENTS.read_bytes())
    assert reader.error is None and reader.bad_records == 0 and reader.pending == 0
    loss = _by_tag(reader.series())["train/loss"].points
    assert loss[0] == (500, 1.9962999820709229, 1742826365.0545628) and len(loss) == 430
    name = parse_event_file_name(T5_EVENTS.name)
    assert name is not None and (name.host, name.pid, name.uid) == ("DESKTOP-41L2EO3", 107869, 0)


def test_lightning_metrics_csv_with_step_and_epoch_columns() -> None:
    got = _by_tag(read_metrics_csv((REAL / "slm-training.metrics.csv").read_bytes()))
    assert all(s.source == CSV for s in got.values()) and "step" not in got
    step_loss = got["train_loss_step"].points
    assert len(step_loss) == 114 and step_loss[0] == (49, 8.620475769042969, None)
    assert step_loss[-1] == (5699, 5.1495232582092285, None)
    val = got["val_loss"].points
    assert len(val) == 20 and val[0] == (286, 6.833683967590332, None) and val[-1] == (5739, 5.55223274230957, None)
    assert got["epoch_time"].points[0] == (286, 155.4527130126953, None)
    assert len(got["epoch"].points) == 154 and got["epoch"].points[-1] == (5739, 19.0, None)


def test_lightning_rows_without_an_epoch() -> None:
    got = _by_tag(read_metrics_csv((REAL / "opal-v2.metrics.csv").read_text()))
    assert list(got) == ["lr-Adam", "epoch", "train/nll_loss", "val/rmse_loss"]
    assert len(got["lr-Adam"].points) == 108 and got["lr-Adam"].points[0] == (49, 0.00328141592920354, None)
    # the learning-rate monitor's rows leave epoch empty: 108 train + 8 validation rows have one
    assert len(got["epoch"].points) == 116
    assert got["val/rmse_loss"].points[-1] == (5431, 0.01806013539950508, None)


def test_a_half_written_last_row_waits_for_the_next_read() -> None:
    text = (REAL / "opal-v2.metrics.csv").read_text()
    cut = text[: text.rstrip("\n").rfind("\n") + 8]  # the last row's first few characters
    whole, partial = _by_tag(read_metrics_csv(text)), _by_tag(read_metrics_csv(cut))
    assert partial["val/rmse_loss"].points == whole["val/rmse_loss"].points[:-1]


def test_a_csv_without_a_step_column_says_so() -> None:
    with pytest.raises(RunFileError, match="metrics.csv has no step column"):
        read_metrics_csv("epoch,loss\n0,1.5\n")
    assert read_metrics_csv("") == []


def test_mlflow_file_store_metric() -> None:
    path = SWAHILI_RUN / "metrics" / "loss"
    series = read_metric_file(metric_key(path.relative_to(SWAHILI_RUN / "metrics").as_posix()), path.read_text())
    assert series.tag == "loss" and series.source == MLFLOW and len(series.points) == 10
    assert series.points[0] == (0, 332.6841735839844, 1628697792.09)
    assert series.points[-1] == (9, 234.7978057861328, 1628697827.236)
