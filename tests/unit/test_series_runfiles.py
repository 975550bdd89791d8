"""The run's own files (issue 24): the shipped summariser (services/jobs/series/runfiles.py) finds
the event files, trainer_state.json, metrics.csv and MLflow stores a job wrote, keeps those of
other jobs and of before it out, walks no further than its bounds, and reads each file only as
far as it grew; and `read_series` keeps a copy here and fetches only what was appended."""

from __future__ import annotations

import asyncio
import json
import math
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
from tbevents import event, simple, tensor_scalar, write_events

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.runfiles import discover
from gpu_tui.core.runfiles.lightning_csv import read_metrics_csv
from gpu_tui.core.runfiles.mlflow import read_metric_file, series_from_rows
from gpu_tui.core.runfiles.model import Series
from gpu_tui.core.runfiles.tfevents import parse_event_file_name, read_event_file
from gpu_tui.core.runfiles.trainer_state import read_trainer_state
from gpu_tui.core.trainlog.series_decode import decode_series
from gpu_tui.remote.local import LocalHost
from gpu_tui.services.jobs.series import ship
from gpu_tui.services.jobs.series.cache import SeriesCache
from gpu_tui.services.jobs.series.read import read_series

REAL = Path(__file__).resolve().parents[1] / "data" / "runfiles" / "real"
HOST = socket.gethostname()
Points = dict[tuple[str, str], list[tuple[float, float, float | None]]]


def install(state: Path) -> None:
    for name, text in ship.bundle_files().items():
        path = state / "bin" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def once(state: Path, job: Path) -> tuple[dict, Points]:
    script = state / "bin" / ship.DIR / "summariser.py"
    out = subprocess.run(
        [sys.executable, "-S", str(script), str(state), "once", str(job)], capture_output=True, timeout=120
    )
    assert out.returncode == 0, out.stderr.decode()[-3000:]
    head, _nl, body = out.stdout.partition(b"\n")
    assert head.startswith(b"@@status "), out.stdout[:300]
    status = json.loads(head[len(b"@@status ") :])
    assert "error" not in status["runfiles"], status
    return status, decode_series(zlib.decompress(body).decode())


def files_only(points: Points) -> Points:
    return {k: v for k, v in points.items() if k[0] != "log"}


def expect(series: list[Series], into: Points | None = None) -> Points:
    """What the readers give, as the summariser writes it: NaN and infinities left out."""
    out: Points = {} if into is None else into
    for s in series:
        out.setdefault((s.source, s.tag), []).extend(p for p in s.points if math.isfinite(p[1]))
    return out


class Job:
    """A job directory under a state dir, its working directory `work`, and a stand-in for the
    job's shell: a process leading its own session (JOBDIR/pid), with a child in it."""

    def __init__(self, tmp: Path, started_at: float) -> None:
        self.state = tmp / "state"
        install(self.state)
        self.dir = self.state / "jobs" / "j1"
        self.dir.mkdir(parents=True)
        self.work = tmp / "work"
        self.work.mkdir()
        self.shell = subprocess.Popen(
            ["sh", "-c", "sleep 300 & echo $!; wait"], stdout=subprocess.PIPE, start_new_session=True, text=True
        )
        assert self.shell.stdout is not None
        self.child = int(self.shell.stdout.readline())
        (self.dir / "pid").write_text(f"{self.shell.pid}\n")
        (self.dir / "started_at").write_text(f"{int(started_at)}\n")
        (self.dir / "workdir").write_text(f"{self.work}\n")
        (self.dir / "job.json").write_text(json.dumps({"id": "j1", "command": "train", "cwd": None}) + "\n")
        (self.dir / "log").write_bytes(b"step 1 | loss 0.5\nstep 2 | loss 0.25\n")

    def close(self) -> None:
        os.killpg(self.shell.pid, 9)
        self.shell.wait()


@pytest.fixture
def job(tmp_path: Path):
    j = Job(tmp_path, time.time() - 100)
    yield j
    j.close()


