"""Copies of jobs' series files kept here (`metrics` and the log screen share them), so a read
fetches only what the instance appended since; and their pruning, so a year of runs does not
fill the disk: a copy not used for MAX_AGE_S goes, then the least recently used while the whole
passes MAX_BYTES (a 200 MB log's series is tens of MB).

Layout: <root>/<instance>/<job id>.jsonl, and beside it <job id>.decoded: the copy as this
python decoded it (core/trainlog/series_decode.SeriesDecoder, marshal), so only what was appended
is parsed (a 200 MB log's 45 MB of points: 2.6 s to parse, 0.3 s to load). It is rewritten only
when the part decoded since passes DECODED_STEP (a running job's log screen reads every 30 s),
and the latest decoders are kept in memory too. A load counts as a use (the file's mtime is
set), so a run read every day stays however old it is.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gpu_tui.config.atomicfile import write_atomic
from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.trainlog.series_decode import SeriesDecoder

__all__ = ["MAX_AGE_S", "MAX_BYTES", "SeriesCache"]

log = logging.getLogger(__name__)

MAX_AGE_S = 30 * 86400
MAX_BYTES = 1 << 30
PRUNE_EVERY_S = 600.0
"""A log screen saves its job's copy every 30 s while the job runs; one walk in ten minutes is enough."""
DECODED_STEP = 8 << 20
"""Bytes of the copy decoded since the saved decoder before it is saved again (or a quarter of
what it covers, whichever is more)."""
IN_MEMORY = 4
"""Decoders kept in memory (the log screen's job, the one compared with it...)."""
STRAY_TMP_S = 86400
"""A write's temporary file (`.<name>.*.tmp`) older than this was left by a process that died."""


