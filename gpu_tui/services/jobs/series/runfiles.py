"""The run's own metrics files, found and read ON the instance (shipped beside summariser.py to
<state_dir>/bin/series-v1/runfiles.py; never imported by gpu-tui). Standard library only,
python3 >= 3.7, as summariser.py.

Where: the job's working directory (JOBDIR/workdir, which command.sh records; else job.json's
`cwd`, else the home directory) and every `--metrics DIR` of `gpu-tui run` (job.json's
`metrics`, relative to the working directory), walked as core/runfiles/discover.py decides
(bounded: depth, entries per catch-up, entries per directory). Only files written since the
job started count; an event file counts when its writer is the job's (discover.owns_event_file,
decided once, when first seen).

What: every file is a stream of points in series.jsonl (`[tag, step, value, time, stream]`; an
event file's path after them), the stream named after its kind
(discover: `tensorboard`, `trainer_state`, `csv`, `mlflow`, `mlflow.db`). Event files and
MLflow's metric files grow by appending: they are read from the byte offset each reached (whole
records, whole lines). trainer_state.json (the newest of the checkpoints), metrics.csv (the
newest) and mlflow.db are read whole when their size or mtime changed; what a read adds to each
tag's points is appended, and a read that does not start with the points already written (a run
restarted from an earlier checkpoint) writes `{"reset": STREAM}`, then the stream's points
again. So series.jsonl only ever grows until the log itself is read again. NaN and infinite
values are left out, as the log's are.
"""

# ruff: noqa: UP006, UP031, UP035, UP045 (python 3.7: typing generics)
import hashlib
import importlib
import json
import math
import os
import socket
from collections import deque
from typing import Any, Dict, List, Optional, Tuple

D: Any = importlib.import_module("gpu_tui_runfiles_discover")  # shipped in core/ beside this file
TF: Any = importlib.import_module("gpu_tui_runfiles_tfevents")
TS: Any = importlib.import_module("gpu_tui_runfiles_trainer_state")
CSV: Any = importlib.import_module("gpu_tui_runfiles_lightning_csv")
ML: Any = importlib.import_module("gpu_tui_runfiles_mlflow")
M: Any = importlib.import_module("gpu_tui_runfiles_model")

READ_MAX = 64 << 20
"""Bytes of one growing file read per catch-up: a huge event file (images, histograms) is read
over several."""
APPENDED = (D.EVENTS, D.MLFLOW_FILE)
WHOLE = (D.TRAINER_STATE_FILE, D.CSV_FILE, D.MLFLOW_DB)


def read_text(path: str) -> str:
    """A small file's first 4 KiB, stripped; "" when it cannot be read (the summariser's too)."""
    try:
        with open(path, "rb") as f:
            return f.read(4096).decode("utf-8", "replace").strip()
    except OSError:
        return ""


def _int(text: str) -> Optional[int]:
    return int(text) if text.isdigit() else None


def _request(job_dir: str) -> Dict[str, Any]:
    try:
        with open(os.path.join(job_dir, "job.json"), "rb") as f:
            req = json.loads(f.readline().decode("utf-8", "replace"))
    except (OSError, ValueError):
        return {}
    return req if isinstance(req, dict) else {}


def roots(job_dir: str) -> List[str]:
    """The directories walked: the working directory, then each `--metrics DIR`."""
    req = _request(job_dir)
    home = os.path.expanduser("~")
    cwd = req.get("cwd")
    work = read_text(os.path.join(job_dir, "workdir"))
    if not work:
        work = os.path.join(home, os.path.expanduser(cwd)) if isinstance(cwd, str) and cwd else home
    out = [work]
    extra = req.get("metrics")
    for d in extra if isinstance(extra, list) else []:
        if isinstance(d, str) and d:
            out.append(os.path.normpath(os.path.join(work, os.path.expanduser(d))))
    seen: List[str] = []
    for r in out:
        real = os.path.realpath(r)
        if real not in seen:
            seen.append(real)
    return seen


