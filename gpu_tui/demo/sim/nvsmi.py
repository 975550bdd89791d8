"""nvidia-smi, simulated: its command line, its CSV (units, header, -i, -l / -lms loops), -L,
--version, the default table, compute apps and its failure modes, over a `Source` of readings.

Two sources: the demo's moving model (gpu_tui/demo/nvsource.py) and `CaptureSource`, REAL
output captured from real machines (tests/data/nvidia-smi/captures, see its README.md) with
a state dir the sshd tier's tests write (tests/fakes/nvidia-smi runs `main`):

    capture   capture file name (in the captures dir) or an absolute path
    gpus      integer N: replicate the capture's GPU N times (index 0..N-1, distinct uuids)
    mode      ok | driver_failed | version_mismatch | gpu_lost | no_devices | stray
    stray_line  the text "stray" mode prints between loop ticks
    utilization  utilization.gpu per GPU, comma-separated (the last repeats): numbers are
                exact (no wobble), anything else (`[N/A]`) is printed as is
    apps      the compute apps instead of the capture's: `GPU_INDEX, PID, NAME, MEMORY` per line

Every file is optional and re-read on every loop tick. A capture's CSV loops print the header
once, then rows; `timestamp` is the current time and utilization wobbles a few points per tick
(tick 0 of GPU 0 is exactly the captured value). Cheap to start: stdlib only, no re/csv/json
(a benchmark execs it once per sample).
"""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False  # typing costs a fake ~30 ms a start (re, functools): annotations only
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

MIN_INTERVAL = 0.05
INVALID = "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n"
FAILURES = {
    "driver_failed": (
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
        "Make sure that the latest NVIDIA driver is installed and running.",
        9,
    ),
    "version_mismatch": ("Failed to initialize NVML: Driver/library version mismatch", 18),
    "gpu_lost": (
        "Unable to determine the device handle for GPU 0000:02:00.0: GPU is lost.  "
        "Reboot the system to recover this GPU",
        15,
    ),
    "no_devices": ("No devices were found", 6),
}
DEFAULT_STRAY = "GPU 00000000:02:00.0: Detected Critical Xid Error 79 (GPU has fallen off the bus)"
# the plain options gpu-tui and the tests use, by the text they print
SIMPLE = {"-L": "list", "--list-gpus": "list", "--version": "version"}


class Usage(Exception):
    """nvidia-smi's complaint about its arguments (stdout, like nvidia-smi), and its status."""

    def __init__(self, message: str, code: int = 2) -> None:
        Exception.__init__(self, message if message.endswith("\n") else message + "\n")
        self.code = code


def stamp(t: float) -> str:
    """The `timestamp` field: `2026/07/14 09:00:27.792` (local time)."""
    return time.strftime("%Y/%m/%d %H:%M:%S", time.localtime(t)) + f".{int(t * 1000) % 1000:03d}"


def unit_of(header: str) -> str:
    return header[header.rindex(" [") + 2 : -1] if header.endswith("]") and " [" in header else ""


def with_unit(value: str, unit: str) -> str:
    """`45` -> `45 %`: numbers get the unit, `[N/A]` and friends stay as they are."""
    return f"{value} {unit}" if unit and value[:1].isdigit() else value


class Source:
    """What a simulated nvidia-smi reports. `kind` is "gpu" or "apps"; values are nounits
    strings; an apps row's "_gpu" is its GPU's index."""

    def failure(self) -> tuple[str, int] | None:
        return None

    def headers(self, kind: str) -> dict[str, str]:
        """Canonical field -> its CSV header (`memory.used [MiB]`), in order."""
        raise NotImplementedError

    def aliases(self, kind: str) -> dict[str, str]:
        return {}

    def rows(self, kind: str, t: float, tick: int, fields: list[str]) -> list[dict[str, str]]:
        raise NotImplementedError

    def text(self, what: str, t: float) -> str | None:
        """`list`, `version` or `table`: the text, None if absent."""
        return None

    def stray(self) -> str | None:
        return None


class Answer:
    """One call: `out` now, then (when `interval` is set) `tick(i)` every `interval` seconds."""

    __slots__ = ("out", "status", "interval", "tick")

    def __init__(
        self, out: str, status: int = 0, interval: float | None = None, tick: Callable[[int], str] | None = None
    ) -> None:
        self.out, self.status, self.interval, self.tick = out, status, interval, tick