@dataclass
class SeriesCache:
    root: Path
    max_bytes: int = MAX_BYTES
    max_age_s: float = MAX_AGE_S
    clock: Callable[[], float] = time.time
    _pruned_at: float | None = field(default=None, init=False, repr=False)
    _decoders: dict[Path, tuple[str, int, SeriesDecoder]] = field(default_factory=dict, init=False, repr=False)
    _saved: dict[Path, tuple[str, int]] = field(default_factory=dict, init=False, repr=False)
    """(generation, bytes covered) of each decoder file as this process last knew it."""

    def path(self, inst: InstanceConfig, job_id: str) -> Path:
        """Where the copy of a job's series.jsonl is kept (`job_id` is checked by job_dir first; a
        name is letters, digits, `.`, `_` and `-`, and one of only dots names no directory here)."""
        name = inst.name if inst.name.strip(".") else "_" + inst.name
        return self.root / name / f"{job_id}.jsonl"

    def load(self, inst: InstanceConfig, job_id: str) -> bytes:
        """The copy's whole lines (what was fetched whole); b"" when there is none."""
        path = self.path(inst, job_id)
        try:
            data = path.read_bytes()
        except OSError:
            return b""
        with contextlib.suppress(OSError):  # only the pruning's order depends on it
            os.utime(path)
        return data[: data.rfind(b"\n") + 1]

    def save(self, inst: InstanceConfig, job_id: str, data: bytes) -> None:
        path = self.path(inst, job_id)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, data)
        except OSError as exc:  # a cache: the next read fetches the whole file again
            log.warning("series cache %s not written: %s", path, exc)
            return
        now = self.clock()
        if self._pruned_at is None or now - self._pruned_at >= PRUNE_EVERY_S:
            self._pruned_at = now
            self.prune(keep=path)

    def append(self, inst: InstanceConfig, job_id: str, start: int, more: bytes) -> None:
        """`more` written at byte `start` of the copy (its length as `load` gave it: a torn last
        line is cut first), the rest kept: rewriting a 55 MB copy for a minute's points took
        0.17 s a read (measured). A copy that is not there is written whole by the next `save`."""
        path = self.path(inst, job_id)
        try:
            with path.open("r+b") as f:
                f.truncate(start)
                f.seek(start)
                f.write(more)
        except OSError as exc:
            log.warning("series cache %s not appended to: %s", path, exc)

    def decoded(self, inst: InstanceConfig, job_id: str, gen: str) -> tuple[SeriesDecoder, int] | None:
        """A decoder of the copy's generation `gen` and how many of its bytes it has read, taken
        out (give it back with `keep_decoded`: two reads never feed one decoder); None: decode it all."""
        copy = self.path(inst, job_id)
        held = self._decoders.pop(copy, None)
        if held is not None and held[0] == gen:
            return held[2], held[1]
        try:
            blob = copy.with_suffix(".decoded").read_bytes()
        except OSError:
            return None
        head, _nl, body = blob.partition(b"\n")
        try:
            meta = json.loads(head)
        except ValueError:
            return None
        if not isinstance(meta, dict) or meta.get("gen") != gen or not isinstance(meta.get("length"), int):
            return None
        decoder = SeriesDecoder.loads(body)
        if decoder is None:
            return None
        self._saved[copy] = (gen, meta["length"])
        return decoder, meta["length"]

    def keep_decoded(self, inst: InstanceConfig, job_id: str, gen: str, length: int, decoder: SeriesDecoder) -> None:
        """`decoder`, which has read the copy's first `length` bytes (generation `gen`): kept in
        memory, and saved beside the copy when it has read DECODED_STEP more than the saved one."""
        copy = self.path(inst, job_id)
        self._decoders.pop(copy, None)
        self._decoders[copy] = (gen, length, decoder)
        while len(self._decoders) > IN_MEMORY:
            self._decoders.pop(next(iter(self._decoders)))
        saved = self._saved.get(copy)
        if saved is not None and saved[0] == gen and length - saved[1] < max(DECODED_STEP, saved[1] // 4):
            return
        head = json.dumps({"gen": gen, "length": length}).encode("utf-8") + b"\n"
        try:
            write_atomic(copy.with_suffix(".decoded"), head + decoder.dumps())
        except OSError as exc:
            log.warning("series cache %s not written: %s", copy.with_suffix(".decoded"), exc)
            return
        self._saved[copy] = (gen, length)

    def prune(self, keep: Path | None = None) -> list[Path]:
        """Remove copies unused for max_age_s, then the least recently used while the rest pass
        max_bytes (never `keep`, the copy just written); returns what was removed."""
        now = self.clock()
        copies: list[tuple[float, int, Path]] = []
        removed: list[Path] = []
        try:
            dirs = [d for d in self.root.iterdir() if d.is_dir()]
        except OSError:
            return removed  # no cache yet
        for d in dirs:
            try:
                entries = list(d.iterdir())
            except OSError as exc:
                log.warning("series cache %s not read: %s", d, exc)
                continue
            names = {p.name for p in entries}
            for p in entries:
                try:
                    st = p.stat()
                except OSError:
                    continue  # gone meanwhile
                stray = p.name.startswith(".") and p.name.endswith(".tmp") and now - st.st_mtime > STRAY_TMP_S
                orphan = p.suffix == ".decoded" and p.with_suffix(".jsonl").name not in names
                if stray or orphan or (p.suffix == ".jsonl" and p != keep and now - st.st_mtime > self.max_age_s):
                    self._remove(p, removed)
                elif p.suffix == ".jsonl":
                    copies.append((st.st_mtime, st.st_size + _size(p.with_suffix(".decoded")), p))
        total = sum(size for _t, size, _p in copies)
        for _t, size, p in sorted(copies, key=lambda c: c[0]):
            if total <= self.max_bytes:
                break
            if p != keep:
                self._remove(p, removed)
                total -= size
        for d in dirs:
            with contextlib.suppress(OSError):  # not empty: kept
                d.rmdir()
        return removed

    def _remove(self, path: Path, removed: list[Path]) -> None:
        if path.suffix == ".jsonl":  # its decoder goes with it
            self._decoders.pop(path, None)
            self._saved.pop(path, None)
            self._remove(path.with_suffix(".decoded"), [])
        try:
            path.unlink()
        except FileNotFoundError:
            return
        except OSError as exc:
            log.warning("series cache %s not removed: %s", path, exc)
            return
        removed.append(path)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
