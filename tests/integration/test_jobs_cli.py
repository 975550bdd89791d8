"""`gpu-tui run | jobs | logs | stop` end to end: real config, real sshd, exit codes, JSON shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sshhelp import run_gpu_tui
from waiting import until_sync

from gpu_tui.core.trainlog.hints import hint_for

pytestmark = pytest.mark.sshd

JOB_KEYS = {
    "id",
    "name",
    "command",
    "conda_env",
    "cwd",
    "state",
    "exit_code",
    "started_at",
    "finished_at",
    "log_path",
    "log_bytes",
    "failure",
    "hint",
    "fit",
    "disk",
    "frame",
    "progress",
    "last_loss",
    "scheduler_job_id",
    "node",
    "reason",
    "vram_mib",
}


def cli(tmp: Path, inst, *args: str, **kw):
    return run_gpu_tui(tmp, [inst], *args, **kw)


def wait_state(tmp: Path, inst, job_id: str, states: set[str], timeout: float = 60) -> dict:
    seen: list[dict | None] = [None]

    def reached() -> dict | None:
        res = cli(tmp, inst, "jobs", inst.name, "--json")
        assert res.returncode == 0, res.stderr
        seen[0] = {j["id"]: j for j in json.loads(res.stdout)["jobs"]}.get(job_id)
        return seen[0] if seen[0] is not None and seen[0]["state"] in states else None

    return until_sync(
        reached, timeout, what=f"job {job_id} in {sorted(states)}", step=0.3, detail=lambda: f"the job: {seen[0]}"
    )


TRAIN = r"""python3 - <<'EOF'
import sys, time
for step in range(1, 6):
    print(f"step {step} | loss {1.0 / step:.3f}", flush=True)
    sys.stdout.write(f"\r{step * 20}%|##   | {step}/5 [00:0{step}<00:0{5 - step}, 1.00it/s]")
    sys.stdout.flush()
    time.sleep(0.1)
