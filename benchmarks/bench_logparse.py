"""Log parser throughput: LogStream + LogSummary over a 200 MB log made of real logs.

`python benchmarks/bench_logparse.py [--mb 200] [--chunk 65536] [--encoding utf-8|gb18030] [--profile N]`

The log is built in a temporary directory (never committed) by repeating the real corpus,
tests/data/logs/real/**/*.log (tqdm and YOLO `\\r` redraws up to 91 KB a line, HF Trainer dicts,
Keras epochs, Megatron iterations, mmdet/mmengine, PaddleOCR, fairseq lines, tracebacks, Chinese
and emoji text), each file whole and in a fixed order, until `--mb` MB. With `--encoding gb18030`
every file is re-encoded to GB18030 first (what a GB locale writes; it holds the corpus's emoji,
GBK cannot), so the decoder's GB path is what is timed. It is fed in `--chunk`-byte chunks, as
the log screen and `jobs` do. Printed: display lines/s (and superseded bar states), MB/s, and
the time in LogStream alone and in decoding alone, and what is left: the log rules' (LogSummary's
recognisers, with their prefilters) time and MB/s, by the wall clock and by CPU time (a shared
machine's neighbours slow the first only). Then a floor for any per-line reader in Python: LogStream
and, for each line or bar state, its shape looked up (LineParser's key) and every number on it
read as a float, one `findall`, nothing named or kept. `--profile N` profiles the first N MB with
cProfile and prints the top functions by own time. Figures, not assertions.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import re
import socket
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from gpu_tui.core.trainlog.decode import LogDecoder
from gpu_tui.core.trainlog.line import _SHAPE  # LineParser's key, so the floor pays what it pays
from gpu_tui.core.trainlog.stream import LogStream
from gpu_tui.core.trainlog.summary import LogSummary

REAL = Path(__file__).resolve().parent.parent / "tests" / "data" / "logs" / "real"


def corpus(encoding: str) -> list[bytes]:
    logs = [p.read_bytes() for p in sorted(REAL.rglob("*.log"))]
    if encoding != "utf-8":
        logs = [b.decode("utf-8", "surrogateescape").encode(encoding, "replace") for b in logs]
    # each log starts on a fresh line, as the next job's log would
    return [b if b.endswith(b"\n") else b + b"\n" for b in logs]


def build(path: Path, mb: float, encoding: str) -> tuple[int, int]:
    logs = corpus(encoding)
    target = int(mb * 1024 * 1024)
    size = 0
    with path.open("wb") as f:
        while size < target:
            for data in logs:
                f.write(data)
                size += len(data)
    return size, len(logs)


def parse(path: Path, chunk: int, limit: int | None = None) -> tuple[LogStream, LogSummary, float]:
    stream, summary = LogStream(), LogSummary()
    start = time.perf_counter()
    read = 0
    with path.open("rb") as f:
        while data := f.read(chunk):
            summary.consume(stream.feed(data))
            read += len(data)
            if limit is not None and read >= limit:
                break
    summary.consume(stream.close())
    return stream, summary, time.perf_counter() - start


_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def floor(path: Path, chunk: int) -> float:
    """CPU seconds for LogStream and the least a reader of the lines' values can do: a shape
    looked up, and every number on a line with one read as a float."""
    stream: LogStream = LogStream()
    shapes: dict[bytes, bool] = {}
    cpu = time.process_time()
    with path.open("rb") as f:
        while data := f.read(chunk):
            for event in stream.feed(data).events:
                text = event.text
                shape = text.encode("utf-8", "surrogatepass").translate(_SHAPE)
                numbered = shapes.get(shape)
                if numbered is None:
                    numbered = shapes[shape] = b"0" in shape
                if numbered:
                    [float(v) for v in _NUMBER.findall(text)]
    stream.close()
    return time.process_time() - cpu


def timed(path: Path, chunk: int, feed: Callable[[bytes], object], end: Callable[[], object]) -> float:
    """Seconds to `feed` the whole file in chunks, then `end`."""
    start = time.perf_counter()
    with path.open("rb") as f:
        while data := f.read(chunk):
            feed(data)
    end()
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=200.0)
    ap.add_argument("--chunk", type=int, default=65536)
    ap.add_argument("--encoding", choices=("utf-8", "gb18030"), default="utf-8")
    ap.add_argument("--profile", type=float, default=0.0, help="profile the first N MB instead of timing")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log"
        size, files = build(path, args.mb, args.encoding)
        mb = size / 1024 / 1024
        print(
            f"{mb:.0f} MB: the {files} real corpus logs repeated, {args.encoding}, {args.chunk}-byte chunks;"
            f" {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, host {socket.gethostname()},"
            f" load {os.getloadavg()[0]:.1f}"
        )
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
            parse(path, args.chunk, int(args.profile * 1024 * 1024))
            prof.disable()
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(25)
            print(out.getvalue())
            return
        decoder, alone = LogDecoder(), LogStream()
        decode_s = timed(path, args.chunk, decoder.decode, lambda: decoder.decode(b"", final=True))
        cpu = time.process_time()
        stream_s = timed(path, args.chunk, alone.feed, alone.close)
        stream_cpu = time.process_time() - cpu
        cpu = time.process_time()
        stream, summary, seconds = parse(path, args.chunk)
        parse_cpu = time.process_time() - cpu
        floor_cpu = floor(path, args.chunk)
    lines = stream.lines_seen + stream.states_replaced
    print(
        f"  {stream.lines_seen:,} display lines + {stream.states_replaced:,} bar states in {seconds:.1f} s:"
        f" {stream.lines_seen / seconds:,.0f} display lines/s ({lines / seconds:,.0f} with bar states),"
        f" {mb / seconds:.2f} MB/s"
    )
    print(
        f"  alone: LogStream (bytes -> display lines, decoding included) {stream_s:.1f} s"
        f" ({mb / stream_s:.1f} MB/s); decoding bytes to text {decode_s:.2f} s ({mb / decode_s:.0f} MB/s);"
        f" so LogSummary (recognisers) {seconds - stream_s:.1f} s ({mb / max(seconds - stream_s, 1e-9):.1f} MB/s)"
    )
    # On a shared machine the wall clock counts the neighbours too: this process's CPU time does not.
    rules_cpu = max(parse_cpu - stream_cpu, 1e-9)
    print(
        f"  CPU time: all {parse_cpu:.1f} s ({mb / parse_cpu:.2f} MB/s), LogStream alone {stream_cpu:.1f} s,"
        f" so the recognisers {rules_cpu:.1f} s ({mb / rules_cpu:.1f} MB/s)"
    )
    floor_rules = max(floor_cpu - stream_cpu, 1e-9)
    print(
        f"  floor (LogStream, a shape lookup and every number read as a float): {floor_cpu:.1f} s CPU"
        f" ({mb / floor_cpu:.1f} MB/s); without LogStream {floor_rules:.1f} s ({mb / floor_rules:.1f} MB/s):"
        f" the log rules take x{rules_cpu / floor_rules:.1f} that"
    )
    print(f"  at the end: progress {summary.progress}, last_loss {summary.last_loss}, failure {summary.failure}")


if __name__ == "__main__":
    main()
