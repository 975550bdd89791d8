"""nvidia-smi: the command lines gpu-tui runs and the parsers for what comes back.

Pure text in, models out: no I/O, no clocks of its own (FrameAssembler is handed one). The
formats and failure texts handled here are listed in docs/FIELD_NOTES.md and exercised by the
captures and corpora under tests/data/nvidia-smi/.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gpu_tui.core.bilingual import Said, say
from gpu_tui.core.i18n import N_
from gpu_tui.core.models import GpuError, GpuErrorKind, GpuFrame, GpuProcess, GpuSample

__all__ = [
    "QUERY_FIELDS",
    "LEGACY_QUERY_FIELDS",
    "COMPUTE_APPS_FIELDS",
    "gpu_error",
    "query_gpu_argv",
    "compute_apps_argv",
    "parse_value",
    "to_int",
    "to_float",
    "parse_row",
    "parse_rows",
    "detect_error",
    "unsupported_field",
    "parse_compute_apps",
    "parse_version",
    "FrameAssembler",
]

QUERY_FIELDS: tuple[str, ...] = (
    "index",
    "uuid",
    "name",
    "utilization.gpu",
    "memory.used",
    "memory.total",
    "temperature.gpu",
    "power.draw",
    "power.limit",
    "fan.speed",
    "mig.mode.current",
)
# Drivers older than R450 do not know mig.mode.current and reject the whole query
# (`Field "mig.mode.current" is not a valid field to query.`, exit 2). It is last in QUERY_FIELDS
# so that the fallback query is a prefix and one parser reads both.
LEGACY_QUERY_FIELDS: tuple[str, ...] = QUERY_FIELDS[:-1]

COMPUTE_APPS_FIELDS: tuple[str, ...] = ("pid", "process_name", "used_gpu_memory", "gpu_uuid")

_N_FIELDS = len(QUERY_FIELDS)
_N_LEGACY = len(LEGACY_QUERY_FIELDS)
_FORMAT = "--format=csv,noheader,nounits"
_SEP = ", "  # nvidia-smi never quotes; a value holding ", " is split too (see parse_row)
_NUMBER = re.compile(r"\s*([-+]?[0-9]+(?:\.[0-9]+)?)\s*(?:%|[A-Za-z]+(?:/[A-Za-z]+)?)?\s*")
_MAX_NUMBER_LEN = 24  # longer digit runs are not readings; int() of huge strings is slow


def query_gpu_argv(interval_ms: int | None = None, *, fields: tuple[str, ...] = QUERY_FIELDS) -> list[str]:
    """`nvidia-smi --query-gpu=... --format=csv,noheader,nounits [-lms MS]` as an argv list.

    Pass `fields=LEGACY_QUERY_FIELDS` for drivers that reject `mig.mode.current`.
    """
    if fields not in (QUERY_FIELDS, LEGACY_QUERY_FIELDS):
        raise ValueError("fields must be QUERY_FIELDS or LEGACY_QUERY_FIELDS")
    argv = ["nvidia-smi", "--query-gpu=" + ",".join(fields), _FORMAT]
    if interval_ms is not None:
        if isinstance(interval_ms, bool) or not isinstance(interval_ms, int) or interval_ms < 1:
            raise ValueError(f"interval_ms must be a positive int, not {interval_ms!r}")
        argv += ["-lms", str(interval_ms)]
    return argv


def compute_apps_argv() -> list[str]:
    """`nvidia-smi --query-compute-apps=pid,process_name,used_gpu_memory,gpu_uuid` (one shot)."""
    return ["nvidia-smi", "--query-compute-apps=" + ",".join(COMPUTE_APPS_FIELDS), _FORMAT]


def parse_value(token: str) -> str | None:
    """A stripped value, or None for "not available".

    `[N/A]`, `[Not Supported]`, `[Unknown Error]`, any other bracketed token, a bare `N/A` and
    an empty field all mean the GPU did not report the value.
    """
    value = token.strip()
    if not value or value == "N/A" or (value[0] == "[" and value[-1] == "]"):
        return None
    return value


def _number(token: str) -> str | None:
    value = parse_value(token)
    if value is None:
        return None
    m = _NUMBER.fullmatch(value)
    if m is None or len(m[1]) > _MAX_NUMBER_LEN:
        return None
    return m[1]


def to_int(token: str) -> int | None:
    """`"87"`, `"87 %"`, `"20480 MiB"` -> int; a decimal is rounded; None when missing or junk."""
    if token.isdigit() and token.isascii() and len(token) <= _MAX_NUMBER_LEN:
        return int(token)  # the nounits fast path: most tokens of a stream
    number = _number(token)
    if number is None:
        return None
    return int(number) if "." not in number else round(float(number))


def to_float(token: str) -> float | None:
    """`"281.50"`, `"281.50 W"`, `"1980 MHz"` -> float; None when missing or junk (never 0)."""
    if token.isascii() and token.replace(".", "", 1).isdigit() and len(token) <= _MAX_NUMBER_LEN:
        return float(token)  # the nounits fast path
    number = _number(token)
    return None if number is None else float(number)


def parse_row(line: str) -> GpuSample | None:
    """One `--query-gpu` row in QUERY_FIELDS (or LEGACY_QUERY_FIELDS) order, else None.

    Anything that is not a row gives None: blank lines, the CSV header, driver text, and a row
    with more fields than asked for (a value holding ", " would shift every later column, so the
    row is refused rather than misread). Values may carry units; they are dropped.
    """
    # Hot: every GPU of every instance, every tick. The plain numbers of a nounits stream are
    # converted inline (to_int / to_float only for the rest: units, [N/A], junk), and the
    # sample is built positionally.
    parts = line.rstrip("\r\n").split(_SEP)
    n = len(parts)
    if n == _N_FIELDS:
        index, uuid, name, util, used, total, temp, draw, limit, fan, mig = parts
    elif n == _N_LEGACY:
        index, uuid, name, util, used, total, temp, draw, limit, fan = parts
        mig = None
    else:
        return None
    if not (index.isdigit() and index.isascii()):
        index = index.strip()
        if not (index.isdigit() and index.isascii()):
            return None
    if len(index) > _MAX_NUMBER_LEN:
        return None
    # an ASCII line's digits are 0-9 only, the digits int() and float() read as to_int does
    plain = line.isascii()
    return GpuSample(
        int(index),
        parse_value(uuid),
        parse_value(name),
        int(util) if plain and util.isdigit() and len(util) <= _MAX_NUMBER_LEN else to_int(util),
        int(used) if plain and used.isdigit() and len(used) <= _MAX_NUMBER_LEN else to_int(used),
        int(total) if plain and total.isdigit() and len(total) <= _MAX_NUMBER_LEN else to_int(total),
        int(temp) if plain and temp.isdigit() and len(temp) <= _MAX_NUMBER_LEN else to_int(temp),
        float(draw)
        if plain and len(draw) <= _MAX_NUMBER_LEN and draw.replace(".", "", 1).isdigit()
        else to_float(draw),
        float(limit)
        if plain and len(limit) <= _MAX_NUMBER_LEN and limit.replace(".", "", 1).isdigit()
        else to_float(limit),
        int(fan) if plain and fan.isdigit() and len(fan) <= _MAX_NUMBER_LEN else to_int(fan),
        None if mig is None else parse_value(mig),
    )


def parse_rows(text: str) -> list[GpuSample]:
    """Every row in `text`, in order; other lines are skipped."""
    return [s for s in map(parse_row, text.splitlines()) if s is not None]


# (pattern searched case-insensitively in one line, kind, reason; None = built from the match).
# Order matters: the version mismatch and missing permissions are also "Failed to initialize NVML".
_ERRORS: tuple[tuple[re.Pattern[str], GpuErrorKind, str | None], ...] = tuple(
    (re.compile(p, re.IGNORECASE), kind, reason)
    for p, kind, reason in (
        (
            r"couldn't communicate with the nvidia driver|nvidia-smi has failed",
            GpuErrorKind.DRIVER_FAILED,
            N_("driver failed: nvidia-smi couldn't communicate with the NVIDIA driver"),
        ),
        (
            r"driver/library version mismatch",
            GpuErrorKind.VERSION_MISMATCH,
            N_("driver/library version mismatch: the driver was updated, reboot to load it"),
        ),
        (
            r"insufficient permissions|permission denied",
            GpuErrorKind.PERMISSION,
            N_("nvidia-smi not permitted: permission denied"),
        ),
        (
            r"couldn't find libnvidia-ml|libnvidia-ml\.so[^ ]*: cannot open",
            GpuErrorKind.DRIVER_FAILED,
            N_("driver failed: the NVML library (libnvidia-ml.so) is missing"),
        ),
        (r"failed to initialize nvml", GpuErrorKind.DRIVER_FAILED, None),
        (r"no devices were found", GpuErrorKind.NO_GPU, N_("no GPU: nvidia-smi found no devices")),
        (
            r"unable to determine the device handle for gpu ?"
            r"([0-9a-f]+:[0-9a-f]+:[0-9a-f]+\.[0-9a-f]+)(?::\s*(.*))?|gpu is lost",
            GpuErrorKind.GPU_LOST,
            None,
        ),
        (
            r"command not found|nvidia-smi: not found|unknown command:? '?nvidia-smi"
            r"|nvidia-smi'? is not recognized|nvidia-smi: no such file or directory",
            GpuErrorKind.NOT_FOUND,
            N_("no GPU: nvidia-smi not found"),
        ),
    )
)

# Exit statuses that name the failure even when nothing was printed: the shell's 126/127 and
# nvidia-smi's documented return codes.
_EXIT_KINDS: dict[int, tuple[GpuErrorKind, str]] = {
    127: (GpuErrorKind.NOT_FOUND, N_("no GPU: nvidia-smi not found")),
    126: (GpuErrorKind.PERMISSION, N_("nvidia-smi not permitted: permission denied")),
    4: (GpuErrorKind.PERMISSION, N_("nvidia-smi not permitted: permission denied")),
    9: (GpuErrorKind.DRIVER_FAILED, N_("driver failed: the NVIDIA driver is not loaded")),
    12: (GpuErrorKind.DRIVER_FAILED, N_("driver failed: the NVML library could not be loaded")),
    15: (GpuErrorKind.GPU_LOST, N_("GPU lost: a GPU has fallen off the bus")),
    18: (GpuErrorKind.VERSION_MISMATCH, N_("driver/library version mismatch: reboot to load it")),
}

_MAX_REASON = 120


def _short(text: str) -> str:
    return text if len(text) <= _MAX_REASON else text[: _MAX_REASON - 1] + "…"


def gpu_error(kind: GpuErrorKind, reason: Said, raw: str = "") -> GpuError:
    """A GpuError whose reason is shown translated and kept in English for JSON, each cut short."""
    return GpuError(kind, _short(reason.text), raw, _short(reason.english))


def _line_error(line: str) -> GpuError | None:
    for pattern, kind, reason in _ERRORS:
        m = pattern.search(line)
        if m is None:
            continue
        raw = line.strip()
        if reason is not None:
            return gpu_error(kind, say(reason), raw)
        if kind is GpuErrorKind.GPU_LOST:
            bus_id = m[1]
            detail = (m[2] or "").strip().rstrip(".")
            if bus_id is None:
                return gpu_error(kind, say(N_("GPU lost: a GPU is lost, reboot to recover it")), raw)
            if not detail or detail.lower().startswith("gpu is lost"):
                lost = say(N_("GPU lost: GPU {bus_id} is lost, reboot to recover it"), bus_id=bus_id)
                return gpu_error(kind, lost, raw)
            return gpu_error(
                kind, say(N_("GPU lost: GPU {bus_id} cannot be reached ({detail})"), bus_id=bus_id, detail=detail), raw
            )
        # NVML could not start for another reason ("Unknown Error" in a container, ...).
        detail = raw.split(":", 1)[1].strip().rstrip(".") if ":" in raw else ""
        return gpu_error(kind, say(N_("driver failed: NVML could not start ({detail})"), detail=detail or raw), raw)
    return None


def detect_error(text: str, exit_status: int | None = None) -> GpuError | None:
    """The failure nvidia-smi (or the shell running it) reported in `text`, or None.

    A recognised error line wins even when some rows were read (a lost GPU next to good ones).
    Otherwise a non-zero `exit_status` with no rows is an error too: a known status by its
    meaning, any other as UNKNOWN with the first non-empty line. Rows and no error line: None.
    """
    first = ""
    has_rows = False
    for line in text.splitlines():
        if not line.strip():
            continue
        if parse_row(line) is not None:
            has_rows = True
            continue
        error = _line_error(line)
        if error is not None:
            return error
        if not first:
            first = line.strip()
    if has_rows or not exit_status:
        return None
    if exit_status in _EXIT_KINDS:
        kind, reason = _EXIT_KINDS[exit_status]
        return gpu_error(kind, say(reason), first)
    if first:
        return gpu_error(GpuErrorKind.UNKNOWN, say(N_("nvidia-smi failed: {output}"), output=first), first)
    return gpu_error(GpuErrorKind.UNKNOWN, say(N_("nvidia-smi failed with exit status {status}"), status=exit_status))


_UNKNOWN_FIELD = re.compile(r'Field "([^"]*)" is not a valid field to query')


def unsupported_field(text: str) -> str | None:
    """The field name of `Field "x" is not a valid field to query.` (exit 2), else None.

    The caller retries with LEGACY_QUERY_FIELDS when this names `mig.mode.current`.
    """
    m = _UNKNOWN_FIELD.search(text)
    return m[1] if m else None


def parse_compute_apps(text: str) -> list[GpuProcess]:
    """Rows of `--query-compute-apps=pid,process_name,used_gpu_memory,gpu_uuid` (noheader, nounits).

    The name is a full path that may hold ", ", so the pid is taken from the first field, the
    uuid from the last, the memory from the one before it and the name is the rest re-joined.
    Lines that do not read as a process (header, blank, driver text) are skipped.
    """
    processes = []
    for line in text.splitlines():
        parts = line.rstrip("\r\n").split(_SEP)
        if len(parts) < 4:
            continue
        pid_token = parts[0].strip()
        if pid_token.isdigit() and pid_token.isascii() and len(pid_token) <= _MAX_NUMBER_LEN:
            pid: int | None = int(pid_token)
        elif parse_value(pid_token) is None and pid_token:
            pid = None  # e.g. [N/A]: still a process row
        else:
            continue
        memory = to_int(parts[-2])
        if memory is None and parse_value(parts[-2]) is not None:
            continue  # a value where the memory should be is not a number: not a row we know
        processes.append(
            GpuProcess(
                pid=pid,
                process_name=parse_value(_SEP.join(parts[1:-2])),
                used_memory_mib=memory,
                gpu_uuid=parse_value(parts[-1]),
            )
        )
    return processes


_DRIVER_VERSION = re.compile(r"\b(?:driver|kmd)\s+version\s*:\s*([0-9][0-9A-Za-z.\-]*)", re.I)
_CUDA_VERSION = re.compile(r"\bcuda\s+(?:umd\s+)?version\s*:\s*([0-9][0-9.]*)", re.I)


def parse_version(text: str) -> dict[str, str | None]:
    """`driver_version` and `cuda_version` from `nvidia-smi --version`, `-q` or the default table.

    Reads both spellings: `DRIVER version` / `CUDA Version` and, on 610+, `KMD version` /
    `CUDA UMD version` (the old keys then say "Deprecated, ..." and are ignored because a
    version starts with a digit). A value that is absent stays None.
    """
    driver = _DRIVER_VERSION.search(text)
    cuda = _CUDA_VERSION.search(text)
    return {
        "driver_version": driver[1].rstrip(".") if driver else None,
        "cuda_version": cuda[1].rstrip(".") if cuda else None,
    }


class FrameAssembler:
    """Turns the lines of a `--query-gpu ... -lms` stream into one GpuFrame per tick.

    With `noheader` a tick is just the rows again, so a tick ends when an index does not grow.
    Once a tick's size is known (`expected`, learned from each tick closed that way or set up
    front by the caller) a tick is emitted as soon as it has that many rows. Error lines come
    back as GpuError; other non-row lines are skipped.

    `feed` takes one line; `feed_chunk` takes the stream's text as it arrives (lines cut
    anywhere) and gives the same results as `feed` over its lines, with one call per chunk.
    """

    __slots__ = ("expected", "_clock", "_rows", "_last", "_sent", "_partial")

    def __init__(self, clock: Callable[[], float]) -> None:
        self.expected: int | None = None
        self._clock = clock
        self._rows: list[GpuSample] = []
        self._last = -1  # index of the latest row of the current tick
        self._sent = False  # the current tick was emitted early, on reaching `expected`
        self._partial = ""  # feed_chunk: the start of a line cut at the end of the last chunk

    def _frame(self, rows: list[GpuSample]) -> GpuFrame:
        # Rows of one tick have strictly growing indexes by construction: already sorted.
        return GpuFrame(taken_at=self._clock(), gpus=tuple(rows))

    def feed(self, line: str) -> GpuFrame | GpuError | None:
        """Take one line; return a finished frame, an error, or None."""
        sample = parse_row(line)
        if sample is None:
            return _line_error(line) if line.strip() else None
        index = sample.index
        closed = None
        if index <= self._last:  # a new tick
            if self._rows:
                closed = self._rows
                self.expected = len(closed)
            self._rows = []
            self._sent = False
        elif self._sent:
            # The tick already went out, so it has more GPUs than `expected`: drop this row and
            # learn the size again from the next tick rather than emit a partial frame.
            self._last = index
            self.expected = None
            return None
        self._last = index
        rows = self._rows
        rows.append(sample)
        if self.expected is not None and len(rows) >= self.expected:
            self._rows = []
            self._sent = True
            # When a tick closed just now too (size fell to 1), the newer frame wins.
            return self._frame(rows)
        return self._frame(closed) if closed else None

    def lines(self, chunk: str) -> list[str]:
        """The complete lines of `chunk` after what the previous chunks left (one `\\r` before
        each newline dropped); a cut last line is kept for the next call (or `rest()`)."""
        text = self._partial + chunk if self._partial else chunk
        if "\r" in text:
            text = text.replace("\r\n", "\n")
        lines = text.split("\n")
        self._partial = lines.pop()
        return lines

    def rest(self) -> str:
        """At stream end: the cut line `lines()` still holds ("" when none), and forget it."""
        rest, self._partial = self._partial, ""
        return rest

    def feed_chunk(self, chunk: str) -> list[GpuFrame | GpuError]:
        """Take the next piece of the stream's text; return the frames and errors its complete
        lines finished, in order: what `feed` returns for each of `lines(chunk)`, Nones left out."""
        feed = self.feed
        return [out for line in self.lines(chunk) if (out := feed(line)) is not None]

    def flush(self) -> GpuFrame | None:
        """At stream end: the rows not yet emitted as a frame, or None. Resets the tick state."""
        rows = self._rows
        self._rows = []
        self._last = -1
        self._sent = False
        return self._frame(rows) if rows else None
