"""The readers as the instance will run them: rewritten by services/notify/bundle.py's
`portable_core` (annotations dropped, `gpu_tui.core.X.Y` imported as `gpu_tui_X_Y`) and run by
this python and by the old python3s tests/oldpythons.py finds (3.6 up), reading the same files
to the same points."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from oldpythons import require_old_python
from tbevents import event, simple, tensor_scalar, write_events

from gpu_tui.core.runfiles.lightning_csv import read_metrics_csv
from gpu_tui.core.runfiles.mlflow import read_metric_file
from gpu_tui.core.runfiles.model import Series
from gpu_tui.core.runfiles.tfevents import parse_event_file_name, read_event_file
from gpu_tui.core.runfiles.trainer_state import read_trainer_state
from gpu_tui.services.notify import bundle

REAL = Path(__file__).resolve().parents[1] / "data" / "runfiles" / "real"
READERS = (
    "gpu_tui.core.runfiles.tfevents",
    "gpu_tui.core.runfiles.trainer_state",
    "gpu_tui.core.runfiles.lightning_csv",
    "gpu_tui.core.runfiles.mlflow",
)
PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])
import {tfevents} as tfevents, {trainer_state} as trainer_state, {lightning_csv} as lightning_csv, {mlflow} as mlflow

def shown(series):
    return [[s.tag, s.source, [[p[0], repr(p[1]), repr(p[2])] for p in s.points]] for s in series]

out = {{}}
for kind, path in json.loads(sys.argv[2]):
    data = open(path, "rb").read()
    if kind == "events":
        reader = tfevents.EventFileReader()
        for at in range(0, len(data), 777):
            reader.feed(data[at:at + 777])
        name = tfevents.parse_event_file_name(path)
        out[path] = [shown(reader.series()), reader.error, list(name) if name else None]
    elif kind == "state":
        out[path] = shown(trainer_state.read_trainer_state(data))
    elif kind == "csv":
        out[path] = shown(lightning_csv.read_metrics_csv(data))
    else:
        out[path] = shown([mlflow.read_metric_file("loss", data)])
print(json.dumps(out))
"""


def _shown(series: list[Series]) -> list[list[object]]:
    return [[s.tag, s.source, [[p[0], repr(p[1]), repr(p[2])] for p in s.points]] for s in series]


@pytest.fixture
def shipped(tmp_path: Path) -> Path:
    """The readers and what they import, as portable_core writes them for the instance."""
    core = tmp_path / "core"
    core.mkdir()
    files = bundle.portable_core(READERS)
    assert {f"{bundle.shipped_name(m)}.py" for m in READERS} <= set(files)
    assert "gpu_tui_runfiles_crc32c.py" in files and "gpu_tui_runfiles_protowire.py" in files
    for name, text in files.items():
        (core / name).write_text(text)
    return core


def _inputs(tmp_path: Path) -> list[tuple[str, str]]:
    written = write_events(
        tmp_path / "tb",
        [
            event(i, 1_700_000_000.5 + i, simple("loss", 1 / (i + 1)), tensor_scalar("acc", i / 7, first=i == 0))
            for i in range(300)
        ]
        + [event(300, 1_700_000_999.0, simple("loss", math.nan))],
    )
    return [
        ("events", str(written)),
        ("events", str(next((REAL / "t5-summarization-runs").glob("*.107869.0")))),
        ("state", str(REAL / "t5-summarization.trainer_state.json")),
        ("state", str(REAL / "tinyllama-lora.trainer_state.json")),
        ("csv", str(REAL / "slm-training.metrics.csv")),
        ("csv", str(REAL / "opal-v2.metrics.csv")),
        ("mlflow", str(next(REAL.glob("swahili-stt/mlruns/1/*/metrics/loss")))),
    ]


def _expected(inputs: list[tuple[str, str]]) -> dict[str, object]:
    out: dict[str, object] = {}
    for kind, path in inputs:
        data = Path(path).read_bytes()
        if kind == "events":
            reader = read_event_file(data)
            name = parse_event_file_name(path)
            out[path] = [_shown(reader.series()), reader.error, list(name) if name else None]
        elif kind == "state":
            out[path] = _shown(read_trainer_state(data))
        elif kind == "csv":
            out[path] = _shown(read_metrics_csv(data))
        else:
            out[path] = _shown([read_metric_file("loss", data)])
    return out


def _run(python: str, core: Path, inputs: list[tuple[str, str]]) -> dict[str, object]:
    probe = PROBE.format(**{m.rsplit(".", 1)[1]: bundle.shipped_name(m) for m in READERS})
    res = subprocess.run(
        [python, "-c", probe, str(core), json.dumps(inputs)], capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0, res.stderr[-3000:]
    out: dict[str, object] = json.loads(res.stdout)
    return out


def test_the_shipped_readers_read_what_gpu_tui_reads(shipped: Path, tmp_path: Path) -> None:
    inputs = _inputs(tmp_path)
    assert _run(sys.executable, shipped, inputs) == _expected(inputs)


def test_the_shipped_readers_read_the_same_on_an_old_python3(shipped: Path, tmp_path: Path) -> None:
    inputs = _inputs(tmp_path)
    expected = _expected(inputs)
    for python in require_old_python():
        assert _run(python, shipped, inputs) == expected, python
