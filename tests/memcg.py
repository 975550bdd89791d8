"""A real memory cgroup with a limit, for a test whose processes the kernel's OOM killer must
end (tests/integration/test_jobs_oom.py). v1 (a `memory` controller mount, as on this project's
CI machine) or v2 (a child of the root cgroup, where `memory` is in its subtree_control).
`memory_cgroup(limit)` yields a MemoryCgroup, or None where this machine gives none (not root, a
read-only /sys/fs/cgroup): the caller skips with that reason."""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path

MOUNT = Path("/sys/fs/cgroup")


class MemoryCgroup:
    def __init__(self, path: Path, parent: Path) -> None:
        self.path = path
        self.parent = parent

    def add(self, pids: list[int]) -> None:
        """Move these processes in: what they start from now on is in it too."""
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                (self.path / "cgroup.procs").write_text(f"{pid}\n")

    def pids(self) -> list[int]:
        return [int(x) for x in (self.path / "cgroup.procs").read_text().split()]


def _v1_dir() -> Path | None:
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            for base in (MOUNT / "memory" / path.lstrip("/"), MOUNT / "memory"):
                if (base / "memory.limit_in_bytes").exists():
                    return base
    return None


def _make(limit: int) -> MemoryCgroup | None:
    if os.geteuid() != 0:
        return None
    name = f"gputui-test-{secrets.token_hex(4)}"
    v1 = _v1_dir()
    try:
        if v1 is not None:
            path = v1 / name
            path.mkdir()
            (path / "memory.limit_in_bytes").write_text(f"{limit}\n")
            return MemoryCgroup(path, v1)
        if "memory" in (MOUNT / "cgroup.subtree_control").read_text().split():
            path = MOUNT / name
            path.mkdir()
            (path / "memory.max").write_text(f"{limit}\n")
            if (path / "memory.swap.max").exists():  # swap would let it page instead of being killed
                (path / "memory.swap.max").write_text("0\n")
            return MemoryCgroup(path, MOUNT)
    except OSError:
        return None
    return None


@contextlib.contextmanager
def memory_cgroup(limit: int) -> Iterator[MemoryCgroup | None]:
    group = _make(limit)
    try:
        yield group
    finally:
        if group is not None:
            _remove(group)


def _remove(group: MemoryCgroup) -> None:
    """Move whatever is still in it to its parent, then remove it (a cgroup with tasks cannot go)."""
    deadline = time.monotonic() + 10
    while True:
        for pid in group.pids():
            with contextlib.suppress(ProcessLookupError, OSError):
                (group.parent / "cgroup.procs").write_text(f"{pid}\n")
        try:
            group.path.rmdir()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