def events_named(src: Path, where: Path, stamp: float, pid: int, host: str = HOST) -> Path:
    """`src` (an event file) as if written at `stamp` by process `pid` on `host`."""
    where.mkdir(parents=True, exist_ok=True)
    dest = where / f"events.out.tfevents.{int(stamp)}.{host}.{pid}.0"
    shutil.copyfile(src, dest)
    return dest


def tb_file(tmp: Path, tag: str, n: int, scale: float = 1.0) -> Path:
    return write_events(
        tmp,
        [event(i, 1_700_000_000.0 + i, simple(tag, scale / (i + 1)), tensor_scalar("acc", i / n)) for i in range(n)],
    )


def dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def test_the_files_a_job_wrote_are_its_series_with_their_source(job: Job, tmp_path: Path) -> None:
    now = time.time()
    src = tb_file(tmp_path / "tb-src", "train/loss", 30)
    other_src = tb_file(tmp_path / "tb-other", "train/loss", 5, scale=9.0)
    # the job's own writers: its shell, a process in its session (each named as it runs now),
    # one gone since (written while the job ran)
    mine = [
        events_named(src, job.work / "runs" / "a", now, job.shell.pid),
        events_named(src, job.work / "runs" / "b", now, job.child),
        events_named(src, job.work / "runs" / "c", now - 30, dead_pid()),
    ]
    # another job's live writer in the same directory; a writer gone before this job started
    stranger = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        events_named(other_src, job.work / "runs" / "d", time.time(), stranger.pid)
        events_named(other_src, job.work / "runs" / "e", now - 500, dead_pid())
        # left before the job started (mtime), hidden, in a dataset directory: never looked at
        old = events_named(other_src, job.work / "runs" / "f", now - 10, job.shell.pid)
        os.utime(old, (now - 1000, now - 1000))
        events_named(other_src, job.work / ".cache", now - 10, job.shell.pid)
        events_named(other_src, job.work / "data" / "x", now - 10, job.shell.pid)

        ckpt = job.work / "out"
        for n, name in ((250, "tinyllama-lora"), (500, "t5-summarization")):
            (ckpt / f"checkpoint-{n}").mkdir(parents=True)
            shutil.copyfile(REAL / f"{name}.trainer_state.json", ckpt / f"checkpoint-{n}" / "trainer_state.json")
        os.utime(ckpt / "checkpoint-250" / "trainer_state.json", (now - 60, now - 60))  # older: not read
        csv_dir = job.work / "lightning_logs" / "version_0"
        csv_dir.mkdir(parents=True)
        shutil.copyfile(REAL / "slm-training.metrics.csv", csv_dir / "metrics.csv")
        shutil.copytree(REAL / "swahili-stt" / "mlruns", job.work / "mlruns", copy_function=shutil.copyfile)

        status, points = once(job.state, job.dir)
    finally:
        stranger.kill()
        stranger.wait()

    want: Points = {}
    for path in mine:
        # three writers of one tag from the same step: three runs, named by their directories
        run = path.parent.name
        want.update({(s, f"{run}/{t}"): v for (s, t), v in expect(read_event_file(path.read_bytes()).series()).items()})
    expect(read_trainer_state((ckpt / "checkpoint-500" / "trainer_state.json").read_bytes()), want)
    expect(read_metrics_csv((csv_dir / "metrics.csv").read_bytes()), want)
    metric_files = sorted((job.work / "mlruns").glob("*/*/metrics/**/*"))
    ml: Points = {}
    for f in metric_files:
        if f.is_file():
            metrics_dir = next(p for p in f.parents if p.name == "metrics")
            expect([read_metric_file(f.relative_to(metrics_dir).as_posix(), f.read_bytes())], ml)
    got = files_only(points)
    assert {k: v for k, v in got.items() if k[0] != "mlflow"} == want
    # MLflow's metric files come in the walk's order; each key's points are its file's
    assert {k: sorted(v) for k, v in got.items() if k[0] == "mlflow"} == {k: sorted(v) for k, v in ml.items()}
    assert ("log", "loss") in points  # the log stays, beside them
    assert {s for s, _t in got} == {"tensorboard", "trainer_state", "csv", "mlflow"}
    assert status["runfiles"]["walk"]["capped"] is False


