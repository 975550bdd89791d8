"""gpu-tui's series summariser, run ON the instance (shipped to <state_dir>/bin/series-v1/summariser.py).

Never imported by gpu-tui: services/jobs/series/ship.py ships this file's text beside gpu-tui's log
rules (core/trainlog/series and what it imports, rewritten by services/notify/bundle.py for an
older python3). Standard library only, python3 >= 3.7: no `from __future__ import annotations`,
no `X | None`.

    python3 summariser.py STATE watch JOBDIR    while the job runs: a catch-up every WATCH_S
                                                seconds, one more at its end, then exit
    python3 summariser.py STATE once JOBDIR [GEN FROM [thin]]
                                                one catch-up; prints `@@status {...}`, then the
                                                points file (zlib): from byte FROM when its
                                                generation is still GEN (a client's copy), else whole;
                                                `thin`: the overview's rows instead (a client with
                                                no copy draws them while the whole file comes)

Each catch-up reads the log, then the run's own files (runfiles.py, shipped beside this file).

Files, all in JOBDIR (under state_dir, mode 600 by the umask):
- series.jsonl   `{"gen": ...}` (a new generation each time the file is written anew), then one
                 `[tag, x, value, time]` line per point of the log (core/trainlog/series) and
                 `[tag, step, value, time, stream]` per point of a run's file (runfiles.py);
                 append-only until the log is read again
- series.state   a JSON header line (the log's identity, the bytes read, the points file's size,
                 the python and rules it was written by, `read_total`: log bytes read over the
                 job's life, re-reads included; `runfiles`: where each run file was read to),
                 then the pickled reader to resume and the points file's overview
                 (core/trainlog/overview: every point written is fed to it)
- series.last    `@@series-last {...}`: the run's latest progress and loss as the whole log
                 says them (core/trainlog/series.last_line), for `jobs`, replaced each catch-up
- series.lock    flock'd by each catch-up (a client's and the watch's never interleave)
- series.watch   flock'd by the watch for its life: one watch per job; the kernel drops it when
                 the watch dies (a reboot included), so a stale one never blocks

The log is read from the offset the state holds, so the whole log is read once and then only
what grew. A log that shrank, has another inode or other first bytes (truncated, rotated,
replaced), a state from another python or rules version, or a finished log that grew again, is
read again from 0 and the points file rewritten.
"""

# ruff: noqa: UP006, UP031, UP035, UP045 (python 3.7: typing generics)
import fcntl
import importlib
import json
import os
import pickle
import sys
import time
import zlib
from typing import Any, Dict, List, Optional, Tuple

WATCH_S = 30
CHUNK = 1 << 20
SAVE_EVERY = 16 << 20
"""A long first read saves its progress this often: a catch-up cut short resumes there."""

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "core"))
S: Any = importlib.import_module("gpu_tui_trainlog_series")  # shipped beside this file
V: Any = importlib.import_module("gpu_tui_trainlog_overview")  # the points file's overview
sys.path.insert(0, HERE)
R: Any = importlib.import_module("runfiles")  # the run's own files (runfiles.py, beside this file)


read_text = R.read_text


def rules_version() -> str:
    return "%s py%d.%d" % (read_text(os.path.join(HERE, "VERSION")), sys.version_info[0], sys.version_info[1])


def read_header(path: str) -> Tuple[Dict[str, Any], bytes]:
    try:
        with open(path, "rb") as f:
            header = json.loads(f.readline().decode("utf-8"))
            return (header if isinstance(header, dict) else {}), f.read()
    except (OSError, ValueError):
        return {}, b""


def load_state(path: str) -> Tuple[Optional[Any], Any, Optional[Any], int, Dict[str, Any]]:
    """(reader, the points file's overview, identity, points size, run files' state) saved, or
    Nones when there is none to take up."""
    nothing: Tuple[Optional[Any], Any, Optional[Any], int, Dict[str, Any]] = (None, None, None, 0, {})
    header, blob = read_header(path)
    if header.get("rules") != rules_version():
        return nothing
    try:
        reader_blob, overview = pickle.loads(blob)  # noqa: S301 (our own file, in the job's directory)
    except Exception:  # noqa: BLE001 (anything unreadable: read the log again)
        return nothing
    reader = S.SeriesReader.loads(reader_blob)
    ident = S.LogIdentity.from_json(header.get("identity"))
    files = header.get("runfiles")
    if reader is None or ident is None or not isinstance(overview, V.SeriesOverview):
        return nothing
    return reader, overview, ident, int(header.get("points_size") or 0), files if isinstance(files, dict) else {}


