"""What to do about a failed job: one line per failure kind (failures.py, docs/CONTRACTS.md
`failure`), for `jobs` (`hint`), the log screen and the job_end notification, in the user's
language. Not shipped to instances: the laptop translates the table into targets.json.

A failure is matched on its leading words, the most specific kind first (`killed (time limit)`
before `killed`). The lines are short enough for a phone's lock screen and name the next step:
a setting to change, an environment variable that makes the error say more, a command to run.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpu_tui.core.i18n import N_, _
from gpu_tui.core.units import format_bytes

__all__ = [
    "HINTS",
    "DISK_TEXT",
    "FRAME_TEXT",
    "DiskFull",
    "disk_full",
    "disk_full_text",
    "frame_text",
    "hint_for",
    "hint_table",
]

HINTS: tuple[tuple[str, str], ...] = (
    (
        "CUDA out of memory",
        N_(
            "GPU memory ran out: a smaller batch with gradient accumulation, gradient checkpointing "
            "or bf16/fp16; `gpu-tui fit MODEL` says what the model needs on this GPU"
        ),
    ),
    (
        "NaN loss",
        N_(
            "the loss diverged: a lower learning rate or more warmup, gradient clipping, bf16 "
            "instead of fp16; check the data for bad values"
        ),
    ),
    (
        "NCCL timeout",
        N_(
            "one rank stopped answering: the first error in the other ranks' output is the cause; "
            "NCCL_DEBUG=INFO shows more"
        ),
    ),
    (
        "NCCL ChildFailedError",
        N_("a worker process died: its own traceback, above in the log, says why"),
    ),
    (
        "NCCL error",
        N_(
            "NCCL_DEBUG=INFO shows the cause; on cards without NVLink or in containers, "
            "NCCL_P2P_DISABLE=1 or NCCL_IB_DISABLE=1 often helps"
        ),
    ),
    (
        "CUDA device-side assert",
        N_(
            "usually an index out of range (a label >= the number of classes, a token id past the "
            "vocabulary): CUDA_LAUNCH_BLOCKING=1 shows the line"
        ),
    ),
    (
        "CUDA error: an illegal memory access",
        N_(
            "a kernel read or wrote memory it does not own: often a custom CUDA op or a flash-attn / xformers "
            "build that does not match torch, or a bad index; CUDA_LAUNCH_BLOCKING=1 shows the op"
        ),
    ),
    (
        "CUDA error: misaligned address",
        N_(
            "a kernel read or wrote memory it does not own: often a custom CUDA op or a flash-attn / xformers "
            "build that does not match torch, or a bad index; CUDA_LAUNCH_BLOCKING=1 shows the op"
        ),
    ),
    (
        "CUDA error: an illegal instruction",
        N_(
            "code built for another GPU architecture: reinstall torch or the extension for this card "
            "(TORCH_CUDA_ARCH_LIST); `gpu-tui env NAME` shows the card and torch's CUDA"
        ),
    ),
    (
        "CUDA error",
        N_(
            "CUDA reports errors late: rerun with CUDA_LAUNCH_BLOCKING=1 to see the op; "
            "`gpu-tui env NAME` compares the driver with torch's CUDA"
        ),
    ),
    (
        "ModuleNotFoundError",
        N_("install it in the job's environment (pip install), or run the job in the conda env that has it"),
    ),
    (
        "ImportError",
        N_("a package built for another version: reinstall the one named, matching torch and its CUDA"),
    ),
    (
        "MemoryError",
        N_("the host's RAM ran out: fewer DataLoader workers, less data held in memory, or a bigger instance"),
    ),
    (
        "killed (time limit)",
        N_("the scheduler's time limit: ask for more time, or resume from the last checkpoint"),
    ),
    (
        "killed (cancelled)",
        N_("cancelled from outside (scancel, the console): resume from the last checkpoint"),
    ),
    (
        "killed (preempted)",
        N_("preempted by the scheduler: requeue and resume from the last checkpoint"),
    ),
    (
        "killed (DataLoader worker)",
        N_(
            "a DataLoader worker died, often of a small /dev/shm in a container: num_workers=0 shows "
            "its error; a larger shared memory fixes it"
        ),
    ),
    (
        "killed (out of host memory",  # the log's words, or the OOM killer's count (`..., limit N GiB)`)
        N_(
            "the host's RAM (or the container's memory limit) ran out: fewer DataLoader workers, "
            "less data held in memory, or an instance with more RAM"
        ),
    ),
    (
        "killed (SIGTERM)",
        N_(
            "asked to stop from outside (SIGTERM): a scheduler, the provider stopping the instance, or a "
            "launcher ending the other ranks after one failed: the first error above is the cause"
        ),
    ),
    (
        "killed",
        N_(
            "killed by a signal: most often the kernel's OOM killer (the host's RAM, or the container's "
            "memory limit) or a scheduler's limit"
        ),
    ),
    (
        "Bus error (shared memory)",
        N_(
            "a DataLoader worker ran out of shared memory (/dev/shm, small in containers): num_workers=0, "
            "or a larger /dev/shm (docker run --shm-size=16g)"
        ),
    ),
    (
        "Bus error",
        N_(
            "memory that was mapped is gone (SIGBUS): most often a full /dev/shm, so num_workers=0 or a "
            "larger /dev/shm; else a file changed while it was mapped"
        ),
    ),
    (
        "network",
        N_(
            "a download could not reach its host: HF_ENDPOINT=https://hf-mirror.com for Hugging Face, on "
            "AutoDL `source /etc/network_turbo`; `gpu-tui conda NAME mirror` for conda and pip"
        ),
    ),
    (
        "interrupted",
        N_("stopped with Ctrl+C, not a crash: resume from the last checkpoint when you want it back"),
    ),
    (
        "No space left on device",
        N_("a disk is full: `df -h` where the job writes; on AutoDL, save checkpoints to /root/autodl-tmp"),
    ),
    (
        "segfault",
        N_(
            "a crash in native code, often a package built for another torch or CUDA: reinstall it; "
            "num_workers=0 rules the DataLoader out"
        ),
    ),
    (
        "aborted",
        N_("a native library aborted: the lines just before it in the log name it"),
    ),
    (
        "Traceback",
        N_("the last frame of the traceback (file:line) in the log is where it failed"),
    ),
    (
        "exit code",
        N_("the program failed without a traceback: the log's last lines say why"),
    ),
    (
        "lost",
        N_("the instance restarted or the job's runner was killed: resume from the last checkpoint"),
    ),
)
"""(the leading words of a failure, what to do), the most specific kind of each family first."""


def hint_for(failure: str | None) -> str | None:
    """What to do about `failure`, in the language in force; None for none (or a kind without one)."""
    if not failure:
        return None
    for words, hint in HINTS:
        if failure.startswith(words):
            return _(hint)
    return None


def hint_table() -> list[list[str]]:
    """Every (leading words, hint) in the language in force: what an instance's sender matches."""
    return [[words, _(hint)] for words, hint in HINTS]


