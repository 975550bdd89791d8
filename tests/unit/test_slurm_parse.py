"""core/slurm on real SLURM 22.05 output (tests/data/slurm/README.md says how it was made)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu_tui.core.jobs import JobFacts, job_state
from gpu_tui.core.slurm import (
    TIME_RE,
    parse_sacct,
    parse_sbatch_id,
    parse_sinfo_nodes,
    parse_squeue,
    scheduler_words,
)

DATA = Path(__file__).parents[1] / "data" / "slurm"


def test_squeue_format_22_05_states_reasons_nodes_and_limits() -> None:
    text = (DATA / "squeue-format-22.05.txt").read_text()
    jobs = parse_squeue(text)
    assert (jobs["442"].state, jobs["442"].node, jobs["442"].name) == ("RUNNING", "vm", "cap-holder")
    assert jobs["442"].time_limit_seconds is None  # UNLIMITED
    assert (jobs["443"].state, jobs["443"].reason, jobs["443"].node) == ("PENDING", "Resources", None)
    assert (jobs["444"].state, jobs["444"].time_limit_seconds) == ("CANCELLED", 300)
    waiting = jobs["445"]
    assert (waiting.state, waiting.partition, waiting.time_limit_seconds) == ("PENDING", "gpu", 86400)
    assert waiting.reason == (
        "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions"
    )
    assert {j.state for j in jobs.values()} >= {"COMPLETED", "FAILED", "CANCELLED", "PENDING", "RUNNING"}
    assert len(jobs) == len(text.splitlines())


def test_squeue_skips_what_is_not_a_job_line() -> None:
    text = "squeue: error: Invalid user: nobody\n12|RUNNING|None|n1|1-00:00:00|train|gpu\n"
    jobs = parse_squeue(text)
    assert list(jobs) == ["12"] and jobs["12"].time_limit_seconds == 86400


def test_sacct_lines() -> None:
    # sacct -n -P -X -o JobID,State,ExitCode,NodeList,Reason, as its man page gives the fields
    jobs = parse_sacct("7|FAILED|3:0|vm|NonZeroExitCode\n8|CANCELLED by 0|0:15|vm|None\n9|TIMEOUT|0:0|n2|TimeLimit\n")
    assert (jobs["7"].state, jobs["7"].exit_code, jobs["7"].reason) == ("FAILED", 3, "NonZeroExitCode")
    assert (jobs["8"].state, jobs["8"].exit_code, jobs["8"].reason) == ("CANCELLED", 143, None)
    assert (jobs["9"].state, jobs["9"].node) == ("TIMEOUT", "n2")


def test_sinfo_nodes_and_gres_counts() -> None:
    nodes = parse_sinfo_nodes((DATA / "sinfo-22.05.txt").read_text())
    assert [(n.name, n.partition, n.state, n.gpus_total, n.gpus_used) for n in nodes] == [
        ("vm", "debug", "mixed", 2, 2),
        ("vm", "gpu", "mixed", 2, 2),
    ]
    line = "g1|mixed|gpu|gpu:a100:4(S:0-1),gpu:t4:2|gpu:a100:3(IDX:0-2),gpu:t4:0(IDX:N/A)|"
    assert (parse_sinfo_nodes(line)[0].gpus_total, parse_sinfo_nodes(line)[0].gpus_used) == (6, 3)


def test_sbatch_ids() -> None:
    assert parse_sbatch_id("123\n") == "123"
    assert parse_sbatch_id("124;cluster2") == "124"
    assert parse_sbatch_id((DATA / "sbatch-invalid-partition-22.05.txt").read_text()) is None


@pytest.mark.parametrize("text", ["90", "30:00", "04:00:00", "1-00", "2-12:30", "1-00:00:00", "UNLIMITED", "infinite"])
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


def test_options_sbatch_takes_are_not_refused() -> None:
    from gpu_tui.core.errors import InputError
    from gpu_tui.services.jobs.slurm import SlurmOptions, validate_options

    validate_options(SlurmOptions(partition="debug,gpu", time="UNLIMITED"))  # sbatch takes both
    for bad in (SlurmOptions(partition="gpu;rm"), SlurmOptions(partition="a,,b"), SlurmOptions(time="4h")):
        with pytest.raises(InputError):
            validate_options(bad)