def parse(argv: list[str]) -> dict[str, Any]:
    opts: dict[str, Any] = {"kind": None, "query": None, "format": None, "interval": None, "ids": None, "simple": None}
    i = 0
    while i < len(argv):
        a = argv[i]
        key, eq, val = a.partition("=")
        takes = key in ("--query-gpu", "--query-compute-apps", "--format", "-f", "-lms", "--loop-ms", "-i", "--id")
        if takes and not eq:
            if i + 1 >= len(argv):
                raise Usage(f"Option {key} requires a value.\n\nPlease run 'nvidia-smi -h' for help.")
            i += 1
            val = argv[i]
        if key in ("--query-gpu", "--query-compute-apps"):
            opts["kind"] = "gpu" if key == "--query-gpu" else "apps"
            opts["query"] = [f.strip() for f in val.split(",") if f.strip()]
        elif key in ("--format", "-f"):
            opts["format"] = [p.strip() for p in val.split(",")]
        elif key in ("-lms", "--loop-ms", "-l", "--loop"):
            if key in ("-l", "--loop") and not eq:  # -l [SEC]: 5 s unless a number follows
                nxt = argv[i + 1] if i + 1 < len(argv) else ""
                val, i = (nxt, i + 1) if nxt.isdigit() else ("5", i)
            try:
                seconds = float(val) / (1000.0 if key in ("-lms", "--loop-ms") else 1.0)
            except ValueError:
                raise Usage(INVALID) from None
            opts["interval"] = max(MIN_INTERVAL, seconds)
        elif key in ("-i", "--id"):
            opts["ids"] = {x.strip() for x in val.split(",") if x.strip()}
        elif a in SIMPLE:
            opts["simple"] = SIMPLE[a]
        else:
            raise Usage(INVALID)
        i += 1
    if opts["query"] is not None and opts["format"] is None:
        raise Usage('"--format" option is required for query.')
    if opts["format"] is not None and (opts["query"] is None or "csv" not in opts["format"]):
        raise Usage("Unsupported format. Only csv is supported." if opts["query"] else INVALID)
    return opts


def answer(argv: list[str], src: Source, clock: Callable[[], float] = time.time) -> Answer:
    """What nvidia-smi ARGV prints over `src`."""
    try:
        opts = parse(argv)
        failure = src.failure()
        if failure is not None:
            return Answer(failure[0] + "\n", failure[1])
        if opts["query"] is None:
            what = opts["simple"] or "table"
            text = src.text(what, clock())
            if text is None:
                raise Usage(f"nvidia-smi (simulated): {' '.join(argv)!r} is not simulated here.", 2)
            if opts["interval"] is None or what != "table":
                return Answer(text)
            return Answer("", interval=opts["interval"], tick=lambda _i: src.text("table", clock()) or "")
        return _query(opts, src, clock)
    except Usage as e:
        return Answer(str(e), e.code)


def _query(opts: dict[str, Any], src: Source, clock: Callable[[], float]) -> Answer:
    kind, ids, units = opts["kind"], opts["ids"], "nounits" not in opts["format"]
    headers, aliases = src.headers(kind), src.aliases(kind)
    fields = []
    for raw in opts["query"]:
        name = raw if raw in headers else aliases.get(raw)
        if name is None or name not in headers:
            raise Usage(f'Field "{raw}" is not a valid field to query.\n', 2)
        fields.append(name)
    plan = [(n, unit_of(headers[n]) if units else "") for n in fields]
    head = ", ".join(headers[n] for n in fields) + "\n" if "noheader" not in opts["format"] else ""
    ts = "timestamp" in fields
    uuids: dict[str, str] = {}
    if ids is not None and kind == "apps":
        uuids = {r["uuid"]: r["index"] for r in src.rows("gpu", clock(), 0, ["index", "uuid"])}

    def wanted(row: dict[str, str]) -> bool:
        if ids is None:
            return True
        if kind == "gpu":
            return row.get("index") in ids or row.get("uuid") in ids
        uuid = row.get("gpu_uuid", "")
        return uuid in ids or uuids.get(uuid, row.get("_gpu")) in ids

    def tick(i: int) -> str:
        t = clock()
        rows = [r for r in src.rows(kind, t, i, fields) if wanted(r)]
        now = stamp(t) if ts else ""
        lines = [", ".join(now if n == "timestamp" else with_unit(r[n], u) for n, u in plan) for r in rows]
        return "".join(line + "\n" for line in lines)

    if kind == "gpu" and ids is not None and not tick(0):
        return Answer("No devices were found\n", 6)
    if opts["interval"] is None:
        return Answer(head + tick(0))
    return Answer(head, interval=opts["interval"], tick=tick)


