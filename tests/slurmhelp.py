"""The SLURM tier: a real one-node cluster on this machine (.ci/slurm-up starts it: slurmctld,
slurmd and munge from Debian's slurm-wlm, two `gpu` gres on stand-in devices).

Without a cluster the SLURM tests skip, saying how to start one; under .ci/run
(GPU_TUI_REQUIRE_SLURM=1) a missing cluster fails them instead: in CI they must run.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

__all__ = ["require_cluster", "cancel_test_jobs", "queue_states"]


def _answering() -> str | None:
    """None when the cluster answers, else why not."""
    if shutil.which("sinfo") is None:
        return "slurm-wlm is not installed"
    res = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=30)
    if res.returncode != 0:
        return f"sinfo failed: {res.stderr.strip()[:200]}"
    # a busy node reads allocated, mixed or completing: only these words mean it cannot run jobs
    down = ("down", "drain", "fail", "unknown", "not_responding", "future", "powered_down", "inval")
    if not any(not s.strip().rstrip("*~#$@").startswith(down) for s in res.stdout.split()):
        return f"no node is up: {res.stdout.strip()[:200]}"
    return None


def require_cluster() -> None:
    why = _answering()
    if why is None:
        return
    message = f"no SLURM cluster ({why}); start one with `sudo bash .ci/slurm-up`"
    if os.environ.get("GPU_TUI_REQUIRE_SLURM") == "1":
        pytest.fail(message)
    pytest.skip(message)


def queue_states() -> dict[str, str]:
    """{SLURM job id: state} for every job squeue still knows."""
    res = subprocess.run(["squeue", "-h", "-t", "all", "-o", "%i %T"], capture_output=True, text=True, timeout=30)
    return dict(line.split(None, 1) for line in res.stdout.splitlines() if line.strip())


def cancel_test_jobs(prefix: str) -> None:
    """scancel every job whose name starts with `prefix` (the tests' jobs), so one test's
    leftovers never hold the cluster's two GPUs for the next."""
    res = subprocess.run(["squeue", "-h", "-o", "%i %j"], capture_output=True, text=True, timeout=30)
    ids = [line.split()[0] for line in res.stdout.splitlines() if len(line.split()) == 2
           and line.split()[1].startswith(prefix)]
    if ids:
        subprocess.run(["scancel", *ids], capture_output=True, timeout=30)