@dataclass(frozen=True, slots=True)
class DiskFull:
    """The filesystem a job that died of a full disk wrote to, as df said it when the job ended."""

    mount: str
    size_bytes: int
    free_bytes: int
    use_percent: int


def disk_full(evidence: str | None) -> DiskFull | None:
    """The runner's `disk_full` (`SIZE_KB FREE_KB USE% MOUNT`); None where absent or garbled."""
    parts = (evidence or "").split(" ", 3)
    if len(parts) < 4 or not (parts[0].isdigit() and parts[1].isdigit() and parts[2].rstrip("%").isdigit()):
        return None
    return DiskFull(parts[3].strip(), int(parts[0]) * 1024, int(parts[1]) * 1024, int(parts[2].rstrip("%")))


DISK_TEXT = N_("the full disk: {mount} ({size}, {pct}% used, {free} free)")


def disk_full_text(disk: DiskFull) -> str:
    """`the full disk: / (30.0 GiB, 100% used, 0 B free)`, in the language in force."""
    return _(DISK_TEXT).format(
        mount=disk.mount, size=format_bytes(disk.size_bytes), pct=disk.use_percent, free=format_bytes(disk.free_bytes)
    )


FRAME_TEXT = N_("the last frame: {frame}")


def frame_text(frame: str) -> str:
    """`the last frame: train.py:42 in forward` (core/trainlog/frames), in the language in force."""
    return _(FRAME_TEXT).format(frame=frame)
