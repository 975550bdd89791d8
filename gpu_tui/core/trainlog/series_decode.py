"""A series file read back here: the points of series.jsonl (core/trainlog/series writes the
log's, services/jobs/series/runfiles.py the run files') as `gpu-tui metrics` and the log screen
show them, and series.last's line as `jobs` reads it.

`SeriesDecoder` takes the file's lines in any number of pieces (a copy kept here, then what the
instance appended) and can be saved (marshal: a cache of this python's, services/jobs/series/
cache.py) so a copy already decoded is not parsed again: 45 MB of points (a 200 MB log) took
2.6 s to parse and 0.3 s to load (measured).
"""

from __future__ import annotations

import json
import marshal
import math
import posixpath
import sys
from dataclasses import dataclass

from gpu_tui.core.trainlog.series import LAST_MARK, PROGRESS_FIELDS, json_rows

__all__ = ["DECODER_FORMAT", "Points", "RunLast", "SeriesDecoder", "decode_series", "split_last"]

Points = list[tuple[float, float, "float | None"]]
DECODER_FORMAT = (1, sys.version_info[:2], marshal.version)
"""What a saved decoder was written by: another one is decoded again."""


class SeriesDecoder:
    """The rows of a series file, fed in order (`feed`), grouped by (stream, event file, tag);
    `result` puts them together as decode_series says."""

    def __init__(self) -> None:
        self.by_stream: dict[tuple[str, str, str], Points] = {}

    def feed(self, text: str) -> None:
        """The file's next whole lines (a torn last one is left out)."""
        by_stream = self.by_stream
        for row in json_rows(text):
            if isinstance(row, list):
                # core/trainlog/overview.split_row's forms, inline: a call per row costs a fifth
                # more on a 200 MB log's two million rows
                run = ""
                if len(row) == 4:
                    tag, x, value, time = row
                    stream = "log"
                elif len(row) == 5:
                    tag, x, value, time, stream = row
                elif len(row) == 6:
                    tag, x, value, time, stream, run = row
                else:
                    continue
                key = (str(stream), str(run), str(tag))
                points = by_stream.get(key)
                if points is None:
                    points = by_stream[key] = []
                points.append((x, value, time))
            elif isinstance(row, dict) and "reset" in row:
                gone = str(row["reset"])
                for key in [k for k in by_stream if k[0] == gone]:
                    del by_stream[key]

    def result(self) -> dict[tuple[str, str], Points]:
        out: dict[tuple[str, str], Points] = {}
        files: dict[str, list[tuple[str, Points]]] = {}
        for (stream, path, tag), points in self.by_stream.items():
            if path:
                files.setdefault(tag, []).append((path, points))
                out.setdefault((stream.split(".", 1)[0], tag), [])  # its place in the order
            else:
                out.setdefault((stream.split(".", 1)[0], tag), []).extend(points)
        for tag, of_tag in files.items():
            del out["tensorboard", tag]
            for name, points in _runs(tag, of_tag):
                out.setdefault(("tensorboard", name), []).extend(points)
        return out

    def dumps(self) -> bytes:
        return marshal.dumps((DECODER_FORMAT, self.by_stream))

    @staticmethod
    def loads(blob: bytes) -> SeriesDecoder | None:
        """A decoder `dumps` saved; None when this python did not write it or it is damaged."""
        try:
            version, by_stream = marshal.loads(blob)
        except (ValueError, EOFError, TypeError):
            return None
        if version != DECODER_FORMAT or not isinstance(by_stream, dict):
            return None
        decoder = SeriesDecoder()
        decoder.by_stream = by_stream
        return decoder


def decode_series(text: str) -> dict[tuple[str, str], Points]:
    """{(source, tag): [(x, value, time), ...]} of a series file as the summariser writes it:
    the log's points (`[tag, x, value, time]`, source `log`), a run file's (`[tag, step, value,
    time, stream]`, source the stream's name up to its first dot: `mlflow.db` is `mlflow`; an
    event file's with its path after them), and `{"reset": stream}`, after which that
    stream's points start again. Keys in the order their first point came; a torn last line is
    left out. Event files' tags are put together as TensorBoard shows them (`_runs`)."""
    decoder = SeriesDecoder()
    decoder.feed(text)
    return decoder.result()