print()
print("done")
EOF"""


def test_run_jobs_logs_for_a_training_script(sshd_instance, tmp_path: Path) -> None:
    res = cli(tmp_path, sshd_instance, "run", sshd_instance.name, "--name", "train", "--", TRAIN)
    assert res.returncode == 0, res.stderr
    job_id = res.stdout.strip()
    job = wait_state(tmp_path, sshd_instance, job_id, {"succeeded", "failed"})
    assert set(job) == JOB_KEYS
    assert job["state"] == "succeeded" and job["exit_code"] == 0 and job["failure"] is None
    assert job["name"] == "train" and job["command"] == TRAIN
    assert job["last_loss"] == pytest.approx(0.2)
    assert job["progress"]["percent"] == pytest.approx(100.0)
    assert job["log_path"].endswith(f"/.gpu-tui/jobs/{job_id}/log") and job["log_path"].startswith("/")
    assert job["started_at"].endswith("Z") and job["log_bytes"] > 0

    logs = cli(tmp_path, sshd_instance, "logs", sshd_instance.name, "train", "-n", "3")
    assert logs.returncode == 0, logs.stderr
    lines = logs.stdout.splitlines()
    assert lines[-1] == "done" and len(lines) == 3
    assert "\r" not in logs.stdout  # the bar collapsed to its last state

    table = cli(tmp_path, sshd_instance, "jobs", sshd_instance.name)
    assert job_id in table.stdout and "succeeded" in table.stdout


def test_failure_and_exit_codes(sshd_instance, tmp_path: Path) -> None:
    res = cli(
        tmp_path, sshd_instance, "run", sshd_instance.name, "--", "python3", "-c", "import torch_missing_module_xyz"
    )
    job_id = res.stdout.strip()
    job = wait_state(tmp_path, sshd_instance, job_id, {"failed"})
    assert job["exit_code"] == 1
    assert job["failure"] == "ModuleNotFoundError: torch_missing_module_xyz"
    assert job["hint"] == hint_for("ModuleNotFoundError: x") and "pip install" in job["hint"]
    # the table says it under the jobs, one line each; in Chinese where the settings say so
    table = cli(tmp_path, sshd_instance, "jobs", sshd_instance.name)
    assert f"{job_id}  {job['hint']}" in table.stdout.splitlines()
    zh = cli(tmp_path, sshd_instance, "--lang", "zh-CN", "jobs", sshd_instance.name, "--json")
    assert "安装" in {j["id"]: j for j in json.loads(zh.stdout)["jobs"]}[job_id]["hint"]

    # a traceback: where it says the job failed, in the job's own code
    crash = "printf 'def step():\\n    raise ValueError(\"bad shape\")\\nstep()\\n' > t.py && python3 t.py"
    res = cli(tmp_path, sshd_instance, "run", sshd_instance.name, "--", crash)
    job = wait_state(tmp_path, sshd_instance, res.stdout.strip(), {"failed"})
    # python >= 3.9 names the script by its absolute path: its last three parts are shown
    where = "/".join(str(sshd_instance.home() / "t.py").split("/")[-3:]) + ":2 in step"
    assert (job["failure"], job["frame"]) == ("Traceback: ValueError: bad shape", where)
    table = cli(tmp_path, sshd_instance, "jobs", sshd_instance.name).stdout.splitlines()
    assert f"{job['id']}  the last frame: {where}" in table

    # out of GPU memory with the model named: what fit says of it against the card the message states
    oom = (
        "echo 'model_name_or_path: Qwen/Qwen2.5-7B-Instruct'; echo 'finetuning_type: lora';"
        " echo 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
        " GPU 0 has a total capacity of 23.65 GiB of which 1.20 GiB is free.'; exit 1"
    )
    res = cli(tmp_path, sshd_instance, "run", sshd_instance.name, "--", oom)
    job = wait_state(tmp_path, sshd_instance, res.stdout.strip(), {"failed"})
    assert job["failure"] == "CUDA out of memory" and job["hint"] == hint_for("CUDA out of memory")
    fit = job["fit"]
    assert (fit["model"], fit["context"], fit["batch"], fit["gpu_gib"]) == ("qwen2.5-7b", 4096, 1, 23.65)
    assert list(fit["needs_gib"]) == ["lora"] and fit["needs_gib"]["lora"] > 0
    table = cli(tmp_path, sshd_instance, "jobs", sshd_instance.name).stdout.splitlines()
    assert any(line.startswith(f"{job['id']}  `gpu-tui fit`: qwen2.5-7b needs about ") for line in table), table
    assert all(
        j["fit"] is None
        for j in json.loads(cli(tmp_path, sshd_instance, "jobs", sshd_instance.name, "--json").stdout)["jobs"]
        if j["failure"] != "CUDA out of memory"
    )

    nan = cli(tmp_path, sshd_instance, "run", sshd_instance.name, "--", "echo 'loss: 0.5'; echo 'loss: nan'")
    job = wait_state(tmp_path, sshd_instance, nan.stdout.strip(), {"succeeded", "failed"})
    assert (job["state"], job["failure"], job["last_loss"]) == ("succeeded", "NaN loss", None)
    assert "learning rate" in job["hint"]


def test_follow_until_the_job_ends_and_stop(sshd_instance, tmp_path: Path) -> None:
    res = cli(
        tmp_path, sshd_instance, "run", sshd_instance.name, "--", "for i in 1 2 3 4 5; do echo tick $i; sleep 0.3; done"
    )
    job_id = res.stdout.strip()
    follow = cli(tmp_path, sshd_instance, "logs", sshd_instance.name, job_id, "-f", "-n", "100")
    assert follow.returncode == 0, follow.stderr
    assert follow.stdout.splitlines() == [f"tick {i}" for i in range(1, 6)]  # what was there, then the rest, once

    long = cli(tmp_path, sshd_instance, "run", sshd_instance.name, "--name", "forever", "--", "sleep 300")
    assert long.returncode == 0
    stop = cli(tmp_path, sshd_instance, "stop", sshd_instance.name, "forever")
    assert stop.returncode == 0, stop.stderr
    assert "stopped INT" in stop.stdout
    job = wait_state(tmp_path, sshd_instance, long.stdout.strip(), {"stopped"})
    assert job["failure"] is None and job["hint"] is None


def test_bad_input_is_refused_with_exit_2(sshd_instance, tmp_path: Path) -> None:
    cases = [
        (["run", sshd_instance.name], "nothing to run"),
        (["run", sshd_instance.name, "--cwd", "/no/such", "--", "true"], "does not exist"),
        (["run", sshd_instance.name, "--env", "nope", "--", "true"], "no conda env 'nope'"),
        (["run", sshd_instance.name, "--env", "bad name", "--", "true"], "conda env name"),
        (["run", sshd_instance.name, "--setenv", "NOEQUALS", "--", "true"], "KEY=VALUE"),
        (["logs", sshd_instance.name, "nojob"], "no job 'nojob'"),
        (["stop", sshd_instance.name, "nojob"], "no job 'nojob'"),
        (["jobs", "not-an-instance"], "no instance named"),
    ]
    for args, message in cases:
        res = cli(tmp_path, sshd_instance, *args)
        assert res.returncode == 2, (args, res.stdout, res.stderr)
        assert message in res.stderr, (args, res.stderr)
        assert "Traceback" not in res.stderr
        assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    listing = cli(tmp_path, sshd_instance, "jobs", sshd_instance.name, "--json")
    assert json.loads(listing.stdout) == {"jobs": []}


def test_run_in_a_conda_env_without_activate(sshd_instance, tmp_path: Path) -> None:
    """conda is off PATH over SSH (as on AutoDL); the job still runs in the env's python."""
    res = cli(
        tmp_path,
        sshd_instance,
        "run",
        sshd_instance.name,
        "--env",
        "llm",
        "--",
        "python",
        "-c",
        "import os, sys; print(os.environ['CONDA_DEFAULT_ENV'], sys.executable)",
    )
    assert res.returncode == 0, res.stderr
    job = wait_state(tmp_path, sshd_instance, res.stdout.strip(), {"succeeded", "failed"})
    assert job["state"] == "succeeded" and job["conda_env"] == "llm"
    logs = cli(tmp_path, sshd_instance, "logs", sshd_instance.name, job["id"])
    env, exe = logs.stdout.split()
    assert env == "llm" and exe == str(sshd_instance.conda_root() / "envs" / "llm" / "bin" / "python")