# ---------------------------------------------------------------------------------- captures

SEP = "#" * 80
DEFAULT_CAPTURE = "linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01.txt"
VARYING = ("utilization.gpu", "utilization.memory")  # wobble per tick, so a stream shows fresh samples


def section(text: str, title_prefix: str) -> str | None:
    """Body of a capture's first section whose title starts with `title_prefix` (None if absent).

    A section is `SEP / # <phase> :: <what> / # $ <command> / SEP / body`; the body runs to the
    next section's SEP line. Trailing blank lines are dropped."""
    i = text.find("\n# " + title_prefix)
    start = text.find("\n" + SEP + "\n", i + 1) if i >= 0 else -1
    if start < 0:
        return None
    start += len(SEP) + 2
    end = text.find("\n" + SEP + "\n# ", start - 1)
    return (text[start:] if end < 0 else text[start:end]).rstrip("\n")


class Table:
    """One query kind of a capture: headers (with units), nounits rows, aliases."""

    def __init__(self, text: str, kind: str) -> None:
        title = "load :: query-gpu (csv" if kind == "gpu" else "load :: query-compute-apps"
        body = section(text, title)
        if body is None:
            raise Usage(f"capture has no section {title!r}", 3)
        lines = [ln for ln in body.split("\n") if ln.strip()]
        heads = lines[0].split(", ")
        self.names = [h.split(" [", 1)[0] for h in heads]
        self.headers = dict(zip(self.names, heads, strict=False))
        self.rows = []
        for line in lines[1:]:
            vals = line.split(", ")
            if len(vals) != len(heads):
                raise Usage(f"capture row has {len(vals)} fields, header {len(heads)}", 3)
            u = [unit_of(h) for h in heads]
            row = [v[: -len(u[j]) - 1] if u[j] and v.endswith(" " + u[j]) else v for j, v in enumerate(vals)]
            self.rows.append(dict(zip(self.names, row, strict=False)))
        self.aliases: dict[str, str] = {}
        help_ = section(text, "capabilities :: help-query-" + ("gpu" if kind == "gpu" else "compute-apps")) or ""
        for line in help_.split("\n"):
            if line.startswith('"') and '" or "' in line:
                names = [p.strip().strip('"') for p in line.split(" or ")]
                self.aliases.update((alias, names[0]) for alias in names[1:])