def _purged(points: Points) -> Points:
    """A tag's points with those a later write took back left out, as TensorBoard's purge of
    orphaned data does: where the step goes back (a run resumed from an earlier checkpoint into
    the same directory), the points from that step on before it are dropped."""
    out: Points = []
    for p in points:
        if out and p[0] < out[-1][0]:
            while out and out[-1][0] >= p[0]:
                out.pop()
        out.append(p)
    return out


def _runs(tag: str, of_tag: list[tuple[str, Points]]) -> list[tuple[str, Points]]:
    """One tag's points from each event file as series, as TensorBoard puts them together. A
    directory is a run: its files in the order they were begun (their names start with the
    time), then `_purged`. A run that began after another's last point, at a later first step,
    continues it (Trainer resumed into a new directory); runs written side by side or from the
    same step are apart (Keras's logs/train and logs/validation, Lightning's version_0 and
    version_1), each then named by its directory under the ones they share:
    `validation/epoch_loss`."""
    by_dir: dict[str, list[tuple[str, Points]]] = {}
    for path, points in of_tag:
        by_dir.setdefault(posixpath.dirname(path), []).append((posixpath.basename(path), points))
    runs = []
    for d, named in by_dir.items():
        points = _purged([p for _name, pts in sorted(named, key=lambda n: n[0]) for p in pts])
        if points:
            runs.append((d, points))
    chains: list[tuple[str, Points]] = []
    for d, points in sorted(runs, key=lambda r: _started(r[1])):
        first, began = points[0][0], _started(points)[0]
        chain = next((c for c in reversed(chains) if first > c[1][0][0] and began >= _ended(c[1])), None)
        if chain is None:
            chains.append((d, list(points)))
        else:
            chain[1][:] = _purged([*chain[1], *points])
    if len(chains) == 1:
        return [(tag, chains[0][1])]
    dirs = [d for d, _points in chains]
    common = posixpath.commonpath(dirs) if all(d.startswith("/") for d in dirs) else ""
    out = []
    for d, points in chains:
        rel = posixpath.relpath(d, common) if common else d
        out.append((f"{posixpath.basename(d) if rel == '.' else rel}/{tag}", points))
    return out


def _ended(points: Points) -> float:
    """When a run's last point was written (-inf: unknown, so any later run may continue it)."""
    known = [t for _x, _v, t in points[-64:] if isinstance(t, (int, float))]
    return max(known) if known else -math.inf


def _started(points: Points) -> tuple[float, float]:
    """When a run's first point was written (its wall time; an event file has one), then its step."""
    t = points[0][2]
    return (t if isinstance(t, (int, float)) else math.inf, points[0][0])


@dataclass(frozen=True)
class RunLast:
    """What series.last says: the latest progress (PROGRESS_FIELDS, as LogSummary.progress) and
    training loss of the whole log, as far as the summariser had read it (`read` of `size` bytes)."""

    read: int
    size: int
    last_loss: float | None
    progress: dict[str, object] | None


def split_last(data: bytes) -> tuple[RunLast | None, bytes]:
    """series.last's line, when `data` starts with it, and the rest of `data` (a log's end read
    after it by the same command); (None, data) otherwise: no summariser on that instance yet."""
    if not data.startswith(LAST_MARK):
        return None, data
    line, _nl, rest = data.partition(b"\n")
    try:
        doc = json.loads(line[len(LAST_MARK) :].decode("utf-8"))
    except ValueError:
        return None, rest
    if not isinstance(doc, dict):
        return None, rest
    read, size, loss, progress = doc.get("read"), doc.get("size"), doc.get("last_loss"), doc.get("progress")
    return (
        RunLast(
            read=read if isinstance(read, int) else 0,
            size=size if isinstance(size, int) else 0,
            last_loss=float(loss) if isinstance(loss, (int, float)) and math.isfinite(loss) else None,
            progress={k: progress.get(k) for k in PROGRESS_FIELDS} if isinstance(progress, dict) else None,
        ),
        rest,
    )