LONG_TAIL = r"""python3 - <<'EOF'
print("***** Running training *****\n  Num examples = 8000\n  Num Epochs = 2\n  Total optimization steps = 1000")
for s in range(1, 501):
    print(f"step {s} | loss {1.0 / s:.4f}")
for i in range(6000):  # 330 KB with no loss and no progress in it: more than the end `jobs` reads
    print(f"[worker {i % 8}] prefetched shard {i:06d} of the training set")
EOF"""


def test_a_loss_and_the_run_length_from_before_the_logs_end_come_from_the_instances_series(
    sshd_instance, tmp_path: Path
) -> None:
    """`jobs` reads the log's last 256 KiB; the summariser on the instance has read the whole
    log, so its series.last fills in the loss and the run's progress printed before that end."""
    res = cli(tmp_path, sshd_instance, "run", sshd_instance.name, "--name", "long-tail", "--", LONG_TAIL)
    assert res.returncode == 0, res.stderr
    job_id = res.stdout.strip()
    wait_state(tmp_path, sshd_instance, job_id, {"succeeded"})
    # the summariser's last catch-up follows the job's end by a moment
    job = until_sync(
        lambda: (j := jobs_json(tmp_path, sshd_instance)[job_id])["last_loss"] is not None and j, 30, what="the loss"
    )
    assert job["last_loss"] == pytest.approx(0.002) and job["log_bytes"] > 256 * 1024
    assert job["progress"] == {
        "percent": 50.0,
        "eta_seconds": None,
        "epoch": None,
        "epochs": 2,
        "step": 500,
        "steps": 1000,
    }
    # without the instance's summary, the end alone says neither
    last = Path(job["log_path"]).with_name("series.last")
    last.unlink()
    job = jobs_json(tmp_path, sshd_instance)[job_id]
    assert job["last_loss"] is None and job["progress"] is None


def jobs_json(tmp: Path, inst) -> dict[str, dict]:
    res = cli(tmp, inst, "jobs", inst.name, "--json")
    assert res.returncode == 0, res.stderr
    return {j["id"]: j for j in json.loads(res.stdout)["jobs"]}