def test_each_file_is_read_as_far_as_it_grew_and_a_read_that_diverges_starts_its_stream_again(
    job: Job, tmp_path: Path
) -> None:
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    (job.dir / "pid").write_text(f"{os.getpid()}\n")  # this process writes the job's event file
    writer = EventFileWriter(str(job.work / "runs"), max_queue_size=1)
    for i in range(20):
        writer.add_event(event(i, 1_700_000_000.0 + i, simple("loss", 1 / (i + 1))))
    writer.flush()
    state = job.work / "trainer_state.json"
    history = json.loads((REAL / "t5-summarization.trainer_state.json").read_text())
    full = history["log_history"]
    history["log_history"] = full[: len(full) // 2]
    state.write_text(json.dumps(history))
    _status, first = once(job.state, job.dir)
    assert len(first[("tensorboard", "loss")]) == 20

    for i in range(20, 50):
        writer.add_event(event(i, 1_700_000_000.0 + i, simple("loss", 1 / (i + 1))))
    writer.close()
    (event_file,) = (job.work / "runs").glob("events.out.tfevents.*")
    history["log_history"] = full  # a later checkpoint: the same history, longer
    state.write_text(json.dumps(history))
    status, second = once(job.state, job.dir)
    assert status["runfiles"]["resets"] == 0
    assert status["runfiles"]["read"] < event_file.stat().st_size + state.stat().st_size
    assert files_only(second) == expect(
        read_event_file(event_file.read_bytes()).series() + read_trainer_state(state.read_bytes())
    )

    rows = (job.dir / "series.jsonl").read_text().splitlines()
    assert not any('"reset"' in r for r in rows)  # only what each read added was appended
    history["log_history"] = full[:3]  # restarted from an early checkpoint
    state.write_text(json.dumps(history))
    status, third = once(job.state, job.dir)
    assert status["runfiles"]["resets"] == 1
    assert [p for k, p in third.items() if k[0] == "trainer_state"] == [
        p for k, p in expect(read_trainer_state(state.read_bytes())).items()
    ]
    status, _same = once(job.state, job.dir)
    assert status["runfiles"]["read"] == 0  # nothing changed: nothing read


def test_the_walk_stops_at_its_bounds_and_says_so(job: Job, tmp_path: Path) -> None:
    src = tb_file(tmp_path / "tb-src", "loss", 3)
    now = time.time()
    near = events_named(src, job.work / "runs", now - 5, job.shell.pid)
    big = job.work / "images"
    big.mkdir()
    for i in range(discover.MAX_DIR_ENTRIES + 1):
        (big / f"{i}.jpg").touch()
    events_named(src, big / "zz-below", now - 5, job.shell.pid)  # below a directory of data
    status, points = once(job.state, job.dir)
    walk = status["runfiles"]["walk"]
    assert walk["capped"] is True and walk["cap"] == discover.MAX_ENTRIES
    assert files_only(points) == expect(read_event_file(near.read_bytes()).series())

    shutil.rmtree(big)
    spread = job.work / "many"
    per = discover.MAX_DIR_ENTRIES - 1
    for d in range(discover.MAX_ENTRIES // per + 1):
        (spread / f"d{d:02}").mkdir(parents=True)
        for i in range(per):
            (spread / f"d{d:02}" / str(i)).touch()
    status, _points = once(job.state, job.dir)
    walk = status["runfiles"]["walk"]
    assert walk["capped"] is True and walk["entries"] == discover.MAX_ENTRIES


def test_an_mlflow_sqlite_store_gives_the_runs_that_started_while_the_job_ran(job: Job) -> None:
    started = int((job.dir / "started_at").read_text())
    db = sqlite3.connect(job.work / "mlflow.db")
    db.executescript(
        "CREATE TABLE runs (run_uuid TEXT, start_time INTEGER);"
        "CREATE TABLE metrics (key TEXT, value REAL, timestamp INTEGER, step INTEGER, run_uuid TEXT, is_nan INTEGER);"
    )
    db.executemany("INSERT INTO runs VALUES (?, ?)", [("before", (started - 500) * 1000), ("mine", started * 1000 + 5)])
    rows = [("loss", 1 / s, started * 1000 + s, s, "mine", 0) for s in range(1, 6)]
    rows += [("loss", 9.0, 1, 1, "before", 0), ("loss", 0.0, started * 1000 + 9, 6, "mine", 1)]
    db.executemany("INSERT INTO metrics VALUES (?, ?, ?, ?, ?, ?)", rows)
    db.commit()
    db.close()
    _status, points = once(job.state, job.dir)
    mine = [(k, v, t, s, n) for k, v, t, s, run, n in rows if run == "mine"]
    assert files_only(points) == expect(series_from_rows(mine))


def test_event_files_belong_to_the_job_whose_process_wrote_them() -> None:
    name = parse_event_file_name(f"events.out.tfevents.1000.{HOST}.77.0")
    assert name is not None
    alive = discover.Writer(started=990.0, session=70, group=71, ancestors=(60, 1))
    facts = {"host": HOST, "started_at": 980.0, "finished_at": None}
    assert discover.owns_event_file(name, job_pid=77, writer=alive, **facts)
    assert discover.owns_event_file(name, job_pid=70, writer=alive, **facts)  # its session
    assert discover.owns_event_file(name, job_pid=60, writer=alive, **facts)  # below the job's shell
    assert not discover.owns_event_file(name, job_pid=5, writer=alive, **facts)  # another job's
    reused = discover.Writer(started=2000.0, session=1, group=1, ancestors=())
    assert discover.owns_event_file(name, job_pid=5, writer=reused, **facts)  # its pid is another's now
    assert discover.owns_event_file(name, job_pid=5, writer=None, **facts)  # gone: written while the job ran
    assert not discover.owns_event_file(name, job_pid=5, writer=None, host=HOST, started_at=1500.0, finished_at=None)
    assert not discover.owns_event_file(name, job_pid=5, writer=None, host=HOST, started_at=500.0, finished_at=900.0)
    assert discover.kind_of(("w", "mlruns", "1", "abc", "metrics", "train", "loss")) == ("mlflow", "train/loss")
    assert discover.kind_of(("w", "mlruns", "1", "abc", "params", "lr")) is None
    assert discover.skip_dir(".git") and discover.skip_dir("datasets") and not discover.skip_dir("runs")


def logged_job(tmp_path: Path, job_id: str, steps: int) -> tuple[Path, InstanceConfig]:
    """A job directory under a fresh state dir with the summariser installed, its log `steps`
    lines of `step N | loss X`, and the instance that holds it."""
    state = tmp_path / "state"
    install(state)
    job = state / "jobs" / job_id
    job.mkdir(parents=True)
    (job / "started_at").write_text(f"{int(time.time())}\n")
    (job / "workdir").write_text(f"{tmp_path / 'work'}\n")
    (job / "log").write_bytes(b"".join(f"step {s} | loss {1 / s:.4f}\n".encode() for s in range(1, steps + 1)))
    return job, InstanceConfig(name="box-1", host="h", state_dir=str(state))


def read_local(inst: InstanceConfig, job_id: str, cache: SeriesCache, thin: bool = False):
    """`read_series` of a job on this machine (LocalHost), as `metrics` reads it (`thin`: as
    the log screen's first read of a run it has no copy of)."""

    async def read():
        host = LocalHost()
        await host.connect()
        try:
            return await read_series(host, inst, job_id, cache=cache, thin=thin)
        finally:
            await host.close()

    return asyncio.run(read())


def test_read_series_fetches_only_what_was_appended_and_all_again_after_a_reset(tmp_path: Path) -> None:
    job, inst = logged_job(tmp_path, "20260101-000000-abcd", 2000)
    cache = SeriesCache(tmp_path / "cache")

    def read():
        return read_local(inst, job.name, cache)

    first = read()
    whole = (job / "series.jsonl").stat().st_size
    assert first.fetched == whole and first.series[0].tag == "loss" and len(first.series[0].points) == 2000
    assert cache.path(inst, job.name).read_bytes() == (job / "series.jsonl").read_bytes()

    with (job / "log").open("ab") as f:
        f.write(b"step 2001 | loss 0.0001\n")
    second = read()
    assert second.fetched == (job / "series.jsonl").stat().st_size - whole  # the appended line only
    assert second.series[0].points == first.series[0].points + [(2001, 0.0001, None)]

    (job / "log").write_bytes(b"step 1 | loss 0.9\n")  # replaced: the summariser writes the file anew
    third = read()
    assert third.fetched == (job / "series.jsonl").stat().st_size
    assert [(s.tag, s.source, s.points) for s in third.series] == [("loss", "log", [(1, 0.9, None)])]
    assert cache.path(inst, job.name).read_bytes() == (job / "series.jsonl").read_bytes()


def _epochs(tag: str, steps: range, t0: float, scale: float = 1.0) -> list:
    return [event(i, t0 + i, simple(tag, scale / (i + 1))) for i in steps]


def _points(path: Path) -> list[tuple[float, float, float | None]]:
    (series,) = read_event_file(path.read_bytes()).series()
    return list(series.points)


def test_event_files_of_one_tag_are_put_together_as_tensorboard_shows_them(job: Job, tmp_path: Path) -> None:
    """Keras writes `epoch_loss` into logs/train and logs/validation side by side: two series,
    named by their directories. A Trainer resumed from a checkpoint writes a new directory from a
    later step: one series, the resumed points in place of those written after the checkpoint.
    A writer restarted into its own directory does the same within it, whatever order the files
    are read in. Two runs from step 0, one after the other (Lightning's versions): apart."""
    now = time.time()
    t0 = now - 90

    def written(name: str, tag: str, steps: range, at: float, scale: float, where: Path, stamp: float) -> Path:
        src = write_events(tmp_path / name, _epochs(tag, steps, at, scale))
        events_named(src, where, stamp, job.shell.pid)
        return src

    keras = {
        run: written(run, "epoch_loss", range(10), t0, k, job.work / "logs" / run, now - 80)
        for run, k in (("train", 1.0), ("validation", 2.0))
    }
    first = written("a", "train/loss", range(100), t0, 1.0, job.work / "runs" / "Dec01_a", now - 80)
    resumed = written("b", "train/loss", range(60, 150), t0 + 200, 3.0, job.work / "runs" / "Dec01_b", now - 70)
    # in one directory, the later file (by its name's time) given first
    lr_b = written("lr-b", "lr", range(20, 81), t0 + 400, 7.0, job.work / "same", now - 60)
    lr_a = written("lr-a", "lr", range(50), t0 + 300, 5.0, job.work / "same", now - 80)
    v0 = written("v0", "val_acc", range(5), t0, 1.0, job.work / "lightning_logs" / "version_0", now - 80)
    v1 = written("v1", "val_acc", range(5), t0 + 100, 4.0, job.work / "lightning_logs" / "version_1", now - 70)

    _status, points = once(job.state, job.dir)
    tb = {t: v for (s, t), v in points.items() if s == "tensorboard"}
    assert sorted(tb) == [
        "lr",
        "train/epoch_loss",
        "train/loss",
        "validation/epoch_loss",
        "version_0/val_acc",
        "version_1/val_acc",
    ]
    assert tb["train/epoch_loss"] == _points(keras["train"])
    assert tb["validation/epoch_loss"] == _points(keras["validation"])
    assert tb["train/loss"] == _points(first)[:60] + _points(resumed)
    assert tb["lr"] == _points(lr_a)[:20] + _points(lr_b)
    assert tb["version_0/val_acc"] == _points(v0) and tb["version_1/val_acc"] == _points(v1)


def test_read_series_parses_only_what_its_saved_decoder_has_not_read(tmp_path: Path) -> None:
    """The copy's bytes a saved decoder has read are not parsed again: made unreadable here,
    the next read still gives every point (a 200 MB log's points took 2.6 s to parse)."""
    job, inst = logged_job(tmp_path, "20260101-000000-abce", 500)

    first = read_local(inst, job.name, SeriesCache(tmp_path / "cache"))
    copy = SeriesCache(tmp_path / "cache").path(inst, job.name)
    data = copy.read_bytes()
    head_end = data.index(b"\n") + 1
    copy.write_bytes(data[:head_end] + b" " * (len(data) - head_end - 1) + b"\n")  # the points, blanked
    with (job / "log").open("ab") as f:
        f.write(b"step 501 | loss 0.0019\n")
    second = read_local(inst, job.name, SeriesCache(tmp_path / "cache"))  # a new process: the decoder from disk
    assert second.series[0].points == first.series[0].points + [(501, 0.0019, None)]
    assert second.fetched is not None and second.fetched < 100  # the appended line only


def test_a_thin_read_gives_every_series_in_a_few_thousand_points_and_keeps_no_copy(job: Job, tmp_path: Path) -> None:
    steps = 30_000
    job.dir = job.dir.rename(job.dir.with_name("20260101-000000-abcd"))  # an id read_series takes
    (job.dir / "log").write_bytes(b"".join(f"step {s} | loss {1 / s:.6f}\n".encode() for s in range(1, steps + 1)))
    events_named(tb_file(tmp_path / "tb", "train/loss", 300), job.work / "runs", time.time() - 50, job.shell.pid)
    inst = InstanceConfig(name="box-1", host="h", state_dir=str(job.state))
    cache = SeriesCache(tmp_path / "cache")
    thin = read_local(inst, job.dir.name, cache, thin=True)
    assert thin.thin and not cache.path(inst, job.dir.name).exists()  # the overview is never the copy
    full = read_local(inst, job.dir.name, cache)
    assert not full.thin and cache.path(inst, job.dir.name).exists()
    kept = {(s.source, s.tag): s.points for s in thin.series}
    every = {(s.source, s.tag): s.points for s in full.series}
    assert set(kept) == set(every) == {("log", "loss"), ("tensorboard", "train/loss"), ("tensorboard", "acc")}
    loss = kept["log", "loss"]
    assert len(every["log", "loss"]) == steps and len(loss) < 3000
    assert loss[0] == every["log", "loss"][0] and loss[-1000:] == every["log", "loss"][-1000:]
    assert kept["tensorboard", "train/loss"] == every["tensorboard", "train/loss"]  # short: whole
    assert thin.fetched is not None and full.fetched is not None and thin.fetched < full.fetched / 4


def test_a_copy_torn_mid_line_is_mended_by_the_next_append(tmp_path: Path) -> None:
    job, inst = logged_job(tmp_path, "20260101-000000-abcd", 500)
    cache = SeriesCache(tmp_path / "cache")
    read_local(inst, job.name, cache)
    copy = cache.path(inst, job.name)
    with copy.open("ab") as f:
        f.write(b'["loss",501,0.00')  # an append cut short (the laptop slept mid-write)
    with (job / "log").open("ab") as f:
        f.write(b"step 501 | loss 0.0019\nstep 502 | loss 0.0018\n")
    again = read_local(inst, job.name, cache)
    assert again.fetched is not None and again.fetched < 200  # only the new points came
    assert copy.read_bytes() == (job / "series.jsonl").read_bytes()
    assert again.series[0].points[-2:] == [(501, 0.0019, None), (502, 0.0018, None)]