def walk(tops: List[str], since: Optional[float]) -> Tuple[List[Tuple[str, Any, Any]], Dict[str, Any]]:
    """[(path, discover.Found, stat)] of the files found below `tops` written since `since`,
    breadth first, and what the walk cost (`entries`, `capped`: a bound stopped it)."""
    found: List[Tuple[str, Any, Any]] = []
    inodes = set()
    queue: Any = deque((top, (os.path.basename(top.rstrip("/")),), 0) for top in tops)
    entries, capped, full = 0, False, False
    while queue and not full:
        top, rel, depth = queue.popleft()
        subdirs: List[Tuple[str, Tuple[str, ...]]] = []
        try:
            it = os.scandir(top)
        except OSError:
            continue
        with it:
            n = 0
            for e in it:
                entries += 1
                n += 1
                if entries > D.MAX_ENTRIES:
                    capped = full = True
                    break
                if n > D.MAX_DIR_ENTRIES:
                    capped = True  # a directory of data: what is below it is not looked at
                    subdirs = []
                    break
                try:
                    if e.is_dir(follow_symlinks=False):
                        if depth < D.MAX_DEPTH and not D.skip_dir(e.name):
                            subdirs.append((e.path, rel + (e.name,)))
                        continue
                    what = D.kind_of(rel + (e.name,))
                    if what is None:
                        continue
                    st = e.stat()
                except OSError:
                    continue
                if since is not None and st.st_mtime < since - D.SLACK_S:
                    continue  # left before this job started
                if (st.st_dev, st.st_ino) in inodes:
                    continue  # two roots, one file
                inodes.add((st.st_dev, st.st_ino))
                found.append((e.path, what, st))
        for path, parts in subdirs:
            queue.append((path, parts, depth + 1))
    return found, {"entries": min(entries, D.MAX_ENTRIES), "capped": capped, "cap": D.MAX_ENTRIES}


def _writer(pid: int) -> Optional[Any]:
    """The running process `pid` as discover.Writer, or None (no such process, or a zombie)."""

    def stat_of(p: int) -> Optional[List[str]]:
        text = read_text("/proc/%d/stat" % p)
        fields = text.rsplit(")", 1)[-1].split() if text else []
        return fields if len(fields) > 19 and fields[0] != "Z" else None

    fields = stat_of(pid)
    if fields is None:
        return None
    btime = 0.0
    for line in _text_all("/proc/stat").splitlines():
        if line.startswith("btime "):
            btime = float(line.split()[1])
    started = btime + int(fields[19]) / float(os.sysconf("SC_CLK_TCK"))
    ancestors: List[int] = []
    parent = int(fields[1])
    while parent > 1 and len(ancestors) < 64:
        ancestors.append(parent)
        up = stat_of(parent)
        parent = int(up[1]) if up else 0
    return D.Writer(started, int(fields[3]), int(fields[2]), tuple(ancestors))


def _text_all(path: str) -> str:
    try:
        with open(path, "rb") as f:
            return f.read(1 << 16).decode("ascii", "replace")
    except OSError:
        return ""


class Job:
    """The job's own facts, read once per catch-up."""

    def __init__(self, job_dir: str) -> None:
        self.pid = _int(read_text(os.path.join(job_dir, "pid")))
        started = _int(read_text(os.path.join(job_dir, "started_at")))
        finished = _int(read_text(os.path.join(job_dir, "finished_at")))
        self.started_at = float(started) if started is not None else None
        self.finished_at = float(finished) if finished is not None else None
        self.host = socket.gethostname()

    def owns(self, path: str) -> bool:
        name = TF.parse_event_file_name(path)
        if name is None:
            return False
        writer = _writer(name.pid) if name.host == self.host else None
        return bool(
            D.owns_event_file(
                name,
                host=self.host,
                job_pid=self.pid,
                writer=writer,
                started_at=self.started_at,
                finished_at=self.finished_at,
            )
        )