class CaptureSource(Source):
    """A capture file's output, shaped by the state dir's files (see the module docstring)."""

    def __init__(self, state: str, captures: str) -> None:
        self.state, self.captures = state, captures
        self._text: str | None = None
        self._tables: dict[str, Table] = {}

    def read(self, name: str, default: str = "") -> str:
        try:
            with open(os.path.join(self.state, name), encoding="utf-8") as f:
                return f.read().strip() or default
        except OSError:
            return default

    def capture(self) -> str:
        if self._text is None:
            name = self.read("capture", DEFAULT_CAPTURE)
            with open(name if os.path.isabs(name) else os.path.join(self.captures, name), encoding="utf-8") as f:
                self._text = f.read()
        return self._text

    def table(self, kind: str) -> Table:
        if kind not in self._tables:
            self._tables[kind] = Table(self.capture(), kind)
        return self._tables[kind]

    def gpus(self) -> int | None:
        raw = self.read("gpus")
        return int(raw) if raw.isdigit() and int(raw) > 0 else None

    def failure(self) -> tuple[str, int] | None:
        return FAILURES.get(self.read("mode", "ok"))

    def stray(self) -> str | None:
        return (self.read("stray_line") or DEFAULT_STRAY) if self.read("mode") == "stray" else None

    def headers(self, kind: str) -> dict[str, str]:
        return self.table(kind).headers

    def aliases(self, kind: str) -> dict[str, str]:
        return self.table(kind).aliases

    def gpu_rows(self) -> list[dict[str, str]]:
        base = self.table("gpu").rows
        n = self.gpus()
        if n is None:
            return [dict(r) for r in base]
        rows = []
        for g in range(n):
            row = dict(base[0], index=str(g), count=str(n))
            if row.get("uuid", "").startswith("GPU-"):
                row["uuid"] = row["uuid"][:-12] + "%012x" % (0xA0 + g)
            if ":" in row.get("pci.bus_id", ""):
                row["pci.bus_id"] = "00000000:%02X:00.0" % (0x10 + g)
                if "pci.bus" in row:
                    row["pci.bus"] = "0x%02X" % (0x10 + g)
            if row.get("serial", "")[:1].isdigit():
                row["serial"] = f"{1000 + g:013d}"
            rows.append(row)
        return rows

    def given_apps(self, gpus: list[dict[str, str]]) -> list[dict[str, str]] | None:
        """The `apps` state file's rows, `GPU_INDEX, PID, NAME, MEMORY` each (a container's driver
        answers: host pids, `[Not Found]`, `[N/A]`); None when there is no such file."""
        try:
            with open(os.path.join(self.state, "apps"), encoding="utf-8") as f:
                lines = f.read().splitlines()
        except OSError:
            return None
        out = []
        for line in lines:
            parts = [p.strip() for p in line.split(",")]
            if len(parts) == 4 and parts[0].isdigit() and int(parts[0]) < len(gpus):
                grow = gpus[int(parts[0])]
                uuid = grow.get("uuid", "")
                out.append(
                    {
                        "pid": parts[1],
                        "process_name": parts[2],
                        "used_gpu_memory": parts[3],
                        "gpu_uuid": uuid,
                        "_gpu": parts[0],
                    }
                )
        return out

    def rows(self, kind: str, t: float, tick: int, fields: list[str]) -> list[dict[str, str]]:
        gpus = self.gpu_rows()
        if kind == "apps":
            given = self.given_apps(gpus)
            if given is not None:
                return given
            apps = self.table("apps").rows
            if self.gpus() is None:
                return [dict(r) for r in apps]
            out = []
            for g, grow in enumerate(gpus):
                for r in apps:
                    row = dict(r, _gpu=str(g), gpu_uuid=grow.get("uuid", ""), gpu_bus_id=grow.get("pci.bus_id", ""))
                    if g and r.get("pid", "").isdigit():
                        row["pid"] = str(int(r["pid"]) + 1000 * g)
                    out.append(row)
            return out
        forced = [v.strip() for v in self.read("utilization").split(",") if v.strip()]
        for g, row in enumerate(gpus):
            for name in VARYING:
                if name in row and row[name].isdigit():  # [N/A] and friends stay as they are
                    row[name] = str(max(0, min(100, int(row[name]) + (tick * 7 + g * 3 + 4) % 9 - 4)))
            if forced:
                row["utilization.gpu"] = forced[min(g, len(forced) - 1)]
        return gpus

    def text(self, what: str, t: float) -> str | None:
        if what == "list" and self.gpus() is not None:
            return "".join("GPU {}: {} (UUID: {})\n".format(r["index"], r["name"], r["uuid"]) for r in self.gpu_rows())
        title = {
            "list": "capabilities :: list (-L)",
            "version": "capabilities :: version",
            "table": "load :: nvidia-smi (default table)",
        }[what]
        body = section(self.capture(), title)
        return None if body is None else body + "\n"


def main(argv: list[str], state: str, captures: str) -> int:
    """nvidia-smi as a program over a capture (tests/fakes/nvidia-smi)."""
    import signal

    for sig in (signal.SIGPIPE, signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    src = CaptureSource(state, captures)
    ans = answer(argv, src)
    sys.stdout.write(ans.out)
    sys.stdout.flush()
    if ans.interval is None or ans.tick is None:
        return ans.status
    start, i = time.monotonic(), 0
    while True:
        sys.stdout.write(ans.tick(i))
        sys.stdout.flush()
        i += 1
        stray = src.stray()
        if stray is not None:
            time.sleep(min(ans.interval / 2.0, 0.05))
            sys.stdout.write(stray + "\n")
            sys.stdout.flush()
        delay = start + i * ans.interval - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        failure = src.failure()
        if failure is not None:
            sys.stdout.write(failure[0] + "\n")
            return failure[1]
