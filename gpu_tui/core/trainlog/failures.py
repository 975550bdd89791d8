"""Failures one training-log line proves, named in the words of docs/CONTRACTS.md (`failure`).

Every reason starts with the words people and scripts match on (issue 13): `CUDA out of memory`,
`NaN loss`, `NaN loss (inf)`, `NCCL timeout`, `NCCL error: ...`, `CUDA device-side assert`,
`CUDA error: ...`, `ModuleNotFoundError: <module>`, `ImportError: ...`, `MemoryError: ...` (the
host's RAM), `killed` (`killed (time limit)`, `killed (SIGTERM)` ...), `No space left on device`,
`segfault`, `aborted`, `Bus error` (`Bus error (shared memory)`), `network: <host>`, `interrupted`
(the user's Ctrl+C). Tracebacks span lines: they are core/trainlog/summary's (`Traceback: <Exception>: <message>`).

`_FAILURE_FORMS` is a table of (keywords, recogniser); the recogniser runs only on lines that
hold one of its keywords (plain substring tests), so lines that say nothing stay cheap. The
first row whose recogniser names a reason wins. Patterns are anchored on an exception name, a
shell's or a scheduler's words, so prose that mentions running out of memory does not count.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping

__all__ = [
    "has_failure_word",
    "OOM",
    "KILLED",
    "KILLED_TIME_LIMIT",
    "NAN_LOSS",
    "INF_LOSS",
    "SEGFAULT",
    "ABORTED",
    "NCCL_TIMEOUT",
    "NCCL_ERROR",
    "DEVICE_ASSERT",
    "NO_SPACE",
    "MEMORY_ERROR",
    "OUT_OF_HOST_MEMORY",
    "BUS_ERROR",
    "BUS_ERROR_SHM",
    "NETWORK",
    "INTERRUPTED",
    "TRACEBACK",
    "line_failure",
    "line_failure_unfiltered",
    "oom_killed",
    "with_oom_evidence",
    "nonfinite_loss",
]

OOM = "CUDA out of memory"
KILLED = "killed"
KILLED_TIME_LIMIT = "killed (time limit)"
NAN_LOSS = "NaN loss"
INF_LOSS = "NaN loss (inf)"  # one kind with NaN: scripts match `NaN loss`
SEGFAULT = "segfault"
ABORTED = "aborted"
NCCL_TIMEOUT = "NCCL timeout"
NCCL_ERROR = "NCCL error"
DEVICE_ASSERT = "CUDA device-side assert"
NO_SPACE = "No space left on device"
MEMORY_ERROR = "MemoryError"  # the host's RAM, not the GPU's (that one is OOM)
OUT_OF_HOST_MEMORY = "killed (out of host memory)"
BUS_ERROR = "Bus error"
BUS_ERROR_SHM = "Bus error (shared memory)"  # a DataLoader worker's SIGBUS: /dev/shm is full
NETWORK = "network"  # `network: huggingface.co`: a download that cannot reach its host
INTERRUPTED = "interrupted"  # the user's own Ctrl+C (KeyboardInterrupt): not a crash
TRACEBACK = "Traceback"  # `Traceback: <Exception>: <message>`, core/trainlog/summary's

_MAX_DETAIL = 80

# CUDA out of memory, every phrasing: PyTorch < 1.13 `RuntimeError: CUDA out of memory. Tried
# ...`, 1.13-2.4 `torch.cuda.OutOfMemoryError: CUDA out of memory. ...`, 2.5+
# `torch.OutOfMemoryError: ...`, the allocator-less `RuntimeError: CUDA error: out of memory`,
# PyTorch <= 0.4's `RuntimeError: cuda runtime error (2) : out of memory` (and THCudaCheck's line
# before it), cuBLAS failing to allocate its workspace, TensorFlow's ResourceExhaustedError on a GPU,
# JAX's `XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate ...`, Paddle's
# `Out of memory error on GPU 0. Cannot allocate 98.000244MB memory on GPU 0, ...`.
_OOM = re.compile(
    r"\s*(?:[\w.]*(?:Error|Exception):\s*)?CUDA (?:out of memory\.|error: out of memory)"
    r"|\s*(?:[\w.]+\.)?OutOfMemoryError\b"
    r"|\s*[\w.]*(?:Error|Exception):.*CUBLAS_STATUS_ALLOC_FAILED"
    r"|\s*[\w.]*ResourceExhaustedError\b.*OOM when allocating.*GPU"
    r"|\s*[\w.]*(?:Error|Exception):\s*cuda runtime error \(2\) : out of memory"  # PyTorch <= 0.4
    r"|.*THCudaCheck FAIL file=\S+ line=\d+ error=2 : out of memory"
    r"|\s*[\w.]*(?:Error|Exception):\s*RESOURCE_EXHAUSTED: Out of memory"  # JAX / XLA
    r"|\s*Out of memory error on GPU \d+"  # Paddle, under its `ResourceExhaustedError:` line
)
# The shell's word for SIGKILL / SIGSEGV / SIGABRT in the locales rented machines use.
_KILLED_WORDS = "Killed|已杀死|已殺死|Getötet|Ucciso|Matado|Убито|強制終了"
_SEGV_WORDS = "Segmentation fault|段错误|記憶體區段錯誤|Speicherzugriffsfehler|Erreur de segmentation"
_ABRT_WORDS = "Aborted|已放弃|已中止|Abgebrochen|Abandon"
_LINE = r"(?:line|行|Zeile|ligne|línea|строка)"
# `Killed` alone, or glued onto the bar it cut short (tqdm's `...it/s]Killed`, mmcv's `ETA:
# 157s已杀死`), or bash's job line `/path/run.sh: line 5:  4242 Killed    python train.py`
# (`行 5` in Chinese). A launcher's report of a signal is _LAUNCHER_SIGNAL's.
_KILLED = re.compile(
    r"\s*(?:" + _KILLED_WORDS + r")\s*$|.*(?:\]|\bETA:\s*\d+s)\s*(?:" + _KILLED_WORDS + r")\s*$"
    r"|.*is killed by signal: Killed"
    r"|\S.*: " + _LINE + r" \d+:\s+\d+ (?:" + _KILLED_WORDS + r")"
)
_SEGFAULT = re.compile(
    r"\s*(?:" + _SEGV_WORDS + r")(?: ?\(core dumped\)| ?\(核心已转储\)| \(Speicherabzug geschrieben\))?\s*$"
    r"|\S.*: " + _LINE + r" \d+:\s+\d+ (?:" + _SEGV_WORDS + r")"
    r"|\s*Fatal Python error: Segmentation fault|.*\bSignal 11 \(SIGSEGV\) received"
    r"|.*\]\s*Segmentation fault(?: \(core dumped\))?\s*$|.*is killed by signal: Segmentation fault"
)
_ABORTED = re.compile(
    r"\s*(?:" + _ABRT_WORDS + r")(?: ?\(core dumped\)| ?\(核心已转储\))?\s*$"
    r"|\S.*: " + _LINE + r" \d+:\s+\d+ (?:" + _ABRT_WORDS + r")"
    r"|\s*Fatal Python error: Aborted|.*\bSignal 6 \(SIGABRT\) received"
)
# A launcher naming the signal that ended a child: torchrun `failed (exitcode: -9)` (old) /
# `exitcode  : -9 (pid: 8158)` and `traceback : Signal 9 (SIGKILL) received by PID 8158` (new),
# DeepSpeed's `... exits with return code = -9`, subprocess / accelerate `... died with
# <Signals.SIGKILL: 9>.`
_LAUNCHER_SIGNAL = re.compile(
    r".*\(exitcode: -(\d+)\)|\s*exitcode\s*: -(\d+) \(|.*\bexits with return code = -(\d+)"
    r"|.*\bdied with <Signals\.SIG\w+: (\d+)>|.*\bSignal (\d+) \(SIG\w+\) received by PID"
)
_SIGNALS = {9: "killed (SIGKILL)", 15: "killed (SIGTERM)", 2: INTERRUPTED, 11: SEGFAULT, 6: ABORTED, 7: BUS_ERROR}
# SIGBUS: PyTorch's `ERROR: Unexpected bus error encountered in worker. This might be caused by
# insufficient shared memory (shm).` (glued onto a bar, often), `RuntimeError: DataLoader worker
# (pid 325) is killed by signal: Bus error.`; a shell's `Bus error (core dumped)` (zh `总线错误`).
_BUS_SHM = re.compile(
    r".*(?:Unexpected bus error encountered in worker|DataLoader worker \(pid \d+\) is killed by signal: Bus error)"
)
_BUS = re.compile(
    r"\s*(?:Bus error|总线错误)(?: ?\(core dumped\)| ?\(核心已转储\))?\s*$|\S.*: "
    + _LINE
    + r" \d+:\s+\d+ (?:Bus error|总线错误)"
    r"|.*\]\s*Bus error(?: \(core dumped\))?\s*$|\s*Fatal Python error: Bus error"
)
# A download that cannot reach its host, said by the exception that ends the run: requests'
# `ConnectionError: (MaxRetryError("HTTPSConnectionPool(host='huggingface.co', port=443): Max
# retries exceeded ...`, urllib3's `MaxRetryError: None: Max retries exceeded with url:
# https://www.modelscope.cn/...`, transformers' `OSError: We couldn't connect to
# 'https://huggingface.co' to load this file`, huggingface_hub's `LocalEntryNotFoundError`. A
# warning that the hub is unreachable (the run goes on from the cache) does not start with an
# exception's name, so it does not count.
_NETWORK = re.compile(
    r"\s*(?:[\w.]+\.)?(?:LocalEntryNotFoundError\b|\w*(?:Error|Exception):.*?(?:HTTPS?ConnectionPool\(host='([^']+)'"
    r"|Max retries exceeded with url: https?://([^/\s:'\"]+)|couldn't connect to '?https?://([^/\s:'\"]+)"
    r"|Connection timed out|Network is unreachable|Temporary failure in name resolution))"
)
# The user's Ctrl+C where no traceback says it: Lightning's `UserWarning: Detected KeyboardInterrupt,
# attempting graceful shutdown...`, a terminal's echo `^C` opening the line (a log saved from a
# terminal: `^C[2024-05-26 15:06:40,046] [INFO] [launch.py:315:sigkill_handler] Killing ...`).
_INTERRUPTED = re.compile(r".*\bDetected KeyboardInterrupt, attempting graceful shutdown|\^C(?:$|[\s\[])")
# PyTorch's `RuntimeError: DataLoader worker (pid 19597) is killed by signal: Killed.` (host OOM killer).
_WORKER_KILLED = re.compile(r".*DataLoader worker \(pid \d+\) is killed by signal: Killed")
# Slurm `slurmstepd: error: *** JOB 123 ON node1 CANCELLED AT 2024-05-01T12:00:00 DUE TO TIME
# LIMIT ***`, PBS `=>> PBS: job killed: walltime 3610 exceeded limit 3600`, LSF `TERM_RUNLIMIT`.
_SCHEDULER = re.compile(
    r".*\*\*\* (?:JOB|STEP) \S+ (?:ON \S+ )?CANCELLED AT \S+(?: DUE TO ([A-Z ]+?))? \*\*\*"
    r"|.*PBS: job killed: (walltime)|\s*(TERM_RUNLIMIT)"
)
_SCHEDULER_WHY = {
    "TIME LIMIT": KILLED_TIME_LIMIT,
    "walltime": KILLED_TIME_LIMIT,
    "TERM_RUNLIMIT": KILLED_TIME_LIMIT,
    "PREEMPTION": "killed (preempted)",
    "NODE FAILURE": "killed (node failure)",
}
# The host OOM killer as Slurm or the kernel log reports it.
_HOST_OOM = re.compile(r".*(?:oom_kill event|OOM Killed|Out of memory: Killed process)")

# `[E ProcessGroupNCCL.cpp:828] [Rank 1] Watchdog caught collective operation timeout:
# WorkNCCL(SeqNum=5, OpType=ALLREDUCE, ...) ran for 1800000 milliseconds before timing out.`
_NCCL_TIMEOUT = re.compile(
    r".*(?:Watchdog caught collective operation timeout|ProcessGroupNCCL's watchdog got stuck)"
    r"(?:.*OpType=(\w+))?"
)
# `torch.distributed.DistBackendError: NCCL error in: .../ProcessGroupNCCL.cpp:1691, unhandled
# system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3`; `ncclSystemError: ...`
_NCCL_ERROR = re.compile(
    r"(?:.*?(?:Error|Exception|exception|what\(\)):\s*|\s*)NCCL [Ee]rror(?: \d+)?(?: in: [^,]*,)?\s*:?\s*([^(,]*)"
    r"|\s*(?:[\w.]*(?:Error|Exception):\s*)?(nccl(?:System|Internal|UnhandledCuda|InvalidUsage|Remote)Error)"
    r"|.*(NCCL communicator was aborted)"
)
_NCCL_NAME = re.compile(r"\bnccl(?:System|Internal|UnhandledCuda|InvalidUsage|InvalidArgument|Remote)Error\b")
_NCCL_NAMES = {
    "ncclSystemError": "unhandled system error",
    "ncclInternalError": "internal error",
    "ncclUnhandledCudaError": "unhandled cuda error",
    "ncclInvalidUsage": "invalid usage",
    "ncclRemoteError": "remote process exited or there was a network error",
    "NCCL communicator was aborted": "communicator aborted",
}
# The kernel's own line comes first: `...Loss.cu:250: nll_loss_forward...: block: [0,0,0], thread:
# [5,0,0] Assertion `t >= 0 && t < n_classes` failed.`; then `RuntimeError: CUDA error:
# device-side assert triggered`.
_DEVICE_ASSERT = re.compile(
    r"\S*\.cuh?:\d+: .*Assertion `(.*)` failed"
    r"|\s*(?:[\w.]*(?:Error|Exception):\s*)?CUDA error: device-side assert triggered"
)
# `RuntimeError: CUDA error: an illegal memory access was encountered`; C++'s `what():  CUDA error:
# ...`; the NCCL watchdog's `... Process group watchdog thread terminated with exception: CUDA
# error: misaligned address` (a CUDA error, not NCCL's).
_CUDA_ERROR = re.compile(r"(?:.*?(?:Error|Exception|exception)|\s*what\(\)):\s*CUDA error: (.+)")
_MODULE = re.compile(r"\s*(?:[\w.]+\.)?ModuleNotFoundError: No module named '([^']+)'")
_IMPORT = re.compile(r"\s*ImportError: (.+)")
# Python's / numpy's host-RAM error: a bare `MemoryError` ending a traceback, `numpy.core.
# _exceptions._ArrayMemoryError: Unable to allocate 7.91 GiB for an array ...`. CUDA's
# `torch.cuda.OutOfMemoryError` is OOM's (its row comes first).
_MEMORY = re.compile(r"\s*(?:[\w.]+\.)?_?(?:Array)?MemoryError(?::\s*(.*?))?\s*$")
# `OSError: [Errno 28] No space left on device: '/root/ckpt'`, `cp: error writing 'x': No space
# left on device`; torch.save on a full disk: `PytorchStreamWriter failed writing file`.
_NO_SPACE = re.compile(
    r"\s*No space left on device|.*(?:rror|rrno 28|failed|cannot|writ\w*)\b.*No space left on device"
    r"|\s*[\w.]*Error: .*PytorchStreamWriter failed writing file"
)


def _short(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _MAX_DETAIL else text[: _MAX_DETAIL - 1] + "…"


def _fixed(reason: str, pattern: re.Pattern[str]) -> Callable[[str], str | None]:
    def form(body: str) -> str | None:
        return reason if pattern.match(body) else None

    return form


def _scheduler(body: str) -> str | None:
    m = _SCHEDULER.match(body)
    if m is None:
        return None
    why = m[1] or m[2] or m[3]
    return _SCHEDULER_WHY.get(why.strip(), f"killed ({why.strip().lower()})") if why else "killed (cancelled)"


def _nccl_timeout(body: str) -> str | None:
    m = _NCCL_TIMEOUT.match(body)
    if m is None:
        return None
    return f"{NCCL_TIMEOUT} ({m[1]})" if m[1] else NCCL_TIMEOUT


def _nccl_error(body: str) -> str | None:
    m = _NCCL_ERROR.match(body)
    if m is None:
        return None
    detail = (m[1] or "").strip() or _NCCL_NAMES.get(m[2] or m[3] or "", "")
    name = _NCCL_NAME.search(body) if m[1] else None  # `... ncclRemoteError: A call failed ...`
    if name is not None and name[0] not in detail:
        detail = f"{detail} ({name[0]})"
    return f"{NCCL_ERROR}: {_short(detail)}" if detail else NCCL_ERROR


def _launcher_signal(body: str) -> str | None:
    m = _LAUNCHER_SIGNAL.match(body)
    if m is None:
        return None
    number = int(next(g for g in m.groups() if g is not None))
    return _SIGNALS.get(number, f"killed (signal {number})")


def _bus_error(body: str) -> str | None:
    if _BUS_SHM.match(body):
        return BUS_ERROR_SHM
    return BUS_ERROR if _BUS.match(body) else None


def _network(body: str) -> str | None:
    m = _NETWORK.match(body)
    if m is None:
        return None
    host = m[1] or m[2] or m[3]
    return f"{NETWORK}: {_short(host)}" if host else NETWORK


def _device_assert(body: str) -> str | None:
    m = _DEVICE_ASSERT.match(body)
    if m is None:
        return None
    return f"{DEVICE_ASSERT}: {_short(m[1])}" if m[1] else DEVICE_ASSERT


def _cuda_error(body: str) -> str | None:
    m = _CUDA_ERROR.match(body)
    return f"CUDA error: {_short(m[1])}" if m else None


def _module(body: str) -> str | None:
    m = _MODULE.match(body)
    if m is not None:
        return f"ModuleNotFoundError: {m[1]}"
    m = _IMPORT.match(body)
    return f"ImportError: {_short(m[1])}" if m else None


def _memory(body: str) -> str | None:
    m = _MEMORY.match(body)
    if m is None:
        return None
    return f"{MEMORY_ERROR}: {_short(m[1])}" if m[1] else MEMORY_ERROR


# (keywords, recogniser): tried in order on lines holding one of the keywords.
_FAILURE_FORMS: tuple[tuple[tuple[str, ...], Callable[[str], str | None]], ...] = (
    (("emory", "ALLOC_FAILED", "OOM when", "RESOURCE_EXHAUSTED"), _fixed(OOM, _OOM)),
    (("device-side assert", "Assertion `"), _device_assert),
    (("NCCL", "nccl"), _nccl_error),
    (("Watchdog caught", "watchdog got stuck"), _nccl_timeout),
    (("CUDA error: ",), _cuda_error),
    (("bus error", "Bus error", "总线错误"), _bus_error),
    (("No space left", "PytorchStreamWriter"), _fixed(NO_SPACE, _NO_SPACE)),
    (("ModuleNotFoundError", "ImportError"), _module),
    (
        (
            "ConnectionPool(host=",
            "Max retries exceeded",
            "couldn't connect to",
            "LocalEntryNotFound",
            "timed out",
            "Network is unreachable",
            "name resolution",
        ),
        _network,
    ),
    (("Detected KeyboardInterrupt", "^C"), _fixed(INTERRUPTED, _INTERRUPTED)),
    (("MemoryError",), _memory),
    (("CANCELLED AT", "PBS: job killed", "TERM_RUNLIMIT"), _scheduler),
    (("oom_kill", "OOM Killed", "Killed process"), _fixed(OUT_OF_HOST_MEMORY, _HOST_OOM)),
    (("DataLoader worker",), _fixed("killed (DataLoader worker)", _WORKER_KILLED)),
    (("exitcode", "exits with return code", "died with <Signals", ") received by PID"), _launcher_signal),
    (
        ("Killed", "已杀死", "已殺死", "Getötet", "Ucciso", "Matado", "Убито", "強制終了"),
        _fixed(KILLED, _KILLED),
    ),
    (
        ("Segmentation fault", "段错误", "區段錯誤", "Speicherzugriffsfehler", "segmentation", "SIGSEGV"),
        _fixed(SEGFAULT, _SEGFAULT),
    ),
    (("Aborted", "已放弃", "已中止", "Abgebrochen", "Abandon", "SIGABRT"), _fixed(ABORTED, _ABORTED)),
)

# One flat row per keyword: a third faster on the lines that say nothing than nested loops.
_FAILURE_WORDS = tuple((word, form) for words, form in _FAILURE_FORMS for word in words)
# The prefilter: every keyword of the table in one pattern, so a line that holds none (nearly
# every line) costs one scan instead of a substring test per keyword. Built from the table, so a
# new row's keywords are in it; tests/unit/test_logprefilter.py holds it to the table on the corpus.
_ANY_WORD = re.compile("|".join(re.escape(w) for w in sorted({w for w, _ in _FAILURE_WORDS}, key=len, reverse=True)))


def line_failure_unfiltered(body: str) -> str | None:
    """`line_failure` without the prefilter: every row's keywords tested one by one."""
    for word, form in _FAILURE_WORDS:
        if word in body:
            reason = form(body)
            if reason is not None:
                return reason
    return None