def _row(tag: str, step: Any, value: float, time: Any, stream: str, path: str = "") -> Optional[str]:
    if not math.isfinite(value):
        return None  # a NaN loss is a failure, not a point (as the log's)
    row = [tag, step, value, time, stream, path] if path else [tag, step, value, time, stream]
    return json.dumps(row, separators=(",", ":"), ensure_ascii=False) + "\n"


def _digest(points: List[Any]) -> str:
    return hashlib.sha1(json.dumps(points, separators=(",", ":")).encode("utf-8")).hexdigest()  # noqa: S324


def _finite(points: List[Any]) -> List[Any]:
    return [list(p) for p in points if math.isfinite(p[1])]


def _read_from(path: str, offset: int) -> bytes:
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read(READ_MAX)


class Catch:
    """One catch-up of the files: `rows` to append to series.jsonl, `files` the state to save."""

    def __init__(self, state: Dict[str, Any]) -> None:
        files = state.get("files")
        emitted = state.get("emitted")
        self.files: Dict[str, Dict[str, Any]] = files if isinstance(files, dict) else {}
        self.emitted: Dict[str, Dict[str, List[Any]]] = emitted if isinstance(emitted, dict) else {}
        self.rows: List[str] = []
        self.status: Dict[str, Any] = {"files": 0, "read": 0, "resets": 0, "errors": []}

    def state(self) -> Dict[str, Any]:
        return {"files": self.files, "emitted": self.emitted}

    def point(self, tag: str, step: Any, value: float, time: Any, stream: str, path: str = "") -> None:
        """`path`: an event file's (its directory is TensorBoard's run: Keras writes `epoch_loss`
        into both logs/train and logs/validation; the client tells them apart by it)."""
        row = _row(tag, step, value, time, stream, path)
        if row is not None:
            self.rows.append(row)

    def reset(self, stream: str) -> None:
        self.rows.append(json.dumps({"reset": stream}) + "\n")
        self.emitted.pop(stream, None)
        self.status["resets"] += 1
        for f in self.files.values():
            if f.get("kind") == stream:
                f.update(offset=0, kinds={}, error=None, seen="")

    # ------------------------------------------------------------ files that grow

    def appended(self, stream: str, found: List[Tuple[str, Any, Any]], job: Job) -> None:
        mine = []
        for path, what, st in found:
            if what.kind != stream:
                continue
            f = self.files.get(path)
            if f is None:
                own = job.owns(path) if stream == D.EVENTS else True
                f = self.files[path] = {"kind": stream, "key": what.key, "own": own, "offset": 0, "ino": st.st_ino}
            if f.get("own"):
                mine.append((path, f, st))
        if any(st.st_ino != f.get("ino") or st.st_size < int(f.get("offset") or 0) for _p, f, st in mine):
            self.reset(stream)  # a file replaced or truncated: the stream is read again
            for _p, f, st in mine:
                f["ino"] = st.st_ino
        for path, f, st in mine:
            offset = int(f.get("offset") or 0)
            if f.get("error") or st.st_size <= offset:
                continue
            try:
                data = _read_from(path, offset)
            except OSError:
                continue
            self.status["read"] += len(data)
            if stream == D.EVENTS:
                reader = TF.EventFileReader(kinds=f.get("kinds") or None)
                for tag, (step, value, time) in reader.feed(data):
                    self.point(tag, step, value, time, stream, path)
                f["offset"] = offset + reader.offset
                f["kinds"] = reader.kinds
                if reader.error:
                    f["error"] = reader.error
                    self.status["errors"].append("%s: %s" % (path, reader.error))
            else:
                cut = data.rfind(b"\n") + 1  # a line still being written waits for the next read
                try:
                    series = ML.read_metric_file(f.get("key") or "", data[:cut])
                except M.RunFileError as exc:
                    f["error"] = str(exc)
                    self.status["errors"].append("%s: %s" % (path, exc))
                    continue
                for step, value, time in series.points:
                    self.point(series.tag, step, value, time, stream)
                f["offset"] = offset + cut

    # ------------------------------------------------------------ files read whole

    def whole(self, stream: str, found: List[Tuple[str, Any, Any]], job: Job) -> None:
        mine = [(path, st) for path, what, st in found if what.kind == stream]
        if not mine:
            return
        path, st = max(mine, key=lambda m: (m[1].st_mtime, m[0]))  # the newest checkpoint's
        seen = "%s %d %d %r" % (path, st.st_ino, st.st_size, st.st_mtime)
        f = self.files.setdefault(stream, {"kind": stream})
        if f.get("seen") == seen:
            return
        try:
            series = self._read_whole(stream, path, job)
        except (OSError, M.RunFileError, ValueError) as exc:
            f["seen"] = seen  # read again once it changes
            self.status["errors"].append("%s: %s" % (path, exc))
            return
        except Exception as exc:  # noqa: BLE001 (sqlite3's errors: a database being written)
            self.status["errors"].append("%s: %s" % (path, exc))
            return
        f["seen"] = seen
        f["path"] = path
        self.status["read"] += st.st_size
        new: Dict[str, List[Any]] = {}
        for s in series:
            new.setdefault(s.tag, []).extend(_finite(s.points))
        old = self.emitted.get(stream, {})
        if any(tag not in new or len(new[tag]) < c or _digest(new[tag][:c]) != h for tag, (c, h) in old.items()):
            self.reset(stream)
            self.files[stream]["seen"] = seen
            old = {}
        for tag, points in new.items():
            count = old.get(tag, [0, ""])[0]
            for step, value, time in points[count:]:
                self.point(tag, step, value, time, stream)
            old[tag] = [len(points), _digest(points)]
        self.emitted[stream] = old

    @staticmethod
    def _read_whole(stream: str, path: str, job: Job) -> List[Any]:
        if stream == D.MLFLOW_DB:
            return _sqlite_series(path, job)
        with open(path, "rb") as f:
            data = f.read()
        if stream == D.TRAINER_STATE_FILE:
            return list(TS.read_trainer_state(data))
        return list(CSV.read_metrics_csv(data))


