"""The SLURM tier: a real one-node cluster on this machine (.ci/slurm-up starts it: slurmctld,
slurmd and munge from Debian's slurm-wlm, two `gpu` gres on stand-in devices).

Without a cluster the SLURM tests skip, saying how to start one; under .ci/run
(GPU_TUI_REQUIRE_SLURM=1) a missing cluster fails them instead: in CI they must run.

There is one cluster (two GPUs) per machine, and each test cancels every `gpu-tui-` job before
and after itself, so SLURM tests run one at a time: on one pytest-xdist worker (tests/conftest.py
puts them in the `slurm` xdist_group) and, across test runs on the machine (parallel workers of
a run without --dist loadgroup, other checkouts), under `cluster_lock()`.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["require_cluster", "cancel_test_jobs", "cluster_lock", "queue_states"]


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
    ids = [
        line.split()[0]
        for line in res.stdout.splitlines()
        if len(line.split()) == 2 and line.split()[1].startswith(prefix)
    ]
    if ids:
        subprocess.run(["scancel", *ids], capture_output=True, timeout=30)


def _lock_path() -> Path:
    # root: beside tests/sshd.py's locks (a root-only dir); anyone else: their own file in /tmp
    # (another user's file there may not be openable), they cannot cancel root's jobs anyway
    if os.geteuid() == 0:
        lock_dir = Path("/run/gpu-tui-tests")
        lock_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        return lock_dir / "slurm.lock"
    return Path(tempfile.gettempdir()) / f"gpu-tui-tests-slurm-{os.geteuid()}.lock"


@contextlib.contextmanager
def cluster_lock() -> Iterator[None]:
    """Hold the machine's SLURM cluster for this process (an flock: a killed holder frees it)."""
    fd = os.open(_lock_path(), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