def save_state(
    path: str, reader: Any, overview: Any, ident: Any, points_size: int, read_total: int, files: Dict[str, Any]
) -> None:
    header = {
        "runfiles": files,
        "rules": rules_version(),
        "identity": ident.as_json(),
        "offset": reader.offset,
        "points_size": points_size,
        "read_total": read_total,
        "closed": reader.closed,
        "saved_at": int(time.time()),
    }
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(json.dumps(header).encode("utf-8") + b"\n")
        f.write(pickle.dumps((reader.dumps(), overview), protocol=pickle.HIGHEST_PROTOCOL))
    os.replace(tmp, path)


def catch_up(job_dir: str, ended: bool) -> Tuple[Dict[str, Any], Optional[Any]]:
    """Read what the log gained since the last catch-up (all of it, the first time); `ended`:
    the job has finished, so its last line and live rows count too (the reader is closed).
    (status, the points file's overview: None where there is no log)."""
    log = os.path.join(job_dir, "log")
    state_path = os.path.join(job_dir, "series.state")
    points_path = os.path.join(job_dir, "series.jsonl")
    status: Dict[str, Any] = {"read": 0, "reread": False, "offset": 0, "size": 0, "closed": False}
    try:
        f = open(log, "rb")
    except OSError:
        return status, None
    with f:
        st = os.fstat(f.fileno())
        head = f.read(S.HEAD_BYTES)
        reader, overview, ident, points_size, files = load_state(state_path)
        total = read_header(state_path)[0].get("read_total")
        total = total if isinstance(total, int) else 0  # log bytes read over the job's life
        if reader is not None and (
            ident is None
            or not ident.same_log(st.st_ino, st.st_size, reader.offset, head)
            or (reader.closed and st.st_size > reader.offset)
        ):
            reader = None
            status["reread"] = True
        if reader is None:
            reader, points_size = S.SeriesReader(read_text(os.path.join(job_dir, "charset")) or None), 0
            overview = V.SeriesOverview()
            files = {}  # the points file is written anew: the run's files are read again too
        status["size"] = st.st_size
        start = reader.offset
        identity = S.LogIdentity.of(st.st_ino, head)
        f.seek(start)
        left = 0 if reader.closed else st.st_size - start
        with open(points_path, "a+b") as out:
            out.truncate(points_size)  # points a catch-up cut short wrote after its last save
            if points_size == 0:  # a new file: a new generation, so a client's copy is fetched anew
                out.write(json.dumps({"gen": os.urandom(6).hex()}).encode("utf-8") + b"\n")
            carry = b""
            since_save = 0
            while left > 0:
                data = f.read(min(CHUNK, left))
                if not data:
                    break
                left -= len(data)
                data = carry + data
                # a running job's read stops where a line (or a bar's redraw) ends: a character
                # cut by the read's end is read again next time
                cut = len(data) if ended and left <= 0 else S.safe_cut(data)
                carry = data[cut:]
                write_points(out, overview, reader.feed(data[:cut]))
                since_save += cut
                if since_save >= SAVE_EVERY and left > 0:
                    out.flush()
                    save_state(state_path, reader, overview, identity, out.tell(), total + reader.offset - start, files)
                    since_save = 0
            if ended and not reader.closed:
                write_points(out, overview, reader.close())
            try:
                rows, files, status["runfiles"] = R.catch_up_files(job_dir, files)
            except Exception as exc:  # noqa: BLE001 (the log's series stay whatever a run's file holds)
                rows, status["runfiles"] = "", {"error": "%s: %s" % (type(exc).__name__, exc)}
            out.write(rows.encode("utf-8"))
            for row in S.json_rows(rows):
                overview.add_row(row)
            out.flush()
            save_state(state_path, reader, overview, identity, out.tell(), total + reader.offset - start, files)
        write_last(job_dir, S.last_line(reader, st.st_size))
        status["read"] = reader.offset - start
        status["offset"], status["closed"] = reader.offset, reader.closed
    return status, overview


def write_points(out: Any, overview: Any, points: List[Any]) -> None:
    """The log's new points to the points file, and to its overview."""
    out.write(S.encode_points(points).encode("utf-8"))
    add = overview.add_log_point
    for p in points:
        add(p.tag, p.x, p.value, p.time)


def write_last(job_dir: str, line: bytes) -> None:
    """series.last, replaced whole (`jobs` reads it beside the log's end)."""
    path = os.path.join(job_dir, "series.last")
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(line)
    os.replace(tmp, path)


