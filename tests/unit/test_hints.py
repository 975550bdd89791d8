"""core/hints: every failure kind docs/CONTRACTS.md names has one line of what to do, the most
specific kind's, in English and in Chinese."""

from __future__ import annotations

import re
from pathlib import Path

from gpu_tui.config.language import catalog
from gpu_tui.core import i18n
from gpu_tui.core.trainlog import failures
from gpu_tui.core.trainlog.hints import HINTS, DiskFull, disk_full, disk_full_text, hint_for, hint_table

CONTRACTS = Path(__file__).resolve().parents[2] / "docs" / "CONTRACTS.md"

# a failure of each kind as `jobs` prints it
FAILURES = {
    "CUDA out of memory": "CUDA out of memory",
    "NaN loss (inf)": "NaN loss",
    "NCCL timeout": "NCCL timeout",
    "NCCL error: unhandled system error": "NCCL error",
    "NCCL ChildFailedError (torchrun): rank 1 exitcode 1": "NCCL ChildFailedError",
    "CUDA device-side assert: t >= 0 && t < n_classes": "CUDA device-side assert",
    "CUDA error: an illegal memory access was encountered": "CUDA error: an illegal memory access",
    "CUDA error: misaligned address": "CUDA error: misaligned address",
    "CUDA error: an illegal instruction was encountered": "CUDA error: an illegal instruction",
    "CUDA error: unspecified launch failure": "CUDA error",
    "Bus error (shared memory)": "Bus error (shared memory)",
    "Bus error": "Bus error",
    "network: huggingface.co": "network",
    "network": "network",
    "interrupted": "interrupted",
    "killed (SIGTERM)": "killed (SIGTERM)",
    "killed (SIGKILL)": "killed",
    "killed (signal 4)": "killed",
    "ModuleNotFoundError: deepspeed": "ModuleNotFoundError",
    "ImportError: libcudnn.so.8: cannot open shared object file": "ImportError",
    "MemoryError: Unable to allocate 12.0 GiB": "MemoryError",
    "killed (time limit)": "killed (time limit)",
    "killed (cancelled)": "killed (cancelled)",
    "killed (preempted)": "killed (preempted)",
    "killed (DataLoader worker)": "killed (DataLoader worker)",
    "killed (out of host memory)": "killed (out of host memory",
    "killed (out of host memory: OOM killer, limit 24 GiB)": "killed (out of host memory",
    "killed": "killed",
    "No space left on device": "No space left on device",
    "segfault": "segfault",
    "aborted": "aborted",
    "Traceback: ValueError: bad shape": "Traceback",
    "exit code 3": "exit code",
    "lost: the instance restarted": "lost",
}


def test_each_failure_gets_its_own_kinds_line() -> None:
    table = dict(HINTS)
    for failure, kind in FAILURES.items():
        assert hint_for(failure) == table[kind], failure
    assert hint_for(None) is None and hint_for("") is None and hint_for("something new") is None
    # the constants the rules name their failures with all have one
    for name in failures.__all__:
        value = getattr(failures, name)
        if isinstance(value, str):
            assert hint_for(value), name


def test_every_kind_in_the_contract_has_a_hint() -> None:
    """The `failure` row of CONTRACTS.md lists the kinds in backticks: each one's leading words
    find a hint (a kind added there without one fails here)."""
    row = next(line for line in CONTRACTS.read_text().splitlines() if line.startswith("| `failure` |"))
    kinds = [k for k in re.findall(r"`([^`]+)`", row) if k not in ("failure",)]
    assert len(kinds) >= 15
    for kind in kinds:
        assert hint_for(kind.replace("<", "").replace(">", "")), kind


def test_in_chinese_every_hint_is_translated_and_names_the_same_things() -> None:
    with i18n.using(catalog("zh-CN"), "zh-CN"):
        table = hint_table()
        oom = hint_for("CUDA out of memory")
    english = hint_table()
    assert [w for w, _h in table] == [w for w, _h in english]
    for (words, zh), (_w, en) in zip(table, english, strict=True):
        assert zh != en and re.search(r"[\u4e00-\u9fff]", zh), words
        # commands, variables and paths stay as they are
        for literal in re.findall(r"`[^`]+`|[A-Z_]{6,}=\d|/[\w/.-]+", en):
            assert literal in zh, (words, literal)
    assert oom is not None and "gpu-tui fit MODEL" in oom


def test_the_full_disk_as_the_runner_keeps_it() -> None:
    disk = disk_full("31441920 0 100% /")
    assert disk == DiskFull("/", 31441920 * 1024, 0, 100)
    assert disk_full_text(disk) == "the full disk: / (30.0 GiB, 100% used, 0 B free)"
    # a mount point with a space in it, and what is not df's line
    assert disk_full("1024 0 100% /mnt/my disk") == DiskFull("/mnt/my disk", 1 << 20, 0, 100)
    for garbled in (None, "", "df: /x: No such file", "12 x 5% /"):
        assert disk_full(garbled) is None
    with i18n.using(catalog("zh-CN"), "zh-CN"):
        assert disk_full_text(disk) == "满的磁盘: /(30.0 GiB, 已用 100%, 剩 0 B)"