def _sqlite_series(path: str, job: Job) -> List[Any]:
    """The metrics of the runs of an MLflow sqlite store that started while the job ran."""
    import sqlite3  # only where a store is found: some pythons are built without it

    con = sqlite3.connect("file:%s?mode=ro" % path, uri=True, timeout=5)
    try:
        since = (job.started_at - D.SLACK_S) * 1000 if job.started_at is not None else 0
        until = (job.finished_at + D.SLACK_S) * 1000 if job.finished_at is not None else 1e18
        runs = con.execute(
            "SELECT run_uuid FROM runs WHERE start_time >= ? AND start_time <= ? ORDER BY start_time", (since, until)
        ).fetchall()
        out: List[Any] = []
        for (run,) in runs:
            out.extend(ML.read_sqlite_metrics(con, run))
        return out
    finally:
        con.close()


def catch_up_files(job_dir: str, state: Dict[str, Any]) -> Tuple[str, Dict[str, Any], Dict[str, Any]]:
    """(rows to append to series.jsonl, the files' state to save, status) of one catch-up."""
    job = Job(job_dir)
    found, cost = walk(roots(job_dir), job.started_at)
    catch = Catch(state)
    for stream in APPENDED:
        catch.appended(stream, found, job)
    for stream in WHOLE:
        catch.whole(stream, found, job)
    catch.status["files"] = sum(1 for f in catch.files.values() if f.get("own", True) and f.get("kind"))
    catch.status["walk"] = cost
    return "".join(catch.rows), catch.state(), catch.status
