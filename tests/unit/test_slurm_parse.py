"""core/slurm on real SLURM 22.05 output (tests/data/slurm/README.md says how it was made) and on
the 23.02+ JSON shapes SLURM's OpenAPI schema documents (numbers as {set, infinite, number},
job_state as a list)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpu_tui.core.jobs import JobFacts, job_state
from gpu_tui.core.slurm import (
    TIME_RE,
    parse_sbatch_id,
    parse_scontrol_jobs,
    parse_sinfo_nodes,
    parse_squeue_json,
    scheduler_words,
)

DATA = Path(__file__).parents[1] / "data" / "slurm"


def test_squeue_22_05_states_reasons_nodes_and_exit_codes() -> None:
    jobs = parse_squeue_json((DATA / "squeue-22.05.json").read_text())
    assert (jobs["12"].state, jobs["12"].node, jobs["12"].name) == ("RUNNING", "vm", "cap-holder")
    assert (jobs["13"].state, jobs["13"].reason, jobs["13"].node) == ("PENDING", "Resources", None)
    assert (jobs["15"].state, jobs["15"].reason) == ("PENDING", "Priority")
    assert jobs["14"].state == "CANCELLED" and jobs["14"].time_limit_seconds == 300
    assert jobs["12"].time_limit_seconds is None  # UNLIMITED
    assert (jobs["7"].state, jobs["7"].exit_code, jobs["7"].reason) == ("FAILED", 3, "NonZeroExitCode")
    assert jobs["9"].exit_code == 1 and jobs["3"].exit_code == 0
    assert jobs["4"].exit_code == 137  # raw wait status 9: SIGKILL
    assert jobs["13"].start_time is None and jobs["12"].start_time == 1796121637


def test_scontrol_agrees_with_squeue() -> None:
    by_json = parse_squeue_json((DATA / "squeue-22.05.json").read_text())
    by_text = parse_scontrol_jobs((DATA / "scontrol-22.05.txt").read_text())
    assert set(by_text) == set(by_json)
    for job_id, job in by_json.items():
        other = by_text[job_id]
        assert (other.state, other.reason, other.node, other.exit_code, other.time_limit_seconds) == (
            job.state, job.reason, job.node, job.exit_code, job.time_limit_seconds), job_id


def test_squeue_23_json_shapes() -> None:
    text = json.dumps({"jobs": [
        {"job_id": 41, "job_state": ["RUNNING"], "state_reason": "None", "nodes": "gpu-1", "name": "train",
         "partition": "gpu", "start_time": {"set": True, "infinite": False, "number": 1700000000},
         "time_limit": {"set": True, "infinite": False, "number": 240},
         "exit_code": {"status": ["SUCCESS"], "return_code": {"set": True, "infinite": False, "number": 0}}},
        {"job_id": 42, "job_state": ["PENDING"], "state_reason": "QOSMaxJobsPerUserLimit", "nodes": "",
         "time_limit": {"set": False, "infinite": True, "number": 0}},
        {"job_id": 43, "job_state": ["CANCELLED"], "exit_code": {
            "status": ["SIGNALED"], "return_code": {"set": True, "number": 0},
            "signal": {"id": {"set": True, "number": 15}}}},
    ]})
    jobs = parse_squeue_json(text)
    assert (jobs["41"].state, jobs["41"].time_limit_seconds, jobs["41"].exit_code) == ("RUNNING", 14400, 0)
    assert (jobs["42"].reason, jobs["42"].time_limit_seconds, jobs["42"].node) == ("QOSMaxJobsPerUserLimit", None, None)
    assert jobs["43"].exit_code == 143


def test_not_squeue_json() -> None:
    with pytest.raises(ValueError):
        parse_squeue_json('{"errors": []}')
    with pytest.raises(ValueError):
        parse_squeue_json("squeue: error: Unrecognized option: json")


def test_sinfo_nodes_and_gres_counts() -> None:
    nodes = parse_sinfo_nodes((DATA / "sinfo-22.05.txt").read_text())
    assert [(n.name, n.partition, n.state, n.gpus_total, n.gpus_used) for n in nodes] == [
        ("vm", "debug", "mixed", 2, 2), ("vm", "gpu", "mixed", 2, 2)]
    line = "g1|mixed|gpu|gpu:a100:4(S:0-1),gpu:t4:2|gpu:a100:3(IDX:0-2),gpu:t4:0(IDX:N/A)|"
    assert (parse_sinfo_nodes(line)[0].gpus_total, parse_sinfo_nodes(line)[0].gpus_used) == (6, 3)


def test_sbatch_ids() -> None:
    assert parse_sbatch_id("123\n") == "123"
    assert parse_sbatch_id("124;cluster2") == "124"
    assert parse_sbatch_id((DATA / "sbatch-invalid-partition-22.05.txt").read_text()) is None


@pytest.mark.parametrize("text", ["90", "30:00", "04:00:00", "1-00", "2-12:30", "1-00:00:00"])
def test_time_forms_sbatch_takes(text: str) -> None:
    assert TIME_RE.match(text)


@pytest.mark.parametrize("text", ["four hours", "4h", "1:2:3:4", "-1", ""])
def test_time_forms_refused(text: str) -> None:
    assert not TIME_RE.match(text)


def test_state_words() -> None:
    assert scheduler_words("PENDING", None, stop_requested=False, exit_code=None) == ("pending", None)
    assert scheduler_words("RUNNING", None, stop_requested=False, exit_code=None) == ("running", None)
    assert scheduler_words("TIMEOUT", 143, stop_requested=False, exit_code=None) == ("failed", "killed (time limit)")
    assert scheduler_words("CANCELLED", 143, stop_requested=True, exit_code=None) == ("stopped", None)
    assert scheduler_words("FAILED", 2, stop_requested=False, exit_code=None) == ("failed", "exit code 2")
    assert scheduler_words("COMPLETED", 0, stop_requested=False, exit_code=0) is None  # its own file says
    lost = JobFacts(id="20261201-104014-0538", scheduler_job_id="9", scheduler_state="UNKNOWN")
    assert job_state(lost) == ("failed", "lost: SLURM no longer knows the job")
    done = JobFacts(id="20261201-104014-0538", scheduler_job_id="9", scheduler_state="FAILED", exit_code=1)
    assert job_state(done) == ("failed", "exit code 1")