def line_failure(body: str) -> str | None:
    """The failure this line (without its `[rankN]:` prefix) proves, or None."""
    if _ANY_WORD.search(body) is None:
        return None
    return line_failure_unfiltered(body)


def has_failure_word(body: str) -> bool:
    """The line holds a keyword of a failure's row (only those lines can prove one). No keyword
    holds a digit, so this is the same for every line of one shape (core/trainlog/line)."""
    return _ANY_WORD.search(body) is not None


def nonfinite_loss(metrics: Mapping[str, float], is_loss_key: Callable[[str], bool]) -> str | None:
    """`NaN loss` / `Inf loss` when a loss among the metrics is not finite."""
    for key, value in metrics.items():
        if not math.isfinite(value) and is_loss_key(key):
            return NAN_LOSS if math.isnan(value) else INF_LOSS
    return None


def oom_killed(evidence: str | None) -> str | None:
    """`killed (out of host memory: OOM killer, limit 31.5 GiB)` from the runner's `oom_kill` file
    (`BYTES cgroup|host`: the memory cgroup or the kernel log counted an OOM kill while the job
    ran); None for no evidence."""
    if evidence is None or not evidence.strip():
        return None
    size = evidence.split()[0]
    if not size.isdigit() or int(size) <= 0:
        return "killed (out of host memory: OOM killer)"
    gib = f"{int(size) / 2**30:.1f}"
    gib = gib[:-2] if gib.endswith(".0") else gib  # no str.removesuffix on an instance's python 3.8
    return f"killed (out of host memory: OOM killer, limit {gib} GiB)"


def with_oom_evidence(failure: str | None, evidence: str | None) -> str | None:
    """`failure`, or the OOM killer's evidence where the log names nothing better: nothing, a bare
    `killed`, a killed DataLoader worker, the log's own `out of host memory`, or an exit code."""
    found = oom_killed(evidence)
    if found is None:
        return failure
    if failure is None or failure in (KILLED, "killed (SIGKILL)", "killed (DataLoader worker)", OUT_OF_HOST_MEMORY):
        return found
    return found if failure.startswith("exit code ") else failure