def locked(job_dir: str, name: str, blocking: bool = True) -> Optional[Any]:
    f = open(os.path.join(job_dir, name), "a")
    try:
        fcntl.flock(f, fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.close()
        return None
    return f


def runner_alive(job_dir: str) -> bool:
    """The job's runner still runs, in this boot (core/jobs.py's rule, as the listing reads it)."""
    pid = read_text(os.path.join(job_dir, "runner_pid"))
    boot = read_text(os.path.join(job_dir, "boot_id"))
    if not pid.isdigit() or boot != read_text("/proc/sys/kernel/random/boot_id"):
        return False
    stat = read_text("/proc/%s/stat" % pid)
    return bool(stat) and stat.rsplit(")", 1)[-1].split()[:1] != ["Z"]


def generation(first_line: bytes) -> str:
    try:
        head = json.loads(first_line.decode("utf-8"))
    except ValueError:
        return ""
    return str(head.get("gen") or "") if isinstance(head, dict) else ""


def once(job_dir: str, gen: str = "", start: int = 0, thin: bool = False) -> int:
    lock = locked(job_dir, "series.lock")
    try:
        ended = os.path.exists(os.path.join(job_dir, "exit_code"))
        status, overview = catch_up(job_dir, ended)
        out = sys.stdout.buffer
        packer = zlib.compressobj(1)  # points compress ~10x: what a slow link to the instance carries
        try:
            f = open(os.path.join(job_dir, "series.jsonl"), "rb")
        except OSError:
            out.write(b"@@status " + json.dumps(status).encode("utf-8") + b"\n")
        else:
            with f:
                first = f.readline()
                size = os.fstat(f.fileno()).st_size
                status["gen"] = generation(first)
                if thin and overview is not None:
                    send_overview(out, packer, status, overview)
                else:
                    # the client's copy is a prefix of this file: only what was appended is sent
                    if not gen or gen != status["gen"] or not len(first) <= start <= size:
                        start = 0
                    status["from"], status["points_bytes"] = start, size
                    out.write(b"@@status " + json.dumps(status).encode("utf-8") + b"\n")
                    f.seek(start)
                    while True:
                        data = f.read(CHUNK)
                        if not data:
                            break
                        out.write(packer.compress(data))
        out.write(packer.flush())
        out.flush()
    finally:
        if lock is not None:
            lock.close()
    return 0


def send_overview(out: Any, packer: Any, status: Dict[str, Any], overview: Any) -> None:
    """The overview's rows (zlib) after the status line, as a series file of their own."""
    status["thin"], status["from"] = True, 0
    out.write(b"@@status " + json.dumps(status).encode("utf-8") + b"\n")
    lines = [json.dumps({"gen": status["gen"], "thin": True}) + "\n"]
    for row in overview.rows():
        lines.append(json.dumps(row, separators=(",", ":"), ensure_ascii=False) + "\n")
        if len(lines) >= 4096:
            out.write(packer.compress("".join(lines).encode("utf-8")))
            lines = []
    out.write(packer.compress("".join(lines).encode("utf-8")))


def watch(job_dir: str) -> int:
    me = locked(job_dir, "series.watch", blocking=False)
    if me is None:
        return 0  # another watch follows this job
    while True:
        ended = os.path.exists(os.path.join(job_dir, "exit_code"))
        lock = locked(job_dir, "series.lock")
        try:
            catch_up(job_dir, ended)  # the overview is saved with the state
        finally:
            if lock is not None:
                lock.close()
        if ended or not runner_alive(job_dir):
            return 0  # its end is read (or the job is lost): nothing stays running
        for _ in range(WATCH_S):
            time.sleep(1)
            if os.path.exists(os.path.join(job_dir, "exit_code")):
                break


def main(argv: List[str]) -> int:
    if (
        len(argv) not in (4, 6, 7)
        or argv[2] not in ("once", "watch")
        or (len(argv) >= 6 and not argv[5].isdigit())
        or (len(argv) == 7 and argv[6] != "thin")
    ):
        sys.stderr.write("usage: summariser.py STATE once|watch JOBDIR [GEN FROM [thin]]\n")
        return 2
    os.umask(0o077)
    job_dir = argv[3]
    if argv[2] == "watch":
        return watch(job_dir)
    if len(argv) == 4:
        return once(job_dir)
    return once(job_dir, argv[4], int(argv[5]), thin=len(argv) == 7)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
