"""`gpu-tui metrics` end to end (issue 24): a real job on a real sshd writes losses, the
instance's summariser keeps its series, `metrics --json` gives every point, and every log byte
is read once."""

from __future__ import annotations

import fcntl
import json
from pathlib import Path

import pytest
from sshhelp import run_gpu_tui
from waiting import until_sync

pytestmark = pytest.mark.sshd

TRAIN = r"""python3 - <<'EOF'
import os, time
for s in range(1, 41):
    print("step %d | loss %.4f | lr 0.001" % (s, 1.0 / s), flush=True)
while not os.path.exists(__GO__):
    time.sleep(0.05)
for s in range(41, 61):
    print("step %d | loss %.4f | lr 0.0005" % (s, 1.0 / s), flush=True)
EOF"""


def cli(tmp: Path, inst, *args: str):
    return run_gpu_tui(tmp, [inst], *args)


def metrics(tmp: Path, inst, job: str, *extra: str) -> dict:
    res = cli(tmp, inst, "metrics", inst.name, job, "--json", *extra)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def state_header(job_dir: Path) -> dict:
    with (job_dir / "series.state").open("rb") as f:
        return json.loads(f.readline())


def watch_gone(job_dir: Path) -> bool:
    with (job_dir / "series.watch").open("a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        return True


def test_metrics_gives_every_point_and_reads_each_log_byte_once(sshd_instance, tmp_path: Path) -> None:
    go = tmp_path / "go"
    res = cli(
        tmp_path,
        sshd_instance,
        "run",
        sshd_instance.name,
        "--name",
        "fit",
        "--",
        TRAIN.replace("__GO__", repr(str(go))),
    )
    assert res.returncode == 0, res.stderr
    job_id = res.stdout.strip()
    job_dir = sshd_instance.home() / ".gpu-tui" / "jobs" / job_id

    def forty() -> dict | None:
        got = metrics(tmp_path, sshd_instance, "fit")
        loss = [s for s in got["series"] if s["tag"] == "loss"]
        return got if loss and len(loss[0]["points"]) == 40 else None

    first = until_sync(forty, 60, what="40 losses in metrics --json", step=0.3)
    assert first["job"] == job_id and first["window"] is False
    series = {s["tag"]: s for s in first["series"]}
    assert set(series) == {"loss", "lr"} and {s["source"] for s in series.values()} == {"log"}
    assert series["loss"]["points"] == [[s, round(1.0 / s, 4), None] for s in range(1, 41)]
    assert series["lr"]["points"] == [[s, 0.001, None] for s in range(1, 41)]
    read_first = state_header(job_dir)["read_total"]
    assert read_first == (job_dir / "log").stat().st_size  # read once, whole lines

    go.write_text("")
    until_sync(lambda: (job_dir / "exit_code").exists(), 60, what="the job's end", step=0.2)
    second = metrics(tmp_path, sshd_instance, job_id, "--tag", "loss")
    assert [s["tag"] for s in second["series"]] == ["loss"]
    assert second["series"][0]["points"] == [[s, round(1.0 / s, 4), None] for s in range(1, 61)]
    header = state_header(job_dir)
    # the runner's watch and this call together read only what grew: each byte once
    assert header["read_total"] == header["offset"] == (job_dir / "log").stat().st_size
    assert header["closed"] is True
    until_sync(lambda: watch_gone(job_dir), 60, what="the series watch to exit after the job", step=0.2)

    table = cli(tmp_path, sshd_instance, "metrics", sshd_instance.name, "fit")
    assert table.returncode == 0, table.stderr
    row = next(line.split() for line in table.stdout.splitlines() if line.startswith("loss"))
    assert row == ["loss", "log", "60", "1", "60", "0.0167", "0.0167"]

    missing = cli(tmp_path, sshd_instance, "metrics", sshd_instance.name, "fit", "--tag", "nope")
    assert missing.returncode == 2 and "no series 'nope'" in missing.stderr and "loss" in missing.stderr


def test_without_python3_on_the_instance_the_window_is_read_and_said(sshd_instance, tmp_path: Path) -> None:
    # an image without a usable python3: what the PATH finds first answers as Python 2 does
    fakes = [sshd_instance.bin_dir / name for name in ("python3", "python")]
    try:
        for fake in fakes:
            fake.write_text("#!/bin/sh\necho 'Python 2.7.18' >&2\nexit 0\n")
            fake.chmod(0o755)
        res = cli(
            tmp_path,
            sshd_instance,
            "run",
            sshd_instance.name,
            "--",
            'for i in 1 2 3; do echo "step $i loss 0.$i"; done',
        )
        assert res.returncode == 0, res.stderr
        job_id = res.stdout.strip()
        job_dir = sshd_instance.home() / ".gpu-tui" / "jobs" / job_id
        until_sync(lambda: (job_dir / "exit_code").exists(), 60, what="the job's end", step=0.2)
        out = cli(tmp_path, sshd_instance, "metrics", sshd_instance.name, job_id, "--json")
        assert out.returncode == 0, out.stderr
        got = json.loads(out.stdout)
        assert got["window"] is True and "no python3" in out.stderr
        assert got["series"] == [
            {"tag": "loss", "source": "log", "points": [[1, 0.1, None], [2, 0.2, None], [3, 0.3, None]]}
        ]
        assert not (job_dir / "series.state").exists()
    finally:
        for fake in fakes:
            fake.unlink(missing_ok=True)


FILES = r"""python3 - <<'EOF'
import base64, os, socket, time
os.makedirs("runs", exist_ok=True)
name = "runs/events.out.tfevents.%d.%s.%d.0" % (int(time.time()), socket.gethostname(), os.getpid())
with open(name, "wb") as f:
    f.write(base64.b64decode(__EVENTS__))
os.makedirs("out/checkpoint-2", exist_ok=True)
with open("out/checkpoint-2/trainer_state.json", "w") as f:
    f.write(__STATE__)
print("step 1 | loss 0.5", flush=True)
while not os.path.exists(__GO__):
    time.sleep(0.05)
EOF"""


def test_metrics_lists_the_files_the_job_wrote_with_their_source(sshd_instance, tmp_path: Path) -> None:
    import base64

    from tbevents import event, float32, simple, write_events

    events = write_events(
        tmp_path / "tb", [event(i, 1_700_000_000.0 + i, simple("train/loss", 1 / (i + 1))) for i in range(5)]
    )
    state = {
        "log_history": [
            {"loss": 0.9, "epoch": 0.5, "step": 1},
            {"loss": 0.7, "epoch": 1.0, "step": 2},
            {"eval_loss": 0.8, "epoch": 1.0, "step": 2},
        ]
    }
    work = sshd_instance.home() / "proj"
    work.mkdir()
    go = tmp_path / "go"
    script = (
        FILES.replace("__EVENTS__", repr(base64.b64encode(events.read_bytes()).decode()))
        .replace("__STATE__", repr(json.dumps(state)))
        .replace("__GO__", repr(str(go)))
    )
    res = cli(tmp_path, sshd_instance, "run", sshd_instance.name, "--cwd", str(work), "--", script)
    assert res.returncode == 0, res.stderr
    job_id = res.stdout.strip()
    job_dir = sshd_instance.home() / ".gpu-tui" / "jobs" / job_id

    def both() -> dict | None:
        got = metrics(tmp_path, sshd_instance, job_id)
        return got if {"tensorboard", "trainer_state"} <= {s["source"] for s in got["series"]} else None

    got = until_sync(both, 60, what="the event file and trainer_state.json in metrics --json", step=0.3)
    series = {(s["source"], s["tag"]): s["points"] for s in got["series"]}
    assert series[("tensorboard", "train/loss")] == [[i, float32(1 / (i + 1)), 1_700_000_000.0 + i] for i in range(5)]
    assert series[("trainer_state", "loss")] == [[1, 0.9, None], [2, 0.7, None]]
    assert series[("trainer_state", "eval_loss")] == [[2, 0.8, None]]
    assert series[("trainer_state", "epoch")] == [[1, 0.5, None], [2, 1.0, None], [2, 1.0, None]]
    assert series[("log", "loss")] == [[1, 0.5, None]]
    assert (job_dir / "workdir").read_text().strip() == str(work)

    go.write_text("")
    until_sync(lambda: (job_dir / "exit_code").exists(), 60, what="the job's end", step=0.2)
    again = metrics(tmp_path, sshd_instance, job_id)
    assert again["series"] == got["series"]  # from the copy kept here and what was appended
    (copy,) = (tmp_path / "home" / ".cache" / "gpu-tui" / "series" / sshd_instance.name).glob(f"{job_id}.jsonl")
    assert copy.read_bytes() == (job_dir / "series.jsonl").read_bytes()
